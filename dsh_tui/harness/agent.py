"""The Agent contract: what every agent implementation offers to `ctx.agents` users.

The UI is written against these names only, so any implementation of the
contract (the loop in `dsh_tui.loop`, or a test double) can be driven by it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from .holds import InboxHold
from .inbox import InboxTarget
from .messages import UserMessage
from .surface import InboxSurface, SessionSurface

if TYPE_CHECKING:
    from .context import Context
    from .signal import CancelSignal

AgentStatus = Literal["idle", "running"]
CancelCause = dict[str, Any]

USER_CAUSE: Mapping[str, str] = {"kind": "user"}


@dataclass(eq=False)
class AgentOptions:
    """Route and limits of an agent. The exact object passed in stays on `agent.options`."""

    provider: str | None = None
    model: str | None = None
    max_tokens: int | None = None
    reasoning_effort: str | None = None
    temperature: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)


SetupResult = Callable[[], None] | None
Setup = Callable[["Context"], Awaitable[SetupResult] | SetupResult]


@dataclass(eq=False)
class CreateAgentOptions:
    """What `ctx.agents.create` needs (§4.4): the new session's id (also the agent's), the
    route, header fields (`meta`: cwd, parentSession, origin, …), an optional seed of
    events to fork from (§1.3), a caller signal that aborts setup, and `setup(agent_ctx)`
    awaited before anything is announced."""

    session_id: str
    agent_options: AgentOptions | None = None
    meta: Mapping[str, Any] | None = None
    seed: Sequence[Any] | None = None
    signal: CancelSignal | None = None
    setup: Setup | None = None


@dataclass(eq=False)
class ResumeAgentOptions:
    """What `ctx.agents.resume` needs (§4.4): the stored session to rebuild (its inbox is
    replayed, §2.6), an optional route override, a caller signal and a setup hook."""

    resume_session_id: str
    agent_options: AgentOptions | None = None
    signal: CancelSignal | None = None
    setup: Setup | None = None


@runtime_checkable
class Agent(Protocol):
    """An agent as `ctx.agents` hands it out: live (the loop's) or recorded (read-only).

    Members are read-only properties so that an implementation may keep them as plain
    attributes, properties or class attributes alike.
    """

    @property
    def id(self) -> str:
        """The agent's id, equal to its session's id (the registry refuses a mismatch)."""

    @property
    def options(self) -> AgentOptions:
        """The exact options object the agent was built with (the UI reads the route from it)."""

    @property
    def session(self) -> SessionSurface:
        """The agent's log (§1); every durable fact about the agent is read from here."""

    @property
    def inbox(self) -> InboxSurface:
        """The agent's pending work (§2); the UI edits it only through the public operations."""

    @property
    def ctx(self) -> Context:
        """The agent's own context: listeners registered on it hear only this agent (§5.3)."""

    @property
    def status(self) -> AgentStatus:
        """`idle` or `running` (§3.6); maintenance counts as `idle`. `agent/status` announces a
        change after it happened."""

    @property
    def current_turn(self) -> int:
        """The running turn, or the last turn opened when idle (0 before any)."""
        ...

    @property
    def current_step(self) -> int:
        """The running step (0 when idle or between steps)."""
        ...

    def wake(self) -> bool:
        """Start on pending work without sending anything (False when nothing is pending)."""
        ...

    def send(self, message: UserMessage, target: InboxTarget, wakeup: bool) -> None:
        """The one send (§3.2): queue `message` on `target`; `wakeup` starts or latches a turn.

        A waking send after an abort is rerouted to `next-turn`. Raises, with nothing queued
        and nothing woken, when the durable append fails (C-26).
        """

    def followup(self, message: UserMessage) -> None:
        """Queue a prompt on `next-turn` and wake: when idle, `turn/start` and the claim have
        happened by the time this returns (C-2)."""

    def steer(self, message: UserMessage) -> None:
        """Queue steering on `next-step` and wake: the next step boundary takes it (§6.6)."""

    def inject(self, message: UserMessage) -> None:
        """Queue context on `next-step` without waking (C-4): it rides along with the next step."""

    def cancel(self, cause: CancelCause | None = None, *, keep_inbox: bool = False) -> None:
        """Stop the agent (§3.3), synchronously; the first cause of a turn wins.

        Without `keep_inbox` the pending work is cleared (logged `canceled`); with it the
        items stay pending for the next waking send. A claimed batch is never put back.
        """

    def stop_after_step(self, cause: CancelCause | None = None) -> bool:
        """Stop at the next step boundary (§3.8), keeping the inbox: the step in progress
        finishes (its tools included), nothing more is claimed, and the turn ends `aborted`
        with `cause` (or as it would have, when that step ended it). Returns False, doing
        nothing, when the agent is not running."""
        ...

    async def when_idle(self) -> None:
        """Resolve once no activity runs, following any activity that replaced the awaited one
        (§3.4). Never raises for a failed run."""

    def run_maintenance(self, task: Callable[[CancelSignal], Awaitable[Any]]) -> Awaitable[Any]:
        """Run `task(signal)` while the agent stays `idle` (§3.5); waking sends are latched and
        replayed when it ends. Raises unless idle."""

    @property
    def holds(self) -> tuple[InboxHold, ...]:
        """Active edit holds (§3.8), oldest first; empty on a recorded agent."""
        ...

    def hold(self, message_id: str, *, limit: float | None = None) -> InboxHold | None:
        """Hold the claim that would take pending `message_id` (§3.8) until `release()`;
        it lapses `limit` seconds (default 60) after the driver began waiting on it. None
        when the id is not pending. A recorded agent raises."""
        ...


class AgentHandle(Protocol):
    """What `create`/`resume` return: the agent, and the one way its creator disposes it
    (the UI uses `ctx.agents.dispose(id)` instead, §4.4)."""

    agent: Agent

    def dispose(self) -> Awaitable[None]:
        """Starts disposal at once (cancel included) and returns its completion."""
        ...


class AgentFactory(Protocol):
    """Installed with `ctx.agents.set_factory`; builds and publishes agents."""

    async def create(self, options: CreateAgentOptions, owner_ctx: Context) -> AgentHandle:
        """Build, set up and publish a new agent owned by `owner_ctx`'s agent (§4.4 steps 1-8)."""

    async def resume(self, options: ResumeAgentOptions, owner_ctx: Context) -> AgentHandle:
        """Rebuild a stored agent (inbox replayed, §2.6) and publish it as `create` does."""
