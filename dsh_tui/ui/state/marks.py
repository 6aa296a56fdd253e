"""Marked inbox items: what merge, move and copy act on.

An ordered set of (agent id, message id), in the order the person marked them; `prune`
forgets items that are no longer pending (claimed, removed), so a mark never points at
something gone. Plain Python, no Textual.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable


class Marks:
    """The person's marks across agents."""

    def __init__(self) -> None:
        self._marks: dict[tuple[str, str], None] = {}
        self.version = 0

    def __contains__(self, key: object) -> bool:
        return key in self._marks

    def __len__(self) -> int:
        return len(self._marks)

    def toggle(self, agent: str, message_id: str) -> bool:
        """Mark or unmark; returns whether it is marked now."""
        key = (agent, message_id)
        self.version += 1
        if key in self._marks:
            del self._marks[key]
            return False
        self._marks[key] = None
        return True

    def of(self, agent: str) -> list[str]:
        """Marked message ids of `agent`, in marking order."""
        return [message for owner, message in self._marks if owner == agent]

    def agents(self) -> list[str]:
        """Agents with at least one mark, in marking order."""
        return list(dict.fromkeys(owner for owner, _ in self._marks))

    def all(self) -> list[tuple[str, str]]:
        """Every mark, in marking order."""
        return list(self._marks)

    def clear(self, agent: str | None = None) -> None:
        """Forget every mark (of `agent` only, when given)."""
        self._marks = {k: None for k in self._marks if agent is not None and k[0] != agent}
        self.version += 1

    def discard(self, keys: Iterable[tuple[str, str]]) -> None:
        """Forget these marks."""
        for key in keys:
            self._marks.pop(key, None)
        self.version += 1

    def prune(self, pending: Callable[[str, str], bool]) -> int:
        """Forget marks whose item is no longer pending; returns how many went."""
        gone = [key for key in self._marks if not pending(*key)]
        if gone:
            self.discard(gone)
        return len(gone)
