"""The event log's memory: the newest lines in fixed arrays, with no object per line.

The bridge remembers the last few thousand lines for the event log (f2). As one object
per line, a full ring kept filling for minutes with 20 agents streaming, which the soak
benchmark reads as growth (issue 14; figures in docs/performance.md). Here a line is four
numbers in preallocated arrays (serial, seq, type, owner) plus a slot for a
notification's payload, so a full ring costs what an empty one does. Type names and
owners (agent id and session) are stored once and counted; an owner is let go with its
last line, so a disposed agent's session is not kept. `LogEntry`s are made only on read.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterator
from typing import Any

NO_SEQ = -1
"""The seq stored for a live notification (which has none)."""


class _Shared:
    """Values many lines share, each stored once with a count of the lines using it."""

    __slots__ = ("counts", "free", "index", "values")

    def __init__(self) -> None:
        self.values: list[Any] = []
        self.counts: list[int] = []
        self.index: dict[Any, int] = {}
        self.free: list[int] = []

    def take(self, key: Any, value: Any) -> int:
        slot = self.index.get(key)
        if slot is None:
            if self.free:
                slot = self.free.pop()
                self.values[slot] = value
                self.counts[slot] = 0
            else:
                slot = len(self.values)
                self.values.append(value)
                self.counts.append(0)
            self.index[key] = slot
        self.counts[slot] += 1
        return slot

    def release(self, slot: int, key: Callable[[Any], Any]) -> None:
        self.counts[slot] -= 1
        if not self.counts[slot]:
            del self.index[key(self.values[slot])]
            self.values[slot] = None
            self.free.append(slot)


def _type_key(value: str) -> str:
    return value


def _owner_key(value: tuple[str, Any]) -> tuple[str, int]:
    return value[0], id(value[1])


class LineRing:
    """The newest `maxlen` lines, oldest first; reading one makes a `LogEntry`.

    `make(serial, agent_id, durable, type, seq, data)` builds the entry read back: a
    durable line's data is its session (the line reads its event back when shown), a
    notification's is the payload it was given.
    """

    __slots__ = ("_data", "_head", "_make", "_owners", "_seqs", "_serials", "_size",
                 "_types", "dropped_serial", "maxlen", "owners", "types")

    def __init__(self, maxlen: int, make: Callable[..., Any]) -> None:
        self.maxlen = maxlen
        self._make = make
        self._serials = array("q", bytes(8 * maxlen))
        self._seqs = array("q", bytes(8 * maxlen))
        self._types = array("I", bytes(4 * maxlen))
        self._owners = array("I", bytes(4 * maxlen))
        self._data: list[Any] = [None] * maxlen
        self._head = 0
        self._size = 0
        self.types = _Shared()
        self.owners = _Shared()
        self.dropped_serial = 0
        """The serial of the newest line dropped (a reader that saw up to a higher serial
        missed nothing)."""

    def __len__(self) -> int:
        return self._size

    def append(self, serial: int, agent_id: str, kind: str, seq: int | None,
               data: Any) -> None:
        """Add the newest line (dropping the oldest when full). A durable line gives its
        seq and its session as `data`; a notification gives no seq."""
        if self._size == self.maxlen:
            self._drop_oldest()
        at = (self._head + self._size) % self.maxlen
        session = data if seq is not None else None
        self._serials[at] = serial
        self._seqs[at] = NO_SEQ if seq is None else seq
        self._types[at] = self.types.take(kind, kind)
        self._owners[at] = self.owners.take((agent_id, id(session)), (agent_id, session))
        self._data[at] = None if seq is not None else data
        self._size += 1

    def _drop_oldest(self) -> None:
        at = self._head
        self.dropped_serial = self._serials[at]
        self.types.release(self._types[at], _type_key)
        self.owners.release(self._owners[at], _owner_key)
        self._data[at] = None
        self._head = (at + 1) % self.maxlen
        self._size -= 1

    def serial_at(self, index: int) -> int:
        """The serial of line `index` (0 the oldest), without making its entry."""
        return self._serials[(self._head + index) % self.maxlen]

    def __getitem__(self, index: int) -> Any:
        if index < 0:
            index += self._size
        if not 0 <= index < self._size:
            raise IndexError("log line index out of range")
        at = (self._head + index) % self.maxlen
        agent_id, session = self.owners.values[self._owners[at]]
        seq = self._seqs[at]
        durable = seq != NO_SEQ
        return self._make(self._serials[at], agent_id, durable,
                          self.types.values[self._types[at]], seq if durable else None,
                          session if durable else self._data[at])

    def __iter__(self) -> Iterator[Any]:
        for index in range(self._size):
            yield self[index]

    def __reversed__(self) -> Iterator[Any]:
        for index in range(self._size - 1, -1, -1):
            yield self[index]

    def newest_first(self, keep_type: Callable[[str], bool],
                     agent_id: str | None = None) -> Iterator[Any]:
        """The entries of the lines whose type `keep_type` accepts (each type asked once)
        and, given `agent_id`, of that agent only, newest first. The other lines are
        skipped by their numbers, without making their entry: the event log's reload
        (f2, a filter) walks thousands of lines to show a few hundred."""
        kept = {slot for slot, kind in enumerate(self.types.values)
                if kind is not None and keep_type(kind)}
        if not kept:
            return
        owners = self.owners.values
        mine = None if agent_id is None else \
            {slot for slot, owner in enumerate(owners) if owner is not None and owner[0] == agent_id}
        if mine is not None and not mine:
            return
        types, make = self.types.values, self._make
        type_slots, owner_slots, seqs, serials, datas = \
            self._types, self._owners, self._seqs, self._serials, self._data
        head, maxlen = self._head, self.maxlen
        for index in range(self._size - 1, -1, -1):
            at = (head + index) % maxlen
            slot = type_slots[at]
            if slot not in kept or (mine is not None and owner_slots[at] not in mine):
                continue
            who, session = owners[owner_slots[at]]
            seq = seqs[at]
            if seq != NO_SEQ:
                yield make(serials[at], who, True, types[slot], seq, session)
            else:
                yield make(serials[at], who, False, types[slot], None, datas[at])

    def newer_than(self, serial: int) -> list[Any]:
        """The lines with a serial above `serial`, oldest first (found from the newest end
        by their serials; only those lines are made into entries)."""
        first = self._size
        while first > 0 and self.serial_at(first - 1) > serial:
            first -= 1
        return [self[index] for index in range(first, self._size)]
