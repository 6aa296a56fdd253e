"""When the garbage collector may pause the app, and what it may keep while it waits.

A streaming session grows the heap by many long-lived objects (every logged
chunk), so CPython's full collections get longer as the log grows: measured on
20 agents at 5,000 chunks/s, they were the ~100 ms stalls behind an event-loop
lag p99 of 96 ms (18 ms with the collector off), and a full collection of a
300,000-event heap takes ~500 ms. While any agent runs, the app therefore moves
what survived so far into the permanent generation (`gc.freeze()`, as Toad does)
every `FREEZE_EVERY` seconds, so collections only ever scan young objects.

Frozen objects are never examined again until the app unfreezes, so garbage that
was frozen stays in memory while agents keep running. Before each freeze the
pacing therefore collects what is not frozen yet (half a second of survivors, a
few milliseconds of work), so the short-lived garbage of frames and chunks is
never frozen. Garbage made of objects that were alive at a freeze and die later
is out of the collector's reach until everything is idle again, when the pacing
unfreezes and collects at a moment nobody watches a stream. Most of it was
removed widgets (a pruned transcript block, a Markdown list the stream
re-rendered), which the app's `Reaper` now frees while busy without any
collection (`ui/unmounted.py`, `state/reclaim.py`), and rings of Textual's
cleared LRU caches, which no longer form (`ui/lru.py`): measured by
`benchmarks/bench_soak.py`, what is left at the end of a minute's soak went from
about 10 MB to 0.1-0.2 MB. A periodic full collection while
busy was tried and dropped: its pause (~0.5 s at 300,000 events) broke the
250 ms lag bar; measured again with packed chunks (20 agents streaming, 30 s,
`benchmarks/bench_soak.py`), a full collection while busy once the frozen heap had
grown by half paused the app 330 ms and did not change the RSS slope (the frozen
garbage was 3 MB of the window's ~28 MB growth), so it stays out.

Keystrokes come first: while the person types, the timer's `busy(typing=True)` leaves
the freeze to the keys: a key that finds one due (`after_key()`) has it run right after
its own frame is painted, in the pause before the next key, so no collection lands
between a key and its frame. It still runs every FREEZE_EVERY seconds: waiting for
typing to pause let the survivors of up to two seconds pile up, and collecting them
took 40-150 ms (automatic full collections, triggered by those survivors, among them),
which the next key then waited behind (`benchmarks/bench_keys.py`).
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable

FREEZE_EVERY = 0.5
"""Seconds between two freezes while something streams."""
KEY_FREEZE_EVERY = 0.25
"""Seconds between two freezes run after keys (`after_key`): a collection's pause grows
with the survivors since the last freeze, and this one runs between two keys."""
TYPING_DEFER = 2.0
"""The longest the timer's pacing leaves a due freeze to the keys (`after_key`)."""


class GcPacing:
    """`busy()` while something streams, `settle()` when everything is idle."""

    def __init__(self, clock: Callable[[], float] = time.monotonic,
                 timer: Callable[[], float] = time.perf_counter) -> None:
        self._clock = clock
        self._timer = timer
        self._last = float("-inf")
        self.frozen = False
        self.freezes = 0
        self.collections = 0
        """Full collections, run when everything went idle."""
        self.young_pause_max = 0.0
        """Seconds the longest collection before a freeze took."""

    def busy(self, typing: bool = False) -> None:
        """Streaming is under way: freeze what survived so far, at most every FREEZE_EVERY
        seconds (TYPING_DEFER while the person types), so the collector does not rescan
        long-lived objects on every burst."""
        now = self._clock()
        if now - self._last < FREEZE_EVERY:
            return
        if typing and now - self._last < TYPING_DEFER:
            return
        self._freeze(now)

    def _freeze(self, now: float) -> None:
        self._last = now
        start = self._timer()
        if self.frozen:
            gc.collect()  # only what is not frozen yet: the survivors since the last freeze
        else:
            # The first freeze of a busy spell: the whole app is unfrozen, and a full
            # collection would be a long pause; a young one is not, and what died young
            # (the garbage of the last frames) is then not frozen until the app is idle.
            gc.collect(1)
        self.young_pause_max = max(self.young_pause_max, self._timer() - start)
        gc.freeze()
        self.frozen = True
        self.freezes += 1

    def after_key(self) -> bool:
        """A key was pressed: True if a freeze is due while something streams, which the
        caller runs (`freeze_after_key`) once the key's frame is painted."""
        return self.frozen and self._clock() - self._last >= KEY_FREEZE_EVERY

    def freeze_after_key(self) -> None:
        """The freeze `after_key` found due, run once the key's frame is painted."""
        now = self._clock()
        if self.frozen and now - self._last >= KEY_FREEZE_EVERY:
            self._freeze(now)

    def settle(self) -> None:
        """Everything is idle: unfreeze, so garbage made while busy is collected now, when
        a pause cannot be felt."""
        if not self.frozen:
            return
        self.frozen = False
        gc.unfreeze()
        gc.collect()
        self.collections += 1

    def release(self) -> None:
        """Give frozen objects back to the collector (the app is closing)."""
        if self.frozen:
            self.frozen = False
            gc.unfreeze()
