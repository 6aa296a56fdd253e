"""Contexts: the handle plugins, the loop and the UI receive.

A root context owns the world (event bus, registry, session store). Each agent
gets a derived context whose registrations carry that agent as their scope and
unwind, newest first, when the agent is disposed.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from .eager import start_eager
from .events import EventBus, Listener

if TYPE_CHECKING:
    from .registry import AgentRegistry, Agents
    from .store import SessionStore

log = logging.getLogger("dsh_tui.harness.context")


class InactiveContextError(RuntimeError):
    """A listener, disposer or owned agent was added through a context whose scope is
    already disposed (or disposing): nothing may attach to a world that is going away."""


class Scope:
    """LIFO disposers of one context; async disposers are awaited in order."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.active = True
        self._disposers: list[Callable[[], Any]] = []
        self._disposing: Any = None

    def add(self, disposer: Callable[[], Any]) -> Callable[[], None]:
        """Add a disposer (run LIFO at `dispose`); returns its remover. Raises when inactive."""
        if not self.active:
            raise InactiveContextError(f"context {self.label} is inactive")
        self._disposers.append(disposer)

        def remove() -> None:
            try:
                self._disposers.remove(disposer)
            except ValueError:
                pass

        return remove

    def dispose(self) -> Awaitable[None]:
        """Start unwinding now (synchronously up to the first async disposer); await it."""
        if self._disposing is None:
            self._disposing = start_eager(self._run())
        return asyncio.shield(self._disposing)

    async def _run(self) -> None:
        self.active = False
        while self._disposers:
            disposer = self._disposers.pop()
            try:
                result = disposer()
                if inspect.isawaitable(result):
                    await result
            except Exception:
                log.exception("disposer of %s failed", self.label)

    def dispose_sync(self) -> None:
        """Run synchronous disposers now (for teardown outside an event loop)."""
        self.active = False
        while self._disposers:
            disposer = self._disposers.pop()
            try:
                result = disposer()
                if inspect.iscoroutine(result):
                    result.close()
            except Exception:
                log.exception("disposer of %s failed", self.label)


class Context:
    """`ctx`: events (`on`), agents (`agents`), sessions (`sessions`), and `agent` when scoped."""

    def __init__(self, *, bus: EventBus, registry: AgentRegistry, sessions: SessionStore,
                 agent: Any = None, read_only: bool = False, parent: Context | None = None,
                 services: dict[str, Any] | None = None) -> None:
        self.bus = bus
        self.registry = registry
        self.sessions = sessions
        self.agent = agent
        self.read_only = read_only
        self.parent = parent
        self.services: dict[str, Any] = services if services is not None else {}
        self.scope = Scope(f'of agent "{agent.id}"' if agent is not None else "root")

    @property
    def scope_key(self) -> object | None:
        """The routing tag of registrations made through this context."""
        return self.agent

    @property
    def active(self) -> bool:
        """False once the scope started disposing: nothing may be registered through it."""
        return self.scope.active

    @property
    def agents(self) -> Agents:
        """`ctx.agents` as seen from this context: creates made through it are owned by this
        context's agent (§4.4)."""
        from .registry import Agents

        return Agents(self.registry, self)

    def on(self, name: str, listener: Listener, *, prepend: bool = False,
           is_global: bool = False) -> Callable[[], None]:
        """Register a listener; returns `off()`. Through `agent.ctx` it hears only that agent."""
        if not self.scope.active:
            raise InactiveContextError(
                f"cannot register a listener through an inactive context ({self.scope.label})")
        off = self.bus.add(name, listener, scope=self.scope_key, prepend=prepend,
                           is_global=is_global)
        remove = self.scope.add(off)

        def dispose() -> None:
            off()
            remove()

        return dispose

    def effect(self, disposer: Callable[[], Any]) -> Callable[[], None]:
        """Run `disposer` (sync or async) when this context's scope unwinds."""
        return self.scope.add(disposer)

    def dispose(self) -> Awaitable[None]:
        """Tear this context down: its registrations unwind newest first.

        Started eagerly (the first disposers run before this returns). On a root
        context this is the world's teardown: the initiator scope closes (new
        boundaries raise), every agent and the factory are disposed, then the scope
        waits for pending boundaries and is disposed.
        """
        if self.agent is not None:
            return self.scope.dispose()
        return asyncio.shield(start_eager(self._dispose_root()))

    async def _dispose_root(self) -> None:
        self.registry.initiator.close()
        await self.scope.dispose()
        await self.registry.initiator.dispose()

    def derive(self, agent: Any) -> Context:
        """The agent-scoped context of `agent`, sharing this world."""
        return Context(bus=self.bus, registry=self.registry, sessions=self.sessions, agent=agent,
                       read_only=self.read_only, parent=self, services=self.services)

    def emit(self, name: str, *args: Any) -> None:
        """Emit an unrouted notification (heard by unscoped and global listeners)."""
        self.bus.emit_contained(name, None, *args, label=f'event "{name}"')

    def __repr__(self) -> str:
        who = f"agent={self.agent.id!r}" if self.agent is not None else "root"
        return f"Context({who}, read_only={self.read_only})"
