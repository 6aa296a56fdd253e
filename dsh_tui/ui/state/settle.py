"""The tree cursor moves at once; the selected agent follows once the cursor rests.

Selecting an agent loads its transcript and inbox, retitles the panes and writes a
`selected` record to the workspace; doing that for every row an arrow key passes over
(thirty arrows with agents streaming) took seconds to settle and wrote a record per row.
Here the cursor's agent is noted on each move, and one selection happens when no move
came for `delay` seconds: one load and at most one record per rest. A deliberate choice
(enter, a click, the jump key) selects at once. The scheduler and the clock are injected
(`schedule(delay, callback)`, as the bridge's: its callbacks queue behind keys already
queued), so tests need no terminal and no sleep.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

SETTLE_DELAY = 0.1
"""Seconds the cursor rests before the selection follows it."""

Scheduler = Callable[[float, Callable[[], Any]], Any]


class Settle:
    """Turns a burst of cursor moves into one selection once the cursor rests."""

    def __init__(self, schedule: Scheduler, select: Callable[[str], Any],
                 clock: Callable[[], float] = time.monotonic,
                 delay: float = SETTLE_DELAY,
                 keys_coming: Callable[[], bool] = lambda: False) -> None:
        self._schedule = schedule
        self._select = select
        self._clock = clock
        self._keys_coming = keys_coming
        """More keys of a burst have arrived and wait to be handled: not a rest yet."""
        self.delay = delay
        self.cursor: str | None = None
        """The agent under the cursor (what the tree highlights now)."""
        self.selected: str | None = None
        """The agent selected last (what the panes show)."""
        self._last_move = float("-inf")
        self._armed = False
        self._deferred = False
        self.selections = 0
        """Selections made (a benchmark counts transcript loads by it)."""

    @property
    def pending(self) -> bool:
        """The cursor is on another agent than the selected one, waiting to rest."""
        return self.cursor is not None and self.cursor != self.selected

    def moved(self, agent_id: str | None, waited: float = 0.0) -> None:
        """The cursor moved onto `agent_id`: select it once the cursor rests there.
        `waited`: seconds the key that moved it waited before it was handled (a burst of
        keys arrives at once and is handled one by one): the rest counts from its arrival,
        so a burst's selection does not wait for the handling of the burst and then a rest."""
        self.cursor = agent_id
        self._last_move = self._clock() - min(max(waited, 0.0), self.delay)
        if not self._armed and self.pending:
            self._armed = True
            self._schedule(max(self._last_move + self.delay - self._clock(), 0.0), self._due)

    def now(self, agent_id: str | None) -> None:
        """Select `agent_id` at once (a deliberate choice); a pending rest is dropped."""
        self.cursor = agent_id
        self._last_move = float("-inf")
        self._commit()

    def selected_elsewhere(self, agent_id: str | None) -> None:
        """The app selected `agent_id` itself (a fallback, a new agent): the cursor goes
        there too and nothing is selected again."""
        self.cursor = self.selected = agent_id
        self._last_move = float("-inf")
        self._deferred = False

    def flush(self) -> None:
        """Select the cursor's agent now if one is waiting (a key that acts on the
        selected agent must act on the row the person sees)."""
        if self.pending:
            self._commit()

    def _due(self) -> None:
        self._armed = False
        if not self.pending:
            return
        wait = self._last_move + self.delay - self._clock()
        if wait > 0.001:
            self._armed = True
            self._schedule(wait, self._due)  # moved again meanwhile: wait out the rest
            return
        if self._keys_coming():
            self._deferred = True  # a burst is being handed over: `keys_done` resumes
            return
        self._commit()

    def keys_done(self) -> None:
        """The keys that had arrived are all handled: a rest put off for them is judged
        now (the last of them may have moved the cursor again)."""
        if self._deferred and not self._armed:
            self._deferred = False
            self._due()

    def _commit(self) -> None:
        self._deferred = False
        agent_id = self.cursor
        if agent_id is None or agent_id == self.selected:
            return
        self.selected = agent_id
        self.selections += 1
        self._select(agent_id)
