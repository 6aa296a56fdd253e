"""The inbox pane (`#inbox`): the selected agent's pending work, live and editable.

Two lists, NEXT STEP (steering and injected context, delivered at the next step
boundary) and NEXT TURN (queued follow-ups, one per turn). Every item shows its
lane badge, its source, a short id and its text. Items that just left stay a
moment: a green receipt when the agent claimed them, a struck-through tombstone
with undo when they were discarded.

The pane re-renders only when the projection changed: inbox snapshots are
cached tuples, so an identity check tells whether anything moved. Only the rows that
fill the pane and the next screen get options (Textual measures every option it holds);
the rest are built as the person scrolls or moves toward them
(`scale.select_inbox_10k_ms`).
"""

from __future__ import annotations

from typing import Any, ClassVar

from textual import events
from textual.binding import BindingType
from textual.content import Content
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from ..badges import lane_badge, receipt_look
from ..bindings import bind
from ..panekeys import PaneKeys, run_bound_key
from ..state.agent_view import AgentView
from ..state.hold_view import item_badge
from ..state.inbox_rows import RECENT_RECEIPTS, InboxRow, inbox_rows
from ..state.lanes import lane_of, source_label
from ..state.marks import Marks
from ..state.text import short_id, visible
from .flat_highlight import FlatHighlight

PREVIEW_LINES = 3
PREVIEW_CHARS = 240
HEADERS = {"next-step": "NEXT STEP", "next-turn": "NEXT TURN", "unsent": "CLAIMED, NEVER SENT",
           "recent": "LEFT THE INBOX"}
AHEAD_SCREENS = 2
"""Rows are built until they fill this many pane heights (counting each row's fewest
lines), so the first screen and the next are ready."""

HEADER_HINT = {"next-step": "steer · inject", "next-turn": "follow-ups",
               "unsent": "ctrl+u puts back", "recent": "receipts"}


def _preview(text: str, lines_shown: int = PREVIEW_LINES) -> Content:
    text = visible(text)
    lines = text.splitlines() or [""]
    shown = lines[:lines_shown]
    body = "\n".join("  " + line[:PREVIEW_CHARS] for line in shown)
    if len(lines) > lines_shown:
        body += f"\n  … {len(lines) - lines_shown} more lines"
    return Content(body)


def row_prompt(row: InboxRow, position: int | None = None) -> Content:
    """The text of one inbox row (badges first, then the message preview)."""
    if row.kind == "banner":
        return Content.styled("‖ " + row.text, "bold $warning")
    if row.kind == "hint":
        return Content.styled(row.text, "$text-muted")
    if row.kind == "header":
        return Content.assemble((f"{HEADERS[row.target]} · {row.count}", "bold $primary"),
                                (" · " + HEADER_HINT[row.target], "$text-muted"))
    if row.kind == "unsent" and row.unsent is not None:
        entry = row.unsent
        turn = f"turn {entry.turn} · " if entry.turn else ""
        head = Content.assemble(("↺ ", "bold $warning"), lane_badge(row.lane), "  ",
                                (row.source, "bold"), "  ", (f"#{short_id(entry.id)}",
                                                              "$text-muted"))
        why = Content.styled(f"  claimed in {turn}{entry.reason}, never sent · ctrl+u puts it "
                             "back · delete forgets it", "$text-muted")
        return head + "\n" + why + "\n" + _preview(row.text)
    if row.kind == "receipt" and row.receipt is not None:
        receipt = row.receipt
        glyph, style = receipt_look(receipt.state)
        logged_id = not receipt.message_id.startswith("seq-")  # (a log without ids)
        head = Content.assemble((f"{glyph} ", style), (visible(receipt.label()), style),
                                "  ", (f"#{short_id(receipt.message_id)}" if logged_id
                                       else "", "$text-muted"))
        return head + "\n" + _preview(row.text, 1).stylize("$text-muted")
    message = row.message
    if row.kind == "tombstone" and row.tombstone is not None:
        if row.tombstone.kind == "claimed":
            turn = f" into turn {row.tombstone.turn}" if row.tombstone.turn else ""
            head = Content.assemble((f"✓ claimed{turn}", "bold $success"),
                                    (f" · {row.lane}", "$text-muted"))
            return head + "\n" + _preview(row.text).stylize("$text-muted")
        head = Content.assemble(("✗ removed", "bold $error"), "  ", lane_badge(row.lane), "  ",
                                (f"#{short_id(message.id)}", "$text-muted"),
                                ("  ^z undo", "$accent"))
        return head + "\n" + _preview(row.text).stylize("strike $text-muted")
    number = f"{position}. " if position is not None else ""
    mark = ("● ", "bold $accent") if row.marked else ("", "")
    head = Content.assemble(mark, (number, "$text-muted"), lane_badge(row.lane), "  ",
                            (row.source, "bold"), "  ",
                            (f"#{short_id(message.id)}", "$text-muted"))
    if row.badge:
        head = head + "\n" + Content.styled(f"  ✎ {row.badge}", "bold $warning")
    return head + "\n" + _preview(row.text)


def least_lines(row: InboxRow) -> int:
    """The fewest lines `row_prompt(row)` draws (a long line only adds more by wrapping)."""
    if row.kind == "item":
        return 3 if row.badge else 2
    if row.kind in ("tombstone", "receipt"):
        return 2
    if row.kind == "unsent":
        return 3
    return 1


