"""Timeline: opening the inbox timeline of an agent with 10,000 inbox operations.

The world: one agent whose log holds 10,000 inbox operations a person made (the mix of
queueing, editing, moving and removing `fold.py`-style steering produces: 40% appends,
20% edits, 20% moves, 20% removals, ~2,000 items left pending), plus a small agent
selected first. The real `DshApp` runs headless at 160x50.

Figures (medians of several openings, the baseline measured in the same run):
- `timeline.first_screen_ms`: from selecting the agent and pressing f5 (nothing of its
  log read yet: the app reads it a slice per flush) until the timeline screen has drawn
  its first lines. Baseline: opening the event log (f2) on the same agent, until its
  lines are laid out (drawn in the next frame). Bar: ratio <= 3.
- `timeline.complete_ms`: the same opening, until the whole log is read and the screen
  shows its last entry (the reading never holds a frame: it is done a slice per flush).
  Baseline: the event log again. Bar: value <= 3,000 ms.
- `timeline.reopen_ms`: f5 again on an agent whose log is read (the inbox keeps the
  reading current), until its lines are drawn. Baseline: the event log. Bar: ratio <= 3.

Run alone: `python benchmarks/bench_timeline.py [--quick]`.
"""

from __future__ import annotations

import asyncio
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dsh_tui.compose import build_context
from dsh_tui.harness import AgentOptions, CreateAgentOptions, user_message
from dsh_tui.llm.scripted import ScriptedModel
from dsh_tui.ui.app import DshApp
from dsh_tui.ui.screens.timeline import TimelineScreen

if TYPE_CHECKING:
    from benchmarks.figures import Bar, Figure, Figures

OPERATIONS = 10_000
SIZE = (160, 50)
BIG_ID = "steered"
SMALL_ID = "small"
RATIO_BAR: Bar = {"on": "ratio", "op": "<=", "limit": 3}
COMPLETE_BAR: Bar = {"on": "value", "op": "<=", "limit": 3000}
TIMEOUT = 60.0


def steer(inbox: Any, operations: int, seed: int = 3) -> None:
    """`operations` inbox operations on `inbox`, as a person's steering makes them."""
    rng = random.Random(seed)
    for index in range(operations):
        roll = rng.random()
        items = inbox.next_turn
        if roll < 0.4 or len(items) < 5:
            inbox.append("next-turn", user_message(f"follow-up {index}: check part "
                                                   f"{index % 97}", id=f"m{index:05d}"))
            continue
        item = items[rng.randrange(len(items))]
        if roll < 0.6:
            inbox.replace(item.id, item.with_text(item.text + " (edited)"))
        elif roll < 0.8:
            inbox.move(item.id, "next-turn", rng.randrange(len(items)))
        else:
            inbox.remove(item.id)


async def build_world(operations: int) -> tuple[Any, list[Any]]:
    ctx = build_context(providers={"scripted": ScriptedModel()}, tools=[], retry=False,
                        system_prompt=None)
    route = AgentOptions(provider="scripted", model="scripted")
    handles = [await ctx.agents.create(CreateAgentOptions(session_id=name, agent_options=route))
               for name in (SMALL_ID, BIG_ID)]
    big = ctx.agents.get(BIG_ID)
    assert big is not None
    steer(big.inbox, operations)
    return ctx, handles


async def _until(done: Callable[[], bool]) -> float:
    """Poll (letting the app run) until `done()`; seconds it took."""
    start = time.perf_counter()
    while not done():
        if time.perf_counter() - start > TIMEOUT:
            raise TimeoutError("the screen never showed")
        await asyncio.sleep(0.001)
    return time.perf_counter() - start


def _timeline(app: DshApp) -> TimelineScreen | None:
    """The timeline screen once it is on top and composed."""
    screen = app.screen
    if not isinstance(screen, TimelineScreen) or not screen.query("#timeline-lines"):
        return None
    return screen


