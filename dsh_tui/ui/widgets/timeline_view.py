"""The inbox timeline's lines (`TimelineView`): one row per entry, drawn only where shown.

A line-API view, as Textual's `Log` is: the virtual height is the number of entries the
filter keeps, and `render_line(y)` formats the one entry at `scroll_y + y`, so a timeline
of 10,000 inbox operations opens and scrolls at the cost of the rows on screen. The
entries and their text come from `state/timeline.py`; this only styles the columns (time
and turn/step muted, the actor in its colour, turn and step boundaries bold) and keeps a
cursor, whose moves it reports (`Moved`) so the screen can show the entry in full.
"""

from __future__ import annotations

from typing import ClassVar

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ..keygate import CURSOR_MOVES
from ..state.inbox_log import MODEL, PERSON
from ..state.text import visible
from ..state.timeline import Timeline

HEAD = 28
"""Columns of the head `describe()` writes: time, turn/step and actor (plain ASCII)."""
BOUNDARIES = frozenset({"turn-start", "turn-end", "step-start", "step-end"})


class TimelineView(ScrollView, can_focus=True):
    """The filtered entries of one `Timeline`, with a cursor."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "timeline--cursor", "timeline--muted", "timeline--person", "timeline--model",
        "timeline--system", "timeline--boundary", "timeline--claim", "timeline--removal"}

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "move(-1)", "Up", show=False),
        Binding("down", "move(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "edge(0)", "First", show=False),
        Binding("end", "edge(1)", "Last", show=False),
    ]
    RUN_KEYS: ClassVar[frozenset[str]] = CURSOR_MOVES
    """Keys that only move the cursor: a burst of them arrives in one run (`keygate`)."""

    class Moved(Message):
        """The cursor is on another entry (or the entries under it changed)."""

    def __init__(self, timeline: Timeline, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.timeline = timeline
        self.cursor = 0
        self._count = -1
        self.lines_drawn = 0
        """Lines formatted so far (a test reads it: only the rows on screen are drawn)."""

    # -- the entries ---------------------------------------------------------------------------

    def sync(self, *, keep: int | None = None) -> None:
        """Take in entries that came (or a new filter): the height, the cursor, a repaint.
        `keep` is a seq the cursor should stay on; a cursor on the last row follows new
        entries down."""
        count = len(self.timeline)
        at_end = self.cursor >= self._count - 1
        if keep is not None:
            row = self.timeline.row_of_seq(keep)
            self.cursor = row if row is not None else max(0, count - 1)
        elif at_end or self._count < 0:
            self.cursor = max(0, count - 1)
        self.cursor = min(self.cursor, max(0, count - 1))
        changed = count != self._count
        self._count = count
        if changed or keep is not None:
            self.virtual_size = Size(self.size.width, count)
            self.refresh()
            self.call_after_refresh(self._show_cursor)
            self.post_message(self.Moved())

    def on_resize(self) -> None:
        self.virtual_size = Size(self.size.width, max(0, self._count))
        self._show_cursor()

    # -- the cursor ------------------------------------------------------------------------------

    def _set_cursor(self, row: int) -> None:
        count = len(self.timeline)
        row = max(0, min(row, count - 1)) if count else 0
        if row == self.cursor:
            return
        old, self.cursor = self.cursor, row
        self._refresh_row(old)
        self._refresh_row(row)
        self._show_cursor()
        self.post_message(self.Moved())

    def _refresh_row(self, row: int) -> None:
        self.refresh(Region(0, row - round(self.scroll_y), self.size.width, 1))

    def _show_cursor(self) -> None:
        self.scroll_to_region(Region(0, self.cursor, 1, 1), animate=False, immediate=True)

    def action_move(self, delta: int) -> None:
        self._set_cursor(self.cursor + delta)

    def action_page(self, direction: int) -> None:
        self._set_cursor(self.cursor + direction * max(1, self.size.height - 1))

    def action_edge(self, last: int) -> None:
        self._set_cursor(len(self.timeline) - 1 if last else 0)

    def on_click(self, event: object) -> None:
        y = getattr(event, "y", None)
        if isinstance(y, int):
            self._set_cursor(round(self.scroll_y) + y)

    # -- drawing -------------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        row = round(self.scroll_y) + y
        width = self.size.width
        base = self.rich_style
        if not 0 <= row < len(self.timeline) or width <= 0:
            return Strip.blank(width, base)
        self.lines_drawn += 1
        text = self._line(row, width)
        if row == self.cursor:
            text.stylize(self.get_component_rich_style("timeline--cursor"))
        text.pad_right(max(0, width - text.cell_len))
        strip = Strip(text.render(self.app.console), cell_len(text.plain))
        return strip.crop_extend(0, width, base)

    def _line(self, row: int, width: int) -> Text:
        timeline = self.timeline
        entry = timeline.entry(row)
        plain = timeline.line(row, width)
        head, body = plain[:HEAD], visible(plain[HEAD:])
        style = self.get_component_rich_style
        actor = "timeline--person" if entry.actor == PERSON else \
            "timeline--model" if entry.actor == MODEL else "timeline--system"
        text = Text(no_wrap=True, overflow="ellipsis", style=self.rich_style)
        text.append(head[:21], style("timeline--muted"))
        text.append(head[21:], style(actor))
        kind = entry.kind
        body_style: Style | str = ""
        if kind in BOUNDARIES:
            body_style = style("timeline--boundary")
        elif kind in ("claim", "sent", "hold-wait", "hold-end"):
            body_style = style("timeline--claim")
        elif kind in ("remove", "merge"):
            body_style = style("timeline--removal")
        text.append(body, body_style)
        text.truncate(width, overflow="ellipsis")
        return text
