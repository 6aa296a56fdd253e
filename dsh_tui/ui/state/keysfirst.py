"""Keystrokes first: work that starts a long frame waits while the person types.

A typed key is painted in the next frame, and that frame paints everything else that
changed since the last one. Streamed text growing in the shown transcript asks for a
layout of the screen and the drawing of its new lines, tens of milliseconds on a busy
machine; a key that arrives while that runs waits for it, and so does the key whose
frame it shares (`benchmarks/bench_keys.py`).

So while the person types (a key less than `hold` seconds ago), such work is deferred
here instead of run: it runs once typing pauses, or, when it has waited `max_hold`
seconds, right after the next key's frame is painted (`typed()` says so; the app calls
`run_overdue()` then), in the pause before the key after it. The transcript keeps
moving under a person who types without pause, a few times a second.

What is deferred is only the drawing of streamed text. The bridge still folds every
event into the plain-Python models on its usual pacing (small slices, and before a
finished step's chunks are packed), and changes a key may act on (an agent, an inbox)
are shown at once in their panes. A key that does not type (enter sends the message,
a command, a move) ends the typing: what waits is drawn after its frame.

No Textual import: the scheduler is injected, as the bridge's is.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

TYPING_HOLD = 0.3
"""Seconds after a keystroke during which deferred work waits."""
TYPING_MAX_HOLD = 0.5
"""The longest deferred work waits for typing to pause; past it, it runs right after the
next key's frame."""
TIMER_SLACK = 0.002
"""A hold shorter than this counts as over. Textual's timers wake up to 0.5 ms early, and
a re-armed timer of a microsecond or less never fires at all (its only tick is skipped as
already missed), which left deferred work pending for good."""

Scheduler = Callable[[float, Callable[[], Any]], Any]


class KeysFirst:
    """The person's typing, and the work that waits for a pause in it."""

    def __init__(self, schedule: Scheduler, clock: Callable[[], float] = time.monotonic,
                 hold: float = TYPING_HOLD, max_hold: float = TYPING_MAX_HOLD) -> None:
        self._schedule = schedule
        self._clock = clock
        self.hold = hold
        self.max_hold = max_hold
        self._typed_at = float("-inf")
        self._held: dict[Callable[[], Any], None] = {}
        """Deferred callbacks in the order they were first deferred (each once)."""
        self._held_since: float | None = None
        self._armed = False
        self.stopped = False

    def typing(self) -> bool:
        """A key was pressed less than `hold` seconds ago."""
        return self._clock() - self._typed_at < self.hold

    def typed(self) -> bool:
        """The person pressed a key. True when deferred work has waited `max_hold` already:
        the caller then runs `run_overdue()` once the key's frame is painted."""
        now = self._clock()
        self._typed_at = now
        since = self._held_since
        return since is not None and now - since >= self.max_hold

    def done_typing(self) -> None:
        """A key that does not type (enter sends, a command, a move): typing is over, and
        what waits runs after that key's frame (the caller runs `run_overdue()`)."""
        self._typed_at = float("-inf")

    def defer(self, callback: Callable[[], Any]) -> bool:
        """Run `callback` later if the person is typing (True), else leave it to the caller
        to run now (False). A callback deferred twice runs once."""
        if self.stopped or not self.typing():
            return False
        if self._held_since is None:
            self._held_since = self._clock()
        self._held[callback] = None
        if not self._armed:
            self._arm(self._typed_at + self.hold - self._clock())
        return True

    @property
    def held(self) -> int:
        """How many callbacks wait."""
        return len(self._held)

    def run_overdue(self) -> None:
        """Run what waits (a key found it overdue and its frame is painted now)."""
        self._run()

    def stop(self) -> None:
        """Nothing runs any more (the app is closing)."""
        self.stopped = True
        self._held.clear()
        self._held_since = None

    def _arm(self, delay: float) -> None:
        self._armed = True
        try:
            self._schedule(max(0.0, delay), self._wake)
        except Exception:
            self._armed = False
            self._run()

    def _wake(self) -> None:
        self._armed = False
        if not self._held or self.stopped:
            return
        rest = self._typed_at + self.hold - self._clock()
        if rest > TIMER_SLACK:
            self._arm(rest)  # typed again meanwhile: wait for the pause after that key
            return
        self._run()

    def _run(self) -> None:
        held, self._held = self._held, {}
        self._held_since = None
        if self.stopped:
            return
        for callback in held:
            callback()
