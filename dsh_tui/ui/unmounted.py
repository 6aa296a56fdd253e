"""Removed widgets are freed while agents stream, although the GC pacing froze them.

Why: every Textual widget is a knot of reference cycles (the node and its styles refer
to each other, and so do a container and its children, a widget and its message queue's
waiters, ...). While anything streams, the GC pacing freezes the heap every half
second (`state/gcpacing.py`), so a widget that was alive at a freeze and is removed
later (a transcript block pruned from the shown window, a Markdown list the stream
re-rendered, a closed dialog) stayed in memory until every agent was idle: about 45
bytes of RSS per streamed event in the soak benchmark (`benchmarks/bench_soak.py`),
hundreds of MB in a working day. A full collection would free it, but pauses the app
for 330-650 ms at that size.

`install()` makes every widget, once Textual has finished removing it (its message loop
ended, its unmount handlers ran, it is detached from its parent), report itself to the
running app's `Reaper`. The app's tick then runs `state.reclaim` on a few of them at a
time, within a small time budget: what is provably dead (referenced only from its own
island) is emptied and freed by reference counting, frozen or not. A removed widget that
something still refers to (a pending timer or `call_later`, a reference kept by its
owner) is left alone and tried again on later ticks; after `TRIES` ticks it is left to
the collector, as everything was before. Nothing here depends on what kind of widget
was removed.

It wraps one private Textual method, `Widget._message_loop_exit` (the end of a widget's
removal), checked against the Textual release line pinned in pyproject.toml, as the
other patches are; on another Textual nothing is installed and removed widgets wait for
the collector as before.
"""

from __future__ import annotations

import time
import weakref
from typing import Any

from textual.app import App
from textual.css.stylesheet import Stylesheet
from textual.dom import DOMNode
from textual.widget import Widget

from .state.reclaim import Boundary, reclaim
from .textual_line import textual_is

CHECKED_ON = "8.2."
"""The Textual release line whose `Widget._message_loop_exit` this wraps."""
_INSTALLED = "_dsh_reports_removal"


def install() -> bool:
    """Make removed widgets report to their app's `reaper` (idempotent); False if this
    Textual is not the one the wraps were written against."""
    if getattr(Widget, _INSTALLED, False):
        return True
    if not textual_is(CHECKED_ON) or not hasattr(Stylesheet, "_process_component_classes"):
        return False
    try:
        from textual._node_list import NodeList
    except ImportError:
        return False
    if not isinstance(getattr(NodeList(None), "_displayed_nodes", None), tuple):
        return False
    exit_loop = Widget._message_loop_exit
    restyle = Stylesheet._process_component_classes

    async def _message_loop_exit(self: Widget) -> None:
        parent = self._parent
        virtual = _virtual_nodes(self)
        await exit_loop(self)
        if isinstance(parent, Widget):
            _forget_child_lists(parent)
        _report(self, [self, *virtual])

    def _process_component_classes(self: Stylesheet, node: DOMNode) -> None:
        """Textual makes a node (a `DOMNode` of its own) per component class whenever it
        styles a widget that has some, and drops the old ones: each is a cycle too."""
        old = _virtual_nodes(node)
        restyle(self, node)
        for virtual in old:
            _report(node, [virtual])

    Widget._message_loop_exit = _message_loop_exit  # type: ignore[method-assign]
    Stylesheet._process_component_classes = _process_component_classes  # type: ignore[method-assign]
    setattr(Widget, _INSTALLED, True)
    return True


def _forget_child_lists(parent: Widget) -> None:
    """Drop what `parent` cached about its children before one was removed: its cached
    arrangements (of 4 sizes) and its lists of displayed children each still list the
    removed child, until the parent is next arranged (an idle pane: not soon). Textual
    makes them again anyway on the next use: its children changed."""
    parent._clear_arrangement_cache()
    nodes = parent._nodes
    for name in ("_displayed_nodes", "_displayed_visible_nodes"):
        if isinstance(getattr(nodes, name, None), tuple):
            setattr(nodes, name, (-1, []))


