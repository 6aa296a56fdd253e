"""Where a session keeps its events: live objects at the tail, finished runs packed.

Stream chunks are most of a long log and cost hundreds of bytes each as live objects, yet
`session.events` must stay the contiguous, immutable record (the transcript rebuilds from
it, export and fork copy it, a plugin may index any seq). So the log is a list of segments:
appends go to a plain list, and `compact()` packs each finished run of chunks into a
`ChunkRun` and of bookkeeping into a `RecordRun` (zlib-compressed JSON). Reading a packed
seq decodes its run into equal `SessionEvent`s (the last run read is cached): seqs, types,
times and data read back exactly as appended. What is read without a decode stays live
(`LIVE_TYPES`). The figures behind this are in docs/performance.md.
"""

from __future__ import annotations

import bisect
import json
import zlib
from array import array
from collections.abc import Callable, Iterator
from typing import Any, Self, cast

CHUNK_TYPE = "assistant/chunk"
LIVE_TYPES = frozenset({"user/message", "assistant/message", "tool/result",
                        "request/header", "request/context"})
"""Never packed: the surface events (the model history; `derive_messages` keeps their
messages, and a surface replace reads the node it rewrites), and the types the session
finds by scanning only the live events (`request_header` and `request_context` use
`iter_live`). A turn's start is packed: the session keeps its number (`last_turn`)."""
MIN_RUN = 16
"""Shorter runs stay as objects: packing them would save less than it costs to read."""
COMPACT_BUDGET = 4_000
"""Events examined per `compact()` call, so a resumed long log is packed over a few
steps instead of in one pause."""
HOT_LIMIT = 512
"""Unexamined events the tail may hold while a step streams: past this, the older ones
are packed without waiting for the step to end (a 10,000-token reply would otherwise
keep 10,000 live chunk objects until it finishes)."""
HOT_KEEP = 128
"""Events left live at the tail when a streaming step is packed early: what the app's
next flush (a few per agent at 60 flushes a second) still reads as objects."""

Make = Callable[..., Any]


def _time_gaps(events: list[Any]) -> tuple[Any, list[Any]]:
    """The first event's time and each event's gap to the one before (the first's is 0):
    small numbers that compress well, and add back up to every time exactly."""
    first = events[0].time
    gaps = []
    previous = first
    for event in events:
        gaps.append(event.time - previous)
        previous = event.time
    return first, gaps


_DELTA_KEYS = ("turn", "step", "chunk")
_DELTA_CHUNK_KEYS = ("type", "index", "text")


def _delta_shape(data: Any) -> tuple[Any, ...] | None:
    """(turn, step, chunk type, index) of a plain text delta as the loop logs it, keys in
    exactly that order (`{"turn", "step", "chunk": {"type", "index", "text"}}`), else None."""
    if type(data) is not dict or len(data) != 3 or tuple(data) != _DELTA_KEYS:
        return None
    chunk = data["chunk"]
    if type(chunk) is not dict or len(chunk) != 3 or tuple(chunk) != _DELTA_CHUNK_KEYS:
        return None
    turn, step, kind, index = data["turn"], data["step"], chunk["type"], chunk["index"]
    if type(chunk["text"]) is not str or type(kind) is not str or not all(
            type(value) in (int, str) for value in (turn, step, index)):
        return None
    return turn, step, kind, index


class PackedRun:
    """`count` consecutive events, packed as one zlib-compressed JSON array of columns
    (its subclasses say which): far smaller than the events as live objects."""

    __slots__ = ("blob", "count")

    def __init__(self, blob: bytes, count: int) -> None:
        self.blob = blob
        self.count = count

    @classmethod
    def _packed(cls, columns: list[Any], count: int) -> Self | None:
        """The run holding `columns`, or None when they do not round-trip as JSON text."""
        try:
            text = json.dumps(columns, separators=(",", ":"), allow_nan=False)
        except (TypeError, ValueError):
            return None
        return cls(zlib.compress(text.encode("ascii"), 6), count)

    def _columns(self) -> list[Any]:
        columns: list[Any] = json.loads(zlib.decompress(self.blob))
        return columns


