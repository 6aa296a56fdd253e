"""The live session store: which sessions are published, and their lifecycle events.

`enter` + `announce` are separate so a composite creation transaction can roll a
vetoed announcement back with a paired `session/disposed`.
"""

from __future__ import annotations

import builtins
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .events import EventBus, _observe
from .once import once
from .session import Session, SessionError, SessionEvent, make_header

if TYPE_CHECKING:
    pass

log = logging.getLogger("dsh_tui.harness.store")


class SessionForkError(SessionError):
    """A fork that cannot be made (§1.3); `code` says why: `INVALID_BOUNDARY`, `OPEN_TURN`,
    `SESSION_NOT_FOUND`, `SESSION_NOT_LIVE` or `SESSION_ALREADY_EXISTS`."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.code = code


class SessionEntry:
    """The mutable lifecycle state of one exact store entry."""

    __slots__ = ("announced", "announcing", "appending", "bus", "detach_requested", "id", "key",
                 "session", "store")

    def __init__(self, store: SessionStore, session: Session, key: object | None) -> None:
        self.store = store
        self.bus: EventBus = store.bus
        self.session = session
        self.id = session.id
        self.key = key
        self.announced = False
        self.announcing = False
        self.appending = False
        self.detach_requested = False

    def resolve_event_listeners(self) -> list[Callable[..., Any]]:
        """The `session/event` listeners for this session, resolved before the append commits
        (a failure here aborts the append, §1.2.6)."""
        return self.bus.resolve("session/event", self.key)

    def publish(self, listeners: list[Callable[..., Any]], session: Session,
                event: SessionEvent) -> None:
        """Call each listener after the commit (§1.2.5), isolated: a raise or a rejected
        awaitable is logged and swallowed, and never undoes the append."""
        for listener in listeners:
            try:
                result = listener(session, event)
            except Exception as error:
                log.warning('session "%s": session/event listener threw: %s', self.id, error,
                            exc_info=error)
                continue
            if result is not None:  # the usual listener returns None: no closure per event
                _observe(result, lambda error: log.warning(
                    'session "%s": session/event listener rejected: %s', self.id, error))

    def finish_detach(self) -> None:
        """Run a detach that was deferred because it came during a publication."""
        self.store._detach_entered(self)


class SessionStore:
    """`ctx.sessions`: live sessions by id, flush, fork."""

    def __init__(self, bus: EventBus) -> None:
        self.bus = bus
        self._entries: dict[str, SessionEntry] = {}
        self._counter = 0

    # -- lookup -------------------------------------------------------------------------------

    def get(self, session_id: str) -> Session | None:
        """The live (entered) session with this id, or None."""
        entry = self._entries.get(session_id)
        return entry.session if entry is not None else None

    def list(self) -> list[Session]:
        """Every live session, in the order they entered."""
        return [entry.session for entry in self._entries.values()]

    def has(self, session_id: str) -> bool:
        """Whether a session with this id is live here."""
        return session_id in self._entries

    # -- lifecycle ----------------------------------------------------------------------------

    def prepare(self, session_id: str | None = None, *, seed: Sequence[Any] | None = None,
                meta: Mapping[str, Any] | None = None, restore: bool = False,
                header: Mapping[str, Any] | None = None) -> Session:
        """Build (validate) a session without publishing it."""
        if session_id is None:
            while True:
                self._counter += 1
                session_id = f"session-{self._counter}"
                if session_id not in self._entries:
                    break
        if session_id in self._entries:
            raise SessionError(f'session "{session_id}" already exists')
        return Session(session_id, seed, header if header is not None else
                       make_header(session_id, meta), restore=restore)

    def enter(self, session: Session, key: object | None = None) -> Callable[[], None]:
        """Insert `session` (routing its events by `key`); returns its idempotent detach."""
        if session.id in self._entries:
            raise SessionError(f'session "{session.id}" already exists')
        if session._entry is not None:
            raise SessionError(f'session "{session.id}" is already attached to a store')
        entry = SessionEntry(self, session, key)
        self._entries[session.id] = entry
        session._entry = entry

        def detach() -> None:
            if entry.announcing or entry.appending:  # deferred until that publication ends
                entry.detach_requested = True
                return
            self._detach_entered(entry)

        return once(detach)

    def _detach_entered(self, entry: SessionEntry) -> None:
        entry.detach_requested = False
        if self._entries.get(entry.id) is not entry:
            return  # a stale detach never removes a later same-id entry
        del self._entries[entry.id]
        entry.session._entry = None
        if entry.announced:
            self.bus.emit_contained("session/disposed", entry.key, entry.session,
                                    label=f'session "{entry.id}": session/disposed')

    def _live_entry(self, session: Session) -> SessionEntry:
        entry = session._entry
        if entry is None or self._entries.get(entry.id) is not entry:
            raise SessionError(f'session "{session.id}" is not live in this store')
        return entry

    def announce(self, session: Session) -> None:
        """Emit `session/created`; a synchronous listener raise vetoes (propagates)."""
        entry = self._live_entry(session)
        if entry.announced or entry.announcing:
            raise SessionError(f'session "{entry.id}" was already announced')
        entry.announced = True
        entry.announcing = True
        try:
            self.bus.emit_vetoing("session/created", entry.key, session)
        finally:
            entry.announcing = False
            if entry.detach_requested and not entry.appending:
                self._detach_entered(entry)

    def create(self, session_id: str | None = None, *, seed: Sequence[Any] | None = None,
               meta: Mapping[str, Any] | None = None, key: object | None = None) -> Session:
        """Prepare, enter and announce in one step (rolled back on a veto)."""
        session = self.prepare(session_id, seed=seed, meta=meta)
        detach = self.enter(session, key)
        try:
            self.announce(session)
        except BaseException:
            detach()
            raise
        return session

    async def flush(self, session: Session) -> bool:
        """Await every `session/flush` listener (persistence drains its buffer)."""
        entry = self._live_entry(session)
        count = await self.bus.parallel("session/flush", entry.key, session)
        return count > 0

    # -- fork ---------------------------------------------------------------------------------

    def fork_seed(self, source: Session | str, boundary: int | None = None
                  ) -> tuple[Session, builtins.list[SessionEvent]]:
        """The events a fork up to `boundary` (default: the last event) would copy, and the
        live source. Raises `SessionForkError` for a boundary inside an open turn (§1.3)."""
        live = self._resolve_fork_source(source)
        events = live.events
        if boundary is None:
            if not events:
                return live, []
            boundary = len(events) - 1
        if type(boundary) is not int or boundary < 0:
            raise SessionForkError(f'fork boundary for session "{live.id}" must be a '
                                   f"non-negative safe integer, got {boundary}", "INVALID_BOUNDARY")
        if boundary >= len(events):
            last = events[-1].seq if events else "none"
            raise SessionForkError(f'fork boundary {boundary} does not exist in session '
                                   f'"{live.id}" (last seq: {last})', "INVALID_BOUNDARY")
        prefix = list(events[: boundary + 1])
        for event in reversed(prefix):
            if event.type == "turn/end":
                break
            if event.type == "turn/start":
                raise SessionForkError(f'fork boundary {boundary} in session "{live.id}" ends '
                                       f"inside open turn {event.data.get('turn')}", "OPEN_TURN")
        return live, prefix

    def fork(self, source: Session | str, boundary: int | None = None,
             child_id: str | None = None, key: object | None = None) -> Session:
        """Create and announce a child session seeded from `source` up to `boundary` (§1.3).

        The child's header records `parentSession` and `seedLength`, so its inbox replays
        only its own splices: a fork never inherits its parent's pending work (§2.6).
        """
        if child_id is not None and self.get(child_id) is not None:
            raise SessionForkError(f'session "{child_id}" already exists', "SESSION_ALREADY_EXISTS")
        live, seed = self.fork_seed(source, boundary)
        meta: dict[str, Any] = {"parentSession": live.id, "seedLength": len(seed)}
        if live.header.get("cwd") is not None:
            meta["cwd"] = live.header["cwd"]
        return self.create(child_id, seed=seed, meta=meta, key=key)

    def _resolve_fork_source(self, source: Session | str) -> Session:
        if isinstance(source, str):
            found = self.get(source)
            if found is None:
                raise SessionForkError(f'session "{source}" not found', "SESSION_NOT_FOUND")
            return found
        live = self.get(source.id)
        if live is None:
            raise SessionForkError(f'session "{source.id}" not found', "SESSION_NOT_FOUND")
        if live is not source:
            raise SessionForkError(f'session "{source.id}" is not the live store instance',
                                   "SESSION_NOT_LIVE")
        return source
