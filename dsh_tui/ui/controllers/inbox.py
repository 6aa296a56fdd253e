"""Inbox edits on the selected agent: edit, split, remove, move, re-file, clear, mark,
merge, move or copy to another agent, undo and redo, and putting back what an ended turn
claimed but never sent.

Each action checks, makes one named edit (`state/inbox_edits.py`) through the session's
history (`controllers/edits.py`, which says what happened on the status line), or calls
one rule of `state/inbox_rules.py`.
"""

from __future__ import annotations

from typing import Protocol

from dsh_tui.harness import Agent, UserMessage
from dsh_tui.harness.inbox import InboxTarget

from ..screens.confirm import ConfirmScreen
from ..state.bulk import Marks
from ..state.inbox_edits import (
    EditRefused,
    Item,
    Move,
    Refile,
    Remove,
    Replace,
    Split,
    item_of,
)
from ..state.inbox_rows import InboxRow
from ..state.inbox_rules import (
    move_destination,
    next_lane,
    pending_count,
    put_back,
    undo,
    undo_choice,
)
from ..state.text import short_id
from .editing import Editing
from .edits import InboxEdits
from .seams import Notes, Panes, Screenside, Selection, World
from .sending import LANE_PHRASE
from .timeline import TimelineActions


def _target(row: InboxRow) -> InboxTarget:
    """The list an item row is in (an item row always names one of the two)."""
    return "next-step" if row.target == "next-step" else "next-turn"


class Host(World, Notes, Panes, Selection, Screenside, Protocol):
    """What the inbox actions need of the screen."""


