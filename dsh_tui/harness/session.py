"""The session: an append-only event log, the durable source of truth of an agent.

Every append validates lossless JSON and the surface rules *before* anything
changes, so a log in memory is always one a persistence backend (ours or
upstream's) can store and load again.
"""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, overload

from .eventlog import LIVE_TYPES, EventLog
from .jsonvalue import MAX_SAFE_INTEGER, NotJsonError, json_equal, snapshot_json, thaw_json

if TYPE_CHECKING:
    from .store import SessionEntry

SESSION_FORMAT_VERSION = 0
SURFACE_TYPES = frozenset({"user/message", "assistant/message", "tool/result"})
assert SURFACE_TYPES <= LIVE_TYPES  # surface events are never packed (eventlog.py)
ENVELOPE_KEYS = frozenset({"type", "seq", "time", "data", "surfaceOp", "sourceEventSeqs",
                           "ignorable"})


class SessionError(ValueError):
    """A rejected append or seed; nothing changed."""


class SessionAppendReentryError(RuntimeError):
    """An append was attempted while this session was publishing one (§1.2.3).

    A synchronous `session/event` listener cannot append, send or edit the inbox;
    deferring the work (a task, `call_soon`) is the way out.
    """


def now_ms() -> int:
    """The clock every `time` field and `createdAt` uses: epoch milliseconds, as upstream."""
    return time.time_ns() // 1_000_000


_last_created = 0


def created_ms() -> int:
    """`now_ms()` for a new header's `createdAt`, but later than any header this process
    made before: sessions made in one burst (a root's children) would otherwise share a
    millisecond, and every listing orders by `createdAt`, so their order would be the
    file system's."""
    global _last_created
    _last_created = max(now_ms(), _last_created + 1)
    return _last_created


PACK_SEQS_FROM = 8
"""Shorter `sourceEventSeqs` lists are kept as they are."""


def pack_seqs(seqs: list[int] | None) -> Any:
    """A compact form of a long seq list: a `range` per run of consecutive seqs.

    An assistant message cites every chunk of its step, so its list is as long as
    the step; as ints in a list that is ~36 bytes a chunk, kept for the life of the
    session. Consecutive seqs (the usual case) pack into one range.
    """
    if seqs is None or type(seqs) is not list or len(seqs) < PACK_SEQS_FROM:
        return seqs
    if any(type(seq) is not int for seq in seqs):
        return seqs  # not plain ints: keep the list exactly as given
    runs: list[range] = []
    start = previous = seqs[0]
    for seq in itertools.islice(seqs, 1, None):
        if seq != previous + 1:
            runs.append(range(start, previous + 1))
            start = seq
        previous = seq
    runs.append(range(start, previous + 1))
    if len(runs) * 4 > len(seqs):
        return seqs  # scattered seqs: the list is the compact form
    return _SeqRuns(runs)


class _SeqRuns(tuple[range, ...]):
    """The packed form of a seq list: its runs of consecutive seqs as ranges."""

    __slots__ = ()


def unpack_seqs(packed: Any) -> list[int] | None:
    """Undo `pack_seqs`: the plain seq list (a value that was not packed comes back as is)."""
    if type(packed) is _SeqRuns:
        out: list[int] = []
        for run in packed:
            out.extend(run)
        return out
    return packed


