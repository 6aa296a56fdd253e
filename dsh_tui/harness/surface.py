"""The harness as the UI sees it: typed Protocols for the `ctx.agents` seam.

An agent the UI shows is either live (the loop's agent over a `Session` and an `Inbox`)
or recorded (`dsh-tui view FILE`: `ReadOnlyAgent` etc., whose edits raise). The UI is
written against these Protocols, so both implementations (and any test double) type-check
against one surface, and a drift shows up in the type checker instead of as a
`getattr(agent, "status", "idle")` that quietly stops matching. `ContextSurface` and
`AgentsSurface` are the narrow slices of `Context` and `Agents` the UI may rely on.
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
    def id(self) -> str:
        """The session id, equal to its agent's id (§4.2 checks they match)."""

    @property
    def header(self) -> Mapping[str, Any]:
        """The header beside the log (§1.3): `createdAt`, `cwd`, `seedLength`, `origin`, …"""

    @property
    def events(self) -> Sequence[SessionEvent]:
        """An immutable snapshot of the log (§1.1): safe to hold while the agent appends."""

    @property
    def seq(self) -> int:
        """The seq the next append gets (= `len(events)`; seqs have no gaps, §1.6.1)."""

    def append(self, type: str, data: Any = None) -> SessionEvent:
        """Write one event (§1.2). Raises before anything changes on non-JSON data, on a
        re-entrant append from a listener, or always on a recorded log."""


class InboxSurface(Protocol):
    """An agent's pending work as the UI reads and edits it (read-only inboxes raise)."""

    @property
    def next_turn(self) -> tuple[UserMessage, ...]:
        """Pending prompts, oldest first (§2.1): a snapshot, safe to hold across changes."""

    @property
    def next_step(self) -> tuple[UserMessage, ...]:
        """Pending steering and context, oldest first: the next claim takes all of it."""

    @property
    def has_pending(self) -> bool:
        """Whether either list holds anything."""

    def get(self, message_id: str) -> UserMessage | None:
        """The pending message with this id; None once claimed or removed (§2.3, C-19)."""

    def append(self, target: InboxTarget, message: UserMessage) -> None:
        """Queue at the end of `target`: durable splice first, then `inserted` (§1.6.10)."""

    def prepend(self, target: InboxTarget, message: UserMessage) -> None:
        """Queue at the head of `target`, before everything pending there (§2.3)."""

    def splice(self, target: InboxTarget, start: int, delete_count: int,
               inserted: Iterable[UserMessage] = ()) -> list[UserMessage]:
        """The one mutation primitive (§2.2); returns the removed messages."""

    def replace(self, message_id: str, new: UserMessage) -> bool:
        """Swap a pending message in place; False (nothing written) once it was claimed."""

    def remove(self, message_id: str) -> bool:
        """Drop a pending message (logged `canceled`); False once it was claimed (C-19)."""

    def clear(self) -> None:
        """Drop everything pending: `next-step` first, then `next-turn` (§2.3)."""

    def move(self, message_id: str, target: InboxTarget, index: int) -> bool:
        """Move a pending item, same id, without `discarded`; False when not pending."""


class AgentsSurface(Protocol):
    """`ctx.agents` as the UI uses it: look agents up, create, resume and dispose them."""

    def get(self, agent_id: str) -> Agent | None:
        """The live agent with this id, or None once disposed (§4.1)."""

    def list(self) -> builtins.list[Agent]:
        """Every live agent in insertion order (children included)."""

    def roots(self) -> builtins.list[Agent]:
        """Live agents with no owner, in insertion order: the tree's top level."""

    def children_of(self, owner: Agent | None) -> builtins.list[Agent]:
        """Agents `owner` owns (§10), in insertion order; `None` gives the roots."""

    def dispose(self, agent_id: str) -> Awaitable[None] | None:
        """Dispose a live agent by id as its handle would (§4.4, §4.5); None if unknown."""

    async def create(self, options: CreateAgentOptions) -> AgentHandle:
        """Build, set up and announce a new agent owned by this context's agent (§4.4)."""

    async def resume(self, options: ResumeAgentOptions) -> AgentHandle:
        """Rebuild an agent from its stored log, inbox replayed (§2.6, §4.4)."""


class ContextSurface(Protocol):
    """A context as the UI uses it: its agents, listeners, shared services, and whether
    the world is a recorded log (`read_only`: nothing may be sent or edited)."""

    @property
    def agents(self) -> AgentsSurface:
        """The registry (§4), shared by every context of one world."""

    @property
    def services(self) -> dict[str, Any]:
        """Shared objects by name (the session store, the config …), one dict per world."""

    @property
    def read_only(self) -> bool:
        """True for `dsh-tui view FILE`: the UI greys out every send and edit."""

    def on(self, name: str, listener: Callable[..., Any], *, prepend: bool = False,
           is_global: bool = False) -> Callable[[], None]:
        """Listen to a live event (§5); returns the unsubscribe. On the root context a
        listener hears every agent (§5.3)."""


if TYPE_CHECKING:
    from .context import Context
    from .inbox import Inbox
    from .readonly import ReadOnlyAgent, ReadOnlyInbox, ReadOnlySession
    from .registry import Agents
    from .session import Session

    def _conformance(ctx: Context, agents: Agents, session: Session, inbox: Inbox,
                     recorded: ReadOnlySession, recorded_inbox: ReadOnlyInbox,
                     recorded_agent: ReadOnlyAgent) -> None:
        """Only read by the type checker: fails when an implementation drifts from its
        Protocol."""
        _ctx: ContextSurface = ctx
        _agents: AgentsSurface = agents
        _sessions: list[SessionSurface] = [session, recorded]
        _inboxes: list[InboxSurface] = [inbox, recorded_inbox]
        _agent: Agent = recorded_agent