async def _open_timeline(app: DshApp, pilot: Any) -> tuple[float, float]:
    """(seconds to the first lines, seconds to the whole log shown) of one opening."""
    start = time.perf_counter()
    app.main.select_agent(BIG_ID)
    app.main.action_timeline()  # f5 (a press would wait for the app to go idle)

    def drawn() -> bool:
        screen = _timeline(app)
        return screen is not None and screen.lines.lines_drawn > 0 and len(screen.timeline) > 0

    await _until(drawn)
    first = time.perf_counter() - start
    view = app.bridge.views[BIG_ID]

    def complete() -> bool:
        screen = _timeline(app)
        return screen is not None and view.reading_ready and \
            screen.timeline is view.timeline and \
            screen.lines.cursor == len(view.timeline) - 1 and screen.lines.lines_drawn > 0

    await _until(complete)
    await pilot.pause()
    whole = time.perf_counter() - start
    app.screen.dismiss(None)
    await _until(lambda: _timeline(app) is None)
    return first, whole


async def _reopen(app: DshApp, pilot: Any) -> float:
    start = time.perf_counter()
    app.main.action_timeline()

    def drawn() -> bool:
        screen = _timeline(app)
        return screen is not None and screen.lines.lines_drawn > 0

    await _until(drawn)
    seconds = time.perf_counter() - start
    app.screen.dismiss(None)
    await _until(lambda: _timeline(app) is None)
    return seconds


async def _event_log(app: DshApp, pilot: Any) -> float:
    """Seconds from f2 on the selected agent until the event log has drawn its lines."""
    log = app.main.event_log
    start = time.perf_counter()
    app.main.action_toggle_event_log()  # f2
    lines = log.log_widget
    await _until(lambda: bool(log.shown and lines.line_count and lines.region.height))
    seconds = time.perf_counter() - start  # laid out with its lines: the next frame draws
    # them (the timeline is timed until its lines are drawn, a frame later still)
    app.main.action_toggle_event_log()
    await _until(lambda: not log.shown)
    await app.workers.wait_for_complete()
    return seconds


def _forget(app: DshApp, agent_id: str) -> None:
    """Make the next opening cold again: a fresh view of the same agent (as after a
    restart), whose log nothing has read."""
    from dsh_tui.ui.state.agent_view import AgentView

    bridge = app.bridge
    old = bridge.views[agent_id]
    view = AgentView(old.agent)
    view.catch_up()
    bridge.views[agent_id] = view


async def measure(repeat: int, operations: int = OPERATIONS) -> dict[str, list[float]]:
    ctx, handles = await build_world(operations)
    app = DshApp(ctx)
    times: dict[str, list[float]] = {"first": [], "whole": [], "reopen": [], "log": []}
    try:
        async with app.run_test(size=SIZE) as pilot:
            for _ in range(3):
                app.bridge.flush()
                await pilot.pause()
            for _ in range(repeat):
                app.main.select_agent(SMALL_ID)
                _forget(app, BIG_ID)
                await pilot.pause()
                first, whole = await _open_timeline(app, pilot)
                times["first"].append(first)
                times["whole"].append(whole)
                times["reopen"].append(await _reopen(app, pilot))
                times["log"].append(await _event_log(app, pilot))
    finally:
        for handle in reversed(handles):
            await handle.dispose()
        await ctx.scope.dispose()
    return times


def _figure(values: list[float], base: list[float], bar: Bar) -> Figure:
    value = statistics.median(values) * 1000
    baseline = statistics.median(base) * 1000
    ratio = value / baseline if baseline else None
    judged = ratio if bar["on"] == "ratio" else value
    return {"value": round(value, 1), "unit": "ms", "baseline": round(baseline, 1),
            "ratio": round(ratio, 2) if ratio is not None else None, "bar": bar,
            "ok": judged is not None and judged <= bar["limit"]}


def run(quick: bool = False) -> Figures:
    times = asyncio.run(measure(2 if quick else 5))
    return {
        "timeline.first_screen_ms": _figure(times["first"], times["log"], RATIO_BAR),
        "timeline.complete_ms": _figure(times["whole"], times["log"], COMPLETE_BAR),
        "timeline.reopen_ms": _figure(times["reopen"], times["log"], RATIO_BAR),
    }


if __name__ == "__main__":
    for figure_name, figure in run(quick="--quick" in sys.argv).items():
        print(figure_name, figure)
