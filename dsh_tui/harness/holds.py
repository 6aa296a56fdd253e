"""Edit holds: a person editing a pending item holds the claim that would take it.

Without a hold, an agent reaching a step boundary claims whatever is pending, so an item
whose editor is open is sent with its old text and the save fails. A hold (placed by the
editor, released on save or cancel) makes the driver wait at that boundary instead, for
at most the hold's `limit` seconds, counted from when an agent first waits on it: a hold
that blocks nobody costs nothing, and no agent waits forever (docs/contract.md §3.8).

Plain bookkeeping, no asyncio: the loop's driver does the waiting (`loop/agent.py`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Literal

DEFAULT_HOLD_LIMIT = 60.0
"""Seconds an agent waits on one hold before the hold lapses and the claim goes ahead."""

HoldState = Literal["active", "released", "lapsed"]

Clock = Callable[[], float]


class InboxHold:
    """One hold on one pending message id; `release()` ends it (idempotent)."""

    __slots__ = ("_book", "limit", "message_id", "placed", "state", "waiting_since")

    def __init__(self, book: HoldBook, message_id: str, limit: float, placed: float) -> None:
        self._book = book
        self.message_id = message_id
        self.limit = limit
        """Seconds an agent may wait on this hold before it lapses."""
        self.placed = placed
        """When the hold was placed (the book's clock: `time.monotonic` by default)."""
        self.state: HoldState = "active"
        self.waiting_since: float | None = None
        """When an agent first waited on it (None while it blocked nobody)."""

    @property
    def active(self) -> bool:
        """Whether the hold still holds (not released, not lapsed)."""
        return self.state == "active"

    @property
    def deadline(self) -> float | None:
        """When the hold lapses (book clock), or None while no agent has waited on it."""
        return None if self.waiting_since is None else self.waiting_since + self.limit

    def remaining(self, now: float | None = None) -> float | None:
        """Seconds left before it lapses (never negative), or None while nobody waits on it."""
        deadline = self.deadline
        if deadline is None:
            return None
        return max(0.0, deadline - (self._book.clock() if now is None else now))

    def release(self) -> bool:
        """End the hold (the editor saved or was cancelled); False if it had already ended."""
        return self._book.end(self, "released")

    def __repr__(self) -> str:
        return f"InboxHold({self.message_id!r}, {self.state})"


class HoldBook:
    """The active holds of one agent; `on_end(hold, reason)` hears each one end."""

    def __init__(self, on_end: Callable[[InboxHold, str], None] | None = None,
                 clock: Clock = time.monotonic) -> None:
        self.clock = clock
        self._holds: list[InboxHold] = []
        self._on_end = on_end

    @property
    def active(self) -> tuple[InboxHold, ...]:
        """Active holds, oldest first."""
        return tuple(self._holds)

    def place(self, message_id: str, limit: float = DEFAULT_HOLD_LIMIT) -> InboxHold:
        """A new active hold on `message_id` (several may hold one id: each ends alone)."""
        if not isinstance(limit, (int, float)) or limit != limit or limit < 0:
            raise ValueError("a hold limit must be a number of seconds >= 0")
        hold = InboxHold(self, message_id, float(limit), self.clock())
        self._holds.append(hold)
        return hold

    def held_ids(self) -> set[str]:
        """Every message id an active hold names."""
        return {hold.message_id for hold in self._holds}

    def blocking(self, message_ids: Iterable[str]) -> list[InboxHold]:
        """The active holds on any of `message_ids` (what a claim of them must wait for)."""
        wanted = set(message_ids)
        return [hold for hold in self._holds if hold.message_id in wanted]

    def begin_wait(self, holds: Iterable[InboxHold]) -> None:
        """An agent starts waiting on `holds`: their countdowns start (once)."""
        now = self.clock()
        for hold in holds:
            if hold.waiting_since is None:
                hold.waiting_since = now

    def lapse_due(self) -> list[InboxHold]:
        """End, as lapsed, every hold whose deadline has passed; returns them."""
        now = self.clock()
        due = [hold for hold in self._holds
               if hold.deadline is not None and hold.deadline <= now]
        for hold in due:
            self.end(hold, "lapsed")
        return due

    def end(self, hold: InboxHold, reason: str) -> bool:
        """End `hold` (`released` or `lapsed`); False when it was no longer active."""
        if hold not in self._holds:
            return False
        self._holds.remove(hold)
        hold.state = "lapsed" if reason == "lapsed" else "released"
        if self._on_end is not None:
            self._on_end(hold, reason)
        return True
