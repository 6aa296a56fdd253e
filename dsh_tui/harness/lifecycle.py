"""The creation transaction and disposal order shared by every agent factory.

Creation validates, builds, runs the caller's setup (raced against the caller's
signal, the owner's unload and the factory's teardown), then publishes in a
fixed order. Any failure tears down exactly what was published, so every
`*/created` notification is paired with its `*/disposed` and the id is free
again. Disposal is memoised: the handle holder, the owner and the factory all
await the same completion.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from .agent import AgentOptions
from .context import Context, InactiveContextError
from .eager import start_eager
from .events import agent_events
from .jsonvalue import MAX_SAFE_INTEGER
from .session import Session
from .signal import CancelSignal

log = logging.getLogger("dsh_tui.harness.lifecycle")


class AgentCreationError(RuntimeError):
    """Creation was refused or aborted (§4.4): the factory is gone, or the caller's signal,
    the owner's unload or a disposal cut setup short. `reason` carries a non-exception cause."""


def validate_agent_options(options: AgentOptions) -> None:
    """Check the options before anything is built (§4.4.1): `max_tokens`, when set, must be
    a positive safe integer (upstream's bound, since logs are shared)."""
    value = options.max_tokens
    if value is None:
        return
    if type(value) is not int or value <= 0 or value > MAX_SAFE_INTEGER:
        raise TypeError("agent maxTokens must be a positive safe integer")


def _abort_error(agent_id: str, reason: Any) -> BaseException:
    if isinstance(reason, BaseException):
        return reason
    error = AgentCreationError(f'agent "{agent_id}" creation aborted')
    error.__cause__ = None
    error.reason = reason  # type: ignore[attr-defined]
    return error


class FactoryOwnership:
    """What one factory has created, so unloading the factory disposes all of it."""

    def __init__(self) -> None:
        self.accepting = True
        self.signal = CancelSignal()
        self._live: set[Callable[[], Awaitable[None]]] = set()
        self._startup: set[asyncio.Future[Any]] = set()

    def is_active(self) -> bool:
        """Whether the factory still accepts creations (False once it is being unloaded)."""
        return self.accepting

    def track(self, dispose: Callable[[], Awaitable[None]]) -> Callable[[], None]:
        """Remember a live agent's dispose, so unloading the factory disposes it; returns the
        untrack the agent's own disposal calls."""
        self._live.add(dispose)
        return lambda: self._live.discard(dispose)

    def track_task(self, task: asyncio.Future[Any]) -> None:
        """Remember an in-flight creation, so unloading the factory waits for it."""
        self._startup.add(task)
        task.add_done_callback(self._startup.discard)

    async def dispose(self) -> None:
        """Unload: refuse new creations, abort those in setup, then dispose every agent this
        factory made and wait for all of it (errors are collected, not raised)."""
        self.accepting = False
        self.signal.abort(AgentCreationError("agent loop is not active"))
        await asyncio.gather(*(d() for d in list(self._live)),
                             *list(self._startup), return_exceptions=True)


class AgentHandleImpl:
    """`handle.agent`, `await handle.dispose()`."""

    def __init__(self, agent: Any, dispose: Callable[[], Awaitable[None]]) -> None:
        self.agent = agent
        self._dispose = dispose

    def dispose(self) -> Awaitable[None]:
        """Start disposal now (synchronously up to its first wait); await the result."""
        return self._dispose()

    def __repr__(self) -> str:
        return f"AgentHandle({self.agent.id!r})"


async def _race(operation: Any, signal: CancelSignal, agent_id: str) -> Any:
    """Await `operation` unless `signal` aborts first (then raise its reason)."""
    if signal.aborted:
        raise _abort_error(agent_id, signal.reason)
    if not inspect.isawaitable(operation):
        return operation
    task = asyncio.ensure_future(operation)
    waiter = asyncio.ensure_future(signal.wait())
    try:
        done, _ = await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiter.cancel()
    if task in done:
        return task.result()
    task.add_done_callback(lambda t: t.cancelled() or t.exception())
    raise _abort_error(agent_id, signal.reason)


class Prepared:
    """A built but unpublished agent, with its disposal."""

    def __init__(self, agent: Any, signal: CancelSignal, publish: Callable[[str], AgentHandleImpl],
                 dispose: Callable[[], Awaitable[None]]) -> None:
        self.agent = agent
        self.signal = signal
        self.publish = publish
        self.dispose = dispose


