"""Bounded waits for one model call: caller cancellation and a content watchdog.

httpx's `read` timeout is the gap between two socket reads, so a server that keeps
sending `: keep-alive` comments (DeepSeek does, while a request is queued or stalled)
never trips it: a 300 s timeout was seen waiting 17 minutes. The watchdog here counts
only time spent *waiting on the server* since the last data event. How a wait races
cancellation is on `StreamGuard`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from dsh_tui.harness.signal import CancelSignal

T = TypeVar("T")

STALL_GRACE = 0.25
"""Seconds a wait whose timer fired still gives its read (see `StreamGuard.run`)."""


class StreamAborted(Exception):
    """The caller's signal aborted while a wait was outstanding."""


class StreamStalled(Exception):
    """No content arrived within the watchdog interval."""


class StreamSilent(Exception):
    """The server sent no bytes at all within the wait's own limit (first byte or gap)."""

    def __init__(self, limit: float) -> None:
        super().__init__(limit)
        self.limit = limit


class StreamGuard:
    """Races awaits against `signal` and the idle budget; `close()` when the call ends.

    Comments do not reset the idle budget, and time the consumer spends handling chunks
    does not count against it. Each wait runs the awaitable as its own task and races it
    against the caller's `CancelSignal`, so an abort interrupts a read that is blocked on
    the network, not only the next chunk. Nothing here yields from inside a wait, so the
    owning async generator can be closed or cancelled at any point. A timer that fires
    after a stop (SIGSTOP) gives the read a short grace first (`STALL_GRACE`).
    """

    def __init__(self, signal: CancelSignal | None, idle_timeout: float | None) -> None:
        self.signal = signal
        self.idle_timeout = idle_timeout
        self._waited = 0.0  # seconds spent waiting since the last content progress
        self._abort: asyncio.Future[Any] | None = None
        self._remove: Callable[[], None] | None = None

    @property
    def aborted(self) -> bool:
        return self.signal is not None and self.signal.aborted

    def progress(self) -> None:
        """Content arrived: the watchdog starts over."""
        self._waited = 0.0

    def _abort_future(self) -> asyncio.Future[Any]:
        if self._abort is None:
            self._abort = asyncio.get_running_loop().create_future()
            if self.signal is not None:
                self._remove = self.signal.add_listener(self._on_abort)
        return self._abort

    def _on_abort(self, reason: Any) -> None:
        if self._abort is not None and not self._abort.done():
            self._abort.set_result(reason)

    async def run(self, awaitable: Awaitable[T],
                  on_orphan: Callable[[Any], Awaitable[object]] | None = None,
                  limit: float | None = None) -> T:
        """Await `awaitable`, or raise StreamAborted / StreamStalled / StreamSilent first.

        `limit` bounds this one wait (the transport's silence budget: time to the first
        byte, or the gap between two reads), apart from the content watchdog.

        A losing task is cancelled and awaited; if it had produced a value anyway
        (a response that raced an abort), `on_orphan(value)` disposes of it.
        """
        abort = self._abort_future()
        task = asyncio.ensure_future(awaitable)
        if self.aborted:
            await _discard(task, on_orphan)
            raise StreamAborted
        loop = asyncio.get_running_loop()
        started = loop.time()
        timeout = None if self.idle_timeout is None else max(0.0, self.idle_timeout - self._waited)
        silent = limit is not None and (timeout is None or limit < timeout)
        if silent:
            timeout = max(0.0, limit or 0.0)
        try:
            await asyncio.wait({task, abort}, timeout=timeout,
                               return_when=asyncio.FIRST_COMPLETED)
            if not (task.done() or abort.done()) and timeout:
                # The timer fired. After a stop (SIGSTOP) it fires in the same loop pass
                # that finds the server's bytes readable, or an earlier one, before the read
                # could take them: the deadline passed, yet the server was not silent. Only
                # a read still empty after a short grace, counted from now, is silence. A
                # wait that began overdue (the watchdog's budget already spent on
                # keep-alives) gets none, so a trickle of comments cannot extend it.
                await asyncio.wait({task, abort}, timeout=STALL_GRACE,
                                   return_when=asyncio.FIRST_COMPLETED)
        except BaseException:  # our own task was cancelled: take the wait down with it
            await _discard(task, on_orphan)
            raise
        finally:
            self._waited += loop.time() - started
        if abort.done():
            await _discard(task, on_orphan)
            raise StreamAborted
        if task.done():
            return task.result()
        await _discard(task, on_orphan)
        if silent:
            raise StreamSilent(limit or 0.0)
        raise StreamStalled

    def close(self) -> None:
        if self._remove is not None:
            self._remove()
            self._remove = None
        if self._abort is not None and not self._abort.done():
            self._abort.cancel()


async def _discard(task: asyncio.Future[Any],
                   on_orphan: Callable[[Any], Awaitable[object]] | None) -> None:
    task.cancel()
    try:
        await asyncio.wait({task})
    finally:
        if task.done() and not task.cancelled():
            error = task.exception()  # retrieved, so asyncio does not warn about it
            if error is None and on_orphan is not None:
                await on_orphan(task.result())
