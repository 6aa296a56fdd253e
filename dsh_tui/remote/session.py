"""A runtime session's log as this process holds it: the runtime's durable events, in seq order.

Events come from the follow stream (and history pages) exactly as the runtime sent them;
`admit` takes only the next seq, so the log here is a gap-free prefix of the runtime's,
event for event (`wire` keeps each record as received, to compare with the runtime's own
file). The runtime writes its log itself: `append` refuses, except a `session/title`,
which asks the runtime to rename (`session/rename`) and arrives back through the stream.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import Any, overload

from dsh_tui.harness.session import SessionEvent


class RefusedError(RuntimeError):
    """A write this process cannot make on a runtime's session (the runtime writes its own
    log); the message says what to do instead."""


class _Prefix(Sequence[SessionEvent]):
    """The first `count` events of a list that only grows: a snapshot that stays valid
    while later events are admitted, without copying the log on every read."""

    __slots__ = ("_count", "_items")

    def __init__(self, items: list[SessionEvent], count: int) -> None:
        self._items = items
        self._count = count

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> SessionEvent: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[SessionEvent]: ...

    def __getitem__(self, index: int | slice) -> SessionEvent | Sequence[SessionEvent]:
        if isinstance(index, slice):
            return self._items[:self._count][index]
        if index < 0:
            index += self._count
        if not 0 <= index < self._count:
            raise IndexError("session event index out of range")
        return self._items[index]

    def __iter__(self) -> Iterator[SessionEvent]:
        items = self._items
        for index in range(self._count):
            yield items[index]


def event_of(record: Mapping[str, Any]) -> SessionEvent:
    """A runtime record as a `SessionEvent` (same type, seq, time, data, surface keys)."""
    seqs = record.get("sourceEventSeqs")
    return SessionEvent(str(record.get("type")), int(record["seq"]), int(record.get("time") or 0),
                        record.get("data"), record.get("surfaceOp"),
                        list(seqs) if isinstance(seqs, list) and all(
                            type(s) is int for s in seqs) else None,
                        record.get("ignorable") is True)


class RemoteSession:
    """The `SessionSurface` of a runtime session (see the module docstring)."""

    def __init__(self, header: Mapping[str, Any],
                 rename: Callable[[str], None] | None = None) -> None:
        self._header = MappingProxyType(dict(header))
        self._events: list[SessionEvent] = []
        self.wire: list[dict[str, Any]] = []
        """Every admitted record exactly as the runtime sent it (deep-equal to its file)."""
        self._rename = rename

    @property
    def id(self) -> str:
        """The runtime's session id (the agent's id too)."""
        return str(self._header.get("id", ""))

    @property
    def header(self) -> Mapping[str, Any]:
        """The header the runtime sent with the first snapshot (`createdAt`, `cwd`,
        `parentSession`, `origin`, `delegationDepth`, `agentPreset`, …)."""
        return self._header

    @property
    def events(self) -> Sequence[SessionEvent]:
        """The events admitted so far: a snapshot, valid while later ones arrive."""
        return _Prefix(self._events, len(self._events))

    @property
    def seq(self) -> int:
        """The seq the next admitted event must have (= how many are held)."""
        return len(self._events)

    def adopt_header(self, header: Mapping[str, Any]) -> None:
        """Take the header the runtime sent with a snapshot (before any event is held,
        so a reader never sees the header change under events it already read)."""
        if not self._events and isinstance(header, Mapping) and header.get("id") == self.id:
            self._header = MappingProxyType(dict(header))

    def admit(self, record: Mapping[str, Any]) -> SessionEvent:
        """Hold the runtime's next record; raises ValueError unless its seq is `seq`."""
        event = event_of(record)
        if event.seq != len(self._events):
            raise ValueError(f"session {self.id}: expected seq {len(self._events)}, "
                             f"got {event.seq}")
        self._events.append(event)
        self.wire.append(dict(record))
        return event

    def append(self, type: str, data: Any = None) -> SessionEvent:
        """Refuse: the runtime writes its own log. A `session/title` is the exception: it
        asks the runtime to rename the session; the returned record is the request (seq:
        where it is expected), the durable one arrives through the follow stream."""
        if type == "session/title" and isinstance(data, Mapping) and self._rename is not None:
            title = data.get("title")
            if isinstance(title, str) and title.strip():
                self._rename(title.strip())
                return SessionEvent(type, len(self._events), 0, dict(data))
        raise RefusedError(f"session {self.id} runs in a dsh runtime, which writes its own "
                           f"log: dsh-tui cannot append {type!r} to it")
