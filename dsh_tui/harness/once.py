"""`once`: the idempotent-disposer idiom every detach and off() in the harness follows."""

from __future__ import annotations

from collections.abc import Callable


def once(action: Callable[[], None]) -> Callable[[], None]:
    """A callable that runs `action` the first time it is called and never again."""
    done = False

    def call() -> None:
        nonlocal done
        if done:
            return
        done = True
        action()

    return call
