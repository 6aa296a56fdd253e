"""Start a coroutine eagerly: its first segment runs now, the rest in a Task.

The agent contract needs a waking send to open the turn and claim the inbox
before it returns (the "synchronous waking prefix"). Python 3.12 has eager
tasks; on 3.11 we drive the coroutine's first `send` ourselves and hand the
remainder to a Task that keeps stepping it, exactly as a Task would.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Coroutine
from typing import Any


def start_eager(coro: Coroutine[Any, Any, Any],
                context: contextvars.Context | None = None) -> asyncio.Future[Any]:
    """Run `coro` up to its first real suspension now, then continue it in a Task.

    A waking send relies on this: `turn/start` and the claim happen before `followup`
    returns (§3.2.4). A coroutine that finishes or raises in that first segment gives an
    already-settled future.
    """
    loop = asyncio.get_running_loop()
    context = context or contextvars.copy_context()
    try:
        yielded = context.run(coro.send, None)
    except StopIteration as stop:
        done = loop.create_future()
        done.set_result(stop.value)
        return done
    except BaseException as error:
        failed = loop.create_future()
        failed.set_exception(error)
        return failed
    return loop.create_task(_drive(coro, yielded), context=context)


async def _drive(coro: Coroutine[Any, Any, Any], yielded: Any) -> Any:
    while True:
        thrown: BaseException | None = None
        try:
            if yielded is None:
                await asyncio.sleep(0)  # a bare yield: give others a turn
            else:
                # As Task.__step does: take over the "blocking" handshake, else awaiting
                # the same future again is refused by the C future iterator.
                yielded._asyncio_future_blocking = False
                await yielded
        except asyncio.CancelledError as cancelled:
            if yielded is not None and hasattr(yielded, "cancel"):
                yielded.cancel()
            thrown = cancelled
        except BaseException:
            pass
        try:
            yielded = coro.throw(thrown) if thrown is not None else coro.send(None)
        except StopIteration as stop:
            return stop.value