def _virtual_nodes(node: DOMNode) -> list[DOMNode]:
    """The nodes Textual made to style `node`'s component classes, which Textual drops
    when it removes `node` (each an island of its own: its parent is a weak reference)."""
    styles = getattr(node, "_component_styles", None)
    if not isinstance(styles, dict):
        return []
    return [virtual for item in styles.values()
            if isinstance(virtual := getattr(item, "node", None), DOMNode)]


def _report(node: DOMNode, removed: list[DOMNode]) -> None:
    try:
        reaper = getattr(node.app, "reaper", None)
    except Exception:  # no active app: nothing to report to
        return
    if isinstance(reaper, Reaper):
        reaper.add(*removed)


def _attached(node: object) -> bool:
    return getattr(node, "_parent", None) is not None


def boundary() -> Boundary:
    """What a search for dead widgets does not enter: the app, and nodes still in the DOM
    (with the event loop, types and modules, always)."""
    return Boundary(always=(App,), checked=(DOMNode,), alive=_attached)


class Reaper:
    """Removed widgets waiting to be freed; `run()` frees those that are dead."""

    BUDGET = 0.003
    """Seconds of one `run()` (it stops after the first search past it)."""
    BACKOFF = 6
    """A removed widget something still refers to is tried again after 1, 2, 4, ...
    runs, this many times in all (about 6 s at the app's 10 runs a second), then left
    to the collector."""
    FRESH_MODULES = 100
    """Runs between two readings of the loaded modules (`Boundary.modules`)."""

    def __init__(self) -> None:
        self._pending: list[tuple[tuple[weakref.ReferenceType[Any], ...], int, int]] = []
        """(removed nodes freed together, tries so far, first run it is due)"""
        self._runs = 0
        self._boundary: Boundary | None = None
        self.reported = 0
        self.freed_objects = 0
        self.freed_nodes = 0
        self.given_up = 0
        self.declined: dict[str, int] = {}
        self.longest = 0.0
        """Seconds of the longest `run()`."""

    def add(self, *nodes: DOMNode) -> None:
        """Nodes Textual removed (with the nodes that only they refer to)."""
        self.reported += 1
        self._pending.append((tuple(weakref.ref(node) for node in nodes), 0, 0))

    @property
    def pending(self) -> int:
        return len(self._pending)

    def run(self, budget: float | None = None) -> int:
        """Free what is dead among the removed nodes, newest first (a removed container
        ends its removal after its children, and freeing it frees them), for about
        `budget` seconds; returns the objects freed."""
        if not self._pending:
            return 0
        self._runs += 1
        budget = self.BUDGET if budget is None else budget
        if self._boundary is None or self._runs % self.FRESH_MODULES == 0:
            self._boundary = boundary()
        start = time.perf_counter()
        freed = 0
        kept: list[tuple[tuple[weakref.ReferenceType[Any], ...], int, int]] = []
        pending, self._pending = self._pending, []
        while pending:
            if time.perf_counter() - start >= budget:
                kept.extend(reversed(pending))
                break
            refs, tries, due = pending.pop()
            refs = tuple(ref for ref in refs if ref() is not None)
            if not refs:
                continue
            if due > self._runs:
                kept.append((refs, tries, due))
                continue
            result = reclaim(refs, boundary=self._boundary)
            freed += result.freed
            if result.declined:
                self.declined[result.declined] = self.declined.get(result.declined, 0) + 1
            if all(ref() is None for ref in refs):
                self.freed_nodes += 1
            elif tries + 1 < self.BACKOFF:
                kept.append((refs, tries + 1, self._runs + (1 << tries)))
            else:
                self.given_up += 1
        kept.reverse()
        self._pending[:0] = kept  # (nodes reported during the run stay newest)
        self.freed_objects += freed
        self.longest = max(self.longest, time.perf_counter() - start)
        return freed
