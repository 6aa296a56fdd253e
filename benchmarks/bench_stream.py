"""Streaming: 20 agents offered 5,000 chunks/s in total into the running app (headless).

The world is what a user runs: `build_context` with a `JsonlPersistence` under a
temporary directory, 20 agents created through `ctx.agents.create`, and the real
`DshApp` under `run_test(size=(160, 50))` with one agent selected. Each agent's
provider is paced against the wall clock: chunk `i` is due at `start + i / 250`,
the provider sleeps until it is due (a real `await asyncio.sleep`, so every chunk
is a yield), and it stops at the deadline whatever it managed to send. A slow app
therefore shows up as lost throughput (fewer chunks logged) rather than as a
longer run.

Figures (a 10 s window, 3 s with --quick; the full run pools three windows):
- `stream.chunks_per_s`: text deltas that reached the session logs on disk, per
  second of the window (bar >= 4,900 of the 5,000 offered);
- `stream.renders_per_s`: the visible transcript's own `render_count` over the
  window (bar <= 60: updates coalesced, not one render per chunk);
- `stream.p99_lag_ms` / `stream.max_lag_ms`: how late a task that sleeps 10 ms at
  a time wakes up, i.e. how long the event loop was busy (bars <= 33 ms, two frames at
  60 Hz, since issue 26; <= 250 ms).

Baseline, in the same process and run, over a shorter window: the same stream
with the bridge's coalescing interval at 0 (`Bridge.flush_interval`), so every
change is flushed and the visible transcript re-rendered at the next turn of the
event loop: one render per chunk of the visible agent, as long as the loop keeps
up (about 245 renders a second for the 250 chunks/s it is offered). The ratios
say what coalescing buys.
"""

from __future__ import annotations

import asyncio
import gc
import json
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dsh_tui.compose import build_context
from dsh_tui.harness import AgentOptions, CreateAgentOptions, user_message
from dsh_tui.harness.persistence import JsonlPersistence
from dsh_tui.ui.app import DshApp

if TYPE_CHECKING:
    from benchmarks.figures import Bar, Figure, Figures

AGENTS = 20
RATE = 250.0  # chunks/s per agent: 5,000 chunks/s offered in total
LAG_INTERVAL = 0.010
SIZE = (160, 50)

BARS: dict[str, Bar] = {
    "stream.chunks_per_s": {"on": "value", "op": ">=", "limit": 4900},
    "stream.renders_per_s": {"on": "value", "op": "<=", "limit": 60},
    "stream.p99_lag_ms": {"on": "value", "op": "<=", "limit": 33},
    "stream.max_lag_ms": {"on": "value", "op": "<=", "limit": 250},
}
UNITS = {"stream.chunks_per_s": "chunks/s", "stream.renders_per_s": "renders/s",
         "stream.p99_lag_ms": "ms", "stream.max_lag_ms": "ms"}

# LLM-like deltas (about 6 characters each): prose, list items, a heading now and then.
_WORDS = ("The", " design", " keeps", " every", " agent's", " transcript", " in", " a",
          " plain", " model,", " and", " only", " the", " visible", " one", " gets",
          " widgets.", " Streaming", " text", " arrives", " in", " small", " pieces", " of",
          " Markdown", " with", " `code`", " and", " **bold**", " words.")


def delta(i: int) -> str:
    """The `i`-th text delta of a reply: deterministic, paragraphs and lists included."""
    if i % 400 == 399:
        return f"\n\n## Part {i // 400 + 1}\n\n"
    if i % 60 == 59:
        return "\n\n"
    if i % 120 == 30:
        return "\n- item"
    return _WORDS[i % len(_WORDS)]


class PacedModel:
    """A provider that streams one text block at `rate` chunks/s until a wall-clock deadline.

    `start` and `end` are set by the benchmark before the agents are woken, so all
    20 streams share one window. Behind schedule, it sends the overdue chunks with
    a bare yield (`sleep(0)`) between them, as a network stream delivers what
    piled up; at the deadline it stops and finishes the reply.

    With `replies`, each request instead streams the next of those chunk counts,
    paced from the moment it is made (the soak's turns end and start again).
    """

    name = "paced"

    def __init__(self, rate: float = RATE, replies: tuple[int, ...] = ()) -> None:
        self.rate = rate
        self.start = 0.0
        self.end = 0.0
        self.replies = replies
        self.calls = 0

    def context_window(self, model: str) -> int | None:
        return None

    async def stream(self, request: Any) -> AsyncIterator[dict[str, Any]]:
        yield {"type": "block-start", "index": 0, "blockType": "text"}
        parts: list[str] = []
        clock = time.perf_counter
        count = self.replies[self.calls % len(self.replies)] if self.replies else None
        self.calls += 1
        start = self.start if count is None else clock()
        i = 0
        while count is None or i < count:
            due = start + i / self.rate
            if due >= self.end:
                break
            wait = due - clock()
            await asyncio.sleep(wait if wait > 0 else 0)
            if clock() >= self.end:
                break
            text = delta(i)
            parts.append(text)
            yield {"type": "text-delta", "index": 0, "text": text}
            i += 1
        yield {"type": "block-end", "index": 0, "block": {"type": "text", "text": "".join(parts)}}
        yield {"type": "usage", "usage": {"inputTokens": 10, "outputTokens": i}}
        yield {"type": "finish", "reason": {"kind": "stop"}}


