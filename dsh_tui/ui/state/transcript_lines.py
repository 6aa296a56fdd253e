"""The transcript as lines: each item's height at one width, and y → (item, line within it).

The transcript pane draws only the lines on screen (Textual's line API, as `Log` and
`DataTable` do); this is the index it draws from. Heights live in a Fenwick tree, so
an item that changes height, an append and a lookup of the item at line y each cost
O(log n) whatever the session's length. An item's exact height needs its lines rendered,
so items nobody has looked at carry a cheap estimate, refined when they are first drawn
(`settle` keeps what is on screen still while that happens). Rendered lines are kept
in a small LRU cache keyed by what they depend on (`LineCache`). No Textual here: the
renderer and the estimator are injected.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Generic, TypeVar

from .transcript import Item

L = TypeVar("L")


class HeightIndex:
    """Heights of a sequence of items and their running sums (a Fenwick tree, 1-based)."""

    def __init__(self, heights: Iterable[int] = ()) -> None:
        self._heights: list[int] = []
        self._tree: list[int] = [0]
        self._total = 0
        """Every item's lines, kept as heights change (each drawn row asks for it)."""
        self.reset(heights)

    def reset(self, heights: Iterable[int]) -> None:
        """Replace every height (O(n))."""
        self._heights = list(heights)
        tree = [0, *self._heights]
        size = len(tree)
        for position in range(1, size):
            parent = position + (position & -position)
            if parent < size:
                tree[parent] += tree[position]
        self._tree = tree
        self._total = sum(self._heights)

    def __len__(self) -> int:
        return len(self._heights)

    def height(self, index: int) -> int:
        """The height of item `index`."""
        return self._heights[index]

    def append(self, height: int) -> None:
        """Add an item at the end."""
        self._heights.append(height)
        position = len(self._heights)
        below = position - (position & -position)
        self._tree.append(height + self.start(position - 1) - self.start(below))
        self._total += height

    def set(self, index: int, height: int) -> int:
        """Change the height of item `index`; returns the change."""
        delta = height - self._heights[index]
        if delta:
            self._heights[index] = height
            self._total += delta
            tree = self._tree
            position = index + 1
            size = len(tree)
            while position < size:
                tree[position] += delta
                position += position & -position
        return delta

    def start(self, index: int) -> int:
        """The first line of item `index` (the lines of every item before it)."""
        total = 0
        tree = self._tree
        position = index
        while position > 0:
            total += tree[position]
            position -= position & -position
        return total

    @property
    def total(self) -> int:
        """Every item's lines."""
        return self._total

    def locate(self, y: int) -> tuple[int, int]:
        """(item, line within it) of line `y`, clamped into the lines there are; items of
        height 0 are never found. (-1, 0) when there are no lines at all."""
        count = len(self._heights)
        if count == 0:
            return -1, 0
        total = self.total
        if total <= 0:
            return -1, 0
        y = max(0, min(y, total - 1))
        position = 0
        step = 1 << count.bit_length()
        tree = self._tree
        rest = y
        while step:
            ahead = position + step
            if ahead <= count and tree[ahead] <= rest:
                position = ahead
                rest -= tree[ahead]
            step >>= 1
        return position, rest


class LineCache(Generic[L]):
    """Rendered lines of items, one entry per item, the least recently used dropped first
    once more than `max_lines` lines are held. An entry is valid for one key (the item's
    version, the width, the look): a newer key replaces it."""

    def __init__(self, max_lines: int = 4_000) -> None:
        self.max_lines = max_lines
        self._entries: OrderedDict[int, tuple[Hashable, list[L]]] = OrderedDict()
        self._held = 0

    def get(self, index: int, key: Hashable) -> list[L] | None:
        """The lines cached for item `index` under `key`, else None."""
        entry = self._entries.get(index)
        if entry is None or entry[0] != key:
            return None
        self._entries.move_to_end(index)
        return entry[1]

    def put(self, index: int, key: Hashable, lines: list[L]) -> None:
        """Keep `lines` for item `index` under `key` (replacing what it had)."""
        old = self._entries.pop(index, None)
        if old is not None:
            self._held -= len(old[1])
        self._entries[index] = (key, lines)
        self._held += len(lines)
        while self._held > self.max_lines and len(self._entries) > 1:
            _, (_, dropped) = self._entries.popitem(last=False)
            self._held -= len(dropped)

    def peek(self, index: int) -> list[L] | None:
        """Item `index`'s lines as cached, whatever their key, without touching the order."""
        entry = self._entries.get(index)
        return entry[1] if entry is not None else None

    def discard(self, index: int) -> None:
        """Forget item `index`'s lines."""
        old = self._entries.pop(index, None)
        if old is not None:
            self._held -= len(old[1])

    def clear(self) -> None:
        """Forget every line (another agent shown, another theme)."""
        self._entries.clear()
        self._held = 0

    @property
    def held(self) -> int:
        """Lines held now."""
        return self._held

    def __len__(self) -> int:
        return len(self._entries)


Render = Callable[[Item, int], list[L]]
"""(item, width) → its lines, spacing above it included."""
Estimate = Callable[[Item, int], int]
"""(item, width) → about how many lines it renders to, cheaply (no rendering)."""
LookOf = Callable[[Item], Hashable]
"""item → what its lines depend on besides its version and the width (toggles, search,
theme): part of the cache key."""


