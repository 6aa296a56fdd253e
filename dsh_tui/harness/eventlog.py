"""Where a session keeps its events: live objects at the tail, finished stream chunks packed.

Why this exists: a provider streams token-sized deltas, so `assistant/chunk` events
are most of a long log, and as live Python objects each costs about 600 bytes. Once
a step has ended its message is assembled (`assistant/message`), and nothing on the
hot path reads those chunks again; yet they must stay readable, because
`session.events` is the contiguous, immutable record (the transcript rebuilds from
it, export and fork copy it, a test or a plugin may index any seq).

So the log is a list of segments. The last one is a plain list that appends go to.
When a step or turn ends, `compact()` turns each finished run of plain chunk events
into a `ChunkRun`: one zlib-compressed JSON blob holding the run's times and data
(a few bytes per chunk). Reading a packed seq decodes its run back into equal
`SessionEvent`s; the last decoded run is cached, so reading a run in order costs one
decode. Nothing here changes what an event is: seqs, types, times and data read back
exactly as appended, only the Python objects are new ones.
"""

from __future__ import annotations

import bisect
import json
import zlib
from collections.abc import Callable, Iterator
from typing import Any, cast

CHUNK_TYPE = "assistant/chunk"
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


class ChunkRun:
    """`count` consecutive plain chunk events, packed: first time + time gaps + data."""

    __slots__ = ("blob", "count")

    def __init__(self, blob: bytes, count: int) -> None:
        self.blob = blob
        self.count = count

    @classmethod
    def pack(cls, events: list[Any]) -> ChunkRun | None:
        """The run for `events`, or None when their data does not round-trip as JSON text."""
        first = events[0].time
        gaps = []
        previous = first
        for event in events:
            gaps.append(event.time - previous)
            previous = event.time
        try:
            text = json.dumps([first, gaps, [event.data for event in events]],
                              separators=(",", ":"), allow_nan=False)
        except (TypeError, ValueError):
            return None
        return cls(zlib.compress(text.encode("ascii"), 6), len(events))

    def unpack(self, first_seq: int, make: Make) -> list[Any]:
        """Decode this run into events made by `make`, seqs counted from `first_seq`."""
        time, gaps, datas = json.loads(zlib.decompress(self.blob))
        out = []
        seq = first_seq
        for gap, data in zip(gaps, datas, strict=True):
            time += gap
            out.append(make(CHUNK_TYPE, seq, time, data))
            seq += 1
        return out


_decoded: tuple[ChunkRun | None, list[Any]] = (None, [])
"""The last run read (any session's): reading a run in order decodes it once. One run
at most, so the cache itself stays bounded."""


def _events_of(run: ChunkRun, first_seq: int, make: Make) -> list[Any]:
    global _decoded
    cached, events = _decoded
    if cached is run:
        return events
    events = run.unpack(first_seq, make)
    _decoded = (run, events)
    return events


def forget_decoded() -> None:
    """Drop the cached decoded run (a memory measurement wants nothing extra alive)."""
    global _decoded
    _decoded = (None, [])


def _compactable(event: Any) -> bool:
    return event.type == CHUNK_TYPE and event.surface_op is None and \
        not event.ignorable and event.source_event_seqs is None


class EventLog:
    """A session's events by seq (index == seq): hot lists and packed chunk runs."""

    __slots__ = ("_cursor", "_len", "_make", "_next_check", "_segs", "_starts")

    def __init__(self, make: Make) -> None:
        self._make = make
        self._starts: list[int] = [0]
        self._segs: list[list[Any] | ChunkRun] = [[]]
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
        """How many packed runs the log holds (the soak benchmark reports it)."""
        return sum(1 for seg in self._segs if isinstance(seg, ChunkRun))

    # -- reading ------------------------------------------------------------------------------

    def __getitem__(self, index: int) -> Any:
        """The event at seq `index` (0 <= index < len; callers normalise negatives)."""
        start = self._starts[-1]
        if index >= start:
            return self._segs[-1][index - start]  # type: ignore[index]
        k = bisect.bisect_right(self._starts, index) - 1
        seg = self._segs[k]
        first = self._starts[k]
        if isinstance(seg, ChunkRun):
            return _events_of(seg, first, self._make)[index - first]
        return seg[index - first]

    def _segment_events(self, k: int) -> list[Any]:
        seg = self._segs[k]
        if isinstance(seg, ChunkRun):
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
        """Like `iter`, without the packed runs: for scans that look for anything but a
        stream chunk (a request header, a turn start), which must not decode history."""
        if start >= stop:
            return
        k = bisect.bisect_right(self._starts, start) - 1
        while start < stop and k < len(self._segs):
            first = self._starts[k]
            seg = self._segs[k]
            if isinstance(seg, ChunkRun):
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
            if not isinstance(seg, ChunkRun):
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
        """Pack the runs of plain chunk events among the next `budget` unexamined events.

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
        pieces: list[list[Any] | ChunkRun] = []
        hot: list[Any] = []
        packed = 0
        i, end = 0, len(work)
        while i < end:
            if not _compactable(work[i]):
                hot.append(work[i])
                i += 1
                continue
            j = i
            while j < end and _compactable(work[j]):
                j += 1
            run = ChunkRun.pack(work[i:j]) if j - i >= MIN_RUN else None
            if run is None:
                hot.extend(work[i:j])
            else:
                if hot:
                    pieces.append(hot)
                    hot = []
                pieces.append(run)
                packed += j - i
            i = j
        self._cursor = tail_start + stop
        if not packed:
            return 0
        rest = tail[stop:]
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
            seq += piece.count if isinstance(piece, ChunkRun) else len(piece)
        last = self._segs[-1]
        if isinstance(last, list):
            last.extend(rest)
        else:
            self._starts.append(seq)
            self._segs.append(rest)
        return packed
