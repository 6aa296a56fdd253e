"""Issue 28: tree rows that tell what each agent does, within their width; no screen."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from dsh_tui.llm.scripted import text, tool_call
from dsh_tui.ui.state.agent_view import AgentView
from dsh_tui.ui.state.config import parse_config
from dsh_tui.ui.state.cost import NOTHING, Cost, Prices, Tokens, cost_of, format_cost, sum_costs
from dsh_tui.ui.state.session_rows import cells
from dsh_tui.ui.state.tree_rows import (
    DONE,
    FAILED,
    KEPT,
    PAUSED,
    RUNNING,
    RowFacts,
    elapsed,
    format_row,
    roll_up,
    row_facts,
    row_text,
    tokens_text,
)

from .conftest import add_agent, msg, world

NOW = 1_000_000_000.0
BUSY = RowFacts("r3", "researcher 3", RUNNING, turn=2, step=3, tool="read_file",
                since=NOW - 12_000, tokens=Tokens(30_000, 2_000, 2_500),
                cost=Cost(0.0234, "$"), route="local · qwen3-8b", next_step=1)


def shown(row: RowFacts, width: int, **kwargs: Any) -> str:
    segments = format_row(row, width, NOW, **kwargs)
    line = row_text(segments)
    assert cells(line) == width, (line, width)
    return line.rstrip()


def test_a_wide_row_shows_everything_and_narrow_ones_drop_the_least_needed_first() -> None:
    assert shown(BUSY, 80, show_route=True) == (
        "● researcher 3 step 3 · read_file ⚑1" + " " * 14 + "12s 34k $0.02 local · qwen3-8b")
    lines = {width: shown(BUSY, width, show_route=True) for width in (60, 48, 44, 40, 34,
                                                                      30, 26, 16, 10)}
    assert lines[60] == "● researcher 3 step 3 · read_file ⚑1           12s 34k $0.02"
    assert lines[48] == "● researcher 3 step 3 · read_file ⚑1   12s $0.02"
    assert lines[44] == "● researcher 3 s3·read_file ⚑1     12s $0.02"
    assert lines[40] == "● researcher 3 s3·read_file ⚑1       12s"
    assert lines[34] == "● researcher 3 s3·read_file ⚑1"  # work waiting outlasts the time
    assert lines[30] == "● researcher 3 s3·read_file"
    assert lines[26] == "● researcher 3 s3"
    assert lines[16] == "● researcher 3"
    assert lines[10] == "● resear…"
    assert shown(BUSY, 4) == "● r…"
    without_route = shown(BUSY, 80)
    assert "qwen" not in without_route and without_route.endswith("12s 34k $0.02")


def test_each_state_says_itself_and_an_unknown_cost_is_never_shown() -> None:
    rows = {
        PAUSED: "◆ b1 paused",
        FAILED: "✗ bad failed",
        KEPT: "‖ kept kept ↵2",
        DONE: "✓ done done",
    }
    for state, expected in rows.items():
        name = expected.split(" ")[1]
        row = RowFacts(name, name, state, next_turn=2 if state == KEPT else 0,
                       tokens=Tokens(500, 0, 20), cost=None)
        assert shown(row, 40).startswith(expected), (state, shown(row, 40))
        assert "$" not in shown(row, 40) and shown(row, 40).endswith("520")
    spinning = format_row(BUSY, 40, NOW, frame=1)
    assert spinning[0] == ("◓", "glyph-running")
    needing = RowFacts("x", "x", PAUSED, needs=True, marked=True, armed=True)
    assert format_row(needing, 20, NOW)[:2] == [("◆", "needs-paused"), ("✓", "mark")]
    armed = RowFacts("y", "y", DONE, armed=True)
    assert shown(armed, 20) == "✓ y ◆ done"


def test_wide_characters_are_counted_as_the_two_cells_they_take() -> None:
    row = RowFacts("w", "研究员三号研究员三号", RUNNING, step=1, tool="搜索", since=NOW)
    for width in (40, 24, 16, 12, 9):
        shown(row, width)  # exactly `width` cells every time
    assert shown(row, 12).startswith("● 研究员")


def test_a_folded_parent_rolls_up_its_subtree() -> None:
    parent = RowFacts("p", "lead", RUNNING, step=1, since=NOW - 5_000, tokens=Tokens(1_000),
                      cost=Cost(0.01, "$"))
    kids = [RowFacts(f"c{i}", f"researcher {i}", RUNNING if i < 3 else DONE,
                     tokens=Tokens(2_000, 0, 500), cost=Cost(0.02, "$")) for i in range(12)]
    folded = roll_up(parent, kids)
    assert folded.hidden == 12 and folded.busy_below == 3
    assert folded.tokens == Tokens(25_000, 0, 6_000)
    assert folded.cost == Cost(pytest.approx(0.25), "$")
    line = shown(folded, 50)
    assert line.startswith("● lead +12 (3●) step 1 ") and line.endswith(" 5s 31k $0.25")
    unknown = roll_up(parent, [*kids, RowFacts("u", "unpriced", DONE, tokens=Tokens(5),
                                               cost=None)])
    assert unknown.cost is None and "$" not in shown(unknown, 60)


def test_times_and_tokens_stay_short() -> None:
    assert [elapsed(ms) for ms in (0, 9_400, 61_000, 3_600_000, 90_000_000)] == \
        ["0s", "9s", "1m", "1h", "1d"]
    assert [tokens_text(n) for n in (950, 1_234, 34_567, 1_234_567)] == \
        ["950", "1.2k", "34k", "1.2M"]


def test_cost_is_the_sum_over_priced_routes_and_unknown_otherwise() -> None:
    priced = {"ds": Prices(0.27, 1.10, 0.07), "local": Prices(0.0, 0.0),
              "cny": Prices(2.0, 8.0, 0.5, "¥")}
    spent = {"ds": Tokens(1_000_000, 2_000_000, 100_000)}
    cost = cost_of(spent, priced.get)
    assert cost == Cost(pytest.approx(0.27 + 0.14 + 0.11), "$")
    assert format_cost(Cost(0.52, "$")) == "$0.52"
    assert cost_of({"ds": Tokens(10), "nowhere": Tokens(10)}, priced.get) is None
    assert cost_of({"local": Tokens(0, 50, 0)}, priced.get) is None  # cache reads, no price
    assert cost_of({"ds": Tokens(10), "cny": Tokens(10)}, priced.get) is None  # two currencies
    assert cost_of({"nowhere": Tokens()}, priced.get) == NOTHING  # nothing spent, nothing owed
    assert sum_costs([NOTHING, Cost(1.0, "¥"), NOTHING]) == Cost(1.0, "¥")
    assert sum_costs([Cost(1.0, "¥"), Cost(1.0, "$")]) is None
    assert [format_cost(Cost(a)) for a in (0, 0.004, 1.5, 12.34, 1234.5)] == \
        ["$0", "<$0.01", "$1.50", "$12.3", "$1,234"]


def test_route_prices_come_from_the_config_file() -> None:
    config = parse_config(
        '[routes.ds]\nprovider = "deepseek"\nprice_input = 0.27\nprice_cached = 0.07\n'
        'price_output = 1.10\n\n[routes.local]\nbase_url = "http://127.0.0.1:8080/v1"\n'
        'model = "q"\nprice_input = 0\nprice_output = 0\nprice_currency = "€"\n',
        Path("config.toml"))
    assert config.routes["ds"].prices == Prices(0.27, 1.10, 0.07, "$")
    assert config.routes["local"].prices == Prices(0.0, 0.0, None, "€")
    assert "per M tokens: in $0.27 cached $0.07 out $1.1" in config.routes["ds"].describe()
    bare = parse_config('[routes.x]\nbase_url = "http://h/v1"\nmodel = "m"\n', Path("c"))
    assert bare.routes["x"].prices is None


async def test_a_real_agents_row_names_its_step_tool_tokens_and_cost() -> None:
    seen: dict[str, Any] = {}
    gate = asyncio.Event()

    async def read_file(call: Any) -> str:
        seen["row"] = row_of()
        await gate.wait()
        return "contents"

    from dsh_tui.loop import Tool

    ctx, _model = world([tool_call("c1", "read_file", {"path": "x"}), text("read it")],
                        tools=[Tool("read_file", "read", {"type": "object"}, read_file)])
    agent = await add_agent(ctx, "a", "reader")
    view = AgentView(agent, now_ms=0)
    prices = {"mock": Prices(1.0, 2.0)}

    def row_of() -> RowFacts:
        view.catch_up()
        return row_facts(view, prices.get)

    agent.followup(msg("read x", "m1", "follow-up"))
    await asyncio.wait_for(_until(lambda: "row" in seen), 5)
    row = seen["row"]
    assert (row.state, row.turn, row.step, row.tool) == (RUNNING, 1, 1, "read_file")
    assert "step 1 · read_file" in shown(row, 60)
    gate.set()
    await asyncio.wait_for(agent.when_idle(), 5)
    row = row_of()
    assert row.state == DONE and row.step == 0 and row.tool == ""
    # two requests, 10 input tokens each (the scripted model's count), output = characters
    assert row.tokens.input == 20 and row.tokens.output > 0
    assert row.cost == Cost((20 * 1.0 + row.tokens.output * 2.0) / 1_000_000, "$")
    assert row_facts(view, {}.get).cost is None


async def _until(predicate: Any) -> None:
    while not predicate():
        await asyncio.sleep(0.001)
