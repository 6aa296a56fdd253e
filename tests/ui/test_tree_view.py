"""Issue 28: a tree that scales (filter, folds, hidden finished sub-agents), the cursor's
rest before the selection follows it, and side panes that share the width; no screen."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dsh_tui.ui.state.pane_widths import AUTO, HIDDEN, SHOWN, TRANSCRIPT_MIN, pane_widths
from dsh_tui.ui.state.settle import Settle
from dsh_tui.ui.state.tree_view import TreeView

ROOTS = [f"root{i}" for i in range(20)]
CHILDREN = {root: [f"{root}.r{j}" for j in range(3)] for root in ROOTS}
CHILDREN["root0.r0"] = ["root0.r0.deep"]
NAMES = {agent: agent.replace(".", " ") for agent in [*ROOTS, *(c for kids in CHILDREN.values()
                                                               for c in kids)]}
NAMES["root7"] = "Planner"


def ids(view: TreeView, finished: Callable[[str], bool] = lambda _a: False,
        keep: tuple[str, ...] = ()) -> list[str]:
    return [line.agent_id for line in view.lines(ROOTS, CHILDREN, NAMES.__getitem__, finished,
                                                 keep)]


def test_twenty_roots_with_sixty_children_fold_to_twenty_rows_and_back() -> None:
    view = TreeView()
    assert len(ids(view)) == 20 + 60 + 1
    view.fold_all(ROOTS)
    lines = view.lines(ROOTS, CHILDREN, NAMES.__getitem__, lambda _a: False)
    assert [line.agent_id for line in lines] == ROOTS
    assert lines[0].folded and lines[0].hidden == ("root0.r0", "root0.r0.deep", "root0.r1",
                                                   "root0.r2")
    assert view.toggle_fold("root3") is False
    assert ids(view)[3:7] == ["root3", "root3.r0", "root3.r1", "root3.r2"]
    view.unfold_all()
    assert len(ids(view)) == 81


def test_the_filter_keeps_matches_with_their_ancestors_and_ignores_case_and_word_order() -> None:
    view = TreeView(query="DEEP root0")
    assert ids(view) == ["root0", "root0.r0", "root0.r0.deep"]
    view.query = "planner"
    assert ids(view) == ["root7"]
    view.query = "r2"
    shown = ids(view)
    assert all(agent.endswith("r2") or agent in ROOTS for agent in shown)
    assert len([a for a in shown if a.endswith(".r2")]) == 20
    view.fold_all(ROOTS)
    assert len(ids(view)) == 40  # a filter looks through folds
    view.query = "nothing like it"
    assert ids(view) == [] and ids(view, keep=("root5.r1",)) == ["root5", "root5.r1"]


def test_hiding_finished_sub_agents_never_hides_a_root_or_the_selected_agent() -> None:
    done = {agent for agent in NAMES if agent not in ("root1.r1",)}
    view = TreeView(hide_finished=True)
    shown = ids(view, finished=done.__contains__)
    assert shown[:3] == ["root0", "root1", "root1.r1"] and set(ROOTS) <= set(shown)
    assert len(shown) == 21
    assert ids(view, finished=done.__contains__, keep=("root4.r2",)).count("root4.r2") == 1


def test_a_fold_over_the_selected_agent_opens_so_the_cursor_never_lands_in_a_hole() -> None:
    view = TreeView()
    view.fold("root2")
    assert "root2.r1" not in ids(view)
    assert "root2.r1" in ids(view, keep=("root2.r1",))
    view.fold("root2", False)
    assert "root2" not in view.folded


class FakeTimers:
    """A scheduler whose time moves only when the test says (no sleeping)."""

    def __init__(self) -> None:
        self.now = 0.0
        self.timers: list[tuple[float, Any]] = []

    def schedule(self, delay: float, callback: Any) -> None:
        self.timers.append((self.now + delay, callback))

    def advance(self, seconds: float) -> None:
        self.now += seconds
        while True:
            due = [t for t in self.timers if t[0] <= self.now + 1e-9]
            if not due:
                return
            first = min(due, key=lambda t: t[0])
            self.timers.remove(first)
            first[1]()


def test_an_arrow_burst_selects_once_when_the_cursor_rests() -> None:
    timers = FakeTimers()
    selected: list[str] = []
    settle = Settle(timers.schedule, selected.append, clock=lambda: timers.now, delay=0.1)
    settle.now("root0")
    assert selected == ["root0"]
    for index in range(1, 31):  # thirty arrows, 20 ms apart
        settle.moved(ROOTS[index % 20])
        timers.advance(0.02)
        assert selected == ["root0"] and settle.cursor == ROOTS[index % 20]
    assert len(timers.timers) <= 1  # one pending wake, not one per key
    timers.advance(0.1)
    assert selected == ["root0", ROOTS[30 % 20]] and settle.selections == 2
    timers.advance(1.0)
    assert len(selected) == 2
    settle.moved("root3")
    settle.moved("root10")  # back where the selection is: nothing to do
    timers.advance(0.2)
    assert len(selected) == 2 and not settle.pending


def test_a_deliberate_choice_selects_at_once_and_a_flush_acts_on_the_row_shown() -> None:
    timers = FakeTimers()
    selected: list[str] = []
    settle = Settle(timers.schedule, selected.append, clock=lambda: timers.now)
    settle.moved("a")
    settle.flush()
    assert selected == ["a"]
    settle.moved("b")
    settle.now("c")  # the jump key: no wait, and the pending rest is dropped
    timers.advance(0.5)
    assert selected == ["a", "c"]
    settle.selected_elsewhere("d")  # the app's own fallback is not selected again
    timers.advance(0.5)
    assert selected == ["a", "c"] and settle.cursor == "d"


def test_side_panes_share_the_width_and_fold_before_the_transcript_gets_narrow() -> None:
    table = {size: pane_widths(size) for size in (60, 80, 100, 120, 160, 200)}
    assert [(w.tree, w.inbox, w.transcript) for w in table.values()] == [
        (0, 0, 60), (0, 0, 80), (24, 0, 76), (26, 31, 63), (35, 42, 83), (44, 52, 104)]
    for size, widths in table.items():
        assert widths.tree + widths.inbox + widths.transcript == size
        assert widths.transcript >= TRANSCRIPT_MIN
    assert pane_widths(120, inbox_empty=True) == pane_widths(120, inbox=AUTO,
                                                             inbox_empty=True)
    empty = pane_widths(120, inbox_empty=True)
    assert empty.inbox < table[120].inbox and empty.transcript > table[120].transcript
    assert pane_widths(160, tree=HIDDEN).tree == 0
    asked = pane_widths(60, inbox=SHOWN)  # the person opened it at 60 columns
    assert asked.inbox == 30 and asked.transcript == 30
    both = pane_widths(60, tree=SHOWN, inbox=SHOWN)
    assert both.transcript >= 20 and both.tree and both.inbox
    assert pane_widths(80, tree=SHOWN) == pane_widths(80, tree=SHOWN, inbox=AUTO)
    assert pane_widths(80, tree=SHOWN).tree == 24
