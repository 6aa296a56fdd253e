"""Scope-filtered event dispatch: emit, waterfall and serial.

Every registration remembers the scope it came through. A listener registered
through an agent's context hears only that agent (and, through the explicit
`scope_parent` chain, agents below it); a listener on the root context hears
everything. This is what lets a UI listen globally while a plugin installed on
one agent stays out of every other agent's way.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from functools import partial
from types import MappingProxyType
from typing import Any

log = logging.getLogger("dsh_tui.harness.events")

Listener = Callable[..., Any]


@dataclass(eq=False, slots=True)
class Registration:
    """One listener as registered: the scope it came through decides which dispatches it
    hears (§5.3); `active` goes False on `off()`, so a snapshot taken earlier skips it."""

    name: str
    listener: Listener
    scope: object | None  # None: unscoped (hears every dispatch)
    is_global: bool = False
    active: bool = True


def _ancestors(key: object) -> list[object]:
    chain = []
    current = key
    seen: set[int] = set()
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        chain.append(current)
        current = getattr(current, "scope_parent", None)
    return chain


def _log_rejection(prefix: str, error: BaseException) -> None:
    log.warning("%s listener rejected: %s", prefix, error, exc_info=error)


def _observe(result: Any, describe: Callable[[BaseException], None]) -> None:
    """Contain a failure of an awaitable a listener returned."""
    if not inspect.isawaitable(result):
        return
    import asyncio

    try:
        future = asyncio.ensure_future(result)
    except RuntimeError:  # no running loop: nothing can await it
        if inspect.iscoroutine(result):
            result.close()
        return

    def done(fut: asyncio.Future[Any]) -> None:
        if fut.cancelled():
            return
        error = fut.exception()
        if error is not None:
            describe(error)

    future.add_done_callback(done)


class EventBus:
    """Listener table shared by a root context and every context derived from it."""

    def __init__(self) -> None:
        self._table: dict[str, list[Registration]] = {}

    def add(self, name: str, listener: Listener, *, scope: object | None = None,
            prepend: bool = False, is_global: bool = False) -> Callable[[], None]:
        """Register `listener` for `name`; returns its idempotent `off()`.

        The table is copy-on-write, so a dispatch already under way keeps the snapshot it
        took: a listener added or removed mid-dispatch takes effect from the next one.
        """
        registration = Registration(name, listener, scope, is_global)
        listeners = list(self._table.get(name, ()))
        if prepend:
            listeners.insert(0, registration)
        else:
            listeners.append(registration)
        self._table[name] = listeners  # copy-on-write: dispatch snapshots stay stable

        def off() -> None:
            if not registration.active:
                return
            registration.active = False
            current = self._table.get(name, [])
            self._table[name] = [r for r in current if r is not registration]

        return off

    def resolve(self, name: str, key: object | None) -> list[Listener]:
        """The listener snapshot for one dispatch routed by `key` (None: unrouted)."""
        registrations = self._table.get(name)
        if not registrations:
            return []
        chain: list[object] | None = None  # walked only if a scoped listener asks
        out = []
        for registration in registrations:
            scope = registration.scope
            if registration.is_global or scope is None:
                out.append(registration.listener)
            elif key is not None:
                if chain is None:
                    chain = _ancestors(key)
                if any(scope is link for link in chain):
                    out.append(registration.listener)
        return out

    def has_listeners(self, name: str) -> bool:
        """Whether anything listens to `name` (lets a caller skip building a payload)."""
        return bool(self._table.get(name))

    # -- dispatch modes ------------------------------------------------------------------------

    def emit_contained(self, name: str, key: object | None, *args: Any,
                       label: str | None = None) -> None:
        """Call every matching listener; a raise or failed awaitable is logged, never spread."""
        prefix = label or f'agent event "{name}"'
        for listener in self.resolve(name, key):
            try:
                result = listener(*args)
            except Exception as error:
                log.warning("%s listener threw: %s", prefix, error, exc_info=error)
                continue
            _observe(result, partial(_log_rejection, prefix))

    def emit_vetoing(self, name: str, key: object | None, *args: Any) -> None:
        """Like emit, but a synchronous raise propagates (creation vetoes)."""
        for listener in self.resolve(name, key):
            result = listener(*args)
            _observe(result, lambda error: log.warning(
                '"%s" listener rejected: %s', name, error, exc_info=error))

    async def waterfall(self, name: str, key: object | None, payload: Any,
                        default: Callable[[], Any]) -> Any:
        """Chain the listeners (§5.1): each gets `(payload, next)`; calling `next()` runs the rest
        and returns their result, not calling it replaces that result. `default()` ends the
        chain (`agent/pre-step`, `agent/request`, `agent/request-error`)."""
        listeners = self.resolve(name, key)

        async def call(index: int) -> Any:
            if index >= len(listeners):
                result = default()
            else:
                result = listeners[index](payload, lambda: call(index + 1))
            if inspect.isawaitable(result):
                result = await result
            return result

        return await call(0)

    async def serial(self, name: str, key: object | None, payload: Any) -> Any:
        """Await the listeners in turn; the first result other than None/False wins and stops
        the rest (`agent/turn-stopping`). Errors propagate to the caller."""
        for listener in self.resolve(name, key):
            result = listener(payload)
            if inspect.isawaitable(result):
                result = await result
            if result is not None and result is not False:
                return result
        return None

    async def parallel(self, name: str, key: object | None, *args: Any) -> int:
        """Await every listener together; raise the first failure after all settle."""
        import asyncio

        listeners = self.resolve(name, key)
        awaitables: list[Awaitable[Any]] = []
        first_error: BaseException | None = None
        for listener in listeners:
            try:
                result = listener(*args)
            except Exception as error:
                first_error = first_error or error
                continue
            if inspect.isawaitable(result):
                awaitables.append(result)
        if awaitables:
            results = await asyncio.gather(*awaitables, return_exceptions=True)
            for result in results:
                if isinstance(result, BaseException) and first_error is None:
                    first_error = result
        if first_error is not None:
            raise first_error
        return len(listeners)


def payload_of(agent: Any, fields: Mapping[str, Any] | None = None) -> Mapping[str, Any]:
    """A read-only payload whose `agent` is always the dispatch subject."""
    data = dict(fields or {})
    data["agent"] = agent  # the subject can never be overridden by a caller's field
    return MappingProxyType(data)


class AgentEvents:
    """The fused dispatcher of one agent: every payload carries that agent."""

    __slots__ = ("agent", "bus")

    def __init__(self, bus: EventBus, agent: Any) -> None:
        self.bus = bus
        self.agent = agent

    def emit(self, name: str, fields: Mapping[str, Any] | None = None) -> None:
        """Emit `name` for this agent (§5.1); each listener is isolated, its errors logged."""
        self.bus.emit_contained(name, self.agent, payload_of(self.agent, fields))

    async def waterfall(self, name: str, fields: Mapping[str, Any],
                        default: Callable[[], Any]) -> Any:
        """Run the waterfall `name` for this agent (§5.1); the payload carries `agent`."""
        return await self.bus.waterfall(name, self.agent, payload_of(self.agent, fields), default)

    async def serial(self, name: str, fields: Mapping[str, Any]) -> Any:
        """Run the serial dispatch `name` for this agent (§5.1); the first answer wins."""
        return await self.bus.serial(name, self.agent, payload_of(self.agent, fields))

    def has_listeners(self, name: str) -> bool:
        """Whether anything listens to `name` on this bus, whatever its scope."""
        return self.bus.has_listeners(name)


def agent_events(ctx: Any, agent: Any) -> AgentEvents:
    """Dispatcher of `agent` on the bus of `ctx` (any context of the same world)."""
    return AgentEvents(ctx.bus, agent)
