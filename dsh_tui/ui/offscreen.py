"""Drop the rendered lines of widgets scrolled far out of sight; they are drawn again on return.

Why: Textual keeps every line it has drawn of a widget, twice (the content lines of
`Widget._render_cache` and the styled lines of `Widget._styles_cache`), and each line
(a `Strip`) carries seven small caches of its own, filled with the pieces the compositor
cut it into. A transcript block that scrolled up out of sight still holds all of that for
as long as it stays mounted: with the tail-following window of 30-50 blocks this was the
largest part of the heap the soak benchmark found held per event, and it moved with
whatever replies happened to be in the window (benchmarks/bench_soak.py).

`release(widget)` drops both caches of a widget and its descendants and marks the content
as needing a render, exactly the state Textual leaves a widget in after `refresh()`: the
next frame that shows a line of it renders the line again from the widget's `render()`.
Nothing is laid out again (sizes are kept), and a widget out of sight is not drawn, so it
costs nothing until it comes back.

Textual has no public way to drop a widget's cached lines without also forgetting its
measured size (`refresh()` clears the cached dimensions, so the next layout would measure
every released block again), so this reads three private fields, checked against Textual
8.2.8 (the version pyproject.toml pins): `_styles_cache` (a `StylesCache`, whose own
`clear()` Textual calls when the width changes), `_render_cache` (the `_RenderCache` of
the content lines, which `Widget.remove` resets the same way) and `_dirty_regions` (the
set `render_line` checks before it uses `_render_cache`). If they are not there, or not
of that shape, `release` does nothing and the lines stay cached as before.
"""

from __future__ import annotations

from typing import Any

from textual.geometry import Size
from textual.widget import Widget

from .textual_line import textual_is

CHECKED_ON = "8.2."
"""The Textual release line whose private fields this reads."""


def _internals_fit() -> bool:
    if not textual_is(CHECKED_ON):
        return False
    probe = Widget()
    styles = getattr(probe, "_styles_cache", None)
    render = getattr(probe, "_render_cache", None)
    return callable(getattr(styles, "clear", None)) and isinstance(
        getattr(styles, "_cache", None), dict) and isinstance(
        getattr(render, "lines", None), list) and isinstance(
        getattr(probe, "_dirty_regions", None), set) and hasattr(type(render), "_make")


_FITS: bool | None = None


def supported() -> bool:
    """Whether this Textual has the fields `release` reads (checked once)."""
    global _FITS
    if _FITS is None:
        try:
            _FITS = _internals_fit()
        except Exception:
            _FITS = False
    return _FITS


def cached_lines(widget: Widget) -> int:
    """Lines `widget` (not its children) holds rendered: styled plus content lines, plus
    those a widget that draws its own lines keeps (`held_lines`, a reply's)."""
    own = getattr(widget, "held_lines", None)
    held = own() if callable(own) else 0
    if not supported():
        return held
    return held + len(widget._styles_cache._cache) + len(widget._render_cache.lines)


def release(widget: Widget) -> int:
    """Drop the rendered lines of `widget` and every widget inside it; returns how many.

    The content is marked for a render, so whatever part of it is drawn next is rendered
    again from scratch (as after `refresh()`); sizes and layout are kept."""
    dropped = 0
    for node in widget.walk_children(Widget, with_self=True):
        own = getattr(node, "release_lines", None)
        if callable(own):
            dropped += own()  # its own cache: public to this app, on any Textual
        if not supported():
            continue
        held = cached_lines(node)
        if not held:
            continue
        dropped += held
        node._styles_cache.clear()
        render: Any = node._render_cache
        node._render_cache = render._make((Size(0, 0), []))
        node._dirty_regions.add(node.outer_size.region)
    return dropped
