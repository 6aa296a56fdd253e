"""Repaints Textual does in whole that the app needs only in part.

Textual repaints a widget's every line when a child is mounted into it (the mount
refreshes the parent with layout and repaint) and when its border title is set. For a
pane as tall as the screen, or a streaming reply, those are frames that a typed key, and
every other callback of the event loop, wait behind (benchmarks/bench_keys.py). The
layout is still done; only the repaint of lines that did not change is left out.
"""

from __future__ import annotations

import sys
from types import CodeType
from typing import Self

from rich.text import Text
from textual import events
from textual.content import Content
from textual.geometry import Region, Size
from textual.widget import AwaitMount, Widget


def _mount_refresh_code() -> CodeType | None:
    """The code of Textual's `await_mount` (inside `AwaitMount.__await__`), which refreshes the
    parent with layout=True (and so a full repaint) once new children are mounted."""
    for const in AwaitMount.__await__.__code__.co_consts:
        if isinstance(const, CodeType) and const.co_name == "await_mount":
            return const
    return None


_MOUNT_REFRESH = _mount_refresh_code()


def widgets_mounted() -> list[Widget] | None:
    """The widgets whose mount called the `refresh()` running now (see the module docstring);
    None when it was not called by Textual's mount, or on a Textual whose mount is not
    recognised."""
    frame = sys._getframe(2)  # (this, the refresh, its caller)
    if _MOUNT_REFRESH is None or frame.f_code is not _MOUNT_REFRESH:
        return None
    awaiting = frame.f_locals.get("self")
    widgets = getattr(awaiting, "_widgets", None)
    return list(widgets) if isinstance(widgets, (list, tuple)) else None


class EdgeTitle:
    """A border title (or subtitle) that repaints only its own row of the border.

    Textual's `border_title` repaints the whole widget on every assignment: for the
    transcript pane, every line of its height, each time the title's turn, step or token
    figures change."""

    def __init__(self, bottom: bool) -> None:
        self.bottom = bottom

    def __set_name__(self, owner: type[Widget], name: str) -> None:
        self._internal_name = f"_{name}"

    def __set__(self, obj: Widget, title: Text | Content | str | None) -> None:
        if isinstance(title, Text):
            title = Content.from_rich_text(title)
        if title is None:
            setattr(obj, self._internal_name, None)
        else:
            setattr(obj, self._internal_name, obj.render_str(title).expand_tabs(4).split()[0])
        width, height = obj.outer_size
        if not obj.is_mounted or not width or not height:
            obj.refresh()
            return
        offset = obj.content_offset  # refresh() regions are relative to the content area
        row = height - 1 if self.bottom else 0
        obj.refresh(Region(-offset.x, row - offset.y, width, 1))

    def __get__(self, obj: Widget | None, objtype: type[Widget] | None = None) -> str | None:
        title: Content | None = getattr(obj, self._internal_name, None)
        return None if title is None else title.markup


class OneLayout:
    """Mixin for a transcript block: a change of its size found by a layout does not ask
    for another layout.

    Textual stores the size a layout measured in the widget's `virtual_size`, whose
    setter asks for a layout of the screen, though this runs inside the layout that
    measured it: a reply growing by a line, its reserve growing, a block mounted, each
    was laid out twice, in two frames (the second 10-15 ms of the 2-core VM's CPU,
    `benchmarks/bench_keys.py`). A block neither scrolls nor shows its virtual size, so
    it takes the new size without that second layout (as the transcript pane does for
    its own height, `Transcript._size_updated`). Without it every reply shown for the
    first time was laid out and drawn again a frame later, with the whole pane."""

    def _size_updated(self, size: Size, virtual_size: Size, container_size: Size,
                      layout: bool = True) -> bool:
        return super()._size_updated(  # type: ignore[misc]
            size, virtual_size, container_size, layout=False)


class KeepLinesOnHeight:
    """A mixin for a pane whose drawn lines depend on its width alone (Textual's Tree and
    OptionList): a resize that keeps the width keeps them.

    Both drop every drawn line on any resize. Opening the search bar or the event log
    takes rows from the panes above them (a height change only), and the agent tree and
    the inbox were then drawn again from nothing: ~10 ms of each such frame, with every
    agent streaming. Put it before the Textual class in the bases."""

    _kept_width = 0

    def _on_resize(self, event: events.Resize | None = None) -> None:
        if event is None:  # (OptionList's handler takes no event; Textual passes one)
            return
        width = event.size.width
        if width and width == self._kept_width:
            grow = getattr(getattr(self, "_line_cache", None), "grow", None)
            if callable(grow):
                grow(event.size.height)  # (Tree's handler did this, and dropped them)
            event.prevent_default()
        self._kept_width = width


class ScrollsWithoutLayout:
    """Mixin for a line-API pane (Textual's OptionList) whose size the screen's CSS sets,
    never its content (no `auto` width or height): a change of its virtual size (lines
    added or removed) updates its scrollbar without a layout of the screen and without
    drawing every line again.

    Textual's `virtual_size` asks for both on every change. The layout finds nothing to
    move (the pane's region is fixed), and the pane has already asked to repaint the lines
    that changed; with 20 agents streaming, the shown inbox changes with every follow-up,
    and each change was a layout and a full redraw of the pane that a typed key waited
    behind (`benchmarks/bench_keys.py`). A scrollbar that appears or goes still lays out
    the screen (Textual asks for that separately). Put it before the Textual class in the
    bases."""

    _virtual_only = False

    def _watch_virtual_size(self, old: Size, new: Size) -> None:
        self._virtual_only = not self.styles.auto_dimensions  # type: ignore[attr-defined]

    def refresh(self, *regions: Region, repaint: bool = True, layout: bool = False,
                recompose: bool = False) -> Self:
        if self._virtual_only:
            self._virtual_only = False
            if layout and not regions and not recompose:
                self._scroll_update(self.virtual_size)  # type: ignore[attr-defined]
                return self
        super().refresh(  # type: ignore[misc]
            *regions, repaint=repaint, layout=layout, recompose=recompose)
        return self
