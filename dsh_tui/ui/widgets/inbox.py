"""The inbox pane (`#inbox`): the selected agent's pending work, live and editable.

Two lists, NEXT STEP (steering and injected context, delivered at the next step
boundary) and NEXT TURN (queued follow-ups, one per turn), then what a turn claimed but
never sent, tombstones with undo and the receipts of what left last (`inbox_prompt`).

Drawn through the line API, as the agent tree: each row's lines are kept under what the
row shows (`row_key`), its width and its look, and a sync repaints only the rows whose key
changed (and the lines below a change of height). Row heights are measured as rows come
within two pane heights of the view, so 10,000 queued items show at once
(`scale.select_inbox_10k_ms`).
"""

from __future__ import annotations

from typing import Any, ClassVar, cast

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.css.styles import RulesMap
from textual.geometry import Region, Size
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.visual import Visual

from ..bindings import bind
from ..panekeys import PaneKeys, run_bound_key
from ..state.agent_view import AgentView
from ..state.hold_view import item_badge
from ..state.inbox_rows import RECENT_RECEIPTS, InboxRow, inbox_rows
from ..state.lanes import lane_of, source_label
from ..state.marks import Marks
from ..state.row_lines import RowLines
from .inbox_prompt import SELECTABLE, least_lines, row_id, row_key, row_prompt

__all__ = ["InboxView"]

AHEAD_SCREENS = 2
"""Rows are measured until they fill this many pane heights past the top of the view, so
the first screen and the next are ready."""

ROW = "inbox--row"
DISABLED, HIGHLIGHTED, HOVER = f"{ROW}-disabled", f"{ROW}-highlighted", f"{ROW}-hover"


