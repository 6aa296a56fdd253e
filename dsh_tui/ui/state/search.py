"""Finding text in a transcript model: which items match, and where the cursor goes next.

The search runs over the model, not the widgets: a match two thousand items back is
found all the same (and the transcript scrolls to it). Each step searches again, as the
transcript may have grown; only items new or changed since the last search are read
again. Case follows the query ("smart case", as in less and ripgrep): all lowercase
matches any case, a capital letter makes it exact.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from .transcript import Item


def searchable_text(item: Item) -> str:
    """What a person can read of an item on screen (tool calls: name, arguments, result)."""
    if item.kind == "tool":
        return "\n".join(part for part in (item.name, item.arguments or item.current_text(),
                                           item.result or "") if part)
    return item.current_text()


def matches_item(item: Item, query: str) -> bool:
    """Whether `item`'s text contains `query` (smart case)."""
    if not query:
        return False
    text = searchable_text(item)
    if query != query.lower():
        return query in text
    return query in text.lower()


def find_matches(items: Sequence[Item], query: str) -> list[int]:
    """Indexes of the items whose text contains `query`, oldest first."""
    return [item.index for item in items if matches_item(item, query)]


@dataclass
class SearchState:
    """The query, its matches in one agent's transcript, and which match is current."""

    query: str = ""
    agent_id: str | None = None
    matches: list[int] = field(default_factory=list)
    current: int | None = None
    """Position in `matches` (not an item index), or None before the first step."""
    _read: tuple[str, str | None, Sequence[Item] | None, list[int]] = \
        field(default=("", None, None, []), repr=False)
    """(query, agent, items, each item's version) the matches were found for."""

    def refresh(self, agent_id: str | None, items: Sequence[Item], query: str) -> None:
        """Search again (new query, other agent, or items that grew), keeping the current
        item when it still matches. The same query over the same transcript reads only
        the items added or changed since (their version moved)."""
        keep = self.item
        read_query, read_agent, read_items, versions = self._read
        if (read_query, read_agent) != (query, agent_id) or read_items is not items:
            versions = []
            found: set[int] = set()
        else:
            found = set(self.matches)
        for position, item in enumerate(items):
            if position < len(versions) and versions[position] == item.version:
                continue
            found.discard(item.index)
            if matches_item(item, query):
                found.add(item.index)
            if position < len(versions):
                versions[position] = item.version
            else:
                versions.append(item.version)
        self.query, self.agent_id = query, agent_id
        self._read = (query, agent_id, items, versions)
        self.matches = sorted(found)
        self.current = self.matches.index(keep) if keep in self.matches else None

    @property
    def item(self) -> int | None:
        """The item index of the current match."""
        return self.matches[self.current] if self.current is not None else None

    def step(self, older: bool) -> tuple[int | None, bool]:
        """Move to the next older (or newer) match: (its item index, whether it wrapped).

        The first step lands on the newest match: in a transcript, what was said last
        is usually what the person is looking for."""
        if not self.matches:
            self.current = None
            return None, False
        last = len(self.matches) - 1
        if self.current is None:
            self.current = last if older else 0
            return self.item, False
        position = self.current + (-1 if older else 1)
        wrapped = position < 0 or position > last
        self.current = position % len(self.matches)
        return self.item, wrapped

    def status(self) -> str:
        """The line under the search field: a hint, "no match", or which match of how many."""
        if not self.query:
            return "type to search this transcript"
        if not self.matches:
            return "no match"
        count = len(self.matches)
        if self.current is None:
            return f"{count:,} match{'es' if count != 1 else ''}"
        return f"{self.current + 1:,} of {count:,}"
