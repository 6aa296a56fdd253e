"""A read-only world around one session log, for `dsh-tui view FILE`.

Logs written by other tools (or by a crashed process) may have seq gaps,
unknown event types or shapes this build would refuse to append, so the view
keeps events exactly as read and never validates them the way a live
session does. Every sending or editing call raises ReadOnlyError.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

from .agent import AgentOptions, AgentStatus
from .context import Context
from .holds import InboxHold
from .messages import UserMessage
from .persistence.pages import LogPages
from .session import SessionEvent, derive_event_message


class ReadOnlyError(RuntimeError):
    """Raised by every send or edit on a recorded world; the UI greys those keys out first
    (`ctx.read_only`), so reaching this is a bug or a script."""

    def __init__(self, what: str = "this session") -> None:
        super().__init__(f"{what} is open read-only: nothing can be sent or edited")


class ReadOnlySession:
    """The read surface of a Session over events kept as recorded."""

    def __init__(self, header: Mapping[str, Any], events: Sequence[SessionEvent],
                 skipped_bytes: int = 0, pages: LogPages | None = None) -> None:
        self._header = MappingProxyType(dict(header))
        self._events = tuple(events)
        self._skipped = skipped_bytes
        self.pages = pages
        """A huge log's window of pages (`persistence/pages.py`): `events` are the window's,
        and `page_earlier()`/`page_later()` move it; None when the log was read whole."""

    @property
    def skipped_bytes(self) -> int:
        """Bytes of the log before `events` that are not read (a huge log's window)."""
        return self.pages.before if self.pages is not None else self._skipped

    @property
    def later_bytes(self) -> int:
        """Bytes of the log after `events` that are not read."""
        return self.pages.after if self.pages is not None else 0

    def page_earlier(self) -> int:
        """Read the page before the window: how many events came in at the front (0: none)."""
        return self.pages.earlier() if self.pages is not None else 0

    def page_later(self) -> int:
        """Read the page after the window: how many events left at the front (-1: none came)."""
        return self.pages.later() if self.pages is not None else -1

    @property
    def id(self) -> str:
        """The header's `id` (a log without one shows as `session`)."""
        return str(self._header.get("id", "session"))

    @property
    def header(self) -> Mapping[str, Any]:
        """The header as recorded, read-only and unvalidated."""
        return self._header

    @property
    def events(self) -> tuple[SessionEvent, ...]:
        """Every event as read, gaps and unknown types included (never re-validated); with
        `pages`, those of the pages loaded now."""
        return self.pages.events if self.pages is not None else self._events

    @property
    def seq(self) -> int:
        """One past the last recorded seq (not the count: a recorded log may have gaps)."""
        events = self.events
        return (events[-1].seq + 1) if events else 0

    first_live_seq = 0

    def derive_messages(self) -> list[dict[str, Any]]:
        """The model history as the log shows it (surface events and `user/message`s), derived
        with the live session's projection so the transcript reads the same."""
        out = []
        for event in self.events:
            if event.surface_op is None and event.type != "user/message":
                continue
            message = derive_event_message(event)
            if message is not None:
                out.append(message)
        return out

    def request_header(self) -> Any:
        """The last recorded `request/header`'s header (route, system, tools), or None."""
        for event in reversed(self.events):
            if event.type == "request/header" and isinstance(event.data, Mapping):
                return event.data.get("header")
        return None

    def last_turn(self) -> int:
        """The turn of the last `turn/start` in the log (0 if none)."""
        for event in reversed(self.events):
            if event.type == "turn/start" and isinstance(event.data, Mapping):
                turn = event.data.get("turn")
                if isinstance(turn, int):
                    return turn
        return 0

    def append(self, *_args: Any, **_kwargs: Any) -> SessionEvent:
        """Refuse: a recorded log is never written to."""
        raise ReadOnlyError()


class ReadOnlyInbox:
    """What was pending when the log ends (a best-effort replay; bad splices are skipped)."""

    def __init__(self, session: ReadOnlySession) -> None:
        lists: dict[str, list[UserMessage]] = {"next-turn": [], "next-step": []}
        start = session.header.get("seedLength", 0) or 0
        for event in session.events:
            if event.seq < start or event.type != "agent/inbox/spliced":
                continue
            data = event.data if isinstance(event.data, Mapping) else {}
            items = lists.get(data.get("target", ""))
            begin, removed = data.get("start", 0), data.get("removedCount", 0)
            if items is None or not isinstance(begin, int) or not isinstance(removed, int):
                continue
            try:
                inserted = [UserMessage.from_json(m) for m in data.get("inserted") or ()]
            except (TypeError, ValueError):
                continue
            items[begin:begin + removed] = inserted
        self.next_turn = tuple(lists["next-turn"])
        self.next_step = tuple(lists["next-step"])

    @property
    def has_pending(self) -> bool:
        """Whether the log ended with work still pending (shown, never run)."""
        return bool(self.next_turn or self.next_step)

    def get(self, message_id: str) -> UserMessage | None:
        """The pending message with this id, as the log left it (None if not pending)."""
        for message in (*self.next_turn, *self.next_step):
            if message.id == message_id:
                return message
        return None

    def _refuse(self, *_args: Any, **_kwargs: Any) -> Any:
        raise ReadOnlyError()

    # Every edit refuses: a recorded log is never written to.
    append = prepend = replace = remove = clear = splice = move = claim = _refuse


class ReadOnlyAgent:
    """An idle agent on a recorded log; every action raises ReadOnlyError."""

    status: AgentStatus = "idle"
    read_only = True

    def __init__(self, ctx: Context, session: ReadOnlySession) -> None:
        self.session = session
        self.id = session.id
        self.inbox = ReadOnlyInbox(session)
        config = (session.request_header() or {}).get("config") or {}
        self.options = AgentOptions(provider=config.get("provider"), model=config.get("model"))
        self.ctx = ctx.derive(self)

    @property
    def current_turn(self) -> int:
        """The last turn the log opened; a recorded agent has no running turn."""
        return self.session.last_turn()

    def _refuse(self, *_args: Any, **_kwargs: Any) -> Any:
        raise ReadOnlyError(f'agent "{self.id}"')

    @property
    def current_step(self) -> int:
        """Always 0: a recorded agent runs no step."""
        return 0

    send = followup = steer = inject = cancel = run_maintenance = wake = stop_after_step = _refuse
    hold = _refuse

    @property
    def holds(self) -> tuple[InboxHold, ...]:
        """Always empty: nobody edits a recorded log, so nothing is held."""
        return ()

    async def when_idle(self) -> None:
        """Return at once: a recorded agent is always idle."""
        return None


def register_log_agent(ctx: Context, header: Mapping[str, Any],
                       events: Sequence[SessionEvent], skipped_bytes: int = 0,
                       pages: LogPages | None = None) -> ReadOnlyAgent:
    """Put a recorded log into `ctx` as an idle, announced root agent (`dsh-tui view`).

    Announcing runs `agent/created`, so the UI shows it exactly as a live agent; every
    action on it raises `ReadOnlyError`. With `pages`, the log is a window of pages read
    on demand (`persistence/pages.py`).
    """
    session = ReadOnlySession(header, events, skipped_bytes, pages)
    agent = ReadOnlyAgent(ctx, session)
    ctx.registry.enter(agent, None)
    ctx.registry.announce(agent)
    return agent
