"""A typed key is painted in a frame of its own, before anything else waits to be drawn.

Textual paints on a timer (at most 60 frames a second): a key the composer has handled
waits for the next tick, and that frame first lays out the screen if anything asked for
it and then redraws everything that changed since the last one: with 20 agents streaming,
a reply grown by some lines, agent rows, the inbox. The key's own change, a few cells of
the composer, is painted last, behind tens of milliseconds of other work
(`benchmarks/bench_keys.py`).

`paint_now(widget)` draws only what the widget itself asked to repaint, at once, and hands
it to the terminal; everything else stays dirty and is drawn by the next regular frame, as
before. The composer's place on the screen does not depend on the streamed content around
it, so the screen's last layout still holds for it even while a new one is pending; where
that is not certain (something drawn over the composer was removed since, another screen
is on top, an update batch is open) nothing is painted early and the key waits for the
regular frame as it always did.

Reads Textual internals that have no public API (checked against Textual 8.2.8, which
pyproject.toml pins): the screen's `_compositor`, its `visible_widgets` map and
`_dirty_regions` set, `update_widgets` and `render_update` (what the screen's own update
does), and `App._display`. On any other Textual release `paint_now` does nothing.
"""

from __future__ import annotations

import time
from typing import Any

from textual.widget import Widget

from .textual_line import textual_is

MIN_GAP = 1 / 60
"""Seconds between two early paints of one widget: a burst of keys in one read is painted
by the regular frames (one per tick), not once per key."""

_FITS = textual_is("8.2.")


class KeyPaint:
    """Early paints of one widget, at most one per `MIN_GAP`."""

    def __init__(self, widget: Widget, clock: Any = time.monotonic) -> None:
        self.widget = widget
        self._clock = clock
        self._last = float("-inf")
        self.painted = 0
        """Early paints made (tests read it)."""

    def after_key(self) -> bool:
        """The widget handled a key: paint its change now unless one was painted less than
        `MIN_GAP` ago (then the regular frame, due by then, paints it). True if painted."""
        now = self._clock()
        if now - self._last < MIN_GAP:
            return False
        if not paint_now(self.widget):
            return False
        self._last = now
        self.painted += 1
        return True


def paint_now(widget: Widget) -> bool:
    """Draw the regions `widget` asked to repaint and send them to the terminal now;
    False (and nothing drawn) when it cannot be done safely (see the module docstring)."""
    if not _FITS or not widget.is_mounted:
        return False
    app = widget.app
    try:
        screen = widget.screen
    except Exception:
        return False
    if app.screen is not screen or app._batch_count or app.is_inline or app._closing:
        return False
    compositor = screen._compositor
    visible = compositor.visible_widgets
    placed = visible.get(widget)
    if placed is None:
        return False
    _, clip = placed
    for other, (_, other_clip) in visible.items():
        if other_clip.overlaps(clip) and not other.is_attached:
            return False  # removed since the last layout: the next frame draws that area
    waiting = compositor._dirty_regions
    compositor._dirty_regions = set()
    try:
        compositor.update_widgets({widget})
        update = compositor.render_update(screen_stack=app._background_screens)
    finally:
        compositor._dirty_regions = waiting
    if update is None:
        return False
    app._display(screen, update)
    return True