class TranscriptLines(Generic[L]):
    """The line index of one transcript: heights (exact once rendered, else estimated),
    y → (item, line), and the lines themselves through a bounded cache."""

    def __init__(self, render: Render[L], estimate: Estimate, look: LookOf,
                 max_lines: int = 4_000) -> None:
        self._render = render
        self._estimate = estimate
        self._look = look
        self.cache: LineCache[L] = LineCache(max_lines)
        self.index = HeightIndex()
        self.items: Sequence[Item] = ()
        self.width = 0
        self._exact: list[Hashable | None] = []
        """Per item, the key its height was measured under (None: an estimate)."""
        self.measured = 0
        """Items rendered to learn their height (tests and benchmarks read it)."""

    def reset(self, items: Sequence[Item], width: int) -> None:
        """Index `items` at `width` from estimates (another agent, a new width)."""
        self.items = items
        self.width = width
        self.cache.clear()
        estimate = self._estimate
        self.index.reset(estimate(item, width) if width > 0 else 0 for item in items)
        self._exact = [None] * len(items)

    def sync(self, items: Sequence[Item], changed: Iterable[int]) -> None:
        """Take items appended since the last sync and items that changed: a changed item
        keeps its place, its height becomes an estimate until it is drawn again; every
        other item keeps its height (appends never re-measure the rest)."""
        self.items = items
        width = self.width
        index = self.index
        known = len(index)
        for position in changed:
            if position < known:
                self._exact[position] = None
                index.set(position, self._estimate(items[position], width) if width else 0)
        for item in items[known:]:
            index.append(self._estimate(item, width) if width else 0)
            self._exact.append(None)

    def restyle(self, which: Callable[[Item], bool]) -> None:
        """Items whose look changed (a toggle): their heights become estimates again."""
        width = self.width
        for position, item in enumerate(self.items[:len(self.index)]):
            if which(item):
                self._exact[position] = None
                self.index.set(position, self._estimate(item, width) if width else 0)

    def key(self, position: int) -> Hashable:
        """What item `position`'s lines depend on: its version, the width, its look."""
        item = self.items[position]
        return (item.version, self.width, self._look(item))

    def is_exact(self, position: int) -> bool:
        """Whether item `position`'s height is its rendered one under its current key."""
        return self._exact[position] == self.key(position)

    def lines(self, position: int) -> list[L]:
        """Item `position`'s lines (from the cache, else rendered, and its height made
        exact)."""
        key = self.key(position)
        cached = self.cache.get(position, key)
        if cached is not None:
            if self._exact[position] != key:  # (re-estimated, yet its lines are the same)
                self._exact[position] = key
                self.index.set(position, len(cached))
            return cached
        lines = self._render(self.items[position], self.width)
        self.measured += 1
        self.cache.put(position, key, lines)
        self._exact[position] = key
        self.index.set(position, len(lines))
        return lines

    def measure(self, position: int) -> int:
        """Make item `position`'s height exact; returns the change."""
        before = self.index.height(position)
        if not self.is_exact(position):
            self.lines(position)
        return self.index.height(position) - before

    @property
    def total(self) -> int:
        """Lines of the whole transcript (estimates included)."""
        return self.index.total

    def locate(self, y: int) -> tuple[int, int]:
        """(item, line within it) of line `y` (see `HeightIndex.locate`)."""
        return self.index.locate(y)

    def start(self, position: int) -> int:
        """The first line of item `position`."""
        return self.index.start(position)

    def settle(self, top: int, rows: int) -> int:
        """Make every item that shows a line in [top, top + rows) exact, and return the top
        that keeps the view still: the first item there that was already exact stays on the
        same screen row, whatever the items above it turned out to measure. Items above the
        view keep their estimates; bounded rounds, as each refinement can bring new items
        into view."""
        count = len(self.index)
        if not count or rows <= 0:
            return top
        for _ in range(8):
            first, line = self.locate(top)
            if first < 0:
                return 0
            anchor = self._anchor(first, top - line, top, rows)
            position, y = first, top - line
            changed = False
            while position < count and y < top + rows:
                if not self.is_exact(position):
                    self.measure(position)
                    changed = True
                y += self.index.height(position)
                position += 1
            if not changed or anchor is None:
                return top
            moved = max(0, self.start(anchor[0]) - anchor[1])
            if moved == top:
                return top
            top = moved
        return top

    def _anchor(self, position: int, y: int, top: int, rows: int) -> tuple[int, int] | None:
        """(item, screen row) of the first item in view whose height is exact."""
        while position < len(self.index) and y < top + rows:
            if self.is_exact(position):
                return position, y - top
            y += self.index.height(position)
            position += 1
        return None

    def measure_all(self) -> int:
        """Make every height exact (a short transcript: cheap, and its scrollbar exact);
        returns how many items were rendered for it."""
        rendered = 0
        for position in range(len(self.index)):
            if not self.is_exact(position):
                self.lines(position)
                rendered += 1
        return rendered

    def settle_tail(self, rows: int) -> None:
        """Make the last items exact, from the end up, until they fill `rows` lines (the
        view that follows the tail)."""
        filled = 0
        position = len(self.index) - 1
        while position >= 0 and filled < rows:
            self.measure(position)
            filled += self.index.height(position)
            position -= 1
