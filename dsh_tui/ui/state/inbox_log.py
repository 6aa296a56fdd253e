"""Reading an agent's log as inbox operations, with who made each one.

The durable log records every inbox change as a bare splice (`agent/inbox/spliced`) and
the turns as boundaries; it does not record who acted. `InboxLogReader` folds the events
in order and says what each splice *was* (an insert, an edit, a re-file, a move, a
removal, a merge, a split, a claim, a put-back) and who made it, derived from what the
log does record; the rules, and what the log cannot tell, are on `InboxLogReader`.
Tolerant: a malformed record is skipped, never fatal. O(1) per event except the list
splices themselves.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .lanes import LANES, lane_of
from .text import message_text, reason_text

PERSON, MODEL, SYSTEM = "person", "model", "system"
ACTORS: tuple[str, ...] = (PERSON, MODEL, SYSTEM)

INBOX_KINDS = frozenset({"insert", "edit", "refile", "move", "remove", "merge", "split",
                         "claim", "put-back"})
"""Fact kinds that are inbox operations (the rest are boundaries and deliveries)."""

_SPLICE = "agent/inbox/spliced"


@dataclass(slots=True, eq=False)
class Fact:
    """One thing the log says happened, at one seq: an inbox operation on one message, a
    boundary (turn, step), a delivery (sent, request, reply) or a hold wait."""

    kind: str
    seq: int
    time: int
    actor: str = SYSTEM
    why: str = ""
    """How `actor` was derived, and what the log cannot tell about it."""
    message_id: str | None = None
    target: str | None = None  # the list it is in after the operation
    index: int | None = None
    from_target: str | None = None  # moves and re-files: where it was
    from_index: int | None = None
    lane: str = ""
    text: str = ""  # the message text after the operation
    before: str | None = None  # an edit's text before it
    turn: int | None = None
    step: int | None = None
    detail: str = ""
    related: tuple[str, ...] = ()  # other message ids (merged from, held ids, …)
    source: Mapping[str, Any] | None = None
    amount: int | None = None  # a hold wait's limit, a hold end's wait (ms); a request's n


def _int(value: Any) -> int | None:
    return value if type(value) is int else None


def _id_of(message: Any) -> str | None:
    try:
        value = message.get("id")
    except AttributeError:
        return None
    return value if type(value) is str else None


def _source(message: Any) -> Mapping[str, Any]:
    source = message.get("source") if isinstance(message, Mapping) else None
    return source if isinstance(source, Mapping) else {}


def _rotated(old: list[str | None], inserted: list[Any]) -> list[str | None] | None:
    """The ids of `inserted` when it is `old` rotated by one (a move within a list, as
    one splice over the span it crosses), recognised by its ends without reading every
    message of a long span; None when it is not such a rotation."""
    first, last = _id_of(inserted[0]), _id_of(inserted[-1])
    if last == old[0] and first == old[1] and _id_of(inserted[-2]) == old[-1]:
        return [*old[1:], old[0]]
    if first == old[-1] and last == old[-2] and _id_of(inserted[1]) == old[0]:
        return [old[-1], *old[:-1]]
    return None


def actor_of(source: Mapping[str, Any], open_tool: str | None = None) -> tuple[str, str]:
    """(actor, why) of a message's sender, from its declared source and whether a tool
    call was open when it arrived."""
    kind = source.get("kind")
    lane = source.get("lane")
    during = f" during the model's call to {open_tool}" if open_tool else ""
    if lane in LANES:
        return PERSON, "typed in dsh-tui (its source names a lane)"
    if kind == "user":
        return PERSON, ("source kind user: a person, or a sender that declared one" +
                        (f"; it arrived{during}" if during else ""))
    if kind == "tool":
        return MODEL, "context a tool call returned" + during
    if kind == "plugin":
        plugin = str(source.get("plugin") or "")
        if plugin in ("spawn_agent", "send_to_agent"):
            return MODEL, f"sent by another agent's model (tool {plugin})"
        if open_tool:
            return MODEL, f"plugin {plugin or '(unnamed)'} context{during}"
        return SYSTEM, f"plugin {plugin or '(unnamed)'}"
    return SYSTEM, f"source kind {kind!r}"


class InboxLogReader:
    """Folds session events into `Fact`s. `apply(event)` returns the facts it settles;
    `settle()` returns what a last held-back removal was (call it at the end of a stored
    log, or at any quiet moment: a move's two halves are written in one call).

    Who acted is derived from:

    - a message's `source`: `kind: user` or a `lane` is the person; `kind: tool` is
      context a model's tool call returned; a plugin `spawn_agent`/`send_to_agent` is
      another agent's model; any other plugin is the system;
    - the shape of the splice: a removal without `outcome` followed at once by an
      insertion of the same ids is a move (the person's); one not followed so is the
      loop's claim;
    - the turn around it: ids put back right after a turn the repair closed
      `interrupted` are the crash repair's (the system's), other put-backs the person's
      (undo, offer).

    What the log cannot tell, `Fact.why` says: a removal of the whole list reads the same
    whether the person cleared it or stopped the agent (or a parent cancelled it); a swap
    of two neighbours reads the same whichever of the two was moved; a sender that
    declares a `user` source reads as the person.
    """

    def __init__(self, seed_length: int = 0) -> None:
        self._seed_length = seed_length
        self._lists: dict[str, list[Mapping[str, Any]]] = {"next-turn": [], "next-step": []}
        self._ids: dict[str, list[str | None]] = {"next-turn": [], "next-step": []}
        self._turn: int | None = None
        self._turn_open = False
        self._step = 0
        self._step_open = False
        self._interrupted = False  # the last turn ended `interrupted` and none began since
        self._open_tools: dict[str, str] = {}
        self._held_back: tuple[Any, str, int, list[Mapping[str, Any]]] | None = None
        self._claimed: dict[str, int | None] = {}  # claimed, not yet recorded as sent
        self._unsent: set[str] = set()  # claimed by a turn that ended without sending them
        self._discarded: set[str] = set()
        self._moved_out: set[str] = set()  # a half move whose second half never came
        self._merged_into: dict[str, str] = {}
        self._attempt = 0
        self._answered = False  # the current attempt already had a chunk
        self._ended = False  # the current attempt's finish chunk came
        self.requests = 0
        """Model requests answered so far (each attempt that got a chunk counts once)."""

    # -- reading ------------------------------------------------------------------------------

    def pending(self, target: str) -> list[Mapping[str, Any]]:
        """The messages pending in `target` as the log has it so far (oldest first)."""
        return list(self._lists.get(target, ()))

    def position(self, message_id: str) -> tuple[str, int] | None:
        """(list, index) of a pending id, or None."""
        for target, ids in self._ids.items():
            try:
                return target, ids.index(message_id)
            except ValueError:
                continue
        return None

    # -- folding ------------------------------------------------------------------------------

    def apply(self, event: Any) -> list[Fact]:
        """The facts `event` settles (possibly a held-back removal's, then its own)."""
        kind = getattr(event, "type", None)
        seq = getattr(event, "seq", None)
        if not isinstance(kind, str):
            return []
        out: list[Fact] = []
        held = self._held_back
        if held is not None:
            self._held_back = None
            if kind == _SPLICE and self._completes_move(held, event, out):
                return out
            self._settle_removal(held, out)
        if isinstance(seq, int) and seq < self._seed_length:
            return out  # the parent's history (a fork): not this inbox
        data = getattr(event, "data", None)
        time = getattr(event, "time", 0)
        time = time if isinstance(time, int) else 0
        seq = seq if isinstance(seq, int) else -1
        try:
            self._fold(kind, seq, time, data, event, out)
        except (TypeError, ValueError, KeyError, IndexError, AttributeError):
            pass  # a malformed record: the raw event log shows it; nothing to read here
        return out

    def settle(self) -> list[Fact]:
        """Resolve a held-back removal now: no insertion completed it, so it was a claim
        (or half a move that a crash cut)."""
        held, self._held_back = self._held_back, None
        out: list[Fact] = []
        if held is not None:
            self._settle_removal(held, out)
        return out

    def _fold(self, kind: str, seq: int, time: int, data: Any, event: Any,
              out: list[Fact]) -> None:
        if not isinstance(data, Mapping):
            return
        if kind == _SPLICE:
            self._splice(event, seq, time, data, out)
        elif kind == "turn/start":
            self._turn = _int(data.get("turn"))
            self._turn_open, self._step, self._step_open = True, 0, False
            self._interrupted = False
            self._open_tools.clear()
            trigger = data.get("trigger")
            detail = ""
            if isinstance(trigger, Mapping) and isinstance(trigger.get("source"), Mapping):
                detail = f"triggered by a {trigger.get('kind') or 'message'}"
            out.append(Fact("turn-start", seq, time, SYSTEM, "the loop", turn=self._turn,
                            detail=detail))
        elif kind == "turn/end":
            reason_kind, words = reason_text(data.get("reason"))
            turn = _int(data.get("turn"))
            self._turn_open, self._step_open = False, False
            self._interrupted = reason_kind == "interrupted"
            self._unsent.update(self._claimed)
            self._claimed.clear()
            out.append(Fact("turn-end", seq, time, SYSTEM,
                            "crash repair" if self._interrupted else "the loop",
                            turn=turn if turn is not None else self._turn, detail=words))
        elif kind == "step/start":
            self._note_turn(data)
            step = _int(data.get("step"))
            self._step = step if step is not None else self._step + 1
            self._step_open = True
            self._attempt, self._answered, self._ended = 1, False, False
            out.append(Fact("step-start", seq, time, SYSTEM, "the loop", turn=self._turn,
                            step=self._step))
        elif kind == "step/end":
            self._note_turn(data)
            self._step_open = False
            out.append(Fact("step-end", seq, time, SYSTEM, "the loop", turn=self._turn,
                            step=self._step))
        elif kind in ("user/message", "steering/message"):
            self._sent(seq, time, data, out)
        elif kind == "assistant/chunk":
            self._chunk(seq, time, data, out)
        elif kind == "assistant/message":
            self._note_turn(data)
            interrupted = data.get("interrupted") is True
            out.append(Fact("reply", seq, time, MODEL, "the model's reply", turn=self._turn,
                            step=self._step, detail="interrupted" if interrupted else ""))
        elif kind == "tool/call":
            name = str(data.get("name") or "tool")
            call_id = str(data.get("callId") or "")
            self._open_tools[call_id] = name
            out.append(Fact("tool-call", seq, time, MODEL, "the model's tool call",
                            turn=self._turn, step=self._step, detail=name))
        elif kind == "tool/result":
            message = data.get("message")
            source = _source(message)
            call_id = str(data.get("callId") or source.get("callId") or "")
            name = self._open_tools.pop(call_id, "tool")
            blocks = message.get("content") if isinstance(message, Mapping) else None
            failed = data.get("isError") is True or any(
                isinstance(b, Mapping) and b.get("isError") is True for b in blocks or ())
            error = " (error)" if failed else ""
            out.append(Fact("tool-result", seq, time, SYSTEM, "the tool", turn=self._turn,
                            step=self._step, detail=name + error))
        elif kind == "inbox/hold-wait":
            held = tuple(str(i) for i in data.get("held") or () if isinstance(i, str))
            limit = _int(data.get("limitMs"))
            out.append(Fact("hold-wait", seq, time, SYSTEM,
                            "the loop waits: an item it would claim is being edited",
                            turn=_int(data.get("turn")), step=_int(data.get("step")),
                            related=held, amount=limit, detail=f"up to {limit / 1000:.0f} s"
                            if limit is not None else ""))
        elif kind == "inbox/hold-end":
            reason = str(data.get("reason") or "")
            waited = _int(data.get("waitedMs"))
            actor = PERSON if reason in ("released", "unblocked") else SYSTEM
            out.append(Fact("hold-end", seq, time, actor,
                            "the edit ended" if actor == PERSON else "the hold " + reason,
                            turn=_int(data.get("turn")), step=_int(data.get("step")),
                            amount=waited, detail=reason + (
                                f" after {waited / 1000:.1f} s" if waited is not None else "")))

    def _note_turn(self, data: Mapping[str, Any]) -> None:
        """Upstream logs may lack `turn/start`: take the turn from the record itself."""
        turn = _int(data.get("turn"))
        if turn is not None and turn != self._turn:
            self._turn, self._step = turn, 0
            self._turn_open = True
            self._claimed.clear()

    def _chunk(self, seq: int, time: int, data: Mapping[str, Any], out: list[Fact]) -> None:
        """A request's first chunk says it reached the model (or failed): one `request`
        fact per attempt; a finish ends the attempt, so a later chunk of the same step
        is a retry's."""
        turn, step = _int(data.get("turn")), _int(data.get("step"))
        if turn is not None and turn != self._turn:
            self._note_turn(data)
        if step is not None and step != self._step:
            self._step, self._attempt, self._answered, self._ended = step, 1, False, False
        chunk = data.get("chunk")
        chunk_type = chunk.get("type") if isinstance(chunk, Mapping) else None
        if self._ended:
            self._attempt, self._answered, self._ended = self._attempt + 1, False, False
        if chunk_type == "finish":
            self._ended = True
        if self._answered:
            return
        self._answered = True
        self._attempt = max(self._attempt, 1)
        reason = chunk.get("reason") if isinstance(chunk, Mapping) else None
        if chunk_type == "finish" and isinstance(reason, Mapping) and \
                reason.get("kind") in ("error", "aborted"):
            failure = reason.get("failure")
            code = failure.get("code") if isinstance(failure, Mapping) else None
            out.append(Fact("request", seq, time, MODEL, "the request failed", turn=self._turn,
                            step=self._step, amount=self._attempt,
                            detail=f"request {self._attempt} of the step failed" +
                            (f" ({code})" if code else "")))
            return
        self.requests += 1
        out.append(Fact("request", seq, time, MODEL, "the model began to answer",
                        turn=self._turn, step=self._step, amount=self._attempt,
                        detail=f"request {self._attempt} of the step answered"))

    def _sent(self, seq: int, time: int, data: Mapping[str, Any], out: list[Fact]) -> None:
        message_id = _id_of(data) or f"seq-{seq}"
        turn = _int(data.get("turn"))
        if turn is not None and turn != self._turn:
            self._note_turn(data)
        source = _source(data)
        claimed = message_id in self._claimed
        self._claimed.pop(message_id, None)
        actor, why = actor_of(source)
        if not claimed and not self._has_splices:
            why += "; the log has no inbox records (claimed and sent at once)"
        out.append(Fact("sent", seq, time, actor, why, message_id=message_id,
                        lane=lane_of(source, None), text=message_text(data),
                        turn=self._turn if self._turn_open else None,
                        step=self._step if self._step_open else None, source=source))

    _has_splices = False

    # -- splices ------------------------------------------------------------------------------

    def _splice(self, event: Any, seq: int, time: int, data: Mapping[str, Any],
                out: list[Fact]) -> None:
        self._has_splices = True
        target = data.get("target")
        items = self._lists.get(target) if isinstance(target, str) else None
        start, count = _int(data.get("start")), _int(data.get("removedCount", 0) or 0)
        if items is None or start is None or count is None or not 0 <= start <= len(items):
            return
        inserted = data.get("inserted") or []
        if type(inserted) is not list:
            inserted = list(inserted)  # a malformed record may hold anything: ids read None
        ids = self._ids[str(target)]
        removed = items[start:start + count]
        old_ids = ids[start:start + count]
        new_ids = _rotated(old_ids, inserted) if count > 2 and count == len(inserted) and \
            "outcome" not in data else None
        rotation = new_ids is not None
        if new_ids is None:
            new_ids = [_id_of(m) for m in inserted]
        items[start:start + count] = inserted
        ids[start:start + count] = new_ids
        canceled = data.get("outcome") == "canceled"
        if removed and not inserted and not canceled:
            self._held_back = (event, str(target), start, removed)
            return
        if rotation or (not canceled and removed and len(old_ids) == len(new_ids) and
                        set(old_ids) == set(new_ids)):
            self._permutation(seq, time, str(target), start, removed, inserted, old_ids,
                              new_ids, out)
            return
        if canceled:
            self._canceled(seq, time, str(target), start, removed, inserted, out)
            return
        for offset, message in enumerate(inserted):
            self._inserted(seq, time, str(target), start + offset, message, out)

    def _fact(self, kind: str, seq: int, time: int, actor: str, why: str,
              message: Mapping[str, Any], target: str, index: int, **more: Any) -> Fact:
        source = _source(message)
        fact = Fact(kind, seq, time, actor, why, message_id=_id_of(message), target=target,
                    index=index, lane=lane_of(source, target), text=message_text(message),
                    turn=self._turn, step=self._step if self._turn_open else None,
                    source=source)
        for name, value in more.items():
            setattr(fact, name, value)
        return fact

    def _inserted(self, seq: int, time: int, target: str, index: int,
                  message: Mapping[str, Any], out: list[Fact]) -> None:
        message_id = _id_of(message) or ""
        source = _source(message)
        if message_id in self._claimed or message_id in self._unsent or \
                message_id in self._moved_out:
            repaired = self._interrupted or message_id in self._moved_out
            self._claimed.pop(message_id, None)
            self._unsent.discard(message_id)
            self._moved_out.discard(message_id)
            actor, why = (SYSTEM, "crash repair: claimed (or half moved) and never recorded") \
                if repaired else (PERSON, "claimed by a turn that never sent it; put back")
            out.append(self._fact("put-back", seq, time, actor, why, message, target, index))
            return
        if message_id in self._discarded:
            self._discarded.discard(message_id)
            self._merged_into.pop(message_id, None)
            out.append(self._fact("put-back", seq, time, PERSON,
                                  "a discarded item inserted again (undo)", message, target,
                                  index))
            return
        split = source.get("splitFrom")
        if isinstance(split, str):
            out.append(self._fact("split", seq, time, PERSON, "split off another item",
                                  message, target, index, related=(split,)))
            return
        open_tool = next(reversed(self._open_tools.values()), None) if self._open_tools \
            else None
        actor, why = actor_of(source, open_tool)
        moved = source.get("movedFrom") or source.get("copiedFrom")
        if isinstance(moved, Mapping):
            how = "moved" if source.get("movedFrom") else "copied"
            why = f"{how} from agent {moved.get('agent')} by the person"
            actor = PERSON
        out.append(self._fact("insert", seq, time, actor, why, message, target, index))

    def _canceled(self, seq: int, time: int, target: str, start: int,
                  removed: list[Mapping[str, Any]], inserted: list[Mapping[str, Any]],
                  out: list[Fact]) -> None:
        if len(removed) == 1 and len(inserted) == 1 and _id_of(removed[0]) == \
                _id_of(inserted[0]) and _id_of(removed[0]) is not None:
            self._replaced(seq, time, target, start, removed[0], inserted[0], out)
            return
        whole = start == 0 and not self._lists[target] and len(removed) > 1 and not inserted
        why = ("the whole list at once: a clear, or a stop that cleared (by the person, "
               "or a parent's cancel): the log cannot tell which") if whole \
            else "a public removal (the person's remove)"
        for offset, message in enumerate(removed):
            message_id = _id_of(message)
            if message_id is None:
                continue
            into = self._merged_into.get(message_id)
            if into is not None:
                out.append(self._fact("merge", seq, time, PERSON, f"merged into #{into[:6]}",
                                      message, target, start + offset, related=(into,)))
            else:
                out.append(self._fact("remove", seq, time, PERSON, why, message, target,
                                      start + offset, detail="clear" if whole else ""))
            self._discarded.add(message_id)
        for offset, message in enumerate(inserted):
            self._inserted(seq, time, target, start + offset, message, out)

    def _replaced(self, seq: int, time: int, target: str, index: int,
                  old: Mapping[str, Any], new: Mapping[str, Any], out: list[Fact]) -> None:
        before, after = message_text(old), message_text(new)
        old_source, new_source = _source(old), _source(new)
        old_lane, new_lane = lane_of(old_source, None), lane_of(new_source, None)
        merged = new_source.get("mergedFrom")
        if isinstance(merged, list):
            new_id = _id_of(new) or ""
            for other in merged:
                if isinstance(other, str) and other != new_id:
                    self._merged_into[other] = new_id
        related = tuple(m for m in merged if isinstance(m, str)) \
            if isinstance(merged, list) else ()
        if old_lane != new_lane and before == after:
            fact = self._fact("refile", seq, time, PERSON, "its lane changed (same id)", new,
                              target, index, detail=f"{old_lane} → {new_lane}")
        else:
            detail = f"{old_lane} → {new_lane}" if old_lane != new_lane else ""
            if related:
                detail = (detail + "; " if detail else "") + f"merged {len(related)} items"
            fact = self._fact("edit", seq, time, PERSON, "replaced in place (same id)", new,
                              target, index, before=before, detail=detail, related=related)
        out.append(fact)

    def _permutation(self, seq: int, time: int, target: str, start: int,
                     removed: list[Mapping[str, Any]], inserted: list[Mapping[str, Any]],
                     old: list[str | None], new: list[str | None], out: list[Fact]) -> None:
        """A within-list move written as one splice that rotates the span it crosses."""
        end = start + len(old) - 1
        related: tuple[str, ...] = ()
        if len(old) == 2:
            moved, src, dst = removed[1], end, start
            related = (str(old[0]),)
            why = ("a swap of neighbours: which of the two the person moved cannot be known "
                   "(the other is named as related)")
        elif new[-1] == old[0] and new[:-1] == old[1:]:
            moved, src, dst, why = removed[0], start, end, "a move within its list"
        elif new[0] == old[-1] and new[1:] == old[:-1]:
            moved, src, dst, why = removed[-1], end, start, "a move within its list"
        else:
            moved, src, dst, why = inserted[0], start, start, "a reorder within its list"
        message = inserted[new.index(_id_of(moved))]
        out.append(self._fact("move", seq, time, PERSON, why, message, target, dst,
                              from_target=target, from_index=src, related=related))

    def _completes_move(self, held: tuple[Any, str, int, list[Mapping[str, Any]]],
                        event: Any, out: list[Fact]) -> bool:
        """Whether `event` is the insertion half of the move `held` began (then its fact)."""
        data = getattr(event, "data", None)
        if not isinstance(data, Mapping) or data.get("outcome") is not None:
            return False
        _event, source_target, source_start, removed = held
        inserted = [m for m in data.get("inserted") or () if isinstance(m, Mapping)]
        if _int(data.get("removedCount", 0) or 0) or not inserted or \
                [_id_of(m) for m in inserted] != [_id_of(m) for m in removed]:
            return False
        target = data.get("target")
        start = _int(data.get("start"))
        items = self._lists.get(target) if isinstance(target, str) else None
        if items is None or start is None or not 0 <= start <= len(items):
            return False
        items[start:start] = inserted
        self._ids[str(target)][start:start] = [_id_of(m) for m in inserted]
        seq = getattr(event, "seq", -1)
        time = getattr(event, "time", 0)
        for offset, message in enumerate(inserted):
            out.append(self._fact("move", seq, time, PERSON,
                                  "a move (a removal and an insertion of the same id)",
                                  message, str(target), start + offset,
                                  from_target=source_target, from_index=source_start + offset))
        return True

    def _settle_removal(self, held: tuple[Any, str, int, list[Mapping[str, Any]]],
                        out: list[Fact]) -> None:
        event, target, start, removed = held
        seq = getattr(event, "seq", -1)
        time = getattr(event, "time", 0)
        in_turn = self._turn_open and not self._step_open
        for offset, message in enumerate(removed):
            message_id = _id_of(message)
            if message_id is None:
                continue
            if in_turn:
                self._claimed[message_id] = self._turn
                out.append(self._fact("claim", seq, time, SYSTEM,
                                      "the loop's claim at a step boundary", message, target,
                                      start + offset, step=self._step + 1))
            else:
                self._moved_out.add(message_id)
                out.append(self._fact("remove", seq, time, PERSON,
                                      "half a move: the insertion never came (a crash cut it)",
                                      message, target, start + offset, detail="half move"))


def read_log(events: Iterable[Any], seed_length: int = 0) -> list[Fact]:
    """Every fact of a whole log, in order (a stored log, or a live one read back)."""
    reader = InboxLogReader(seed_length)
    out: list[Fact] = []
    for event in events:
        out.extend(reader.apply(event))
    out.extend(reader.settle())
    return out