class SessionEvent:
    """One immutable log record. `data` is plain JSON, read-only by convention."""

    __slots__ = ("_seqs", "data", "ignorable", "seq", "surface_op", "time", "type")
    type: str
    seq: int
    time: int
    data: Any
    surface_op: Any
    ignorable: bool
    _seqs: Any

    def __init__(self, type: str, seq: int, time: int, data: Any,
                 surface_op: Any = None, source_event_seqs: list[int] | None = None,
                 ignorable: bool = False) -> None:
        object.__setattr__(self, "type", type)
        object.__setattr__(self, "seq", seq)
        object.__setattr__(self, "time", time)
        object.__setattr__(self, "data", data)
        object.__setattr__(self, "surface_op", surface_op)
        object.__setattr__(self, "_seqs", pack_seqs(source_event_seqs))
        object.__setattr__(self, "ignorable", ignorable)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("session events are immutable")

    @property
    def source_event_seqs(self) -> list[int] | None:
        """The seqs this surface event cites (a fresh list when stored packed)."""
        return unpack_seqs(self._seqs)

    def to_json(self) -> dict[str, Any]:
        """The durable envelope, upstream key order; optional keys absent."""
        out: dict[str, Any] = {"type": self.type, "seq": self.seq, "time": self.time,
                               "data": self.data}
        if self._seqs is not None:
            out["sourceEventSeqs"] = unpack_seqs(self._seqs)
        if self.surface_op is not None:
            out["surfaceOp"] = self.surface_op
        if self.ignorable:
            out["ignorable"] = True
        return out

    @classmethod
    def from_json(cls, record: Mapping[str, Any]) -> SessionEvent:
        """Read one record of a log file or seed; the caller validated its envelope (§1.1)."""
        return cls(record["type"], record["seq"], record["time"], record["data"],
                   record.get("surfaceOp"), record.get("sourceEventSeqs"),
                   record.get("ignorable") is True)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, SessionEvent):
            return self.seq == other.seq and self.type == other.type and json_equal(
                self.to_json(), other.to_json())
        if isinstance(other, Mapping):
            return json_equal(self.to_json(), other)
        return NotImplemented

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"SessionEvent({self.type!r}, seq={self.seq})"


class EventsView(Sequence[SessionEvent]):
    """An immutable snapshot of the log's first `n` events; it never grows.

    Taking one is O(1). Reading a seq whose stream chunks were packed after their
    step ended decodes that run (see `eventlog.py`); the events read back are equal
    to the ones appended, not the same objects.
    """

    __slots__ = ("_log", "_n")

    def __init__(self, log: EventLog, n: int) -> None:
        self._log = log
        self._n = n

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, index: int) -> SessionEvent: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[SessionEvent, ...]: ...

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            start, stop, step = index.indices(self._n)
            if step == 1:
                return tuple(self._log.iter(start, stop))
            return tuple(self._log[i] for i in range(start, stop, step))
        if index < 0:
            index += self._n
        if not 0 <= index < self._n:
            raise IndexError("session event index out of range")
        return self._log[index]

    def __iter__(self) -> Iterator[SessionEvent]:
        return self._log.iter(0, self._n)

    def __reversed__(self) -> Iterator[SessionEvent]:
        return self._log.riter(self._n)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str):
            return len(other) == self._n and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"EventsView(len={self._n})"


# ---- surface --------------------------------------------------------------------------------


def _is_seq(value: Any) -> bool:
    return type(value) is int and 0 <= value <= MAX_SAFE_INTEGER


