"""The agent registry behind `ctx.agents`: who is live, who owns whom, who creates.

Ownership is recorded at entry (the agent of the context the call came
through), so `parent.ctx.agents.create(...)` makes an owned child and a plain
context makes a root. Lifecycle notifications pair exactly: an announced entry
always gets its `agent/disposed`, an entry that never got announced never does.
"""

from __future__ import annotations

import builtins
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from .agent import AgentFactory, AgentHandle, CreateAgentOptions, ResumeAgentOptions
from .events import EventBus, payload_of
from .initiator import InitiatorScope
from .once import once

if TYPE_CHECKING:
    from .agent import Agent
    from .context import Context

log = logging.getLogger("dsh_tui.harness.registry")


class RegistryError(RuntimeError):
    """A registry rule was broken: id mismatch or already live, unknown or twice-announced
    agent, a second factory, or no factory / no persistence for a create or resume."""


class _Entry:
    __slots__ = ("agent", "announced", "announcing", "detach_requested", "owner")

    def __init__(self, agent: Agent, owner: Agent | None) -> None:
        self.agent = agent
        self.owner = owner
        self.announced = False
        self.announcing = False
        self.detach_requested = False


class AgentRegistry:
    """The shared store of one world; use it through `ctx.agents`."""

    def __init__(self, bus: EventBus) -> None:
        self.bus = bus
        self._entries: dict[str, _Entry] = {}
        self._disposers: dict[str, tuple[Agent, Callable[[], Any]]] = {}
        self._factory: AgentFactory | None = None
        self.initiator = InitiatorScope()
        self.persistence: Any = None  # set by the composition root when sessions persist

    # -- lookup -------------------------------------------------------------------------------

    def get(self, agent_id: str) -> Agent | None:
        """The live agent with this id, or None (never announced, or gone)."""
        entry = self._entries.get(agent_id)
        return entry.agent if entry is not None else None

    def list(self) -> builtins.list[Agent]:
        """Every live agent, in the order they entered."""
        return [entry.agent for entry in self._entries.values()]

    def roots(self) -> builtins.list[Agent]:
        """Live agents nobody owns (created through a root context)."""
        return [entry.agent for entry in self._entries.values() if entry.owner is None]

    def owner_of(self, agent_id: str) -> Agent | None:
        """The agent that owns this one (None: a root, or not live)."""
        entry = self._entries.get(agent_id)
        return entry.owner if entry is not None else None

    def children_of(self, owner: Agent | None) -> builtins.list[Agent]:
        """Live agents owned by `owner` (None: the roots)."""
        return [entry.agent for entry in self._entries.values() if entry.owner is owner]

    def is_owned_by(self, agent_id: str, owner: Agent | None) -> bool:
        """Whether `owner` is the recorded owner of `agent_id` (§4.1).

        Identity of the owner recorded at entry, unrelated to session lineage; False for
        `owner=None` and for an agent that is not live.
        """
        entry = self._entries.get(agent_id)
        return entry is not None and owner is not None and entry.owner is owner

    # -- ordered lifecycle primitives ---------------------------------------------------------

    def enter(self, agent: Agent, owner: Agent | None = None) -> Callable[[], None]:
        """Insert `agent` unannounced (§4.2); return its detach, bound to this exact entry.

        Raises when the id differs from its session's or is already live. The detach is
        idempotent and never removes a later agent that reused the id; called while the
        entry's `agent/created` dispatch runs, it waits for that dispatch to finish.
        """
        if agent.id != agent.session.id:
            raise RegistryError(
                f'agent id "{agent.id}" does not match session id "{agent.session.id}"')
        if agent.id in self._entries:
            raise RegistryError(f'agent "{agent.id}" is already registered')
        entry = _Entry(agent, owner)
        self._entries[agent.id] = entry

        def detach() -> None:
            if entry.announcing:  # removed once the created dispatch has finished
                entry.detach_requested = True
                return
            self._remove(entry)

        return once(detach)

    def _remove(self, entry: _Entry) -> None:
        entry.detach_requested = False
        if self._entries.get(entry.agent.id) is not entry:
            return  # stale: a later same-id agent stays
        del self._entries[entry.agent.id]
        held = self._disposers.get(entry.agent.id)
        if held is not None and held[0] is entry.agent:
            del self._disposers[entry.agent.id]
        if entry.announced:
            self.bus.emit_contained("agent/disposed", entry.agent, payload_of(entry.agent))

    def announce(self, agent: Agent) -> None:
        """Mark an entered agent announced and run `agent/created` listeners (§4.2).

        A listener that raises synchronously vetoes: the error propagates and the caller
        detaches. From here on the entry's detach emits `agent/disposed` (the pair is exact).
        """
        entry = self._entries.get(agent.id)
        if entry is None or entry.agent is not agent:
            raise RegistryError(f'agent "{agent.id}" is not live in this registry')
        if entry.announced or entry.announcing:
            raise RegistryError(f'agent "{agent.id}" was already announced')
        entry.announced = True
        entry.announcing = True
        try:
            self.bus.emit_vetoing("agent/created", agent, payload_of(agent))
        finally:
            entry.announcing = False
            if entry.detach_requested:
                self._remove(entry)

    def set_disposer(self, agent: Agent, dispose: Callable[[], Any]) -> None:
        """Record how to dispose a published agent (its handle's dispose)."""
        self._disposers[agent.id] = (agent, dispose)

    def dispose(self, agent_id: str) -> Awaitable[None] | None:
        """Start disposing a live agent by id; returns its completion (None if not live)."""
        held = self._disposers.get(agent_id)
        if held is None or self.get(agent_id) is not held[0]:
            return None
        return held[1]()

    # -- factory ------------------------------------------------------------------------------

    def set_factory(self, factory: AgentFactory, owner_ctx: Context | None = None
                    ) -> Callable[[], None]:
        """Install the one agent factory (§4.4); returns its uninstall.

        Raises if one is installed. When `owner_ctx` belongs to an agent, the factory goes
        away with that agent's scope.
        """
        if self._factory is not None:
            raise RegistryError("an agent factory is already registered")
        self._factory = factory

        def clear() -> None:
            if self._factory is factory:
                self._factory = None

        if owner_ctx is not None and owner_ctx.agent is not None:
            owner_ctx.effect(clear)
        return clear

    @property
    def factory(self) -> AgentFactory | None:
        """The installed factory, or None (then `create`/`resume` raise)."""
        return self._factory