def prepare_agent(
    *,
    root_ctx: Context,
    owner_ctx: Context,
    ownership: FactoryOwnership,
    session: Session,
    options: AgentOptions,
    build: Callable[[Session], Any],
    caller_signal: CancelSignal | None,
) -> Prepared:
    """Build an agent on `session`, register its teardown, return its publish step."""
    agent_id = session.id
    validate_agent_options(options)
    if not owner_ctx.active:
        raise InactiveContextError(f"owner context {owner_ctx.scope.label} is inactive")
    if not ownership.is_active():
        raise AgentCreationError("agent loop is not active")
    if caller_signal is not None and caller_signal.aborted:
        raise _abort_error(agent_id, caller_signal.reason)

    abort = CancelSignal()
    removers: list[Callable[[], None]] = []
    if caller_signal is not None:
        removers.append(caller_signal.add_listener(
            lambda reason: abort.abort(_abort_error(agent_id, reason))))
    removers.append(ownership.signal.add_listener(abort.abort))

    state: dict[str, Any] = {"agent": None, "detach_session": None, "detach_agent": None,
                             "disposing": None}
    unfollow_owner: Callable[[], None] = lambda: None  # noqa: E731

    async def run_dispose(owner_triggered: bool) -> None:
        abort.abort(AgentCreationError(f'agent "{agent_id}" lifecycle disposed'))
        for remove in removers:
            remove()
        try:
            agent = state["agent"]
            if agent is not None:
                agent.cancel({"kind": "disposed"})
            # Always yield here, as JavaScript's `await` does: the synchronous caller (for
            # instance a creation listener) finishes before anything is detached.
            await asyncio.sleep(0)
            if agent is not None:
                await agent.when_idle()
                await agent.ctx.scope.dispose()
        finally:
            try:
                if state["detach_agent"] is not None:
                    state["detach_agent"]()
                if state["detach_session"] is not None:
                    state["detach_session"]()
            finally:
                untrack()
                if not owner_triggered:
                    unfollow_owner()

    def dispose(owner_triggered: bool = False) -> Awaitable[None]:
        # Started eagerly, like a JavaScript async function: the abort and the
        # agent's cancel happen before dispose() returns, even if nobody awaits it.
        if state["disposing"] is None:
            state["disposing"] = start_eager(run_dispose(owner_triggered))
        return asyncio.shield(state["disposing"])

    untrack = ownership.track(lambda: dispose())

    def on_owner_unload() -> Awaitable[None] | None:
        if state["disposing"] is not None:
            return asyncio.shield(state["disposing"])
        abort.abort(AgentCreationError(
            f'agent "{agent_id}" setup aborted: owner disposed during setup'))
        return dispose(True)

    try:
        unfollow_owner = owner_ctx.effect(on_owner_unload)
    except BaseException:
        untrack()
        for remove in removers:
            remove()
        raise

    def assert_live() -> None:
        if abort.aborted:
            reason = abort.reason
            raise reason if isinstance(reason, BaseException) else AgentCreationError(str(reason))

    try:
        agent = build(session)
        state["agent"] = agent
        assert_live()
    except BaseException:
        dispose()
        raise

    def publish(source: str) -> AgentHandleImpl:
        assert_live()
        state["detach_session"] = root_ctx.sessions.enter(session, agent)
        state["detach_agent"] = root_ctx.registry.enter(agent, owner_ctx.agent)
        root_ctx.sessions.announce(session)
        assert_live()
        root_ctx.registry.announce(agent)
        assert_live()
        agent_events(root_ctx, agent).emit("agent/session-start", {"source": source})
        assert_live()
        root_ctx.registry.set_disposer(agent, lambda: dispose())
        return AgentHandleImpl(agent, lambda: dispose())

    return Prepared(agent, abort, publish, lambda: dispose())


async def setup_and_publish(prepared: Prepared, setup: Any, source: str) -> AgentHandleImpl:
    """Run the caller's setup (raced against cancellation), its commit, then publish."""
    agent = prepared.agent
    try:
        result = setup(agent.ctx) if setup is not None else None
        commit = await _race(result, prepared.signal, agent.id)
        if commit is not None:
            if hasattr(commit, "commit"):
                commit.commit()
            elif callable(commit):
                commit()
        return prepared.publish(source)
    except BaseException:
        await prepared.dispose()
        raise
