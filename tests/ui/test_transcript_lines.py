"""The transcript's line index, without a screen: heights, y → (item, line), what gets
measured when, and the bounded line cache (`ui/state/transcript_lines.py`)."""

from __future__ import annotations

import random

from dsh_tui.ui.state.transcript import Item
from dsh_tui.ui.state.transcript_lines import HeightIndex, LineCache, TranscriptLines


def test_the_index_sums_heights_and_finds_the_item_at_any_line() -> None:
    rng = random.Random(7)
    heights = [rng.choice((0, 1, 2, 5, 40)) for _ in range(500)]
    index = HeightIndex(heights[:200])
    for height in heights[200:]:
        index.append(height)  # an append builds the same tree as a reset
    assert index.total == sum(heights)
    for position in (0, 1, 77, 199, 200, 499, 500):
        assert index.start(position) == sum(heights[:position])
    for y in range(0, sum(heights), 7):
        item, line = index.locate(y)
        assert heights[item] > 0 and 0 <= line < heights[item]  # never an empty item
        assert index.start(item) + line == y
    for _ in range(300):
        position = rng.randrange(len(heights))
        heights[position] = rng.randrange(0, 30)
        assert index.set(position, heights[position]) is not None
    assert index.total == sum(heights)
    rebuilt = HeightIndex(heights)
    assert [index.locate(y) for y in range(0, sum(heights), 13)] == \
        [rebuilt.locate(y) for y in range(0, sum(heights), 13)]
    assert index.locate(-5) == index.locate(0) and index.locate(10**9)[0] == max(
        i for i, h in enumerate(heights) if h)
    assert HeightIndex().locate(0) == (-1, 0)


def test_the_cache_keeps_one_entry_per_item_and_a_bounded_number_of_lines() -> None:
    cache: LineCache[str] = LineCache(max_lines=10)
    cache.put(1, "v1", ["a"] * 4)
    cache.put(1, "v2", ["b"] * 4)  # a newer version replaces the entry
    assert cache.get(1, "v1") is None and cache.get(1, "v2") == ["b"] * 4
    assert cache.held == 4
    cache.put(2, "k", ["c"] * 4)
    cache.get(1, "v2")  # item 1 is now the most recently used
    cache.put(3, "k", ["d"] * 4)
    assert cache.get(2, "k") is None and cache.get(1, "v2") is not None
    assert cache.held <= 10
    cache.put(4, "k", ["e"] * 50)  # alone over the bound: kept, the others go
    assert len(cache) == 1 and cache.get(4, "k") is not None


def items(texts: list[str]) -> list[Item]:
    return [Item("text", index, text=text) for index, text in enumerate(texts)]


class Counting:
    """A renderer of one line per 10 characters (plus one above), and an estimator that
    guesses one line whatever the text: what was measured is told by the heights."""

    def __init__(self) -> None:
        self.rendered: list[int] = []

    def render(self, item: Item, width: int) -> list[str]:
        self.rendered.append(item.index)
        text = item.current_text()
        return [""] + [text[i:i + width] for i in range(0, max(1, len(text)), width)]

    def lines_model(self) -> TranscriptLines[str]:
        return TranscriptLines(self.render, lambda item, width: 2, lambda item: None)


def test_appends_and_streaming_re_measure_only_the_open_item() -> None:
    counting = Counting()
    model = counting.lines_model()
    shown = items(["x" * 25, "y" * 5, "z" * 12])
    model.reset(shown, 10)
    assert model.total == 6 and counting.rendered == []  # estimates: nothing rendered
    model.settle_tail(rows=6)
    assert counting.rendered == [2, 1, 0]  # from the end up until the rows are filled
    assert model.total == 4 + 2 + 3
    counting.rendered.clear()
    streaming = Item("text", 3, text="", streaming=True)
    shown.append(streaming)
    model.sync(shown, changed=[])
    model.measure(3)
    for step in range(5):
        streaming.pending().append("w" * 7)
        streaming.version += 1
        model.sync(shown, changed=[3])
        model.measure(3)
        assert model.index.height(3) == 1 + -(-7 * (step + 1) // 10)
    assert counting.rendered == [3] * 6  # only the open item, once per change
    assert model.total == 9 + 1 + 4


def test_settling_measures_what_shows_and_keeps_the_view_still() -> None:
    counting = Counting()
    model = counting.lines_model()
    shown = items(["a" * 95] * 100)  # 11 lines each once rendered, estimated at 2
    model.reset(shown, 10)
    model.settle_tail(rows=20)
    assert counting.rendered == [99, 98]
    assert model.total == 98 * 2 + 22
    # the person scrolls up until the top row is inside item 97 (estimated): the first item
    # already exact (98) stays on the screen row it was on
    top = model.start(98) - 1
    row_of_98 = model.start(98) - top
    top = model.settle(top, rows=20)
    assert model.is_exact(97) and model.start(98) - top == row_of_98
    # far back, nothing exact on screen: the top line stays where it is
    counting.rendered.clear()
    assert model.settle(20, rows=12) == 20
    first, _ = model.locate(20)
    assert counting.rendered[0] == first and all(model.is_exact(i) for i in counting.rendered)
    assert len(counting.rendered) <= 3  # only what shows; the rest keep their estimates
    assert sum(model.is_exact(i) for i in range(100)) <= 8


def test_a_new_width_or_look_re_renders_and_the_cache_stays_bounded() -> None:
    counting = Counting()
    look = {"v": 0}
    model: TranscriptLines[str] = TranscriptLines(
        counting.render, lambda item, width: 2, lambda item: look["v"], max_lines=50)
    shown = items(["b" * 95] * 40)
    model.reset(shown, 10)
    for position in range(40):
        model.lines(position)
    assert model.cache.held <= 50 and counting.rendered == list(range(40))
    counting.rendered.clear()
    model.lines(39)
    assert counting.rendered == []  # still cached
    look["v"] = 1  # a toggle: every key changes
    model.restyle(lambda item: True)
    assert not model.is_exact(39)
    model.lines(39)
    assert counting.rendered == [39]
    model.reset(shown, 20)  # a new width: estimates again
    assert model.total == 80 and not model.is_exact(39)
    counting.rendered.clear()
    assert model.measure_all() == 40 and model.total == 40 * 6  # (a short transcript)
    assert model.measure_all() == 0 and len(counting.rendered) == 40


def test_items_the_model_appended_since_the_last_sync_wait_for_it() -> None:
    """The model's list grows between syncs (the pane syncs once per flush): settling and
    restyling see only the items indexed so far."""
    counting = Counting()
    model = counting.lines_model()
    shown = items(["a" * 30, "b" * 30])
    model.reset(shown, 10)
    shown.append(Item("text", 2, text="c" * 30))  # appended by the model, not synced yet
    model.settle_tail(rows=50)
    model.restyle(lambda item: True)
    assert model.settle(0, rows=50) == 0
    assert len(model.index) == 2 and 2 not in counting.rendered
    model.sync(shown, changed=[])
    model.settle_tail(rows=50)
    assert 2 in counting.rendered and model.total == 3 * 4
