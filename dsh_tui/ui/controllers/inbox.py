"""Inbox edits on the selected agent: edit, remove, move, re-file, undo, clear, and putting
back what an ended turn claimed but never sent.

Each action checks, calls one rule of `state/inbox_rules.py` (or one Inbox operation),
and says what happened in one line.
"""

from __future__ import annotations

from typing import Protocol

from dsh_tui.harness import Agent, UserMessage
from dsh_tui.harness.inbox import InboxTarget

from ..screens.confirm import ConfirmScreen
from ..state.inbox_rows import InboxRow
from ..state.inbox_rules import (
    move_destination,
    pending_count,
    put_back,
    refile,
    undo,
    undo_choice,
)
from .editing import Editing
from .seams import Notes, Panes, Screenside, Selection, World
from .sending import LANE_PHRASE, undo_keys
from .timeline import TimelineActions


def _target(row: InboxRow) -> InboxTarget:
    """The list an item row is in (an item row always names one of the two)."""
    return "next-step" if row.target == "next-step" else "next-turn"


class Host(World, Notes, Panes, Selection, Screenside, Protocol):
    """What the inbox actions need of the screen."""


class InboxActions:
    """The inbox pane's keys (the pane binds `screen.NAME`; the screen delegates here)."""

    def __init__(self, host: Host, editing: Editing, timelines: TimelineActions) -> None:
        self.host = host
        self.editing = editing
        self.timelines = timelines

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

        def save(text: str) -> bool:
            return bool(agent.inbox.replace(message.id, message.with_text(text)))

        def refocus() -> None:
            (host.inbox if host.inbox.display else host.composer).focus()

        self.editing.edit(agent, message, row.lane, save, watch=True, refocus=refocus,
                          saved="Saved: the queued item keeps its place and id.")

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
            host.bridge.mark_inbox(view.id)
            host.note(f"#{row.unsent.id[:6]} is no longer offered back (it was never sent).",
                     seconds=3)
            return
        found = self._item()
        if found is None:
            return
        agent, row = found
        if agent.inbox.remove(row.message.id):
            host.note(f"Removed #{row.message.id[:6]} ({undo_keys(host)} undoes).", seconds=3)

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
        self.host.bridge.suppress_tombstones(row.message.id)
        agent.inbox.move(row.message.id, _target(row), index)

    def move_lane(self) -> None:
        """Re-file the item: follow-up → steer → inject → follow-up (same id)."""
        found = self._item()
        if found is None:
            return
        agent, row = found
        message: UserMessage = row.message
        self.host.bridge.suppress_tombstones(message.id)
        try:
            lane = refile(agent.inbox, message, row.lane, _target(row))
        except Exception as error:  # a runtime's agent moves only follow-up → steer
            self.host.say(f"#{message.id[:6]} stays where it is: {error}", "warning")
            return
        note = ""
        if agent.status != "running" and lane != "inject":
            note = " (idle: enter on an empty composer delivers)"
        self.host.note(f"#{message.id[:6]} is now {LANE_PHRASE[lane]}{note}.", seconds=3)

    def undo_discard(self) -> None:
        host = self.host
        agent = host.writable_agent()
        view = host.selected_view
        if agent is None or view is None:
            return
        row = host.inbox.highlighted_row()
        if row is not None and row.kind == "unsent":
            self.restore_unsent()
            return
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
                agent.inbox.clear()
                host.note(f"Cleared {pending} item{'s' if pending != 1 else ''} "
                         f"({undo_keys(host)} undoes).")

        host.ask(ConfirmScreen(
            f"Clear {pending} pending item{'s' if pending != 1 else ''} of "
            f"{host.display_name(agent.id)}?", "The running turn, if any, continues.",
            yes="Clear"), answer)