class _Surface:
    """Ordered surface nodes (seqs of message-producing events), validated incrementally."""

    __slots__ = ("generation", "nodes")

    def __init__(self) -> None:
        self.nodes: list[int] = []
        self.generation = 0

    def plan(self, event: SessionEvent, log: Any) -> tuple[str, Any] | None:
        op = event.surface_op
        seqs = event.source_event_seqs
        if event.type not in SURFACE_TYPES:
            if op is not None:
                raise SessionError(
                    f'session event "{event.type}" is not surface-eligible and cannot carry surfaceOp')
            if seqs is not None:
                raise SessionError(f'session event "{event.type}" is not surface-eligible and '
                                   "cannot carry sourceEventSeqs")
            return None
        if op is None:
            raise SessionError(
                f'session event "{event.type}" is surface-eligible and requires a surfaceOp marker')
        shadowed: list[int] = []
        plan: tuple[str, Any]
        if op == "append":
            plan = ("append", None)
        else:
            if not isinstance(op, Mapping) or set(op) != {"op", "start", "end"} or \
                    op.get("op") != "replace" or not _is_seq(op.get("start")) or \
                    not _is_seq(op.get("end")):
                raise SessionError(f'session event "{event.type}" carries an invalid surfaceOp')
            try:
                start_idx = self.nodes.index(op["start"])
            except ValueError:
                raise SessionError(
                    f"surface replace: start seq {op['start']} not found in surface") from None
            try:
                end_idx = self.nodes.index(op["end"])
            except ValueError:
                raise SessionError(
                    f"surface replace: end seq {op['end']} not found in surface") from None
            if start_idx > end_idx:
                raise SessionError(f"surface replace: start seq {op['start']} is after end seq "
                                   f"{op['end']}")
            shadowed = self.nodes[start_idx:end_idx + 1]
            plan = ("replace", (start_idx, end_idx))
        sources: set[int] = set()
        if seqs is not None:
            if not isinstance(seqs, list):
                raise SessionError(f"sourceEventSeqs on event at seq {event.seq} must be an array")
            if not seqs and event.type != "assistant/message":
                raise SessionError("sourceEventSeqs must not be empty except on assistant/message")
            for source in seqs:
                if not _is_seq(source):
                    raise SessionError(f'session event "{event.type}" sourceEventSeqs must hold '
                                       "non-negative safe integers")
                if source >= event.seq:
                    raise SessionError(f"sourceEventSeqs must reference earlier events: {source} "
                                       f">= current seq {event.seq}")
                sources.add(source)
            if len(sources) != len(seqs):
                raise SessionError("sourceEventSeqs must not contain duplicates")
        missing = [s for s in shadowed if s not in sources]
        if missing:
            raise SessionError("surface replace: sourceEventSeqs must include every shadowed "
                               f"surface node; missing {', '.join(map(str, missing))}")
        if plan[0] == "replace" and event.type == "tool/result":
            if len(shadowed) != 1:
                raise SessionError(
                    "tool/result surface replacement must rewrite exactly one current node")
            original = log[shadowed[0]]
            if original.type != "tool/result" or not _same_except_result_content(
                    original.data, event.data):
                raise SessionError("tool/result surface replacement may change only content")
        return plan

    def apply(self, event: SessionEvent, plan: tuple[str, Any] | None) -> None:
        if plan is None:
            return
        if plan[0] == "append":
            self.nodes.append(event.seq)
        else:
            start_idx, end_idx = plan[1]
            self.nodes[start_idx:end_idx + 1] = [event.seq]
            self.generation += 1


def _same_except_result_content(a: Any, b: Any) -> bool:
    def strip(data: Any) -> Any:
        plain = thaw_json(data)
        try:
            plain["message"]["content"][0]["content"] = None
        except (KeyError, IndexError, TypeError):
            pass
        return plain

    return json_equal(strip(a), strip(b))


def derive_event_message(event: SessionEvent) -> dict[str, Any] | None:
    """The model-facing message a surface event projects to (None for none)."""
    if event.type == "user/message":
        return event.data
    if event.type == "assistant/message":
        message = event.data.get("message") if isinstance(event.data, Mapping) else None
        if not message or not message.get("content"):
            return None  # an empty assistant message only hosts usage
        return message
    if event.type == "tool/result":
        return event.data.get("message") if isinstance(event.data, Mapping) else None
    return None


# ---- validation at the seed / load boundary -------------------------------------------------


def _has_provider_model(value: Any) -> bool:
    return isinstance(value, Mapping) and isinstance(value.get("provider"), str) and \
        bool(value["provider"]) and isinstance(value.get("model"), str) and bool(value["model"])


def validate_message_event(type_: str, data: Any, subject: str) -> None:
    """Check a surface event's message (§1.4): an id, the role its type implies, a source
    kind. Raises `SessionError` naming `subject`; other types pass untouched."""
    if type_ not in SURFACE_TYPES:
        return
    message = data if type_ == "user/message" else (
        data.get("message") if isinstance(data, Mapping) else None)
    if not isinstance(message, Mapping) or not isinstance(message.get("id"), str) or \
            not message["id"]:
        raise SessionError(f"{subject} lacks an identified message")
    expected = "assistant" if type_ == "assistant/message" else "user"
    if message.get("role") != expected:
        raise SessionError(f'{subject} message must have role "{expected}"')
    source = message.get("source")
    if not isinstance(source, Mapping) or not isinstance(source.get("kind"), str) or \
            not source["kind"]:
        raise SessionError(f"{subject} message has invalid source")
    content = message.get("content")
    if not isinstance(content, list):
        raise SessionError(f"{subject} message has invalid content")
    if type_ == "assistant/message":
        if source["kind"] != "model" or not _has_provider_model(source):
            raise SessionError(f"{subject} message must have model source")
        return
    if type_ == "tool/result":
        call_id = source.get("callId")
        if source["kind"] != "tool" or not isinstance(call_id, str) or not call_id:
            raise SessionError(f"{subject} message must have tool source")
        block = content[0] if len(content) == 1 else None
        if not isinstance(block, Mapping) or block.get("type") != "tool-result" or \
                not isinstance(block.get("content"), list):
            raise SessionError(f"{subject} message must contain one tool-result block")
        if block.get("toolCallId") != call_id:
            raise SessionError(f"{subject} message has mismatched tool call ids")


