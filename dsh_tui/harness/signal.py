"""Cooperative cancellation: a first-cause-wins signal, like an AbortSignal.

Abort callbacks run synchronously inside `abort()` so a cancel issued from any
listener is visible to every boundary check that follows it, in the same tick.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

log = logging.getLogger("dsh_tui.harness.signal")


class Cancelled(Exception):
    """Raised by `throw_if_aborted()`; carries the winning cause as `reason`."""

    def __init__(self, reason: Any) -> None:
        super().__init__(f"aborted: {reason!r}")
        self.reason = reason


class CancelSignal:
    """Set once; the first `abort(reason)` wins and later calls change nothing."""

    __slots__ = ("_callbacks", "_futures", "aborted", "reason")

    def __init__(self) -> None:
        self.aborted = False
        self.reason: Any = None
        self._callbacks: list[Callable[[Any], object]] = []
        self._futures: list[asyncio.Future[Any]] = []

    def abort(self, reason: Any = None) -> None:
        """Abort with `reason` (default: the user cause); only the first call counts (§3.3).
        Listeners run at once, each isolated; waiters wake with the reason."""
        if self.aborted:
            return
        self.aborted = True
        self.reason = reason if reason is not None else {"kind": "user"}
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            try:
                callback(self.reason)
            except Exception:  # an abort listener must never stop the others
                log.exception("abort listener raised")
        futures, self._futures = self._futures, []
        for future in futures:
            if not future.done():
                future.set_result(self.reason)

    def throw_if_aborted(self) -> None:
        """Raise `Cancelled(reason)` once aborted: the cooperative check points of a turn."""
        if self.aborted:
            raise Cancelled(self.reason)

    def add_listener(self, callback: Callable[[Any], object]) -> Callable[[], None]:
        """Call `callback(reason)` on abort (at once if already aborted); returns a remover."""
        if self.aborted:
            callback(self.reason)
            return lambda: None
        self._callbacks.append(callback)

        def remove() -> None:
            try:
                self._callbacks.remove(callback)
            except ValueError:
                pass

        return remove

    async def wait(self) -> Any:
        """Resolve with the reason once aborted."""
        if self.aborted:
            return self.reason
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._futures.append(future)
        try:
            return await future
        finally:
            if future in self._futures:
                self._futures.remove(future)

    def __repr__(self) -> str:
        return f"CancelSignal(aborted={self.aborted}, reason={self.reason!r})"


def any_signal(*signals: CancelSignal | None) -> CancelSignal:
    """A signal that aborts when any of `signals` does, with that signal's reason."""
    fused = CancelSignal()
    for signal in signals:
        if signal is None:
            continue
        if signal.aborted:
            fused.abort(signal.reason)
            break
        signal.add_listener(fused.abort)
    return fused