class InboxView(FlatHighlight, PaneKeys, OptionList):
    """An OptionList of inbox rows; option ids are `msg:<id>`, `tomb:<n>`, `hdr:<target>`."""

    BINDINGS: ClassVar[list[BindingType]] = [
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
        self._snapshot: tuple[Any, ...] = ()
        self._built = 0
        """How many of `rows` have an option (the rest are built when scrolled to)."""

    async def _on_key(self, event: events.Key) -> None:
        """Space marks the highlighted item, but only here and only while the composer is
        empty: a person typing prose with a draft under way gets a space typed, as every
        other printable key is (`panekeys`)."""
        empty = getattr(self.screen, "composer_is_empty", None)
        if event.key == "space" and self.app.focused is self and callable(empty) and empty():
            await run_bound_key(self, event)
            return
        await super()._on_key(event)

    def show(self, view: AgentView | None) -> None:
        self.view = view
        self._snapshot = ()
        self._built = 0
        self.sync()

    @property
    def fills_pane(self) -> bool:
        """Whether the options built cover the pane's height (or are every row)."""
        if self._built >= len(self.rows):
            return True
        return sum(least_lines(row) for row in self.rows[:self._built]) >= self._height()

    def _height(self) -> int:
        """The pane's height in lines (a likely one before it is laid out)."""
        return self.size.height or 40

    def _rows_to_fill(self, start: int, lines: int) -> int:
        """The row count from which rows `start`.. cover at least `lines` lines."""
        end, covered = start, 0
        while end < len(self.rows) and covered < lines:
            covered += least_lines(self.rows[end])
            end += 1
        return end

    def _options_for(self, start: int, end: int) -> list[Option]:
        """The options of rows `start`..`end` (item numbers count from the first row)."""
        position = sum(1 for row in self.rows[:start] if row.kind == "item")
        options: list[Option] = []
        for number in range(start, end):
            row = self.rows[number]
            if row.kind == "item":
                position += 1
                options.append(Option(row_prompt(row, position), id=f"msg:{row.message.id}"))
            elif row.kind in ("tombstone", "unsent"):
                options.append(Option(row_prompt(row), id=f"tomb:{number}"))
            elif row.kind == "receipt":
                options.append(Option(row_prompt(row), id=f"rcpt:{number}"))
            else:
                options.append(Option(row_prompt(row), id=f"{row.kind}:{number}",
                                      disabled=True))
        return options

    def _row_of(self, option_id: str | None) -> int | None:
        """The index in `rows` of the item whose option id is `option_id`."""
        if option_id is None or not option_id.startswith("msg:"):
            return None
        message_id = option_id[4:]
        for number, row in enumerate(self.rows):
            if row.kind == "item" and row.message.id == message_id:
                return number
        return None

    def build_through(self, row: int) -> None:
        """Give rows up to `row` (and a screen after it) their options now."""
        end = min(len(self.rows), max(row + 1, self._rows_to_fill(row + 1, self._height())))
        if end > self._built:
            start, self._built = self._built, end
            self.add_options(self._options_for(start, end))

    def _build_ahead(self) -> None:
        """The person scrolled or moved near the last built row: build the next screens."""
        if self._built < len(self.rows):
            self.build_through(self._rows_to_fill(self._built, self._height()) - 1)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if self._built < len(self.rows) and \
                new_value + 2 * self._height() > self.virtual_size.height:
            self.call_later(self._build_ahead)

    def watch_highlighted(self, highlighted: int | None) -> None:
        super().watch_highlighted(highlighted)
        if highlighted is not None and self._built < len(self.rows) and sum(
                least_lines(row) for row in self.rows[highlighted:self._built]) \
                < self._height():
            self.call_later(self._build_ahead)

    def action_last(self) -> None:
        self.build_through(len(self.rows) - 1)
        super().action_last()

    def sync(self, *, force: bool = False) -> None:
        """Rebuild the rows if the inbox (or its tombstones) changed since the last sync."""
        view = self.view
        if view is None:
            if self.rows or force:
                self.rows = []
                self.clear_options()
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
        keep = self.highlighted_id
        self.rows = inbox_rows(next_step, next_turn, tombstones, paused=paused,
                               unsent=view.unsent.unsent,
                               recent=book.recent(RECENT_RECEIPTS + len(tombstones) +
                                                  len(view.unsent.unsent))
                               if book is not None else None,
                               badges=badges, marked=marked)
        built = max(min(self._built, len(self.rows)),
                    self._rows_to_fill(0, AHEAD_SCREENS * self._height()))
        kept = self._row_of(keep)
        if kept is not None:
            built = max(built, self._rows_to_fill(kept + 1, self._height()))
        self._built = built
        self.render_count += 1
        self.set_options(self._options_for(0, built))
        self._restore(keep)

    def _restore(self, keep: str | None) -> None:
        """After a sync: the item that was highlighted stays highlighted where it is now;
        when it left, the first item is (or nothing, with no item left)."""
        target: int | None = None
        if keep is not None and keep.startswith("msg:"):
            try:
                target = self.get_option_index(keep)
            except Exception:
                target = None
        if target is None:
            for index, option in enumerate(self.options):
                if not option.disabled and option.id and option.id.startswith("msg:"):
                    target = index
                    break
        self.highlighted = target

    @property
    def highlighted_id(self) -> str | None:
        option = self.highlighted_option
        return option.id if option is not None else None

    def highlighted_row(self) -> InboxRow | None:
        """The row under the cursor (an item or a tombstone), or None."""
        option = self.highlighted_option
        if option is None or option.id is None:
            return None
        if option.id.startswith("msg:"):
            message_id = option.id[4:]
            for row in self.rows:
                if row.kind == "item" and row.message.id == message_id:
                    return row
        elif option.id.startswith(("tomb:", "rcpt:")):
            return self.rows[int(option.id[5:])]
        return None

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
        row = self._row_of(f"msg:{message_id}")
        if row is not None:
            self.build_through(row)
        try:
            self.highlighted = self.get_option_index(f"msg:{message_id}")
        except Exception:
            pass
