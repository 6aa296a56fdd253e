"""The event log's lines (`#event-lines`): a line view over the entries the filter picked.

Textual's `Log` holds every line as text, so a reload (f2, a new filter) formatted all
of its 5,000 lines at once, and a chunk line reads its packed event back to be
formatted: 100-500 ms of the event loop while 20 agents streamed (bench_soak.py's
read-back). This view keeps the picked entries and formats a line only when it is
drawn (`render_line`, as `Log` and `DataTable` draw), so a reload costs the lines on
screen whatever the count. Lines are as wide as the widest one formatted so far.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from rich.cells import cell_len
from rich.segment import Segment
from textual.cache import LRUCache
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.selection import Selection
from textual.strip import Strip

Format = Callable[[Any, bool], str]
"""(entry, with its agent's id) → the line's text (already made visible)."""

CACHED = 1024
"""Formatted lines kept (a few screens both ways; formatting may read a packed event)."""


class EventLines(ScrollView, can_focus=True):
    """The newest `max_lines` entries, oldest first, each formatted when it is drawn."""

    ALLOW_SELECT = True
    DEFAULT_CSS = """
    EventLines {
        background: $surface;
        color: $text;
        overflow: scroll;
        &:focus { background-tint: $foreground 5%; }
    }
    """

    def __init__(self, format_line: Format, max_lines: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._format = format_line
        self.max_lines = max_lines
        self._entries: list[Any] = []
        self._dropped = 0
        """Entries pruned from the front since the last reset: cache keys stay absolute."""
        self._with_agent = False
        self._text: LRUCache[int, str] = LRUCache(CACHED)
        self._strips: LRUCache[int, Strip] = LRUCache(CACHED)
        self._width = 0
        self.formatted = 0
        """Lines formatted so far (tests read it: a reload formats what shows, no more)."""

    # -- content ----------------------------------------------------------------------------

    @property
    def line_count(self) -> int:
        return len(self._entries)

    def line(self, y: int) -> str:
        """The text of line `y` (formatted now unless it was already)."""
        key = self._dropped + y
        text = self._text.get(key)
        if text is None:
            text = self._format(self._entries[y], self._with_agent)
            text = text.expandtabs().replace("\n", " ").replace("\r", " ")
            self._text[key] = text
            self.formatted += 1
            width = cell_len(text)
            if width > self._width:
                self._width = width
                self.call_later(self._resize)  # (not while a frame is drawn)
        return text

    @property
    def lines(self) -> Sequence[str]:
        """Every line's text (formats all of them: a copy of the whole log, tests)."""
        return [self.line(y) for y in range(len(self._entries))]

    def reset(self, entries: list[Any], with_agent: bool) -> None:
        """Show `entries` (oldest first) instead, from their end."""
        self._entries = entries[-self.max_lines:] if len(entries) > self.max_lines \
            else list(entries)
        self._with_agent = with_agent
        self._dropped = 0
        self._text.clear()
        self._strips.clear()
        self._width = 0
        for y in range(max(0, len(self._entries) - self.size.height), len(self._entries)):
            self.line(y)  # the lines shown first: their width is known in the first frame
        self._resize()
        self.scroll_end(animate=False, immediate=True, x_axis=False, force=True)
        self.refresh()

    def append(self, entries: Sequence[Any]) -> None:
        """Add newer entries; the view follows them when it was at its end."""
        if not entries:
            return
        at_end = self.is_vertical_scroll_end
        start = len(self._entries)
        self._entries.extend(entries)
        over = len(self._entries) - self.max_lines
        if over > 0:
            del self._entries[:over]
            self._dropped += over
            start -= over
            if not at_end:  # the lines read stay where they are on screen
                self.scroll_to(y=max(0, self.scroll_y - over), animate=False, immediate=True)
        self._resize()
        if at_end and not self.is_vertical_scrollbar_grabbed:
            self.scroll_end(animate=False, immediate=True, x_axis=False)
        self.refresh_lines(max(0, start), len(self._entries) - max(0, start))

    def _resize(self) -> None:
        self.virtual_size = Size(self._width, len(self._entries))

    # -- drawing ----------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.size.width
        rich_style = self.rich_style
        number = scroll_y + y
        if not 0 <= number < len(self._entries):
            return Strip.blank(width, rich_style)
        selection = self.text_selection
        key = self._dropped + number
        strip = self._strips.get(key) if selection is None else None
        if strip is None:
            text = self.line(number)
            span = selection.get_span(number) if selection is not None else None
            if span is None:
                segments = [Segment(text, rich_style)]
            else:  # the selected part in the screen's selection style
                start, end = span
                end = len(text) if end == -1 else end
                chosen = rich_style + self.screen.get_component_rich_style("screen--selection")
                segments = [segment for segment in (
                    Segment(text[:start], rich_style), Segment(text[start:end], chosen),
                    Segment(text[end:], rich_style)) if segment.text]
            strip = Strip(segments, cell_len(text))
            if selection is None:
                self._strips[key] = strip
        return strip.crop_extend(scroll_x, scroll_x + width, rich_style) \
            .apply_offsets(scroll_x, number)

    def refresh_lines(self, y_start: int, line_count: int = 1) -> None:
        for number in range(y_start, y_start + line_count):
            self._strips.discard(self._dropped + number)
        super().refresh_lines(y_start, line_count)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._strips.clear()

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        return selection.extract("\n".join(self.lines)), "\n"

    def selection_updated(self, selection: Selection | None) -> None:
        self._strips.clear()
        self.refresh()