def validate_envelope(record: Mapping[str, Any], index: int) -> None:
    """Check one seed or loaded record has exactly the envelope of §1.1 (and a well-formed
    `request/header`); raises `SessionError` naming `index`, the record's position."""
    if record.get("type") == "request/header-delta":
        raise SessionError(
            f"seed event at index {index} uses unsupported legacy request/header-delta format")
    if any(key not in ENVELOPE_KEYS for key in record):
        raise SessionError(f"seed event at index {index} has an invalid event envelope")
    seq, stamp = record.get("seq"), record.get("time")
    ignorable = record.get("ignorable", None)
    if not isinstance(record.get("type"), str) or type(seq) is not int or seq < 0 or \
            type(stamp) is not int or abs(stamp) > MAX_SAFE_INTEGER or "data" not in record or \
            (ignorable is not None and ignorable is not True):
        raise SessionError(f"seed event at index {index} has an invalid event envelope")
    if record["type"] == "request/header":
        data = record["data"]
        header = data.get("header") if isinstance(data, Mapping) else None
        config = header.get("config") if isinstance(header, Mapping) else None
        if not _has_provider_model(config):
            raise SessionError(f"seed request/header at index {index} lacks provider/model")
    validate_message_event(record["type"], record["data"], f"seed {record['type']} at index {index}")


def validate_header(session_id: str, header: Mapping[str, Any]) -> dict[str, Any]:
    """Check a header (§1.3) and return it as a plain dict; raises `SessionError` on a wrong
    version or id, a bad `createdAt`, a relative `cwd` or a mistyped optional field."""
    record = dict(header)
    if record.get("version") != SESSION_FORMAT_VERSION:
        raise SessionError(f"session header version must be {SESSION_FORMAT_VERSION}, "
                           f"got {record.get('version')}")
    if record.get("id") != session_id:
        raise SessionError(
            f'session header id "{record.get("id")}" does not match session id "{session_id}"')
    created = record.get("createdAt")
    if type(created) is not int or created < 0 or created > MAX_SAFE_INTEGER:
        raise SessionError("session header createdAt must be a non-negative safe integer")
    cwd = record.get("cwd")
    if cwd is not None and (not isinstance(cwd, str) or not os.path.isabs(cwd)):
        raise SessionError(f'session header cwd must be an absolute path, got "{cwd}"')
    if "parentSession" in record and not isinstance(record["parentSession"], str):
        raise SessionError("session header parentSession must be a string")
    for key in ("seedLength", "delegationDepth"):
        if key in record and (type(record[key]) is not int or record[key] < 0):
            raise SessionError(f"session header {key} must be a non-negative safe integer")
    if "origin" in record and record["origin"] != "subagent":
        raise SessionError('session header origin must be "subagent"')
    if "agentPreset" in record and not isinstance(record["agentPreset"], str):
        raise SessionError("session header agentPreset must be a string")
    return record