class ChunkRun(PackedRun):
    """`count` consecutive plain chunk events, packed: first time + time gaps + data.

    The data are stored by column: the run's plain text deltas as one joined text and
    each one's length (with the few `(turn, step, type, index)` shapes they share), and
    any other chunk (block start and end, usage, tool-call deltas) as it is. Each delta
    as its own small JSON object cost about 3 bytes a chunk compressed, most of it the
    repeated keys; the joined text compresses like prose (issue 14).
    """

    __slots__ = ()

    @classmethod
    def pack(cls, events: list[Any]) -> ChunkRun | None:
        """The run for `events`, or None when their data does not round-trip as JSON text."""
        first, gaps = _time_gaps(events)
        shapes: dict[tuple[Any, ...], int] = {}
        which: list[int] = []  # per event: its shape, or -1 (kept whole in `others`)
        lengths: list[int] = []
        texts: list[str] = []
        others: list[Any] = []
        for event in events:
            data = event.data
            shape = _delta_shape(data)
            if shape is None:
                which.append(-1)
                others.append(data)
                continue
            which.append(shapes.setdefault(shape, len(shapes)))
            text = data["chunk"]["text"]
            lengths.append(len(text))
            texts.append(text)
        return cls._packed([first, gaps, list(shapes), which, lengths, "".join(texts),
                            others], len(events))

    def unpack(self, first_seq: int, make: Make) -> list[Any]:
        """Decode this run into events made by `make`, seqs counted from `first_seq`."""
        time, gaps, shapes, which, lengths, joined, others = self._columns()
        out = []
        seq = first_seq
        at = 0
        deltas = iter(lengths)
        rest = iter(others)
        for gap, shape in zip(gaps, which, strict=True):
            time += gap
            if shape < 0:
                data = next(rest)
            else:
                turn, step, kind, index = shapes[shape]
                end = at + next(deltas)
                data = {"turn": turn, "step": step,
                        "chunk": {"type": kind, "index": index, "text": joined[at:end]}}
                at = end
            out.append(make(CHUNK_TYPE, seq, time, data))
            seq += 1
        return out


class RecordRun(PackedRun):
    """`count` consecutive bookkeeping events (any type but a chunk or `LIVE_TYPES`, no
    surface marker), packed: first time + time gaps + types + data + which are ignorable."""

    __slots__ = ()

    @classmethod
    def pack(cls, events: list[Any]) -> RecordRun | None:
        """The run for `events`, or None when their data does not round-trip as JSON text."""
        first, gaps = _time_gaps(events)
        return cls._packed([first, gaps, [event.type for event in events],
                            [event.data for event in events],
                            [i for i, event in enumerate(events) if event.ignorable]],
                           len(events))

    def unpack(self, first_seq: int, make: Make) -> list[Any]:
        """Decode this run into events made by `make`, seqs counted from `first_seq`."""
        time, gaps, types, datas, ignorable = self._columns()
        flagged = set(ignorable)
        out = []
        seq = first_seq
        for index, (gap, kind, data) in enumerate(zip(gaps, types, datas, strict=True)):
            time += gap
            out.append(make(kind, seq, time, data, None, None, index in flagged))
            seq += 1
        return out


Packed = ChunkRun | RecordRun
PACKED = (ChunkRun, RecordRun)


_decoded: tuple[Packed | None, list[Any]] = (None, [])
"""The last chunk run read (any session's): reading a run in order decodes it once. One
run at most, so the cache itself stays bounded."""
_decoded_records: tuple[Packed | None, list[Any]] = (None, [])
"""The last record run read, apart: reading a record between chunks (the event log, a
transcript rebuild) does not throw away the chunk run being read."""


def _events_of(run: Packed, first_seq: int, make: Make) -> list[Any]:
    global _decoded, _decoded_records
    chunks = type(run) is ChunkRun
    cached, events = _decoded if chunks else _decoded_records
    if cached is run:
        return events
    events = run.unpack(first_seq, make)
    if chunks:
        _decoded = (run, events)
    else:
        _decoded_records = (run, events)
    return events