class Agents:
    """`ctx.agents`: the registry as seen from one context (ownership comes from it)."""

    __slots__ = ("ctx", "registry")

    def __init__(self, registry: AgentRegistry, ctx: Context) -> None:
        self.registry = registry
        self.ctx = ctx

    def get(self, agent_id: str) -> Agent | None:
        """The live agent with this id, or None."""
        return self.registry.get(agent_id)

    def list(self) -> builtins.list[Agent]:
        """Every live agent of this world."""
        return self.registry.list()

    def roots(self) -> builtins.list[Agent]:
        """Live agents nobody owns."""
        return self.registry.roots()

    def is_owned_by(self, agent_id: str, owner: Agent | None) -> bool:
        """Whether `owner` owns the live agent `agent_id` (a parent's tool may act on it)."""
        return self.registry.is_owned_by(agent_id, owner)

    def owner_of(self, agent_id: str) -> Agent | None:
        """The owner of a live agent (None: a root, or not live)."""
        return self.registry.owner_of(agent_id)

    def children_of(self, owner: Agent | None) -> builtins.list[Agent]:
        """Live agents owned by `owner`."""
        return self.registry.children_of(owner)

    def dispose(self, agent_id: str) -> Awaitable[None] | None:
        """Dispose a live agent by id, as its handle would (awaitable; None if not live).

        Lets anyone holding `ctx.agents` — a UI, a parent's tool — dispose an agent
        without keeping the creator's handle.
        """
        return self.registry.dispose(agent_id)

    def enter(self, agent: Agent, owner: Agent | None = None) -> Callable[[], None]:
        """`AgentRegistry.enter` with an explicit owner (the factory's publish step uses it)."""
        return self.registry.enter(agent, owner)

    def announce(self, agent: Agent) -> None:
        """`AgentRegistry.announce`: run `agent/created`; a synchronous raise vetoes."""
        self.registry.announce(agent)

    def register(self, agent: Agent) -> Callable[[], None]:
        """Enter and announce an already-built agent, owned by this context's agent."""
        detach = self.registry.enter(agent, self.ctx.agent)
        try:
            self.registry.announce(agent)
        except BaseException:
            detach()
            raise
        if self.ctx.agent is not None:
            self.ctx.effect(detach)
        return detach

    def set_factory(self, factory: AgentFactory) -> Callable[[], None]:
        """Install the one factory, tied to this context's agent scope (§4.4)."""
        return self.registry.set_factory(factory, self.ctx)

    def _require_factory(self) -> AgentFactory:
        factory = self.registry.factory
        if factory is None:
            raise RegistryError("no agent factory registered (load an agent-loop plugin)")
        return factory

    async def create(self, options: CreateAgentOptions) -> AgentHandle:
        """Create an agent through the factory, owned by this context's agent (§4.4).

        `parent.ctx.agents.create` therefore makes an owned child; a root context makes a
        root. The handle comes back after publication; no turn runs until a waking send.
        """
        return await self._require_factory().create(options, self.ctx)

    async def resume(self, options: ResumeAgentOptions) -> AgentHandle:
        """Rebuild an agent from its stored log (inbox replayed, §2.6), owned like `create`.

        Raises `RegistryError` when no factory is installed or sessions are not persisted.
        """
        factory = self._require_factory()
        if self.registry.persistence is None:
            raise RegistryError("cannot resume: session persistence is not configured (build the "
                                "context with a Persistence to resume sessions)")
        return await factory.resume(options, self.ctx)

    # -- initiator scope ----------------------------------------------------------------------

    def current_initiator(self) -> Any:
        """The agent whose driver runs the current code, or None outside any (§4.6)."""
        return self.registry.initiator.current()

    def require_initiator(self) -> Any:
        """Like `current_initiator`, but raises `NoInitiatorError` outside a driver (§4.6)."""
        return self.registry.initiator.require()

    def with_initiator(self, agent: Any, op: Callable[[], Any]) -> Any:
        """Run `op` with `agent` as initiator (§4.6); an awaitable result becomes a tracked task
        that keeps the initiator across awaits, isolated from other drivers."""
        return self.registry.initiator.run(agent, op)

    def without_initiator(self, op: Callable[[], Any]) -> Any:
        """Run `op` outside any initiator (hooks called from it see None)."""
        return self.registry.initiator.run(None, op)

    async def dispose_initiator_scope(self) -> None:
        """Refuse new initiator boundaries, wait for the open ones, then dispose (§4.6)."""
        await self.registry.initiator.dispose()
