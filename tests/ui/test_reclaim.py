"""Removed widgets are freed while agents stream, though the GC pacing froze them.

While anything streams the app freezes the heap (ui/state/gcpacing.py), and removed
widgets are knots of reference cycles, so a pruned transcript block stayed in memory
until every agent was idle (issue 14, the soak's RSS slope). `state/reclaim.py` frees a
dead island by reference counting; `unmounted.py` feeds it every widget Textual removed.
The unit tests run with the collector disabled and `gc.collect` replaced by a counter, so
whatever gets freed is freed without any collection; the app tests, as the app runs
while agents stream: the widgets were frozen, and nothing unfreezes them (a collection
never examines the frozen generation)."""

from __future__ import annotations

import asyncio
import gc
import sys
import weakref
from collections.abc import Iterator
from typing import Any

import pytest
from textual.cache import LRUCache
from textual.widgets import Static

from dsh_tui.llm.scripted import text
from dsh_tui.ui import lru, unmounted
from dsh_tui.ui.state.reclaim import reclaim
from dsh_tui.ui.widgets.transcript import Transcript

from .conftest import add_agent, idle, make_app, msg, settle, world


@pytest.fixture
def frozen(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """What the app does while agents stream: collections run, and `gc.freeze()` keeps
    what survived out of their reach. `gc.unfreeze()` (which the app runs once every agent
    is idle, so a collection frees everything) does nothing here."""
    unfreeze = gc.unfreeze
    monkeypatch.setattr(gc, "unfreeze", lambda: None)
    try:
        yield
    finally:
        unfreeze()


@pytest.fixture
def no_collection(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """The collector off and frozen as while agents stream; `gc.collect()` only counted."""
    calls: list[Any] = []
    monkeypatch.setattr(gc, "collect", lambda *args: calls.append(args) or 0)
    enabled = gc.isenabled()
    gc.disable()
    gc.freeze()
    try:
        yield calls
    finally:
        gc.unfreeze()
        if enabled:
            gc.enable()


async def reap(app: Any, pilot: Any, refs: list[weakref.ReferenceType[Any]],
               rounds: int = 50) -> list[Any]:
    """What is still alive of `refs` after the app's reaper had `rounds` chances, each
    after a collection of what is not frozen (young garbage, such as a stale layout map,
    may still refer to them) and a pause for the app."""
    for _ in range(rounds):
        if all(ref() is None for ref in refs):
            break
        gc.collect()
        app.reaper.run(budget=1.0)
        await pilot.pause()
    return [ref() for ref in refs if ref() is not None]


class Node:
    """A widget-like knot: parent and children, and a style that points back."""

    def __init__(self, parent: Node | None = None) -> None:
        self.parent = parent
        self.children: list[Node] = []
        self.style = {"node": self}
        self.later = self.render  # a bound method: another cycle
        if parent is not None:
            parent.children.append(self)

    def render(self) -> str:
        return f"{len(self.children)} children"


class Slotted:
    __slots__ = ("__weakref__", "other")

    def __init__(self, other: object) -> None:
        self.other = other


def tree(width: int = 20) -> Node:
    root = Node()
    for _ in range(width):
        Node(Node(root))
    root.slot = Slotted(root)  # type: ignore[attr-defined]
    cell_owner = root

    def closure() -> Node:
        return cell_owner

    root.closure = closure  # type: ignore[attr-defined]
    return root


def refs_of(root: Node) -> list[weakref.ReferenceType[Any]]:
    out: list[weakref.ReferenceType[Any]] = [weakref.ref(root)]
    todo = [root]
    while todo:
        node = todo.pop()
        out.extend(weakref.ref(child) for child in node.children)
        todo.extend(node.children)
    return out


def test_a_dead_island_of_cycles_is_freed_without_a_collection(no_collection: list[Any]
                                                                ) -> None:
    root = tree()
    gc.freeze()  # alive at a freeze, as a shown block is
    refs = refs_of(root)
    del root
    assert all(ref() is not None for ref in refs)  # cycles: reference counting alone fails
    result = reclaim(refs[:1])
    assert all(ref() is None for ref in refs)
    assert result.freed > len(refs) and not result.declined
    assert no_collection == []


def test_an_island_still_referenced_is_left_intact(no_collection: list[Any]) -> None:
    root = tree()
    kept = root.children[3].children[0]  # say, a callback still holds one leaf
    refs = refs_of(root)
    del root
    result = reclaim(refs[:1])
    assert result.freed == 0 and result.held == 1
    assert all(ref() is not None for ref in refs)
    parent = kept.parent
    assert parent is not None and parent.parent is not None
    assert kept.style["node"] is kept and kept.later() == "0 children"
    assert len(parent.parent.children) == 20 and parent.parent.slot.other is parent.parent
    del kept, parent
    reclaim(refs[:1])  # the last outside reference went: now it is freed
    assert all(ref() is None for ref in refs)


def test_an_island_whose_freeing_would_run_code_is_left_to_the_collector(
        no_collection: list[Any]) -> None:
    ran: list[dict[str, Any]] = []

    class Finalized:
        def __del__(self) -> None:
            ran.append(dict(vars(self)))

    root = tree()
    root.finalized = Finalized()  # type: ignore[attr-defined]
    root.finalized.back = root  # type: ignore[attr-defined]
    ref = weakref.ref(root)
    del root
    result = reclaim([ref])
    assert result.declined.endswith("Finalized defines __del__")
    assert ref() is not None and not ran


def test_weak_references_inside_the_island_go_first(no_collection: list[Any]) -> None:
    """A WeakSet inside the island watches an object of the island: its callback must not
    run on the emptied set (it would raise inside the callback)."""
    errors: list[Any] = []
    old_hook = sys.unraisablehook
    sys.unraisablehook = errors.append
    try:
        root = tree()
        watcher = weakref.WeakSet([root.children[0], root.children[1]])
        root.watcher = watcher  # type: ignore[attr-defined]
        ref = weakref.ref(root)
        del root, watcher
        result = reclaim([ref])
    finally:
        sys.unraisablehook = old_hook
    assert ref() is None and result.freed
    assert errors == []


def test_a_cleared_textual_lru_cache_frees_its_entries_at_once(no_collection: list[Any]
                                                               ) -> None:
    assert lru.install()

    class Line:
        pass

    cache: LRUCache[int, Line] = LRUCache(8)
    lines = [Line() for _ in range(6)]
    for n, line in enumerate(lines):
        cache[n] = line
    cache.get(2)  # relinked to the head
    refs = [weakref.ref(line) for line in lines]
    del lines, line
    cache.clear()
    assert all(ref() is None for ref in refs)
    cache[1] = Line()
    assert cache.get(1) is not None and len(cache) == 1


async def test_pruned_transcript_blocks_are_freed_while_agents_run(
        frozen: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """The shown transcript prunes its oldest blocks; though they were frozen, each of them
    (and every widget inside it) is freed by the reaper."""
    monkeypatch.setattr(Transcript, "TAIL_HIGH", 8)
    monkeypatch.setattr(Transcript, "TAIL_LOW", 4)
    replies = [text(f"Reply {n}\n\n- one item\n- another **item**\n\nA paragraph `{n}`.")
               for n in range(8)]
    ctx, _ = world(replies)
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=(100, 30)) as pilot:
        assert unmounted.install()
        for n in range(2):
            agent.followup(msg(f"go {n}", f"m{n}"))
            await idle(pilot, agent)
        await settle(pilot)
        transcript = app.main.transcript
        first = [transcript.blocks[i] for i in sorted(transcript.blocks)[:4]]
        refs = [weakref.ref(node) for block in first
                for node in block.walk_children(with_self=True)]
        assert len(refs) >= 4
        del first
        gc.collect()  # what the pacing does every half second while agents run: collect
        gc.freeze()  # what is not frozen yet, then freeze what survived
        for n in range(2, 8):
            agent.followup(msg(f"go {n}", f"m{n}"))
            await idle(pilot, agent)
        await settle(pilot)
        assert transcript.first >= 4  # they were pruned
        assert await reap(app, pilot, refs) == []
        assert app.reaper.freed_objects > 0


async def test_a_layout_frozen_before_it_was_collected_does_not_pin_what_it_placed(
        frozen: None) -> None:
    """Each layout leaves a reference cycle behind (Textual's arrange function refers to
    itself) whose closure held the map and the set of every widget placed. Frozen before
    a collection saw it, it kept them all, and a widget removed later was never freed
    while agents ran (`ui/layout_maps.py`); it now keeps only emptied containers."""
    ctx, _ = world()
    app = make_app(ctx)
    async with app.run_test(size=(80, 24)) as pilot:
        assert unmounted.install()
        widget = Static("placed")
        await app.screen.mount(widget)
        await pilot.pause()
        gc.collect()
        enabled = gc.isenabled()
        gc.disable()  # no collection sees the layout's leftovers before the freeze
        try:
            widget.styles.height = 3  # a layout that places it
            await pilot.pause()
            assert widget in app.screen._compositor.widgets
            gc.freeze()  # as the pacing does (its collection did not see them: see above)
        finally:
            if enabled:
                gc.enable()
        ref = weakref.ref(widget)
        await widget.remove()
        del widget
        assert await reap(app, pilot, [ref], rounds=20) == []


async def test_a_removed_widget_a_late_callback_still_uses_is_left_alone_until_it_ran(
        frozen: None) -> None:
    ctx, _ = world()
    app = make_app(ctx)
    async with app.run_test(size=(80, 24)) as pilot:
        widget = Static("late")
        await app.screen.mount(widget)
        gc.collect()
        gc.freeze()
        gate: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        async def late(target: Static) -> tuple[bool, str, Any]:
            await gate  # scheduled before the removal, runs after it
            return target.styles.node is target, str(target.render()), target.parent

        task = asyncio.create_task(late(widget))
        await pilot.pause()
        ref = weakref.ref(widget)
        await widget.remove()
        del widget
        await pilot.pause()
        for _ in range(3):
            app.reaper.run(budget=1.0)
        assert ref() is not None and app.reaper.pending  # held by the task: untouched
        gate.set_result(None)
        assert await task == (True, "late", None)
        del task
        assert await reap(app, pilot, [ref]) == []
