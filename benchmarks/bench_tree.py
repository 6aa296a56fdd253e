"""The tree keeps up: a burst of arrow keys in a 20-agent tree while 20 agents stream.

The world is the soak's at a working day's rate (20 agents through `ctx.agents.create`,
`JsonlPersistence` under a temporary directory, every agent 50 chunks/s with a follow-up
whenever its turn ends, the real `DshApp` headless at 160x50). The tree has the focus;
arrow keys are handed to the app's driver (`driver.process_message`, where a terminal's
bytes become key events) all at once, as key repeat or a fast hand delivers them. The
screen has settled when the selected agent is the cursor's, the transcript shows it, and
a frame was sent after that (`App._display`). A transcript load is one `Transcript.show`
of an agent (each was a `selected` workspace record and a load before issue 28: one per
row passed over).

Figures:
- `tree.burst_settle_ms`: from the burst of 30 `down` keys to the settled screen (median
  of the repeats). Baseline: the same for one `down`. Bar <= 150 ms.
- `tree.burst_loads`: transcript loads for the burst (the most of the repeats). Baseline:
  one `down`. Bar <= 1.

Run alone: `python benchmarks/bench_tree.py [--quick]`.
"""

from __future__ import annotations

import asyncio
import gc
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from textual import events

from benchmarks.bench_soak import AGENTS, REAL_RATE, World
from benchmarks.bench_stream import SIZE

if TYPE_CHECKING:
    from benchmarks.figures import Bar, Figures

BURST = 30
TIMEOUT = 10.0
SETTLE_BAR: Bar = {"on": "value", "op": "<=", "limit": 150}
LOADS_BAR: Bar = {"on": "value", "op": "<=", "limit": 1}


class Watch:
    """Counts transcript loads and notes the first frame sent once the screen agrees."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.loads = 0
        self.target: str | None = None
        self.settled = asyncio.Event()
        self.at = 0.0
        main = app.main
        show, display = main.transcript.show, app._display

        def counted_show(view: Any) -> Any:
            if view is not None:
                self.loads += 1
            return show(view)

        def watched_display(screen: Any, renderable: Any) -> None:
            display(screen, renderable)
            if renderable is not None and self.target is not None and self.agrees():
                self.at = time.perf_counter()
                self.target = None
                self.settled.set()

        main.transcript.show = counted_show
        app._display = watched_display

    def agrees(self) -> bool:
        main = self.app.main
        view = main.transcript.view
        return main.selected_id == self.target and view is not None and view.id == self.target


async def _rounds(keys: int, repeats: int) -> list[tuple[float, int]]:
    """(settle seconds, transcript loads) for `repeats` bursts of `keys` arrows."""
    out: list[tuple[float, int]] = []
    with tempfile.TemporaryDirectory() as tmp:
        world = World(tmp, AGENTS, REAL_RATE)
        app = await world.start()
        try:
            async with app.run_test(size=SIZE) as pilot:
                ids = [handle.agent.id for handle in world.handles]
                app.main.select_agent(ids[0], focus_tree=True)
                await pilot.pause()
                drivers = world.drive(time.perf_counter() + 3600)
                await asyncio.sleep(2.0)  # every agent is mid-reply
                watch = Watch(app)
                driver = app._driver
                assert driver is not None
                for n in range(repeats):
                    tree = app.main.agent_tree
                    start_row = 0 if n % 2 == 0 else min(keys, len(tree.lines) - 1)
                    tree.move_cursor_to(tree.lines[start_row].agent_id)
                    app.main.select_agent(tree.cursor_agent_id, focus_tree=True)
                    await asyncio.sleep(0.3)
                    key = "down" if n % 2 == 0 else "up"
                    step = 1 if key == "down" else -1
                    end_row = max(0, min(start_row + step * keys, len(tree.lines) - 1))
                    watch.target = tree.lines[end_row].agent_id
                    watch.settled.clear()
                    watch.loads = 0
                    sent = time.perf_counter()
                    for _ in range(keys):
                        driver.process_message(events.Key(key, None))
                    await asyncio.wait_for(watch.settled.wait(), TIMEOUT)
                    out.append((watch.at - sent, watch.loads))
                for model in world.models.values():
                    model.end = 0.0
                for task in drivers:
                    task.cancel()
                await asyncio.gather(*drivers, return_exceptions=True)
                for handle in world.handles:
                    await asyncio.wait_for(handle.agent.when_idle(), 60)
                await pilot.pause()
        finally:
            await world.close()
    return out


def run(quick: bool = False) -> Figures:
    repeats = 4 if quick else 10
    gc.collect()
    single = asyncio.run(_rounds(1, repeats))
    gc.collect()
    burst = asyncio.run(_rounds(BURST, repeats))
    settle = statistics.median(t for t, _ in burst) * 1000
    settle_one = statistics.median(t for t, _ in single) * 1000
    loads = max(n for _, n in burst)
    loads_one = max(n for _, n in single)
    return {
        "tree.burst_settle_ms": {
            "value": round(settle, 1), "unit": "ms", "baseline": round(settle_one, 1),
            "ratio": round(settle / settle_one, 3) if settle_one else None,
            "bar": SETTLE_BAR, "ok": settle <= SETTLE_BAR["limit"]},
        "tree.burst_loads": {
            "value": loads, "unit": "loads", "baseline": loads_one,
            "ratio": round(loads / loads_one, 3) if loads_one else None,
            "bar": LOADS_BAR, "ok": loads <= LOADS_BAR["limit"]},
    }


if __name__ == "__main__":
    for name, figure in run(quick="--quick" in sys.argv).items():
        print(name, figure)
