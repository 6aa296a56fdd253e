"""The undo/redo stack of a person's inbox edits, for the whole session.

Every edit the person makes (remove, edit, move, re-file, merge, split, move or copy to
another agent, clear) goes through `InboxHistory.do`, which applies it and remembers it;
`undo` and `redo` walk the stack, each entry named so the status line can say what the
next ctrl+z or ctrl+y would do. An entry that can no longer be undone (the agent claimed
an item it touches) is dropped with the reason, nothing written. The stack is bounded
(`LIMIT` entries) and lasts as long as the app: no timer takes an undo away.
"""

from __future__ import annotations

from dataclasses import dataclass

from .inbox_edits import Edit, EditRefused, Inboxes

LIMIT = 500
"""Entries kept; the oldest go first."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a do, undo or redo did: the entry's name, whether it happened, and why not."""

    name: str
    done: bool
    error: str = ""
    agents: tuple[str, ...] = ()
    detail: str = ""
    """How much of it happened, when not all of it could (`Edit.detail`)."""

    def line(self, action: str) -> str:
        """One status line for `action` ("do", "undo" or "redo"): what happened, or why not."""
        if self.done:
            line = {"undo": f"undone: {self.name}", "redo": f"redone: {self.name}"}.get(
                action, self.name)
            return f"{line} ({self.detail})" if self.detail else line
        return f"could not {action} {self.name}: {self.error}" if self.name else self.error


class InboxHistory:
    """Undo and redo stacks of named inbox edits."""

    def __init__(self, inboxes: Inboxes, limit: int = LIMIT) -> None:
        self._inboxes = inboxes
        self._undo: list[Edit] = []
        self._redo: list[Edit] = []
        self._limit = limit

    @property
    def next_undo(self) -> str | None:
        """The name of what undo would revert, or None."""
        return self._undo[-1].name if self._undo else None

    @property
    def next_redo(self) -> str | None:
        """The name of what redo would apply again, or None."""
        return self._redo[-1].name if self._redo else None

    def __len__(self) -> int:
        return len(self._undo)

    def peek(self, redo: bool = False) -> Edit | None:
        """The edit undo (or redo) would act on next, or None."""
        stack = self._redo if redo else self._undo
        return stack[-1] if stack else None

    def do(self, edit: Edit) -> Outcome:
        """Apply `edit` and remember it (a new edit forgets what could be redone)."""
        try:
            edit.apply(self._inboxes)
        except EditRefused as error:
            return Outcome(edit.name, False, str(error), edit.agents)
        self.record(edit)
        return Outcome(edit.name, True, agents=edit.agents)

    def record(self, edit: Edit) -> None:
        """Remember an edit that already happened (a clear done by a stop)."""
        self._undo.append(edit)
        del self._undo[:-self._limit]
        self._redo.clear()

    def undo(self) -> Outcome:
        """Revert the latest edit; a refused one is dropped, saying why."""
        if not self._undo:
            return Outcome("", False, "nothing to undo")
        edit = self._undo.pop()
        try:
            edit.revert(self._inboxes)
        except EditRefused as error:
            return Outcome(edit.name, False, f"{error}; dropped from the history",
                           edit.agents)
        self._redo.append(edit)
        return Outcome(edit.name, True, agents=edit.agents, detail=edit.detail)

    def redo(self) -> Outcome:
        """Apply again the latest undone edit; a refused one is dropped, saying why."""
        if not self._redo:
            return Outcome("", False, "nothing to redo")
        edit = self._redo.pop()
        try:
            edit.apply(self._inboxes)
        except EditRefused as error:
            return Outcome(edit.name, False, f"{error}; dropped from the history",
                           edit.agents)
        self._undo.append(edit)
        return Outcome(edit.name, True, agents=edit.agents, detail=edit.detail)
