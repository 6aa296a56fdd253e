"""The person's inbox edits as one undoable history: marks, merge, split, move or copy to
another agent, and ctrl+z / ctrl+y from any pane for the whole session.

Every edit the inbox keys make (remove, edit, move, re-file, clear, merge, split,
transfer) goes through `do` (`state/undo.py` over `state/inbox_edits.py`): applied,
remembered under its name, and said on the status line with the key that undoes it. An
edit the agent raced (it claimed an item meanwhile) is refused with nothing written, and
the status line says why. The marks are the person's across agents (`state/marks.py`);
what left the inbox is unmarked.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from dsh_tui.harness.surface import InboxSurface

from ..screens.transfer import TransferScreen
from ..state.inbox_edits import Edit, Item, Merge, Remove, Transfer, item_of, transfer_targets
from ..state.marks import Marks
from ..state.text import short_id
from ..state.undo import InboxHistory, Outcome
from .seams import Notes, Panes, Screenside, Selection, World


class Host(World, Notes, Panes, Selection, Screenside, Protocol):
    """What the inbox edits need of the screen."""


class InboxEdits:
    """The session's inbox history and marks, and the edits that act on marked items."""

    def __init__(self, host: Host) -> None:
        self.host = host
        self.history = InboxHistory(self._inbox)
        self.marks = Marks()

    def _inbox(self, agent_id: str) -> InboxSurface | None:
        agent = self.host.ctx.agents.get(agent_id)
        return None if agent is None or self.host.read_only else agent.inbox

    # -- the history ---------------------------------------------------------------------------

    def do(self, edit: Edit) -> bool:
        """Apply `edit` and remember it; say what happened (or why not) in one line."""
        self._quiet_removals(edit)
        outcome = self.history.do(edit)
        self._after(outcome, "do")
        return outcome.done

    def record(self, edit: Edit) -> None:
        """Remember an edit that already happened (a stop that cleared the inbox)."""
        self.history.record(edit)

    def undo(self) -> bool:
        """Undo the latest edit; False when there was none to undo."""
        edit = self.history.peek()
        if edit is None:
            return False
        self._quiet_removals(edit, undoing=True)
        self._after(self.history.undo(), "undo")
        return True

    def redo(self) -> None:
        edit = self.history.peek(redo=True)
        if edit is None:
            self.host.note(f"Nothing to redo ({self._keys('undo_discard')} undoes inbox "
                           "edits; a new edit forgets what was undone).")
            return
        self._quiet_removals(edit)
        self._after(self.history.redo(), "redo")

    def _quiet_removals(self, edit: Edit, undoing: bool = False) -> None:
        """Items an edit takes out of a list on its way (a merge's others, a move to another
        agent, an undone split's tail) are not discards: no "removed" row for them. A
        removal (or an undone put-back) keeps its row, with its undo."""
        if isinstance(edit, Remove) and not undoing:
            return
        pending = [m.id for agent_id in edit.agents
                   if (inbox := self._inbox(agent_id)) is not None
                   for m in (*inbox.next_step, *inbox.next_turn)]
        self.host.bridge.suppress_tombstones(*pending)

    def _after(self, outcome: Outcome, action: str) -> None:
        host = self.host
        for agent_id in outcome.agents:
            host.bridge.mark_inbox(agent_id)
        if host.selected_id in outcome.agents:
            host.inbox.sync()  # now, not at the next flush: the next key of a burst acts
            # on the rows as this edit left them (the cursor on what it should be on)
        self._prune()
        if not outcome.done:
            host.note(outcome.line(action).capitalize() + ".", "warning", seconds=6)
            return
        again = self._keys("redo_inbox" if action == "undo" else "undo_discard")
        verb = "redoes" if action == "undo" else "undoes"
        host.note(f"{outcome.line(action).capitalize()} · {again} {verb}.")

    def _keys(self, action: str) -> str:
        return self.host.key_name(action)

    def _prune(self) -> None:
        """Unmark what is no longer pending."""
        def pending(agent_id: str, message_id: str) -> bool:
            inbox = self._inbox(agent_id)
            return inbox is not None and inbox.get(message_id) is not None

        if self.marks.prune(pending):
            self.host.inbox.sync()

    # -- marks ---------------------------------------------------------------------------------

    def toggle_mark(self, agent_id: str, message_id: str) -> bool:
        """Mark or unmark one item; returns whether it is marked now."""
        marked = self.marks.toggle(agent_id, message_id)
        self.host.inbox.sync()
        return marked

    def marked_items(self, agent_id: str) -> list[Item]:
        """The marked items of `agent_id` still pending, in the order they were marked."""
        inbox = self._inbox(agent_id)
        if inbox is None:
            return []
        found = (item_of(inbox, agent_id, message_id) for message_id in self.marks.of(agent_id))
        return [item for item in found if item is not None]

    # -- merge and transfer --------------------------------------------------------------------

    def merge(self, agent_id: str) -> None:
        """Merge the marked items of one list into the first of them (one turn, one undo)."""
        items = self.marked_items(agent_id)
        if len(items) < 2:
            self.host.note(f"Mark two or more items of one list first "
                           f"({self._keys('mark_item')} marks the highlighted one).")
            return
        if len({item.target for item in items}) != 1:
            self.host.note("Merge takes items of one list: follow-ups with follow-ups, "
                           "steering with steering.", "warning")
            return
        edit = Merge(items)
        if self.do(edit):
            self.marks.discard((agent_id, item.id) for item in items)
            self.host.inbox.sync()
            self.host.inbox.highlight_message(items[0].id)

    def transfer(self, agent_id: str, items: list[Item], marked_agents: Iterable[str] = ()
                 ) -> None:
        """Ask where to, then move (or copy) `items` to that agent."""
        host = self.host
        if not items:
            host.note("Highlight an item, or mark some (space), to move or copy them.")
            return
        targets = transfer_targets(host.ctx.agents, agent_id, list(marked_agents))
        if not targets:
            host.note("There is no other agent to move them to (ctrl+k spawns a child).")
            return
        what = f"#{short_id(items[0].id)}" if len(items) == 1 else f"{len(items)} items"
        rows = [(target, host.display_name(target), relation) for target, relation in targets]

        def chosen(choice: tuple[str, bool] | None) -> None:
            if choice is None:
                return
            to_agent, copy = choice
            edit = Transfer(items, to_agent, copy=copy, to_name=host.display_name(to_agent))
            if self.do(edit) and not copy:
                self.marks.discard((agent_id, item.id) for item in items)
                host.inbox.sync()

        host.ask(TransferScreen(f"Move or copy {what} of {host.display_name(agent_id)}",
                                rows), chosen)
