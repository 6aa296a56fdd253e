"""Initiator scope: which agent's driver is running the current code.

A ContextVar per boundary, set in a copied context, so two agents' drivers that
interleave on one event loop each keep seeing themselves after every await.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
from collections.abc import Callable
from typing import Any

from .eager import start_eager

_current: contextvars.ContextVar[Any] = contextvars.ContextVar("dsh_initiator", default=None)
_chain: contextvars.ContextVar[tuple[object, ...]] = contextvars.ContextVar(
    "dsh_initiator_chain", default=())


class InitiatorScopeDisposedError(RuntimeError):
    """The initiator scope is disposed (or closing): no new boundary may start (§4.6)."""

    def __init__(self) -> None:
        super().__init__("agent initiator scope is disposed")


class NoInitiatorError(RuntimeError):
    """`require_initiator()` was called outside any agent's driver (§4.6)."""

    def __init__(self) -> None:
        super().__init__("no initiating agent is active")


class _Boundary:
    __slots__ = ("agent", "task")

    def __init__(self, agent: Any) -> None:
        self.agent = agent
        self.task: asyncio.Future[Any] | None = None


class InitiatorScope:
    """One per registry: `active → closing → disposed`."""

    def __init__(self) -> None:
        self.state = "active"
        self._pending: set[_Boundary] = set()
        self._drained: asyncio.Event | None = None

    def current(self) -> Any:
        """The agent whose boundary the current code runs in, or None; raises once disposed."""
        if self.state == "disposed":
            raise InitiatorScopeDisposedError()
        return _current.get()

    def require(self) -> Any:
        """Like `current`, but raises `NoInitiatorError` outside any boundary."""
        agent = self.current()
        if agent is None:
            raise NoInitiatorError()
        return agent

    def _check(self) -> None:
        if self.state != "active":
            raise InitiatorScopeDisposedError()

    def run(self, agent: Any, op: Callable[[], Any], *, eager: bool = False) -> Any:
        """Run `op` with `agent` as initiator; an awaitable result becomes a tracked Task.

        The task runs in the same copied context, so every continuation keeps
        this initiator regardless of who awaits it. (TypeScript returns the
        identical promise; Python must wrap the coroutine in a Task to isolate it.)
        """
        self._check()
        context = contextvars.copy_context()
        boundary = _Boundary(agent)

        def enter() -> Any:
            _current.set(agent)
            _chain.set((*_chain.get(), boundary))
            return op()

        result = context.run(enter)
        if not inspect.isawaitable(result):
            return result
        coroutine = result if inspect.iscoroutine(result) else _await(result)
        if eager:
            task = start_eager(coroutine, context)
        else:
            task = asyncio.get_running_loop().create_task(coroutine, context=context)
        boundary.task = task
        self._pending.add(boundary)
        task.add_done_callback(lambda _t: self._settled(boundary))
        return task

    def _settled(self, boundary: _Boundary) -> None:
        # The task's context holds the boundary (`_chain`), so a boundary still holding
        # its finished task is a reference cycle, freed only by a full collection: dropped
        # here, reference counting frees it at once.
        boundary.task = None
        self._pending.discard(boundary)
        if not self._pending and self._drained is not None:
            self._drained.set()

    def close(self) -> None:
        """Refuse new boundaries from now on (teardown has begun)."""
        if self.state == "active":
            self.state = "closing"

    async def dispose(self) -> None:
        """Close for new boundaries, wait for pending ones (not the caller's own), then dispose."""
        if self.state == "disposed":
            return
        self.close()
        own = set(_chain.get())
        me = asyncio.current_task()
        while True:
            waiting = [b.task for b in self._pending if b not in own and b.task is not None
                       and b.task is not me and not b.task.done()]
            if not waiting:
                break
            await asyncio.wait(waiting)
        self.state = "disposed"


async def _await(awaitable: Any) -> Any:
    return await awaitable
