"""The harness as the UI sees it: typed Protocols for the `ctx.agents` seam.

An agent the UI shows is either live (the loop's agent over a `Session` and an `Inbox`)
or recorded (`dsh-tui view FILE`: a `ReadOnlyAgent` over a `ReadOnlySession` and a
`ReadOnlyInbox` whose edits raise). The UI is written against these Protocols, not
against either implementation, so both (and any test double) type-check against the
one surface, and a change to that surface shows up in the type checker instead of as
a `getattr(agent, "status", "idle")` that quietly stops matching.

`ContextSurface` and `AgentsSurface` are the slices of the concrete `Context` and
`Agents` the UI's state layer uses; keeping them narrow documents what the UI may
rely on. `_conformance` below is only read by the type checker: it fails when an
implementation drifts from its Protocol.
"""

from __future__ import annotations

import builtins
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from .inbox import InboxTarget
from .messages import UserMessage
from .session import SessionEvent

if TYPE_CHECKING:
    from .agent import Agent, AgentHandle, CreateAgentOptions, ResumeAgentOptions

class SessionSurface(Protocol):
    """A session log as the UI reads it: identity, header, events, next seq; appends
    go through `append` (a recorded log refuses them)."""

    @property
    def id(self) -> str: ...

    @property
    def header(self) -> Mapping[str, Any]: ...

    @property
    def events(self) -> Sequence[SessionEvent]: ...

    @property
    def seq(self) -> int: ...

    def append(self, type: str, data: Any = None) -> SessionEvent: ...


class InboxSurface(Protocol):
    """An agent's pending work as the UI reads and edits it (read-only inboxes raise)."""

    @property
    def next_turn(self) -> tuple[UserMessage, ...]: ...

    @property
    def next_step(self) -> tuple[UserMessage, ...]: ...

    @property
    def has_pending(self) -> bool: ...

    def get(self, message_id: str) -> UserMessage | None: ...

    def append(self, target: InboxTarget, message: UserMessage) -> None: ...

    def prepend(self, target: InboxTarget, message: UserMessage) -> None: ...

    def splice(self, target: InboxTarget, start: int, delete_count: int,
               inserted: Iterable[UserMessage] = ()) -> list[UserMessage]: ...

    def replace(self, message_id: str, new: UserMessage) -> bool: ...

    def remove(self, message_id: str) -> bool: ...

    def clear(self) -> None: ...

    def move(self, message_id: str, target: InboxTarget, index: int) -> bool: ...


class AgentsSurface(Protocol):
    """`ctx.agents` as the UI uses it: look agents up, create, resume and dispose them."""

    def get(self, agent_id: str) -> Agent | None: ...

    def list(self) -> builtins.list[Agent]: ...

    def roots(self) -> builtins.list[Agent]: ...

    def children_of(self, owner: Agent | None) -> builtins.list[Agent]: ...

    def dispose(self, agent_id: str) -> Awaitable[None] | None: ...

    async def create(self, options: CreateAgentOptions) -> AgentHandle: ...

    async def resume(self, options: ResumeAgentOptions) -> AgentHandle: ...


class ContextSurface(Protocol):
    """A context as the UI uses it: its agents, listeners, shared services, and whether
    the world is a recorded log (`read_only`: nothing may be sent or edited)."""

    @property
    def agents(self) -> AgentsSurface: ...

    @property
    def services(self) -> dict[str, Any]: ...

    @property
    def read_only(self) -> bool: ...

    def on(self, name: str, listener: Callable[..., Any], *, prepend: bool = False,
           is_global: bool = False) -> Callable[[], None]: ...


if TYPE_CHECKING:
    from .context import Context
    from .inbox import Inbox
    from .readonly import ReadOnlyAgent, ReadOnlyInbox, ReadOnlySession
    from .registry import Agents
    from .session import Session

    def _conformance(ctx: Context, agents: Agents, session: Session, inbox: Inbox,
                     recorded: ReadOnlySession, recorded_inbox: ReadOnlyInbox,
                     recorded_agent: ReadOnlyAgent) -> None:
        _ctx: ContextSurface = ctx
        _agents: AgentsSurface = agents
        _sessions: list[SessionSurface] = [session, recorded]
        _inboxes: list[InboxSurface] = [inbox, recorded_inbox]
        _agent: Agent = recorded_agent