class InboxView(PaneKeys, ScrollView, can_focus=True):
    """The inbox rows, one row a few lines; the cursor (`highlighted`) is a row index."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {ROW, DISABLED, HIGHLIGHTED, HOVER}
    # Their styles: widgets/inbox.tcss.

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "cursor_up", "Up", show=False),
        Binding("down", "cursor_down", "Down", show=False),
        Binding("home", "first", "First", show=False),
        Binding("end", "last", "Last", show=False),
        Binding("pageup", "page_up", "Page up", show=False),
        Binding("pagedown", "page_down", "Page down", show=False),
        bind("edit_item", action="screen.edit_item"),
        bind("remove_item", action="screen.remove_item"),
        bind("move_item_up", action="screen.move_item_up"),
        bind("move_item_down", action="screen.move_item_down"),
        bind("move_item_lane", action="screen.move_item_lane"),
        bind("undo_discard", action="screen.undo_discard"),
        bind("redo_inbox", action="screen.redo_inbox", show=False),
        bind("mark_item", action="screen.mark_item"),
        bind("merge_items", action="screen.merge_items"),
        bind("transfer_items", action="screen.transfer_items", show=False),
        bind("clear_inbox", action="screen.clear_inbox"),
        bind("restore_unsent", action="screen.restore_unsent", show=False),
    ]

    HELP = "The selected agent's pending messages. NEXT STEP is delivered at the next " \
           "step boundary of a running turn; NEXT TURN holds follow-ups, one per turn. " \
           "Typing here types into the composer: no letter is an inbox command (space " \
           "marks an item only while the composer is empty)."

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.view: AgentView | None = None
        self.marks: Marks | None = None
        """The person's marks (set by the screen): a marked item shows a dot."""
        self.rows: list[InboxRow] = []
        self.render_count = 0
        """Syncs that changed the rows (tests count them)."""
        self.drawn = 0
        """Rows rendered anew (not already kept): tests and benchmarks count them."""
        self.lines_drawn = 0
        """Lines Textual asked for (a repaint of the whole pane asks for every line)."""
        self.lines = RowLines()
        """Where each row starts (`lines.measured` rows from the first are exact)."""
        self._snapshot: tuple[Any, ...] = ()
        self._keys: list[tuple[Any, ...]] = []
        self._positions: list[int | None] = []
        """The first line of each row, and the line count last."""
        self._highlighted: int | None = None
        self._hover: int | None = None
        self._prompts: dict[tuple[Any, ...], Content] = {}
        self._strips: dict[tuple[Any, ...], list[Strip]] = {}
        """(row key, width, look, focused) → the row's lines."""

    async def _on_key(self, event: events.Key) -> None:
        """Space marks the highlighted item, but only here and only while the composer is
        empty: a person typing prose with a draft under way gets a space typed, as every
        other printable key is (`panekeys`)."""
        empty = getattr(self.screen, "composer_is_empty", None)
        if event.key == "space" and self.app.focused is self and callable(empty) and empty():
            await run_bound_key(self, event)
            return
        await super()._on_key(event)

    # -- the rows ------------------------------------------------------------------------------

    def show(self, view: AgentView | None) -> None:
        self.view = view
        self._snapshot = ()
        self.sync()

    def sync(self, *, force: bool = False) -> None:
        """List the rows again if the inbox (or its tombstones) changed since the last sync;
        only the rows that read differently are drawn again."""
        view = self.view
        if view is None:
            if self.rows or force:
                self._set_rows([])
            return
        agent = view.agent
        inbox = agent.inbox
        next_step, next_turn = inbox.next_step, inbox.next_turn
        tombstones = tuple(view.tombstones)
        paused = agent.status != "running" and bool(next_step or next_turn) \
            and not agent.ctx.read_only
        unsent = view.unsent.version
        book = view.receipts if view.reading_ready else None  # (read a slice per flush)
        holds = agent.holds
        waiting = view.waiting_on
        badges = {h.message_id: item_badge(holds, h.message_id, waiting) for h in holds}
        marked = frozenset(self.marks.of(view.id)) if self.marks is not None else frozenset()
        snapshot = (next_step, next_turn, tombstones, paused, unsent,
                    book.version if book is not None else -1, tuple(badges.items()), marked)
        if not force and len(snapshot) == len(self._snapshot) and all(
                a is b or a == b for a, b in zip(snapshot, self._snapshot, strict=True)):
            return
        self._snapshot = snapshot
        self._set_rows(inbox_rows(next_step, next_turn, tombstones, paused=paused,
                                  unsent=view.unsent.unsent,
                                  recent=book.recent(RECENT_RECEIPTS + len(tombstones) +
                                                     len(view.unsent.unsent))
                                  if book is not None else None,
                                  badges=badges, marked=marked))

    def _set_rows(self, rows: list[InboxRow]) -> None:
        """Take the new rows; repaint the rows whose key changed, and every line below the
        first change when a height or the row count changed."""
        keep = self.highlighted_id
        old_keys, old_starts = self._keys, self.lines.starts
        position = 0
        positions: list[int | None] = []
        for row in rows:
            if row.kind == "item":
                position += 1
                positions.append(position)
            else:
                positions.append(None)
        self.rows = rows
        self._positions = positions
        self._keys = [row_key(row, number) for row, number in zip(rows, positions, strict=True)]
        self._reset_lines()
        self.render_count += 1
        kept = self._index_of(keep)
        self._measure_lines(round(self.scroll_y) + AHEAD_SCREENS * self._pane_height())
        if kept is not None:
            self._measure_row(kept)
        self._fit()
        self._prune()
        keys, starts = self._keys, self.lines.starts
        if len(old_keys) == len(keys) and old_starts == starts:
            for index, key in enumerate(keys):
                if old_keys[index] != key:
                    self._refresh_row(index)
        else:  # a height or the count changed: every line from the first change down
            first = next((index for index in range(min(len(old_keys), len(keys)))
                          if old_keys[index] != keys[index]
                          or old_starts[index + 1] != starts[index + 1]),
                         min(len(old_keys), len(keys)))
            top = min(old_starts[first], starts[first])
            self._repaint(top, max(old_starts[-1], starts[-1]) - top + 1)
        self._restore(keep)

    def _prune(self) -> None:
        """Forget the lines and measures of rows no longer listed."""
        listed = set(self._keys)
        self.lines.prune()
        if len(self._prompts) > 2 * len(listed) + 16:
            self._prompts = {k: v for k, v in self._prompts.items() if k in listed}
        if len(self._strips) > 4 * len(listed) + 16:
            self._strips = {k: v for k, v in self._strips.items() if k[0] in listed}

    def _index_of(self, wanted: str | None) -> int | None:
        """The row whose id is `wanted` (an item's `msg:<id>`), or None."""
        if wanted is None or not wanted.startswith("msg:"):
            return None
        message_id = wanted[4:]
        for number, row in enumerate(self.rows):
            if row.kind == "item" and row.message.id == message_id:
                return number
        return None

    def _restore(self, keep: str | None) -> None:
        """After a sync: the item that was highlighted stays highlighted where it is now;
        when it left, the first item is (or nothing, with no item left)."""
        target = self._index_of(keep)
        if target is None:
            target = next((number for number, row in enumerate(self.rows)
                           if row.kind == "item"), None)
        self.highlighted = target

    # -- heights -------------------------------------------------------------------------------

    def _width(self) -> int:
        return self.scrollable_content_region.width

    def _pane_height(self) -> int:
        """The pane's height in lines (a likely one before it is laid out)."""
        return self.size.height or 40

    def _fit(self) -> None:
        """The scrollable size from the rows' lines. Setting it repaints the whole pane and
        lays the screen out again, so it is set once, after the heights are known, and
        only kept (no repaint) while the rows fit the pane before and after: a row more
        or less there moves no scrollbar and no scroll range, and the lines that changed
        are repainted by themselves."""
        size, before = Size(self._width(), self.lines.total), self.virtual_size
        if size == before:
            return
        fits = self.scrollable_content_region.height
        if size.width == before.width and max(size.height, before.height) <= fits \
                and not self.show_vertical_scrollbar:
            self.set_reactive(InboxView.virtual_size, size)
        else:
            self.virtual_size = size

    def _prompt(self, index: int) -> Content:
        key = self._keys[index]
        prompt = self._prompts.get(key)
        if prompt is None:
            prompt = self._prompts[key] = row_prompt(self.rows[index], self._positions[index])
        return prompt

    def _height_of(self, index: int) -> int:
        """Row `index`'s line count at the pane's width (a wrap of its text)."""
        return self._prompt(index).get_height(cast(RulesMap, self.styles), self.lines.width)

    def _reset_lines(self) -> None:
        """The rows' lines from the heights kept for their keys at the pane's width."""
        self.lines.reset(self._keys, [least_lines(row) for row in self.rows], self._width())

    def _measure_lines(self, lines: int) -> None:
        """Measure rows until they cover `lines` lines; first, when the width changed
        (a scrollbar came or went: no resize event), take the heights for this width."""
        if self._width() != self.lines.width:
            self._reset_lines()
        self.lines.measure_lines(lines, self._height_of)

    def _measure_row(self, index: int) -> None:
        """Measure through row `index` and a pane height after it."""
        self._measure_lines(0)  # (only the width check)
        self.lines.measure_to(index + 1, self._height_of)
        self._measure_lines(self.lines.starts[index + 1] + self._pane_height())

    @property
    def measured(self) -> int:
        """How many of `rows`, from the first, have their exact height (the rest count
        their fewest lines until they come near the view)."""
        return self.lines.measured

    @property
    def fills_pane(self) -> bool:
        """Whether the measured rows cover the pane's height (or are every row)."""
        return self.lines.covers(self._pane_height())

    def on_resize(self, event: events.Resize) -> None:
        self._reset_lines()
        self._measure_lines(round(self.scroll_y) + AHEAD_SCREENS * self._pane_height())
        if self._highlighted is not None:
            self._measure_row(self._highlighted)
        self._fit()
        self.refresh()
        self._scroll_to_highlight()

    # -- drawing -------------------------------------------------------------------------------

    def render_lines(self, crop: Region) -> list[Strip]:
        # Rows coming into view (and the next screen) get their heights before any is drawn.
        self._measure_lines(round(self.scroll_y) + AHEAD_SCREENS * self._pane_height())
        self._fit()
        return super().render_lines(crop)

    def render_line(self, y: int) -> Strip:
        self.lines_drawn += 1
        width = self._width()
        line = round(self.scroll_y) + y
        index = self.lines.row_at(line)
        if index is None or width <= 0:
            return Strip.blank(max(width, 0), self.get_visual_style(ROW).rich_style)
        strips = self._row_strips(index, width)
        offset = line - self.lines.starts[index]
        if offset >= len(strips):
            return Strip.blank(width, self.get_visual_style(ROW).rich_style)
        return strips[offset]

    def _look(self, index: int) -> str:
        if not self._selectable(index):
            return DISABLED
        if index == self._highlighted:
            return HIGHLIGHTED
        return HOVER if index == self._hover else ""

    def _row_strips(self, index: int, width: int) -> list[Strip]:
        """Row `index`'s lines, `width` cells wide, in its look (kept while it reads the
        same). On the highlighted row the bar's text colour wins over a badge's own (a lane
        badge on the bar was 1.3-2.5:1), bold, italic and strike stay."""
        look = self._look(index)
        cache_key = (self._keys[index], width, look, self.has_focus)
        strips = self._strips.get(cache_key)
        if strips is not None:
            return strips
        self.drawn += 1
        style = self.get_visual_style(ROW, look) if look else self.get_visual_style(ROW)
        rich = style.rich_style
        strips = [strip.extend_cell_length(width, rich) for strip in
                  Visual.to_strips(self, self._prompt(index), width, None, style)]
        if look == HIGHLIGHTED and rich.bgcolor is not None and rich.color is not None:
            bar = Style(color=rich.color)
            strips = [Strip(Segment.apply_style(strip, post_style=bar), strip.cell_length)
                      for strip in strips]
        self._strips[cache_key] = strips
        return strips

    def _refresh_row(self, index: int | None) -> None:
        if index is not None and 0 <= index < len(self.rows):
            self._repaint(*self.row_span(index))

    def _repaint(self, first: int, count: int) -> None:
        """Repaint lines `first`.. (`count` of them) where they are in view."""
        top = round(self.scroll_y)
        start, end = max(first, top), min(first + count, top + self._pane_height())
        if start < end:
            self.refresh_lines(start, end - start)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._strips.clear()
        self.refresh()

    # -- the cursor ----------------------------------------------------------------------------

    @property
    def highlighted(self) -> int | None:
        """The row under the cursor (an index in `rows`), or None."""
        return self._highlighted

    @highlighted.setter
    def highlighted(self, index: int | None) -> None:
        if index is not None:
            index = max(0, min(index, len(self.rows) - 1)) if self.rows else None
        if index == self._highlighted:
            return
        before, self._highlighted = self._highlighted, index
        self._refresh_row(before)
        if index is not None:
            self._measure_row(index)
            self._fit()
            self._refresh_row(index)
            self._scroll_to_highlight()

    def _scroll_to_highlight(self) -> None:
        index = self._highlighted
        if index is None or not self.is_mounted or not self.size.height:
            return
        if not self._selectable(index):
            return
        first, height = self.row_span(index)
        self.scroll_to_region(Region(0, first, self._width(), height),
                              animate=False, force=True, immediate=True)

    def on_show(self) -> None:
        self._scroll_to_highlight()

    def _selectable(self, index: int) -> bool:
        return self.rows[index].kind in SELECTABLE

    # The actions an OptionList had, under its names (controllers call them).

    def action_cursor_up(self) -> None:
        self._step(-1)

    def action_cursor_down(self) -> None:
        self._step(1)

    def action_first(self) -> None:
        self._edge(0)

    def action_last(self) -> None:
        self._edge(1)

    def action_page_up(self) -> None:
        self._page(-1)

    def action_page_down(self) -> None:
        self._page(1)

    def _step(self, direction: int) -> None:
        """The next selectable row up or down, round past either end."""
        count = len(self.rows)
        if not count:
            return
        anchor = self._highlighted
        if anchor is None:
            self._edge(0 if direction > 0 else 1)
            return
        for step in range(1, count + 1):
            index = (anchor + direction * step) % count
            if self._selectable(index):
                self.highlighted = index
                return

    def _edge(self, end: int) -> None:
        order = range(len(self.rows) - 1, -1, -1) if end else range(len(self.rows))
        target = next((index for index in order if self._selectable(index)), None)
        if target is not None:
            self.highlighted = target

    def _page(self, direction: int) -> None:
        """A pane height up or down, on the nearest selectable row that way."""
        if not self.rows:
            return
        if self._highlighted is None:
            self._edge(0 if direction < 0 else 1)
            return
        if direction > 0:
            self._measure_lines(self.row_span(self._highlighted)[0] +
                                2 * self._pane_height())
        height = self.scrollable_content_region.height
        line = max(0, min(self.row_span(self._highlighted)[0] + direction * height,
                          self.lines.total - 1))
        index = self.lines.row_at(line) or 0
        order = range(index, len(self.rows)) if direction > 0 else range(index, -1, -1)
        target = next((number for number in order if self._selectable(number)), None)
        if target is not None:
            self.highlighted = target

    def _row_at(self, event: events.MouseEvent) -> int | None:
        offset = event.get_content_offset(self)
        if offset is None:
            return None
        return self.lines.row_at(round(self.scroll_y) + offset.y)

    def on_click(self, event: events.Click) -> None:
        index = self._row_at(event)
        if index is not None and self._selectable(index):
            self.highlighted = index

    def on_mouse_move(self, event: events.MouseMove) -> None:
        self._set_hover(self._row_at(event))

    def on_leave(self, event: events.Leave) -> None:
        self._set_hover(None)

    def _set_hover(self, index: int | None) -> None:
        if index != self._hover:
            before, self._hover = self._hover, index
            self._refresh_row(before)
            self._refresh_row(index)

    @property
    def highlighted_id(self) -> str | None:
        """The id of the row under the cursor (`inbox_prompt.row_id`), or None."""
        index = self._highlighted
        if index is None or index >= len(self.rows):
            return None
        return self.row_id(index)

    def row_span(self, index: int) -> tuple[int, int]:
        """Row `index`'s first line in the pane's scrollable lines, and its line count."""
        return self.lines.starts[index], self.lines.heights[index]

    def row_id(self, index: int) -> str:
        """Row `index`'s id (`msg:<id>`, `tomb:<n>`, `rcpt:<n>`, `header:<n>`, ...)."""
        return row_id(self.rows[index], index)

    def highlighted_row(self) -> InboxRow | None:
        """The row under the cursor (an item, a tombstone, an unsent entry or a receipt)."""
        index = self._highlighted
        if index is None or index >= len(self.rows) or not self._selectable(index):
            return None
        return self.rows[index]

    def current_row(self) -> InboxRow | None:
        """The highlighted item as the inbox is *now*, not as it was at the last paint: keys
        in one burst (`shift+right` twice, re-file then edit) each see the previous one's
        effect. None when the item left the inbox since (claimed or removed)."""
        row = self.highlighted_row()
        if row is None or row.kind != "item" or self.view is None:
            return row
        wanted = row.message.id
        inbox = self.view.agent.inbox
        for target, items in (("next-step", inbox.next_step), ("next-turn", inbox.next_turn)):
            for index, message in enumerate(items):
                if message.id == wanted:
                    return InboxRow("item", text=message.text, target=target, index=index,
                                    message=message, lane=lane_of(message.source, target),
                                    source=source_label(message.source))
        return None

    def highlight_message(self, message_id: str) -> None:
        index = self._index_of(f"msg:{message_id}")
        if index is not None:
            self.highlighted = index