async def _lag_probe(samples: list[float], stop: asyncio.Event) -> None:
    """Sleep 10 ms at a time and record how late each wake-up was (seconds)."""
    clock = time.perf_counter
    while not stop.is_set():
        before = clock()
        await asyncio.sleep(LAG_INTERVAL)
        samples.append(clock() - before - LAG_INTERVAL)


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _count_logged_deltas(root: Path) -> int:
    """Text deltas in the JSONL files on disk (what a restart would find)."""
    count = 0
    for path in root.rglob("session.jsonl"):
        with path.open("rb") as handle:
            for line in handle:
                if b'"text-delta"' in line:
                    record = json.loads(line)
                    if record.get("type") == "assistant/chunk":
                        count += 1
    return count


@dataclass
class Window:
    """What one run of `duration` seconds measured."""

    seconds: float
    logged: int  # text deltas found in the JSONL files afterwards
    renders: int  # the visible transcript's render_count over the window
    lags: list[float]  # the probe's lateness samples, seconds


def pooled(windows: list[Window]) -> dict[str, float]:
    """The figures over several windows taken together (rates over the total time, the
    99th percentile and the maximum over every lag sample)."""
    seconds = sum(w.seconds for w in windows)
    lags = [lag for w in windows for lag in w.lags]
    return {"chunks_per_s": sum(w.logged for w in windows) / seconds,
            "renders_per_s": sum(w.renders for w in windows) / seconds,
            "p99_lag_ms": _percentile(lags, 0.99) * 1000,
            "max_lag_ms": max(lags, default=0.0) * 1000,
            "median_lag_ms": statistics.median(lags) * 1000 if lags else 0.0}


async def _one_run(duration: float, agents: int = AGENTS,
                   flush_interval: float | None = None) -> Window:
    """One window of `duration` seconds.

    `flush_interval`: the bridge's coalescing interval for this run (None: the app's
    default, ~60 flushes a second; 0: flush and render at every change).
    """
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        model = PacedModel()
        ctx = build_context(providers={"paced": model}, persistence=JsonlPersistence(root),
                            tools=[], retry=False, system_prompt=None)
        handles = []
        for n in range(agents):
            handles.append(await ctx.agents.create(CreateAgentOptions(
                session_id=f"stream-{n:02d}",
                agent_options=AgentOptions(provider="paced", model="paced"))))
        app = DshApp(ctx)
        if flush_interval is not None:
            app.bridge.flush_interval = flush_interval
        samples: list[float] = []
        try:
            async with app.run_test(size=SIZE) as pilot:
                app.main.select_agent(handles[0].agent.id)
                await pilot.pause()
                model.start = time.perf_counter() + 0.1
                model.end = model.start + duration
                for handle in handles:
                    handle.agent.followup(user_message("stream, please"))
                while time.perf_counter() < model.start:
                    await asyncio.sleep(0.001)
                renders_before = app.main.transcript.render_count
                stop = asyncio.Event()
                probe = asyncio.create_task(_lag_probe(samples, stop))
                await asyncio.sleep(max(0.0, model.end - time.perf_counter()))
                stop.set()
                renders = app.main.transcript.render_count - renders_before
                await probe
                for handle in handles:
                    await asyncio.wait_for(handle.agent.when_idle(), 30)
                await pilot.pause()
        finally:
            for handle in reversed(handles):
                await handle.dispose()
            await ctx.scope.dispose()
        logged = _count_logged_deltas(root)
    return Window(model.end - model.start, logged, renders, samples)


def _figure(name: str, value: float, baseline: float) -> Figure:
    bar = BARS[name]
    ratio = value / baseline if baseline else None
    ok = value >= bar["limit"] if bar["op"] == ">=" else value <= bar["limit"]
    return {"value": round(value, 1), "unit": UNITS[name], "baseline": round(baseline, 1),
            "ratio": round(ratio, 3) if ratio is not None else None, "bar": bar, "ok": ok}


def _runs(count: int, duration: float, flush_interval: float | None = None) -> list[Window]:
    windows = []
    for _ in range(count):
        gc.collect()
        windows.append(asyncio.run(_one_run(duration, flush_interval=flush_interval)))
    return windows


def run(quick: bool = False) -> Figures:
    """Quick: one 3 s window (baseline 1.5 s). Full: three 10 s windows pooled (baseline:
    two 4 s windows), because one window's p99 (its 9th-worst wake-up) moved by
    +-10 ms from run to run on this 2-core machine."""
    asyncio.run(_one_run(0.5, agents=2))  # warm-up: imports, CSS, first-mount caches
    base = pooled(_runs(1 if quick else 2, 1.5 if quick else 4.0, flush_interval=0.0))
    measured = pooled(_runs(1 if quick else 3, 3.0 if quick else 10.0))
    return {f"stream.{key}": _figure(f"stream.{key}", measured[key], base[key])
            for key in ("chunks_per_s", "renders_per_s", "p99_lag_ms", "max_lag_ms")}


if __name__ == "__main__":
    for figure_name, figure in run(quick="--quick" in sys.argv).items():
        print(figure_name, figure)