def forget_decoded() -> None:
    """Drop the cached decoded runs (a memory measurement wants nothing extra alive)."""
    global _decoded, _decoded_records
    _decoded = _decoded_records = (None, [])


_LIVE, _CHUNK, _RECORD = 0, 1, 2


def _kind(event: Any) -> int:
    """How `compact()` treats `event`: kept live, packed in a chunk run or in a record run."""
    kind = event.type
    if kind in LIVE_TYPES:
        return _LIVE
    if event.surface_op is not None or event.source_event_seqs is not None:
        return _LIVE  # (only surface types carry these; a session rejects them elsewhere)
    if kind == CHUNK_TYPE:
        return _LIVE if event.ignorable else _CHUNK
    return _RECORD


class EventLog:
    """A session's events by seq (index == seq): hot lists and packed chunk runs."""

    __slots__ = ("_cursor", "_len", "_make", "_next_check", "_segs", "_starts")

    def __init__(self, make: Make) -> None:
        self._make = make
        self._starts = array("q", [0])  # first seq of each segment (8 bytes, no int object)
        self._segs: list[list[Any] | Packed] = [[]]
        self._len = 0
        self._cursor = 0  # every seq below it has been examined by compact()
        self._next_check = 0  # compact_streaming() looks again once the log is this long

    def __len__(self) -> int:
        return self._len

    def append(self, event: Any) -> None:
        """Add one event at the tail (always a plain object; packing happens in `compact()`)."""
        self._segs[-1].append(event)  # type: ignore[union-attr]
        self._len += 1

    @property
    def cursor(self) -> int:
        """Every seq below it has been examined by `compact()`."""
        return self._cursor

    @property
    def packed_runs(self) -> int:
        """How many packed chunk runs the log holds (the soak benchmark reports it)."""
        return sum(1 for seg in self._segs if isinstance(seg, ChunkRun))

    @property
    def packed_records(self) -> int:
        """How many bookkeeping events the log holds packed in record runs."""
        return sum(seg.count for seg in self._segs if isinstance(seg, RecordRun))

    # -- reading ------------------------------------------------------------------------------

    def __getitem__(self, index: int) -> Any:
        """The event at seq `index` (0 <= index < len; callers normalise negatives)."""
        start = self._starts[-1]
        if index >= start:
            return self._segs[-1][index - start]  # type: ignore[index]
        k = bisect.bisect_right(self._starts, index) - 1
        seg = self._segs[k]
        first = self._starts[k]
        if isinstance(seg, PACKED):
            return _events_of(seg, first, self._make)[index - first]
        return seg[index - first]

    def _segment_events(self, k: int) -> list[Any]:
        seg = self._segs[k]
        if isinstance(seg, PACKED):
            return _events_of(seg, self._starts[k], self._make)
        return seg

    def iter(self, start: int, stop: int) -> Iterator[Any]:
        """Events of seqs start..stop-1 in order, one decode per packed run."""
        if start >= stop:
            return
        k = bisect.bisect_right(self._starts, start) - 1
        while start < stop and k < len(self._segs):
            first = self._starts[k]
            events = self._segment_events(k)
            end = min(stop, first + len(events))
            for i in range(start - first, end - first):
                yield events[i]
            start = end
            k += 1

    def iter_live(self, start: int, stop: int) -> Iterator[Any]:
        """Like `iter`, without the packed runs: for scans that look for a type of
        `LIVE_TYPES` (a request header, a turn start), which must not decode history."""
        if start >= stop:
            return
        k = bisect.bisect_right(self._starts, start) - 1
        while start < stop and k < len(self._segs):
            first = self._starts[k]
            seg = self._segs[k]
            if isinstance(seg, PACKED):
                start = first + seg.count
            else:
                end = min(stop, first + len(seg))
                for i in range(start - first, end - first):
                    yield seg[i]
                start = end
            k += 1

    def riter_live(self, stop: int) -> Iterator[Any]:
        """Like `riter`, without the packed runs."""
        k = bisect.bisect_right(self._starts, stop - 1) - 1 if stop > 0 else -1
        top = stop
        while k >= 0:
            first = self._starts[k]
            seg = self._segs[k]
            if not isinstance(seg, PACKED):
                for i in range(top - first - 1, -1, -1):
                    yield seg[i]
            top = first
            k -= 1

    def riter(self, stop: int) -> Iterator[Any]:
        """Events of seqs stop-1 down to 0."""
        if stop <= 0:
            return
        k = bisect.bisect_right(self._starts, stop - 1) - 1
        top = stop
        while k >= 0:
            first = self._starts[k]
            events = self._segment_events(k)
            for i in range(top - first - 1, -1, -1):
                yield events[i]
            top = first
            k -= 1

    # -- packing ------------------------------------------------------------------------------

    def compact_streaming(self) -> int:
        """While a step streams: pack all but the last `HOT_KEEP` events once more than
        `HOT_LIMIT` wait unexamined. A run still growing is split there; the part packed
        is final (events are immutable), the rest is packed later."""
        if self._len < self._next_check:
            return 0
        waiting = self._len - self._cursor
        if waiting <= HOT_LIMIT:
            self._next_check = self._cursor + HOT_LIMIT + 1
            return 0
        self._next_check = self._len + HOT_LIMIT - HOT_KEEP
        if waiting > 2 * HOT_LIMIT:
            return 0  # an unpacked resumed log: step ends and pack() take it a budget at a time
        return self.compact(budget=waiting - HOT_KEEP)

    def compact(self, budget: int = COMPACT_BUDGET) -> int:
        """Pack the finished runs among the next `budget` unexamined events: plain chunk
        events into `ChunkRun`s (runs of MIN_RUN or more), bookkeeping events into
        `RecordRun`s. A run of records at the end of what is examined is left for the
        next call, which may find it longer (a step's end, then its turn's end).

        Call it only where no chunk run is still growing at the tail (a step or turn
        just ended). Returns how many events were packed.
        """
        tail_start = self._starts[-1]
        tail = self._segs[-1]
        assert isinstance(tail, list)
        begin = self._cursor - tail_start
        stop = min(len(tail), begin + budget)
        if stop - begin < MIN_RUN:
            return 0
        work = tail[begin:stop]
        pieces: list[list[Any] | Packed] = []
        hot: list[Any] = []
        packed = 0
        i, end = 0, len(work)
        examined = end
        while i < end:
            kind = _kind(work[i])
            if kind == _LIVE:
                hot.append(work[i])
                i += 1
                continue
            j = i + 1
            while j < end and _kind(work[j]) == kind:
                j += 1
            run: Packed | None
            if kind == _CHUNK:
                run = ChunkRun.pack(work[i:j]) if j - i >= MIN_RUN else None
            elif j == end:
                examined = i  # records at the end: examined again with what follows them
                break
            else:
                run = RecordRun.pack(work[i:j])
            if run is None:
                hot.extend(work[i:j])
            else:
                if hot:
                    pieces.append(hot)
                    hot = []
                pieces.append(run)
                packed += j - i
            i = j
        self._cursor = tail_start + begin + examined
        if not packed:
            return 0
        rest = tail[begin + examined:]
        del tail[begin:]  # the examined prefix stays where it is, as a finished segment
        if hot:
            pieces.append(hot)
        if not tail:
            del self._starts[-1]
            del self._segs[-1]
        elif isinstance(pieces[0], list):
            tail.extend(cast(list[Any], pieces.pop(0)))
        seq = tail_start + len(tail)
        for piece in pieces:
            self._starts.append(seq)
            self._segs.append(piece)
            seq += piece.count if isinstance(piece, PACKED) else len(piece)
        last = self._segs[-1]
        if isinstance(last, list):
            last.extend(rest)
        else:
            self._starts.append(seq)
            self._segs.append(rest)
        return packed
