"""Huge input: a 5 MB chunk and a 1 MB line into the running app, while others stream.

Issue 11: a model (or a tool) that sends one enormous delta must not freeze the
screen: keys and the other agents go on. The world is the real one (`build_context`
with `JsonlPersistence` in a temporary directory, the real `DshApp` under
`run_test(size=(160, 50))`). The selected agent receives one reply made of a single
text delta of the given size; four other agents stream paced prose at 250 chunks/s
each meanwhile (the provider of `bench_stream`). A probe task sleeps 10 ms at a time
and records how late it wakes: the longest lateness is the longest time the event loop
was busy with one thing (a parse, a render, a write).

Figures (each the worst of its runs):
- `huge.chunk_5mb_max_lag_ms`: a 5 MB delta (prose, lines of about 80 characters);
- `huge.line_1mb_max_lag_ms`: a 1 MB delta with no line break at all;
- `huge.chunk_5mb_longest_callback_cpu_ms` and `huge.line_1mb_longest_callback_cpu_ms`:
  the longest single event-loop callback (a frame, a flush, a write) in the window, in
  CPU time of the loop's thread. Wall lateness also counts the other processes of a
  loaded machine and callbacks that ran back to back; this says what one piece of work
  of ours cost, which is what the bar is about;
- `huge.others_chunks_per_s`: text deltas the four other agents got into their logs
  per second over the 5 MB window (offered: 1,000/s).

Baseline, in the same process and run: the same window with a 5 KB delta instead
(everything else equal), so the ratio says what the size alone costs.
"""

from __future__ import annotations

import asyncio
import asyncio.events
import gc
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench_stream import PacedModel, _count_logged_deltas, _lag_probe
from dsh_tui.compose import build_context
from dsh_tui.harness import AgentOptions, CreateAgentOptions, user_message
from dsh_tui.harness.persistence import JsonlPersistence
from dsh_tui.ui.app import DshApp

if TYPE_CHECKING:
    from benchmarks.figures import Bar, Figure, Figures

SIZE = (160, 50)
OTHERS = 4
LINE = ("Huge input must not freeze the screen: the other agents keep streaming while this "
        "one lands.\n")

BARS: dict[str, Bar] = {
    "huge.chunk_5mb_max_lag_ms": {"on": "value", "op": "<=", "limit": 100},
    "huge.line_1mb_max_lag_ms": {"on": "value", "op": "<=", "limit": 100},
    "huge.others_chunks_per_s": {"on": "value", "op": ">=", "limit": 900},
    "huge.chunk_5mb_longest_callback_cpu_ms": {"on": "value", "op": "<=", "limit": 100},
    "huge.line_1mb_longest_callback_cpu_ms": {"on": "value", "op": "<=", "limit": 100},
}
UNITS = {"huge.chunk_5mb_max_lag_ms": "ms", "huge.line_1mb_max_lag_ms": "ms",
         "huge.others_chunks_per_s": "chunks/s", "huge.chunk_5mb_longest_callback_cpu_ms": "ms",
         "huge.line_1mb_longest_callback_cpu_ms": "ms"}


class CallbackClock:
    """While on, the loop thread's CPU time of every event-loop callback; keeps the longest.

    It wraps `asyncio.events.Handle._run`, the one place every callback and task step of
    the loop goes through (a benchmark-only hook; the app never does this)."""

    def __init__(self) -> None:
        self.on = False
        self.longest = 0.0
        self._original: Any = None

    def __enter__(self) -> CallbackClock:
        original = self._original = asyncio.events.Handle._run
        clock = time.thread_time

        def timed(handle: asyncio.events.Handle) -> None:
            if not self.on:
                original(handle)
                return
            before = clock()
            original(handle)
            self.longest = max(self.longest, clock() - before)

        asyncio.events.Handle._run = timed  # type: ignore[method-assign, assignment]
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.events.Handle._run = self._original  # type: ignore[method-assign]


