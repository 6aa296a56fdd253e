"""RowLines: rows measured from the first only as far as asked, measures kept by key."""

from __future__ import annotations

from dsh_tui.ui.state.row_lines import RowLines


def test_rows_are_measured_only_as_far_as_the_lines_asked_for() -> None:
    heights = {"a": 3, "b": 1, "c": 4, "d": 2}
    asked: list[int] = []
    keys = list(heights)

    def measure(index: int) -> int:
        asked.append(index)
        return heights[keys[index]]

    lines = RowLines()
    lines.reset(keys, [1, 1, 2, 1], width=30)
    assert lines.total == 5 and lines.measured == 0  # the fewest lines until measured
    lines.measure_lines(4, measure)  # a, b and c's fewest lines cover 4: d is not measured
    assert asked == [0, 1, 2] and lines.starts == [0, 3, 4, 8, 9]
    assert lines.covers(8) and not lines.covers(9)
    lines.measure_lines(100, measure)
    assert lines.total == 10 and lines.covers(100)
    assert [lines.row_at(line) for line in (0, 2, 3, 4, 7, 8, 9, 10)] == \
        [0, 0, 1, 2, 2, 3, 3, None]
    asked.clear()
    lines.reset(["d", "a"], [1, 1], width=30)  # listed again: the kept measures
    assert lines.starts == [0, 2, 5] and lines.total == 5
    lines.measure_lines(100, measure)
    assert asked == []
    lines.reset(["d", "a"], [1, 1], width=10)  # another width: measured anew when asked
    assert lines.total == 2
    lines.measure_to(1, measure)
    assert asked == [0] and lines.measured == 1
