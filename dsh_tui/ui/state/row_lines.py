"""Where each row of a pane of multi-line rows starts, measured only as it is needed.

A row's height depends on its text and the pane's width, and measuring one costs a text
wrap: rows from the first are measured as they come near the view, the rest count their
fewest lines until then (so 10,000 queued items show at once). Measures are kept by row
key and width, so listing the rows again costs a look-up a row.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Hashable, Sequence
from itertools import accumulate


class RowLines:
    """The rows' heights and first lines; `measured` rows from the first are exact."""

    def __init__(self) -> None:
        self.keys: list[Hashable] = []
        self.heights: list[int] = []
        self.starts: list[int] = [0]
        """The first line of each row, and the line count last."""
        self.measured = 0
        self.width = 0
        """The width the heights were measured at."""
        self._fewest: list[int] = []
        self._measures: dict[tuple[Hashable, int], int] = {}

    @property
    def total(self) -> int:
        """The rows' line count."""
        return self.starts[-1]

    def reset(self, keys: Sequence[Hashable], fewest: Sequence[int], width: int) -> None:
        """New rows (or a new width): each row's height as last measured for its key at
        this width, else its fewest lines; the measured prefix starts again."""
        self.keys, self._fewest, self.width = list(keys), list(fewest), width
        measures = self._measures
        self.heights = [measures.get((key, width)) or least
                        for key, least in zip(self.keys, self._fewest, strict=True)]
        self.measured = 0
        self._restart()

    def _restart(self) -> None:
        self.starts = [0, *accumulate(self.heights)]

    def measure_to(self, end: int, measure: Callable[[int], int]) -> None:
        """Give rows up to `end` (exclusive) their exact heights (`measure(index)` at
        `width`)."""
        end = min(end, len(self.keys))
        if end <= self.measured or self.width <= 0:
            return
        changed = False
        for index in range(self.measured, end):
            key = (self.keys[index], self.width)
            height = self._measures.get(key)
            if height is None:
                height = self._measures[key] = max(measure(index), 1)
            if height != self.heights[index]:
                self.heights[index] = height
                changed = True
        self.measured = end
        if changed:
            self._restart()

    def measure_lines(self, lines: int, measure: Callable[[int], int]) -> None:
        """Measure rows until the measured ones cover `lines` lines (or every row)."""
        while self.measured < len(self.keys) and self.starts[self.measured] < lines \
                and self.width > 0:
            end, covered = self.measured, self.starts[self.measured]
            while end < len(self.keys) and covered < lines:
                covered += self.heights[end]
                end += 1
            self.measure_to(end, measure)

    def covers(self, lines: int) -> bool:
        """Whether the measured rows cover `lines` lines (or are every row)."""
        return self.measured >= len(self.keys) or self.starts[self.measured] >= lines

    def row_at(self, line: int) -> int | None:
        """The row drawn on `line`, or None past the last."""
        index = bisect_right(self.starts, line) - 1
        return index if 0 <= index < len(self.keys) else None

    def prune(self) -> None:
        """Forget the measures of keys no longer listed (when they outnumber the rows)."""
        if len(self._measures) > 2 * len(self.keys) + 16:
            listed = set(self.keys)
            self._measures = {k: v for k, v in self._measures.items() if k[0] in listed}
