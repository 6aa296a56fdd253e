"""Keystrokes: while 20 agents stream, does what the person types still appear at once?

The world is the soak's (20 agents through `ctx.agents.create`, `JsonlPersistence`
under a temporary directory, the real `DshApp` headless at 160x50, one agent shown),
streaming at the real rate of a working day: every agent 50 chunks/s, a follow-up
whenever its turn ends (1,000 chunks/s in total; the shown agent among them).

One keystroke is a printable `Key` handed to the app's driver
(`driver.process_message`, which is where a terminal's bytes become key events),
with the composer focused. It has reached the screen when the composer has
rendered a line holding the new character (its `render_line`, which the compositor
calls when it paints) and the app then sent a frame (`App._display`, which a real
terminal driver would write out). The time between the two is the keystroke's
latency. Keys are typed one at a time with a typist's pause between them
(40-90 ms), each a character not yet in the composer.

Figure:
- `keys.p99_ms`: the 99th percentile of keystroke-to-screen latency with the 20
  agents streaming. Baseline: the same measure on the idle app (the same 20 agents,
  none streaming). Bar <= 33 ms (two frames at 60 Hz).

Run alone: `python benchmarks/bench_keys.py [--quick]`.
"""

from __future__ import annotations

import asyncio
import gc
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from textual import events

from benchmarks.bench_soak import AGENTS, REAL_RATE, World
from benchmarks.bench_stream import SIZE, _percentile
from dsh_tui.ui.app import DshApp

if TYPE_CHECKING:
    from benchmarks.figures import Bar, Figures

BAR: Bar = {"on": "value", "op": "<=", "limit": 33}
ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
TIMEOUT = 5.0


class Probe:
    """Watches the composer's painting and the app's frames for one awaited character."""

    def __init__(self, app: DshApp) -> None:
        self.app = app
        self.composer = app.main.composer
        self.want: str | None = None
        self.rendered = False
        self.done = asyncio.Event()
        self.latencies: list[float] = []
        self.sent = 0.0
        render_line = self.composer.render_line
        display = app._display

        def watched_render_line(y: int) -> Any:
            strip = render_line(y)
            if self.want is not None and self.want in strip.text:
                self.rendered = True
            return strip

        def watched_display(screen: Any, renderable: Any) -> None:
            display(screen, renderable)
            if self.rendered and renderable is not None and self.want is not None:
                self.latencies.append(time.perf_counter() - self.sent)
                self.want = None
                self.done.set()

        self.composer.render_line = watched_render_line  # type: ignore[method-assign]
        app._display = watched_display  # type: ignore[method-assign]

    async def type(self, character: str) -> None:
        driver = self.app._driver
        assert driver is not None
        self.want, self.rendered = character, False
        self.done.clear()
        self.sent = time.perf_counter()
        driver.process_message(events.Key(character, character))
        await asyncio.wait_for(self.done.wait(), TIMEOUT)


async def _typing(keys: int, streaming: bool) -> list[float]:
    """Latencies (s) of `keys` keystrokes, with the agents streaming or all idle."""
    rng = random.Random(14)
    with tempfile.TemporaryDirectory() as tmp:
        world = World(tmp, AGENTS, REAL_RATE)
        app = await world.start()
        try:
            async with app.run_test(size=SIZE) as pilot:
                app.main.select_agent(world.handles[0].agent.id)
                await pilot.pause()
                app.main.composer.focus()
                await pilot.pause()
                drivers = world.drive(time.perf_counter() + 3600) if streaming else []
                if streaming:
                    await asyncio.sleep(2.0)  # every agent is mid-reply
                probe = Probe(app)
                for n in range(keys):
                    if n % len(ALPHABET) == 0:
                        app.main.composer.text = ""
                        await pilot.pause()
                    await probe.type(ALPHABET[n % len(ALPHABET)])
                    await asyncio.sleep(rng.uniform(0.04, 0.09))
                for model in world.models.values():
                    model.end = 0.0  # every reply stops at its next chunk
                if drivers:
                    for task in drivers:
                        task.cancel()
                    await asyncio.gather(*drivers, return_exceptions=True)
                for handle in world.handles:
                    await asyncio.wait_for(handle.agent.when_idle(), 60)
                await pilot.pause()
        finally:
            await world.close()
    return probe.latencies


def run(quick: bool = False) -> Figures:
    keys = 40 if quick else 150
    asyncio.run(_typing(5, streaming=False))  # warm-up: imports, CSS, first-mount caches
    gc.collect()
    idle = asyncio.run(_typing(keys, streaming=False))
    gc.collect()
    busy = asyncio.run(_typing(keys, streaming=True))
    value = _percentile(busy, 0.99) * 1000
    baseline = _percentile(idle, 0.99) * 1000
    return {"keys.p99_ms": {
        "value": round(value, 1), "unit": "ms", "baseline": round(baseline, 1),
        "ratio": round(value / baseline, 3) if baseline else None, "bar": BAR,
        "ok": value <= BAR["limit"]}}


if __name__ == "__main__":
    for name, figure in run(quick="--quick" in sys.argv).items():
        print(name, figure)