def payload(kind: str) -> str:
    if kind == "line":
        return ("0123456789abcdef" * (1_048_576 // 16))[:1_048_576]
    size = 5 * 1_048_576 if kind == "chunk" else 5 * 1024
    return (LINE * (size // len(LINE) + 1))[:size]


class OneShotModel:
    """One reply: a single text delta of the given text, then the finish."""

    name = "oneshot"

    def __init__(self) -> None:
        self.text = ""
        self.sent = asyncio.Event()

    def context_window(self, model: str) -> int | None:
        return None

    async def stream(self, request: Any) -> AsyncIterator[dict[str, Any]]:
        yield {"type": "block-start", "index": 0, "blockType": "text"}
        yield {"type": "text-delta", "index": 0, "text": self.text}
        self.sent.set()
        yield {"type": "block-end", "index": 0, "block": {"type": "text", "text": self.text}}
        yield {"type": "usage", "usage": {"inputTokens": 10, "outputTokens": 1}}
        yield {"type": "finish", "reason": {"kind": "stop"}}


async def _window(kind: str, duration: float) -> tuple[float, float, float]:
    """(max lag in seconds, other agents' logged deltas per second, longest callback in
    CPU seconds) for one window."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        paced, oneshot = PacedModel(), OneShotModel()
        oneshot.text = payload(kind)
        ctx = build_context(providers={"paced": paced, "oneshot": oneshot},
                            persistence=JsonlPersistence(root), tools=[], retry=False,
                            system_prompt=None)
        big = await ctx.agents.create(CreateAgentOptions(
            session_id="huge", agent_options=AgentOptions(provider="oneshot", model="m")))
        others = [await ctx.agents.create(CreateAgentOptions(
            session_id=f"other-{n}", agent_options=AgentOptions(provider="paced", model="m")))
            for n in range(OTHERS)]
        app = DshApp(ctx)
        samples: list[float] = []
        callbacks = CallbackClock()
        try:
            with callbacks:
                async with app.run_test(size=SIZE) as pilot:
                    app.main.select_agent(big.agent.id)
                    await pilot.pause()
                    paced.start = time.perf_counter() + 0.1
                    paced.end = paced.start + duration
                    for handle in others:
                        handle.agent.followup(user_message("stream, please"))
                    stop = asyncio.Event()
                    probe = asyncio.create_task(_lag_probe(samples, stop))
                    callbacks.on = True
                    await asyncio.sleep(0.3)
                    big.agent.followup(user_message("the huge one, please"))
                    await asyncio.sleep(max(0.0, paced.end - time.perf_counter()))
                    await asyncio.wait_for(big.agent.when_idle(), 60)
                    await pilot.pause(0.3)  # the flush and render after the turn
                    callbacks.on = False
                    stop.set()
                    await probe
                    for handle in others:
                        await asyncio.wait_for(handle.agent.when_idle(), 30)
        finally:
            for handle in [*others, big]:
                await handle.dispose()
            await ctx.scope.dispose()
        logged = _count_logged_deltas(root) - (1 if kind else 0)
    return max(samples, default=0.0), logged / duration, callbacks.longest


def _figure(name: str, value: float, baseline: float) -> Figure:
    bar = BARS[name]
    ok = value >= bar["limit"] if bar["op"] == ">=" else value <= bar["limit"]
    return {"value": round(value, 1), "unit": UNITS[name], "baseline": round(baseline, 1),
            "ratio": round(value / baseline, 3) if baseline else None, "bar": bar, "ok": ok}


def run(quick: bool = False) -> Figures:
    """Quick: one 2 s window each. Full: the worst of three 3 s windows each."""
    repeats, duration = (1, 2.0) if quick else (3, 3.0)
    asyncio.run(_window("small", 0.5))  # warm-up: imports, CSS, first-mount caches
    results: dict[str, list[tuple[float, float, float]]] = {"small": [], "chunk": [], "line": []}
    for _ in range(repeats):
        for kind in results:
            gc.collect()
            results[kind].append(asyncio.run(_window(kind, duration)))

    def worst(kind: str, column: int) -> float:
        return max(row[column] for row in results[kind]) * 1000

    base_rate = min(row[1] for row in results["small"])
    return {
        "huge.chunk_5mb_max_lag_ms": _figure("huge.chunk_5mb_max_lag_ms", worst("chunk", 0),
                                             worst("small", 0)),
        "huge.line_1mb_max_lag_ms": _figure("huge.line_1mb_max_lag_ms", worst("line", 0),
                                            worst("small", 0)),
        "huge.chunk_5mb_longest_callback_cpu_ms": _figure(
            "huge.chunk_5mb_longest_callback_cpu_ms", worst("chunk", 2), worst("small", 2)),
        "huge.line_1mb_longest_callback_cpu_ms": _figure(
            "huge.line_1mb_longest_callback_cpu_ms", worst("line", 2), worst("small", 2)),
        "huge.others_chunks_per_s": _figure("huge.others_chunks_per_s",
                                            min(row[1] for row in results["chunk"]), base_rate),
    }


if __name__ == "__main__":
    for figure_name, figure in run(quick="--quick" in sys.argv).items():
        print(figure_name, figure)
