"""The Agent contract: what every agent implementation offers to `ctx.agents` users.

The UI is written against these names only, so any implementation of the
contract (the loop in `dsh_tui.loop`, or a test double) can be driven by it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

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
    session_id: str
    agent_options: AgentOptions | None = None
    meta: Mapping[str, Any] | None = None
    seed: Sequence[Any] | None = None
    signal: CancelSignal | None = None
    setup: Setup | None = None


@dataclass(eq=False)
class ResumeAgentOptions:
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
    def id(self) -> str: ...

    @property
    def options(self) -> AgentOptions: ...

    @property
    def session(self) -> SessionSurface: ...

    @property
    def inbox(self) -> InboxSurface: ...

    @property
    def ctx(self) -> Context: ...

    @property
    def status(self) -> AgentStatus: ...

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

    def send(self, message: UserMessage, target: InboxTarget, wakeup: bool) -> None: ...

    def followup(self, message: UserMessage) -> None: ...

    def steer(self, message: UserMessage) -> None: ...

    def inject(self, message: UserMessage) -> None: ...

    def cancel(self, cause: CancelCause | None = None, *, keep_inbox: bool = False) -> None: ...

    async def when_idle(self) -> None: ...

    def run_maintenance(self, task: Callable[[CancelSignal], Awaitable[Any]]) -> Awaitable[Any]: ...


class AgentHandle(Protocol):
    agent: Agent

    def dispose(self) -> Awaitable[None]:
        """Starts disposal at once (cancel included) and returns its completion."""
        ...


class AgentFactory(Protocol):
    """Installed with `ctx.agents.set_factory`; builds and publishes agents."""

    async def create(self, options: CreateAgentOptions, owner_ctx: Context) -> AgentHandle: ...

    async def resume(self, options: ResumeAgentOptions, owner_ctx: Context) -> AgentHandle: ...