def make_header(session_id: str, meta: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A fresh header for `session_id` (§1.3): version, id, `createdAt` (now unless `meta`
    gives it) and whichever optional fields `meta` sets; absent ones stay absent."""
    meta = meta or {}
    created = meta["createdAt"] if "createdAt" in meta else created_ms()
    header: dict[str, Any] = {"version": SESSION_FORMAT_VERSION, "id": session_id,
                              "createdAt": created}
    for key in ("cwd", "parentSession", "seedLength", "origin", "delegationDepth",
                "agentPreset"):
        if meta.get(key) is not None:
            header[key] = meta[key]
    return header


# ---- the session ----------------------------------------------------------------------------


_COMPACT_AFTER = frozenset({"step/end", "turn/end"})
"""After these no chunk run of the log is still growing: its chunks can be packed."""


class Session:
    """An append-only log plus its header; attach to a SessionStore to publish appends.

    A finished step's stream chunks are packed in memory (`eventlog.py`) when the
    step or turn ends (a long step's older chunks already while it streams), and so
    is the bookkeeping between them (splices, step and turn ends), so a
    long-running session costs memory for its messages, not for every token it
    streamed. A seed (a resumed log) is packed the same way,
    a budget of events per step end.
    """

    compact_chunks = True
    """Class-wide switch; benchmarks turn it off to measure the unpacked baseline."""

    def __init__(self, session_id: str, seed: Sequence[Any] | None = None,
                 header: Mapping[str, Any] | None = None, *, restore: bool = False) -> None:
        if not isinstance(session_id, str) or not session_id:
            raise SessionError("a session id must be a non-empty string")
        self._log = EventLog(SessionEvent)
        self._surface = _Surface()
        self._view: EventsView | None = None
        self._entry: SessionEntry | None = None
        self._derived: list[dict[str, Any]] = []
        self._derived_nodes = 0
        self._derived_generation = 0
        self._header_fold: tuple[int, Any] = (0, None)
        self._last_turn = 0
        self._context_fold: tuple[int, Any] = (0, None)
        raw_header = header if header is not None else make_header(session_id)
        try:
            plain_header = snapshot_json(raw_header)
        except NotJsonError:
            raise SessionError("session header is not losslessly JSON-serializable") from None
        self._header = MappingProxyType(validate_header(session_id, plain_header))
        if seed is not None:
            for index, source in enumerate(seed):
                self._accept_seed(source, index, restore)
        self.first_live_seq = len(self._log)
        if seed is not None and (not self._log or
                                 self._log[len(self._log) - 1].type != "session/end-seed"):
            self.append("session/end-seed", {})

    def _accept_seed(self, source: Any, index: int, restore: bool) -> None:
        record = source.to_json() if isinstance(source, SessionEvent) else source
        if not restore:
            try:
                record = snapshot_json(record)
            except NotJsonError:
                raise SessionError(
                    f"seed event at index {index} is not losslessly JSON-serializable") from None
        if not isinstance(record, Mapping):
            raise SessionError(f"seed event at index {index} has an invalid event envelope")
        validate_envelope(record, index)
        if record["seq"] != index:
            raise SessionError(f"seed event at index {index} has seq {record['seq']} (expected "
                               f"{index}); seed must be contiguous from 0")
        event = SessionEvent.from_json(record)
        try:
            plan = self._surface.plan(event, self._log)
        except SessionError as error:
            raise SessionError(f"invalid seed event at index {index}: {error}") from None
        self._log.append(event)
        self._surface.apply(event, plan)
        self._note_turn(event)

    # -- reading ------------------------------------------------------------------------------

    @property
    def id(self) -> str:
        """The session id (the header's `id`; also the agent's id)."""
        return self._header["id"]

    @property
    def header(self) -> Mapping[str, Any]:
        """The validated header (§1.3), read-only; `seedLength` bounds the inbox replay."""
        return self._header

    @property
    def seq(self) -> int:
        """The next seq: the log length."""
        return len(self._log)

    @property
    def events(self) -> EventsView:
        """The log as an immutable snapshot (§1.2): holding it while appends go on is safe,
        it keeps the length it had when taken."""
        view = self._view
        if view is None:
            view = self._view = EventsView(self._log, len(self._log))
        return view

    def derive_messages(self) -> list[dict[str, Any]]:
        """The model history: surface events projected in surface order (cached per node)."""
        surface = self._surface
        if surface.generation != self._derived_generation:
            self._derived = []
            self._derived_nodes = 0
            self._derived_generation = surface.generation
        nodes = surface.nodes
        while self._derived_nodes < len(nodes):
            message = derive_event_message(self._log[nodes[self._derived_nodes]])
            if message is not None:
                self._derived.append(message)
            self._derived_nodes += 1
        return list(self._derived)

    def request_header(self) -> Any:
        """The canonical request header in force (the latest `request/header`), or None."""
        seen, state = self._header_fold
        for event in self._log.iter_live(seen, len(self._log)):
            if event.type == "request/header" and isinstance(event.data, Mapping):
                state = canonical_header(event.data.get("header") or {})
        self._header_fold = (len(self._log), state)
        return state

    def request_context(self) -> Any:
        """The dynamic context in force (the latest `request/context` data), or None.

        Folded incrementally, like `request_header`, so a step pays only for new events.
        """
        seen, state = self._context_fold
        for event in self._log.iter_live(seen, len(self._log)):
            if event.type == "request/context":
                state = event.data
        self._context_fold = (len(self._log), state)
        return state

    def last_turn(self) -> int:
        """The turn number of the last `turn/start` in the whole log (0 if none): the
        last one whose `turn` is an integer, noted as it is appended or seeded (turn
        starts are packed with the bookkeeping of finished turns)."""
        return self._last_turn

    def _note_turn(self, event: SessionEvent) -> None:
        if event.type == "turn/start" and isinstance(event.data, Mapping):
            turn = event.data.get("turn")
            if type(turn) is int:
                self._last_turn = turn

    def pack(self) -> int:
        """Pack every finished run of stream chunks now; returns how many events were packed.

        Steps pack their own chunks as they end, and a seed (a resumed log) is packed a
        few thousand events per step end; this does all of it at once, for a caller
        with a quiet moment (or a benchmark that wants a packed history up front).
        The chunks of a step still streaming are left alone.
        """
        if not Session.compact_chunks:
            return 0
        tail = len(self._log)
        for event in self._log.riter(tail):  # stop before an open step's chunks
            if event.type != "assistant/chunk":
                break
            tail -= 1
        return self._log.compact(budget=tail - self._log.cursor) if tail > self._log.cursor \
            else 0

    # -- writing ------------------------------------------------------------------------------

    def append(self, type: str, data: Any = None, *, surface_op: Any = None,
               source_event_seqs: Sequence[int] | None = None,
               ignorable: bool = False) -> SessionEvent:
        """Validate, commit and publish one event; raises before any change on bad input."""
        if not isinstance(type, str) or not type:
            raise SessionError("a session event type must be a non-empty string")
        try:
            stored = snapshot_json(data)
        except NotJsonError as error:
            raise SessionError(
                f'session event "{type}" carries non-JSON-serializable data ({error})') from None
        if type == "request/header-delta":
            raise SessionError(
                f'session event "{type}" uses unsupported legacy request/header-delta format')
        try:
            op = snapshot_json(surface_op)
            seqs = snapshot_json(list(source_event_seqs)) if source_event_seqs is not None \
                else None
        except NotJsonError:
            raise SessionError(f'session event "{type}" carries non-JSON-serializable surface '
                               "metadata") from None
        entry = self._entry
        if entry is not None and entry.appending:
            raise SessionAppendReentryError(
                "session append cannot reenter while another append is being published")
        if type in SURFACE_TYPES:
            validate_message_event(type, stored, f'session event "{type}"')
        event = SessionEvent(type, len(self._log), now_ms(), stored, op, seqs, ignorable)
        plan = self._surface.plan(event, self._log)
        if entry is None:
            self._commit(event, plan)
            return event
        entry.appending = True
        try:
            listeners = entry.resolve_event_listeners()
            self._commit(event, plan)
            entry.publish(listeners, self, event)
            return event
        finally:
            entry.appending = False
            if entry.detach_requested and not entry.announcing:
                entry.finish_detach()

    def _commit(self, event: SessionEvent, plan: Any) -> None:
        self._log.append(event)
        self._surface.apply(event, plan)
        self._note_turn(event)
        self._view = None
        if Session.compact_chunks:
            if event.type in _COMPACT_AFTER:
                self._log.compact()
            elif event.type == "assistant/chunk":
                self._log.compact_streaming()

    def __repr__(self) -> str:
        return f"Session({self.id!r}, events={len(self._log)})"


def canonical_header(header: Mapping[str, Any]) -> dict[str, Any]:
    """The parts of a request header that decide whether a new `request/header` is logged
    (§1.5: only when it changes): config, non-default adapter settings, system, tools."""
    out: dict[str, Any] = {"config": header.get("config")}
    defaults = header.get("adapterDefaults")
    if isinstance(defaults, Mapping) and (defaults.get("reasoningEffort") is True or
                                          defaults.get("maxTokens") is True):
        out["adapterDefaults"] = defaults
    if header.get("system"):
        out["system"] = header["system"]
    if header.get("tools"):
        out["tools"] = header["tools"]
    return out
