"""Which agents the tree lists, in which order and how deep: filter, folds, hidden finished.

Twenty roots with sixty auto-spawned children push the roots out of sight; the person
narrows the list by typing part of a name (a match shows with its ancestors, so its
place in the tree stays readable), folds a parent (its row then carries its subtree's
totals, `tree_rows.roll_up`), or hides finished sub-agents. Roots are never hidden by a
fold or by hiding finished ones, an agent that needs the person is never hidden as
finished, and the selected agent always stays listed, so the cursor never lands in a
hole. Plain data over ids; the widget draws the `Line`s this returns.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Line:
    """One listed agent: its depth, whether it has children, whether they are folded,
    and the descendants a fold hides (their ids, for the row's roll-up)."""

    agent_id: str
    depth: int
    has_children: bool
    folded: bool
    hidden: tuple[str, ...] = ()


@dataclass
class TreeView:
    """The tree's filter, folds and hide-finished toggle."""

    folded: set[str] = field(default_factory=set)
    query: str = ""
    hide_finished: bool = False

    def toggle_fold(self, agent_id: str) -> bool:
        """Fold or unfold `agent_id`'s children; returns whether it is folded now."""
        if agent_id in self.folded:
            self.folded.discard(agent_id)
            return False
        self.folded.add(agent_id)
        return True

    def fold(self, agent_id: str, folded: bool = True) -> None:
        """Fold (or unfold) one parent."""
        if folded:
            self.folded.add(agent_id)
        else:
            self.folded.discard(agent_id)

    def fold_all(self, parents: Sequence[str]) -> None:
        """Fold every parent given (the roots, to see twenty agents on one screen)."""
        self.folded.update(parents)

    def unfold_all(self) -> None:
        """Unfold every parent."""
        self.folded.clear()

    def matches(self, name: str) -> bool:
        """Whether `name` matches the filter: every word of it appears, in any case."""
        if not self.query.strip():
            return True
        lowered = name.casefold()
        return all(word in lowered for word in self.query.casefold().split())

    def lines(self, roots: Sequence[str], children: Mapping[str, Sequence[str]],
              name_of: Callable[[str], str], finished: Callable[[str], bool],
              keep: Sequence[str] = ()) -> list[Line]:
        """The listed agents in tree order. `children`: id → child ids (creation order);
        `finished`: whether a sub-agent may be hidden as finished; `keep`: ids listed
        whatever the filter and toggle say (the selected agent)."""
        kept = set(keep)
        filtering = bool(self.query.strip())
        shown: dict[str, bool] = {}

        def visible(agent_id: str, depth: int) -> bool:
            """Whether the agent is listed (computed bottom-up: a parent of a listed one is)."""
            below = [visible(c, depth + 1) for c in children.get(agent_id, ())]
            if agent_id in kept:
                own = True
            elif filtering:
                own = self.matches(name_of(agent_id))
            else:
                own = depth == 0 or not (self.hide_finished and finished(agent_id))
            result = own or any(below)
            shown[agent_id] = result
            return result

        for root in roots:
            visible(root, 0)
        out: list[Line] = []

        def walk(agent_id: str, depth: int) -> None:
            kids = [c for c in children.get(agent_id, ()) if shown.get(c)]
            folded = agent_id in self.folded and bool(kids) and not filtering
            hidden: tuple[str, ...] = ()
            if folded:
                hidden = tuple(_descendants(agent_id, children))
                hidden_kept = [k for k in kept if k in hidden]
                if hidden_kept:
                    folded = False  # the selected agent is under it: it stays in sight
                    hidden = ()
            out.append(Line(agent_id, depth, bool(kids), folded, hidden))
            if not folded:
                for kid in kids:
                    walk(kid, depth + 1)

        for root in roots:
            if shown.get(root):
                walk(root, 0)
        return out


def _descendants(agent_id: str, children: Mapping[str, Sequence[str]]) -> list[str]:
    out: list[str] = []
    stack = list(children.get(agent_id, ()))[::-1]
    while stack:
        current = stack.pop()
        out.append(current)
        stack.extend(list(children.get(current, ()))[::-1])
    return out