class InboxActions:
    """The inbox pane's keys (the pane binds `screen.NAME`; the screen delegates here)."""

    def __init__(self, host: Host, editing: Editing, timelines: TimelineActions,
                 edits: InboxEdits, marked_agents: Marks | None = None) -> None:
        self.host = host
        self.editing = editing
        self.timelines = timelines
        self.edits = edits
        self.marked_agents = marked_agents if marked_agents is not None else Marks()
        """The agents marked in the tree: a move or copy offers them as destinations."""

    def _place(self, agent: Agent, row: InboxRow) -> Item:
        return Item(agent.id, row.message, _target(row), row.index)

    def _item(self) -> tuple[Agent, InboxRow] | None:
        """(agent, row) of the highlighted inbox item, or None after saying why."""
        agent = self.host.writable_agent()
        if agent is None:
            return None
        row = self.host.inbox.current_row()
        if row is None or row.kind != "item":
            self.host.note("Highlight a pending item in the inbox first (it may just have "
                          "been claimed).")
            return None
        return agent, row

    def edit_item(self) -> None:
        """Edit the highlighted item; on a receipt (a message that left), open its history
        in the timeline."""
        row = self.host.inbox.highlighted_row()
        if row is not None and row.kind == "receipt" and row.receipt is not None:
            self.timelines.open(row.receipt.message_id)
            return
        found = self._item()
        if found is None:
            return
        agent, row = found
        message: UserMessage = row.message
        host = self.host
        edits = self.edits

        def save(text: str) -> bool:
            current = agent.inbox.get(message.id)
            if current is None:
                return False
            if current.text == text:
                return True  # nothing changed: no history entry
            return edits.do(Replace(agent.id, current, current.with_text(text)))

        def split(text: str, cursor: int) -> bool:
            if not save(text):
                return False
            item = item_of(agent.inbox, agent.id, message.id)
            if item is None:
                return False
            try:
                edit = Split(item, cursor)
            except EditRefused as error:
                host.note(f"Cannot split here: {error}.", "warning")
                return False
            return edits.do(edit)

        def refocus() -> None:
            (host.inbox if host.inbox.display else host.composer).focus()

        self.editing.edit(agent, message, row.lane, save, watch=True, refocus=refocus,
                          saved="", split=split)

    def restore_unsent(self) -> None:
        """Put what ended turns claimed but never sent back at the head of their lanes:
        the highlighted one's turn when an offered row is highlighted, else all of them."""
        host = self.host
        agent = host.writable_agent()
        view = host.selected_view
        if agent is None or view is None:
            return
        offered = view.unsent.unsent
        if not offered:
            host.note("Nothing to put back: every claimed message reached the model.")
            return
        row = host.inbox.highlighted_row()
        if row is not None and row.kind == "unsent":
            offered = [u for u in offered if u.turn == row.unsent.turn]
        done = put_back(agent.inbox, offered)
        for _target, count, error in done.errors:
            host.note(f"Could not put back {count} message{'s' if count != 1 else ''}: {error}",
                      "warning")
        restored = done.count
        if restored:
            host.bridge.mark_inbox(agent.id)
            note = "" if agent.status == "running" else \
                " (idle: enter on an empty composer delivers)"
            host.note(f"Put back {restored} message{'s' if restored != 1 else ''} at the head "
                      f"of {'their lanes' if restored != 1 else 'its lane'}{note}.", seconds=4)

    def remove_item(self) -> None:
        host = self.host
        row = host.inbox.highlighted_row()
        view = host.selected_view
        if row is not None and row.kind == "unsent" and view is not None and not host.read_only:
            view.unsent.dismiss({row.unsent.id})
            if view.reading_ready:
                view.receipts.dismiss({row.unsent.id})  # its receipt: tombstoned
            host.bridge.mark_inbox(view.id)
            host.note(f"#{row.unsent.id[:6]} is no longer offered back (it was never sent).",
                      seconds=3)
            return
        found = self._item()
        if found is None:
            return
        agent, row = found
        self.edits.do(Remove([self._place(agent, row)]))

    def move(self, delta: int) -> None:
        """Move the highlighted item `delta` places within its list."""
        found = self._item()
        if found is None:
            return
        agent, row = found
        index = move_destination(agent.inbox, row.target, row.index, delta)
        if index is None:
            self.host.note("Already at the " + ("top." if delta < 0 else "bottom."), seconds=2)
            return
        self.edits.do(Move(self._place(agent, row), _target(row), index))

    def move_lane(self) -> None:
        """Re-file the item: follow-up → steer → inject → follow-up (same id, same index)."""
        found = self._item()
        if found is None:
            return
        agent, row = found
        lane = next_lane(row.lane, row.target)
        edit = Refile(self._place(agent, row), lane,
                      name=f"re-file #{short_id(row.message.id)} as {LANE_PHRASE[lane]}")
        if self.edits.do(edit) and \
                agent.status != "running" and lane != "inject":
            self.host.note(f"#{short_id(row.message.id)} is now {LANE_PHRASE[lane]} (idle: "
                           "enter on an empty composer delivers).")

    def undo_discard(self) -> None:
        """ctrl+z: undo the latest inbox edit (on an offered row: put it back)."""
        host = self.host
        agent = host.writable_agent()
        view = host.selected_view
        row = host.inbox.highlighted_row()
        if agent is not None and row is not None and row.kind == "unsent":
            self.restore_unsent()
            return
        if self.edits.undo():
            return
        if agent is None or view is None:
            return
        # nothing of the person's to undo: a removal someone else made (its row's undo)
        highlighted = row.tombstone if row is not None else None
        chosen = undo_choice(view.tombstones, highlighted)
        if not chosen:
            host.note("Nothing to undo.")
            return
        done = undo(agent.inbox, chosen)
        for message_id, _count, error in done.errors:
            host.note(f"Could not restore #{message_id[:6]}: {error}", "warning")
        for tombstone in done.restored:
            view.tombstones.remove(tombstone)
        if done.count:
            host.bridge.mark_inbox(agent.id)
            host.note(f"Restored {done.count} item{'s' if done.count != 1 else ''}.", seconds=3)

    def redo(self) -> None:
        """ctrl+y: do again the latest undone inbox edit."""
        self.edits.redo()

    def mark(self) -> None:
        """Mark or unmark the highlighted item, then go to the next one."""
        found = self._item()
        if found is None:
            return
        agent, row = found
        self.edits.toggle_mark(agent.id, row.message.id)
        count = len(self.edits.marks.of(agent.id))
        self.host.note(f"{count} marked · {self.host.key_name('merge_items')} merges · "
                       f"{self.host.key_name('transfer_items')} moves or copies.", seconds=3)
        self.host.inbox.action_cursor_down()

    def merge(self) -> None:
        agent = self.host.writable_agent()
        if agent is not None:
            self.edits.merge(agent.id)

    def transfer(self) -> None:
        """Move or copy the marked items (or the highlighted one) to another agent."""
        agent = self.host.writable_agent()
        if agent is None:
            return
        items = self.edits.marked_items(agent.id)
        if not items:
            found = self._item()
            if found is None:
                return
            items = [self._place(*found)]
        self.edits.transfer(agent.id, items, self.marked_agents.ids)

    def clear_inbox(self) -> None:
        host = self.host
        agent = host.writable_agent()
        if agent is None:
            return
        pending = pending_count(agent.inbox)
        if not pending:
            host.note("The inbox is already empty.")
            return

        def answer(yes: bool | None) -> None:
            if yes:
                items = [item for message in (*agent.inbox.next_step, *agent.inbox.next_turn)
                         if (item := item_of(agent.inbox, agent.id, message.id)) is not None]
                self.edits.do(Remove(items, name=f"clear {len(items)} item"
                                                 f"{'s' if len(items) != 1 else ''}"))

        host.ask(ConfirmScreen(
            f"Clear {pending} pending item{'s' if pending != 1 else ''} of "
            f"{host.display_name(agent.id)}?", "The running turn, if any, continues.",
            yes="Clear"), answer)
