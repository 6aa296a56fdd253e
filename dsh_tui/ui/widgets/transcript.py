"""The transcript pane (`#transcript`): the selected agent's whole session as one line view.

A `ScrollView` drawing only the lines on screen (`render_line`), as Textual's `Log` and
`DataTable` do, from the line index in `state/transcript_lines.py` and the item
renderers in `transcript_items.py`. No widget per item: a session of 100,000 events is
as cheap to show, scroll and stream into as a short one. Changes arrive through
`request_sync()` (the app's flush, at most ~60 a second); each sync that changed
something is one render, counted in `render_count`.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rich.segment import Segment
from rich.style import Style as RichStyle
from textual import events
from textual.binding import BindingType
from textual.content import Content
from textual.geometry import Offset, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.selection import Selection
from textual.strip import Strip

from ..bindings import bind
from ..keys import key_name
from ..panekeys import PaneKeys
from ..state.agent_view import AgentView
from ..state.transcript import Item
from ..state.transcript_lines import TranscriptLines
from ..transcript_items import (
    COMPONENT_CLASSES,
    Frame,
    ItemLook,
    Painter,
    Reply,
    Row,
    estimate,
    frame_of,
    is_cut,
    item_rows,
    user_head,
    wrap,
)
from .line_selection import LINE_BREAKS, restyled

SELECTION_LINES = 50_000
"""Most lines a selection copies (a triple click selects the whole transcript)."""
TAIL_SLACK = 6
"""Blank lines kept below the text while a followed reply streams (fewer on a small
screen). Text grows into them without the view scrolling, so a frame redraws the lines
that changed; a scroll redraws every line of the pane, and so does a new virtual height.
The view moves `slack` lines at a time, and the blank lines go when the reply ends."""
EXACT_ITEMS = 64
"""A transcript of at most this many items is measured whole (its scrollbar exact, and
the same in every run); a longer one estimates what was never drawn."""
CACHED_LINES = 2_000
"""Rendered lines of items kept (a few screens of the largest terminal, both ways)."""
DRAWN_LINES = 512
"""Drawn lines kept by their line number (with the selection offsets they carry), as
Textual's `Log` keeps them: a scroll draws the lines it brings into view, no others."""


def empty_hint(view: AgentView, steer: str = "ctrl+s", inject: str = "ctrl+t") -> str:
    """What an empty transcript says: how to start, and (on the demo model only) the demo's
    own prompt; a real model gets no canned suggestion. `steer`/`inject`: the keys that
    work where the app runs (a browser keeps ctrl+t)."""
    if view.agent.ctx.read_only:
        return "This session is empty."
    demo = "demo" in (str(view.agent.options.provider or ""), view.model)
    first = ("Try \"compare two designs for a cache\": the demo model thinks, answers in "
             "Markdown and may hand work to a sub-agent, which appears under it in the tree.\n"
             if demo else "Ask for anything this agent's model and tools can do; sub-agents it "
             "starts appear under it in the tree.\n")
    return ("No messages yet. Type below and press enter.\n\n" + first +
            f"While it works, type more: enter queues a follow-up for the next turn, {steer} "
            f"steers the running turn, {inject} injects context. Queued messages wait in the "
            "inbox, where enter edits them.\nescape stops the agent and keeps its inbox; f1 lists "
            "every key.")


class Transcript(PaneKeys, ScrollView, can_focus=True):
    """Follows the tail unless the person scrolls up; `end` follows it again."""

    ALLOW_SELECT = True
    COMPONENT_CLASSES: ClassVar[set[str]] = set(COMPONENT_CLASSES)

    BINDINGS: ClassVar[list[BindingType]] = [
        bind("toggle_reasoning"),
        bind("toggle_tools"),
        bind("follow"),
        bind("load_older"),
        bind("search", action="screen.search"),
        bind("message_history"),
    ]

    HELP = "Scroll with the arrows or the mouse; the transcript follows new output until " \
           "you scroll up, and `end` follows it again. Each message you sent shows its " \
           "receipt (claimed, sent in which request, answered); a click on it, or `enter`, " \
           "opens that message's history in the inbox timeline. Typing here types into " \
           "the composer."

    class HistoryWanted(Message):
        """The person asked for a sent message's history (a click on its header, or
        enter): `message_id` as the timeline files it (None: no message there), `seq`
        its `user/message`'s (None: its receipt is not read yet)."""

        def __init__(self, message_id: str | None, seq: int | None = None) -> None:
            super().__init__()
            self.message_id = message_id
            self.seq = seq

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.view: AgentView | None = None
        self.lines: TranscriptLines[Row] = TranscriptLines(
            self._render_item, self._estimate, self._look_key, max_lines=CACHED_LINES)
        self._model: Any = None
        """The transcript model indexed (an agent's view may replace it: a paged log)."""
        self.render_count = 0
        self.expand_reasoning = False
        self.expand_tools = False
        self._flipped: set[int] = set()
        """Items clicked open (or shut) against their kind's toggle."""
        self.marked: int | None = None
        """The item index of the current search match."""
        self.search_query = ""
        """The search query highlighted inside the marked item."""
        self.following = True
        self._replies: dict[int, Reply] = {}
        """Replies still streaming: their parsed Markdown, grown a block at a time."""
        self._painter: Painter | None = None
        self._drawn: dict[int, tuple[Any, Any, Any, Strip]] = {}
        """line → (body, lead, trail, strip): the strip drawn for that row at that line."""
        self._hint: list[Row] = []
        self._sync_pending = False
        self._reindex_pending = False
        self._settling = False
        self._pressed: int | None = None
        """The line the mouse was last pressed on (a double click selects its item)."""
        self._pressed_x: int | None = None
        self._subtitle: str | None = None

    # -- requests (from the screen and the app's flush) -------------------------------------

    def show(self, view: AgentView | None, **_: Any) -> None:
        """Point the pane at another agent (or none): its transcript, at the tail."""
        self.view = view
        self.marked = None
        self._flipped.clear()
        self.following = True
        self._reindex()
        self._show_follow_state()

    def request_sync(self) -> None:
        """Show what changed in the model, once per turn of the event loop."""
        if not self._sync_pending:
            self._sync_pending = True
            self.call_later(self._sync)

    # -- the index ---------------------------------------------------------------------------

    @property
    def text_width(self) -> int:
        """Cells of a line (the pane's content less its scrollbar)."""
        return self.scrollable_content_region.width

    def _painter_now(self) -> Painter:
        """The painter for the current width, theme and pane style (made again when a
        resize or a style update forgot it, or the theme changed)."""
        painter = self._painter
        theme = self.app.theme
        if painter is None or painter.theme != theme:
            dark = self.app.current_theme.dark
            painter = self._painter = Painter(max(1, self.text_width), self.get_visual_style,
                                              self.app.stylesheet.parse_style, theme, dark)
            self._drawn.clear()
        return painter

    def _look(self, item: Item) -> ItemLook:
        expanded = False
        if item.kind == "reasoning":
            expanded = self.expand_reasoning != (item.index in self._flipped)
        elif item.kind == "tool":
            expanded = self.expand_tools != (item.index in self._flipped)
        search = (self.search_query or "") if item.index == self.marked else None
        painter = self._painter
        return ItemLook(expanded, search, painter.theme if painter else "",
                        painter.dark if painter else True)

    def _look_key(self, item: Item) -> Any:
        painter = self._painter
        return (self._look(item), painter.base if painter else None)

    def _render_item(self, item: Item, width: int) -> list[Row]:
        reply = self._replies.get(item.index)
        if reply is not None:
            reply.update(item)
            if not item.streaming:
                del self._replies[item.index]  # parsed whole: the rows are cached now
        elif item.kind == "text" and item.streaming:
            reply = self._replies[item.index] = Reply(item)
        return item_rows(item, self._painter_now(), self._look(item), reply)

    def _estimate(self, item: Item, width: int) -> int:
        return estimate(item, width, self._look(item).expanded)

    def _reindex(self) -> None:
        """Index the shown transcript from scratch (another agent, width, theme or model)."""
        view = self.view
        model = view.transcript if view is not None else None
        self._model = model
        self._reindex_pending = False
        self._replies = {}
        self._drawn.clear()
        self._sync_pending = False
        painter = self._painter_now()
        if model is not None:
            model.drain()
            self.lines.reset(model.items, painter.width)
        else:
            self.lines.reset((), painter.width)
        self._hint = self._hint_rows(painter) if not self.lines.items else []
        self.render_count += 1
        self._place()

    def _hint_rows(self, painter: Painter) -> list[Row]:
        view = self.view
        if view is None:
            text = f"No agent selected. {key_name(self.app, 'new_agent')} creates one."
        else:
            text = empty_hint(view, key_name(self.app, "steer"), key_name(self.app, "inject"))
        frame = Frame(margin=1, style="transcript--hint", pad=2, full=True)
        return painter.rows(frame, wrap(Content(text), painter.inner_width(frame)))

    async def _sync(self) -> None:
        self._sync_pending = False
        view = self.view
        if view is None:
            return
        model = view.transcript
        if model is not self._model:
            self._reindex()  # a paged log read another page
            return
        dirty = model.drain()
        items = model.items
        fresh = len(items) > len(self.lines.index)
        if not dirty and not fresh:
            return
        self.render_count += 1
        for index in dirty:
            reply = self._replies.get(index)
            if reply is not None and index < len(items):
                reply.update(items[index])
        known = len(self.lines.index)
        if self._hint and items:
            self._hint = []
            known = 0
        drawn = {i: self.lines.cache.peek(i) for i in dirty if i < known}
        self.lines.sync(items, dirty)
        self._place(self.lines.start(known) if known else None, drawn)

    def _place(self, changed_from: int | None = None,
               drawn: dict[int, list[Row] | None] | None = None) -> None:
        """Measure what will show, size the view, keep the tail (or the reading place),
        and draw again what changed when nothing moved: the lines from `changed_from` on
        (None: all of them), and of each item in `drawn` (item → the rows it had) the
        lines from its first row that is not the same (a streaming reply: its last
        block's); when the view moved, the whole pane."""
        rows = self.scrollable_content_region.height
        lines = self.lines
        height, top = self.virtual_size.height, round(self.scroll_y)
        self._settling = True
        try:
            if len(lines.index) <= EXACT_ITEMS:
                lines.measure_all()
            if self.following:
                lines.settle_tail(rows)
                lines.settle(max(0, self._height() - rows), rows)
                self._set_height(self._height())
                self.scroll_end(animate=False, immediate=True, x_axis=False, force=True)
            else:
                settled = lines.settle(top, rows)
                self._set_height(self._height())
                if settled != top:
                    self.scroll_to(y=settled, animate=False, immediate=True, force=True)
        finally:
            self._settling = False
        if changed_from is None or round(self.scroll_y) != top or \
                self.virtual_size.height != height:
            self.refresh()
            return
        for index, rows_before in (drawn or {}).items():
            changed_from = min(changed_from, self._first_change(index, rows_before))
        start = max(changed_from, top)
        if start < top + rows:
            self.refresh_lines(start, top + rows - start)

    def _first_change(self, index: int, before: list[Row] | None) -> int:
        """The first line of item `index` that is not drawn as in `before`."""
        lines = self.lines
        start = lines.start(index)
        if before is None or not lines.is_exact(index):
            return start
        after = lines.lines(index)
        for offset, (old, new) in enumerate(zip(before, after, strict=False)):
            if old.body is not new.body or old.lead is not new.lead or old.trail is not new.trail:
                return start + offset
        return start + min(len(before), len(after))

    def _set_height(self, height: int) -> None:
        if height != self.virtual_size.height or self.virtual_size.width != self.text_width:
            self.virtual_size = Size(self.text_width, height)
        if self.scroll_target_y > self.max_scroll_y:
            # (Textual scrolls by keys from the target, which a shorter view leaves past
            # its end: `up` would then go nowhere)
            self.scroll_target_y = self.max_scroll_y

    def _height(self) -> int:
        """The view's height: the lines, plus while a reply streams a reserve of blank
        lines it grows into (see TAIL_SLACK) once they overflow the pane."""
        total = self._total()
        rows = self.scrollable_content_region.height
        model = self._model
        if total <= rows or model is None or not model.streaming:
            return total
        slack = max(1, min(TAIL_SLACK, self.app.size.height // 8))
        return ((total + slack // 2) // slack + 1) * slack

    def _total(self) -> int:
        return len(self._hint) if self._hint else self.lines.total

    # -- drawing -----------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        line = round(self.scroll_y) + y
        painter = self._painter_now()
        if painter.width != self.lines.width:
            if not self._reindex_pending:  # a new width: measured again, next frame
                self._reindex_pending = True
                self.call_later(self._rewidth)
            return Strip.blank(painter.width, painter.base.rich_style)
        row = self._row(line)
        if row is None:
            return Strip.blank(painter.width, painter.base.rich_style)
        selection = self.text_selection
        if selection is not None:
            return self._strip(row, line, painter.width, selection)
        drawn = self._drawn.get(line)
        if drawn is not None and drawn[0] is row.body and drawn[1] is row.lead and \
                drawn[2] is row.trail:
            return drawn[3]
        strip = self._strip(row, line, painter.width)
        if len(self._drawn) >= DRAWN_LINES:
            self._drawn.clear()
        self._drawn[line] = (row.body, row.lead, row.trail, strip)
        return strip

    def _row(self, line: int) -> Row | None:
        if self._hint:
            return self._hint[line] if 0 <= line < len(self._hint) else None
        lines = self.lines
        total = lines.total
        if line >= total:
            return self._reserve_row(line)
        if line < 0:
            return None
        position, within = lines.locate(line)
        rows = lines.lines(position)
        if lines.total != total and not self._settling:
            self.call_later(self._place)  # an estimate refined while drawn: size again
        return rows[within] if within < len(rows) else None

    def _reserve_row(self, line: int) -> Row | None:
        """A line of the blank reserve below a streaming reply: the reply's frame, empty."""
        count = len(self.lines.index)
        if not count or not self.lines.items[count - 1].streaming or \
                line >= self.virtual_size.height:
            return None
        last = self.lines.lines(count - 1)[-1]
        if not last.lead:
            return None
        return Row(last.lead, self._painter_now().empty_like(last.body), last.trail)

    def _strip(self, row: Row, y: int, width: int, selection: Selection | None = None) -> Strip:
        """`row` with the selection drawn on it and every cell carrying its offset (what the
        screen reads to know where a drag starts and ends): the frame's cells count as the
        start of the text, the text counts its characters."""
        body = row.body
        if selection is not None and (span := selection.get_span(y)) is not None:
            style = self.screen.get_component_rich_style("screen--selection")
            body = restyled(body, span[0], span[1], style)
        at_start = RichStyle.from_meta({"offset": (0, y)})
        segments = [Segment(char, style + at_start if style else at_start)
                    for text, style, _ in row.lead for char in text]
        segments.extend(body.apply_offsets(0, y))
        if row.trail:
            at_end = RichStyle.from_meta({"offset": (len(body.text), y)})
            segments.extend(Segment(text, style + at_end if style else at_end)
                            for text, style, _ in row.trail)
        return Strip(segments, width)

    def notify_style_update(self) -> None:
        """A new theme (or the pane's own style changed): draw every line again."""
        super().notify_style_update()
        self._painter = None  # (the lines' cache keys hold the theme and the pane's style)
        self.refresh()

    def on_resize(self, event: events.Resize) -> None:
        """A new width indexes again; a new height (a pane or bar opened or closed under it)
        changes no line: Textual has drawn the resized pane already, so it is drawn again
        only if the view moved (the tail followed, or settled items)."""
        self._painter = None
        if self.text_width != self.lines.width:
            self._rewidth()
        else:
            self._place(self.lines.total)

    def watch_show_vertical_scrollbar(self, shown: bool) -> None:
        """The scrollbar came or went: the lines are as wide as the room left for them. A
        scrollbar that appears shows where the view is (a scroll made before it was
        shown, following the tail, did not move it)."""
        if shown:
            self.vertical_scrollbar.position = self.scroll_y
        self._painter = None
        if self.is_mounted and self.text_width != self.lines.width and \
                not self._reindex_pending:
            self._reindex_pending = True
            self.call_later(self._rewidth)

    def _rewidth(self) -> None:
        """Index again at a new width, the item at the top of the view staying there."""
        lines = self.lines
        position, within = lines.locate(round(self.scroll_y)) if len(lines.index) else (-1, 0)
        self._reindex()
        if self.following or not 0 <= position < len(lines.index):
            return
        lines.measure(position)
        top = lines.start(position) + min(within, lines.index.height(position) - 1)
        rows = self.scrollable_content_region.height
        self._settling = True
        try:
            top = lines.settle(top, rows)
            self._set_height(self._height())
            self.scroll_to(y=top, animate=False, immediate=True, force=True)
        finally:
            self._settling = False
        self.refresh()

    def item_rows(self, index: int) -> list[Row]:
        """The drawn lines of item `index` (the blank lines above it left out)."""
        item = self.lines.items[index]
        return self.lines.lines(index)[frame_of(item, self._look(item)).margin:]

    def item_text(self, index: int) -> list[str]:
        """The text of item `index`'s lines, as a selection copies them."""
        return [row.text for row in self.item_rows(index)]

    def region_of(self, index: int) -> tuple[int, int]:
        """(first line, lines) of item `index` in the whole transcript, its space above
        left out."""
        item = self.lines.items[index]
        margin = frame_of(item, self._look(item)).margin
        return self.lines.start(index) + margin, len(self.lines.lines(index)) - margin

    # -- selection ---------------------------------------------------------------------------

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        """The selected text as drawn (frames left out): only the selected lines are read."""
        total = self._total()
        if not total:
            return None
        first = selection.start.y if selection.start is not None else 0
        last = selection.end.y if selection.end is not None else total - 1
        first, last = max(0, first), min(total - 1, last, first + SELECTION_LINES)
        texts = []
        for line in range(first, last + 1):
            row = self._row(line)
            texts.append(row.text.translate(LINE_BREAKS) if row is not None else "")
        start = None if selection.start is None else Offset(selection.start.x, 0)
        end = None if selection.end is None else Offset(selection.end.x, last - first)
        return Selection(start, end).extract("\n".join(texts)), "\n"

    def selection_updated(self, selection: Selection | None) -> None:
        self.refresh()

    def text_select_all(self) -> None:
        """A double click selects the item under the pointer, as drawn."""
        line = self._pressed
        if line is None or self._hint or not 0 <= line < self.lines.total:
            super().text_select_all()
            return
        position, _ = self.lines.locate(line)
        top = self.lines.start(position)
        rows = self.lines.lines(position)
        first = next((n for n, row in enumerate(rows) if row.lead or row.trail), 0)
        self.screen.selections = {self: Selection(
            Offset(0, top + first), Offset(len(rows[-1].body.text), top + len(rows) - 1))}

    def on_mouse_down(self, event: events.MouseDown) -> None:
        offset = event.get_content_offset(self)
        self._pressed = None if offset is None else round(self.scroll_y) + offset.y
        self._pressed_x = None if offset is None else offset.x

    def on_click(self, event: events.Click) -> None:
        """A click on a sent message's header opens its history; on a cut reply, all of
        it; on a reasoning or tool item, toggles it."""
        offset = event.get_content_offset(self)
        view = self.view
        if offset is None or view is None or event.chain != 1 or self._hint:
            return
        line = round(self.scroll_y) + offset.y
        if not 0 <= line < self.lines.total:
            return
        position, within = self.lines.locate(line)
        item = self.lines.items[position]
        if item.kind == "user":
            if (self._pressed, self._pressed_x) == (line, offset.x) and \
                    self._in_header(position, within):  # (a drag selects, it is no click)
                self.post_message(self.history_wanted(position))
            return
        if item.kind == "text" and is_cut(item):
            from ..screens.full_text import FullTextScreen

            self.app.push_screen(FullTextScreen(f"Reply · {view.name}", item.current_text()))
        elif item.kind in ("reasoning", "tool"):
            self._flipped ^= {position}
            self.lines.restyle(lambda other: other.index == position)
            self._place()

    # -- a sent message and its history -------------------------------------------------------

    def _in_header(self, position: int, within: int) -> bool:
        """Whether line `within` of user item `position` is one of its header's."""
        item = self.lines.items[position]
        painter = self._painter_now()
        frame = frame_of(item, self._look(item))
        rows = len(wrap(user_head(item), painter.inner_width(frame)))
        return frame.margin <= within < frame.margin + rows

    def history_wanted(self, index: int | None) -> HistoryWanted:
        """The request for item `index`'s history (its id as the timeline files it)."""
        items = self.lines.items
        item = items[index] if index is not None and 0 <= index < len(items) else None
        if item is None or item.kind != "user":
            return self.HistoryWanted(None)
        stamp = item.receipt
        if stamp is None:
            return self.HistoryWanted(item.message_id)
        return self.HistoryWanted(stamp.message_id, stamp.seq)

    def message_here(self) -> int | None:
        """The sent message `enter` means: the one marked (a search's match, the timeline's
        jump), else the one the selection starts in, else the last whose header is on
        screen. None: no message there."""
        items = self.lines.items
        if self.marked is not None and 0 <= self.marked < len(items) and \
                items[self.marked].kind == "user":
            return self.marked
        lines = self.lines
        if not len(lines.index) or self._hint:
            return None
        selection = self.text_selection
        if selection is not None and selection.start is not None:
            position, _ = lines.locate(selection.start.y)
            if 0 <= position < len(items) and items[position].kind == "user":
                return position
        top = round(self.scroll_y)
        bottom = top + self.scrollable_content_region.height
        position, _ = lines.locate(bottom - 1)
        while position >= 0 and lines.start(position) + lines.index.height(position) > top:
            item = items[position]
            if item.kind == "user":
                header = lines.start(position) + frame_of(item, self._look(item)).margin
                if top <= header < bottom:
                    return position
            position -= 1
        return None

    def action_message_history(self) -> None:
        """`enter`: the history of the message `message_here` names."""
        self.post_message(self.history_wanted(self.message_here()))

    def reveal_seq(self, seq: int, exact: bool = False) -> int | None:
        """Show where the event `seq` is in the transcript: the item it made (with `exact`,
        only that), else the first made after it, scrolled into view and marked (the
        timeline's jump to where a message entered the model's context). Returns that
        item's index; None when there is none."""
        view = self.view
        if view is None:
            return None
        index = view.transcript.item_at_seq(seq, exact=exact)
        if index is None:
            return None
        self.search_query = ""  # a jump, not a search: no match to highlight in it
        self.reveal(index)
        return index

    # -- search ------------------------------------------------------------------------------

    def mark(self, index: int | None, query: str | None = None) -> None:
        """Mark one item as the current search match and highlight the query inside it
        (None: no mark)."""
        if query is not None:
            self.search_query = query
        before = self.marked
        self.marked = index
        changed = {i for i in (before, index) if i is not None and i < len(self.lines.index)}
        if changed or query is not None:
            self.lines.restyle(lambda item: item.index in changed)
            self._place()

    def reveal(self, index: int) -> None:
        """Scroll item `index` into the middle of the view and mark it (the search's jump,
        however far back: a scroll, nothing else)."""
        self.call_later(self._reveal, index)

    async def _reveal(self, index: int) -> None:
        if self._sync_pending:
            await self._sync()
        if not 0 <= index < len(self.lines.index):
            return
        self.mark(index)
        lines = self.lines
        lines.measure(index)
        rows = self.scrollable_content_region.height
        height = lines.index.height(index)
        top = max(0, lines.start(index) - max(0, (rows - height) // 2))
        if lines.total > rows:
            self.following = False
        self._settling = True
        try:
            top = lines.settle(top, rows)
            self._set_height(self._height())
            self.scroll_to(y=top, animate=False, immediate=True, force=True)
        finally:
            self._settling = False
        self._show_follow_state()
        self.refresh()

    # -- scrolling and following -------------------------------------------------------------

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if self._settling:
            return
        if new_value < old_value and new_value < self.max_scroll_y:
            self.following = False  # the person scrolled up: stay where they read
        elif new_value >= self.max_scroll_y and not self._more_log(earlier=False):
            self.following = True
        if not self.following and round(new_value) != round(old_value):
            rows = self.scrollable_content_region.height
            self._settling = True
            try:
                top = self.lines.settle(round(new_value), rows)
                self._set_height(self._height())
                if top != round(new_value):
                    self.scroll_to(y=top, animate=False, immediate=True, force=True)
            finally:
                self._settling = False
        if new_value <= 0 < old_value and self._more_log(earlier=True):
            self.call_later(self.load_older)
        elif new_value >= self.max_scroll_y > old_value and self._more_log(earlier=False):
            self.call_later(self.load_newer)
        self._show_follow_state()

    def _show_follow_state(self) -> None:
        subtitle = "" if self.following or self.max_scroll_y <= 0 else \
            "▼ new output below · end follows"
        if self._subtitle != subtitle:
            self._subtitle = subtitle
            self.border_subtitle = Content(subtitle)

    # -- a huge log read a page at a time (`dsh-tui view`) ---------------------------------

    def _more_log(self, earlier: bool) -> bool:
        """A huge log in `view` has pages before (or after) the part loaded."""
        session = getattr(getattr(self.view, "agent", None), "session", None)
        return bool(getattr(session, "skipped_bytes" if earlier else "later_bytes", 0))

    def _later_bytes(self) -> int:
        session = getattr(getattr(self.view, "agent", None), "session", None)
        return int(getattr(session, "later_bytes", 0) or 0)

    async def load_older(self) -> None:
        """Past the top of a huge log's loaded pages: read the page before, and show the
        transcript where the new page meets the old one."""
        await self._page_log(earlier=True)

    async def load_newer(self) -> None:
        """Past the bottom of a huge log's loaded pages: read the page after."""
        await self._page_log(earlier=False)

    async def _page_log(self, earlier: bool) -> None:
        view = self.view
        if view is None or not self._more_log(earlier):
            return
        index = view.page(earlier)
        if index is None:
            return
        self.following = False
        self._reindex()
        where = min(index, len(self.lines.items) - 1)
        if where < 0:
            return
        rows = self.scrollable_content_region.height
        top = self.lines.start(where) if earlier else max(0, self.lines.start(where) - rows)
        self._settling = True
        try:
            top = self.lines.settle(top, rows)
            self._set_height(self._height())
            self.scroll_to(y=top, animate=False, immediate=True, force=True)
        finally:
            self._settling = False
        self.refresh()

    # -- actions -----------------------------------------------------------------------------

    def _toggle(self, kind: str) -> None:
        self._flipped = {i for i in self._flipped if self.lines.items[i].kind != kind}
        self.lines.restyle(lambda item: item.kind == kind)
        self._place()

    def action_toggle_reasoning(self) -> None:
        self.expand_reasoning = not self.expand_reasoning
        self._toggle("reasoning")

    def action_toggle_tools(self) -> None:
        opened = any(self.lines.items[i].kind == "tool" for i in self._flipped
                     if not self.expand_tools)
        self.expand_tools = not (self.expand_tools or opened)
        self._toggle("tool")

    def action_follow(self) -> None:
        if self._more_log(earlier=False):
            self.call_later(self._to_last_page)
            return
        self.following = True
        self._place()
        self._show_follow_state()

    async def _to_last_page(self) -> None:
        while self._more_log(earlier=False):
            before = self._later_bytes()
            await self.load_newer()
            if self._later_bytes() == before:
                break
        self.following = True
        self._place()
        self._show_follow_state()

    async def action_load_older(self) -> None:
        """`home`: the top of the transcript (in a huge log, the page before the top)."""
        if round(self.scroll_y) <= 0 and self._more_log(earlier=True):
            await self.load_older()
            return
        self.following = self.max_scroll_y <= 0
        self.scroll_home(animate=False, immediate=True, force=True)
        self._show_follow_state()
