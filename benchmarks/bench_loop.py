"""The loop's own overhead: turns/s with a zero-latency model, chunks/s through logging.

Baselines run in the same process: appending the same number of plain event
dicts to a bare Python list. The ratio (value / baseline) says how much of the
bare list's rate the driver (durable records, validation, notifications,
assembly) keeps.

Both sides are timed with the garbage collector paused (collected before). A
list that grows by 300,000 containers triggers full collections whose cost
depends on everything else alive in the process, which made the bare-list rate
swing between 0.2 and 2.4 million/s from one run to the next: that measured the
heap, not the code. The collector's pauses are measured where a person feels
them, in `bench_stream.py`'s event-loop lag, under the app's own GC policy.
"""

from __future__ import annotations

import asyncio
import gc
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dsh_tui.compose import build_context
from dsh_tui.harness import AgentOptions, CreateAgentOptions, user_message
from dsh_tui.llm.scripted import ScriptedModel, text

if TYPE_CHECKING:
    from benchmarks.figures import Figure, Figures


class _FastModel:
    """A zero-latency provider: `chunks` one-word text deltas per reply, no yielding."""

    name = "fast"

    def __init__(self, chunks: int) -> None:
        self.chunks = chunks

    async def stream(self, request: Any) -> Any:
        yield {"type": "block-start", "index": 0, "blockType": "text"}
        for _ in range(self.chunks):
            yield {"type": "text-delta", "index": 0, "text": "word "}
        yield {"type": "block-end", "index": 0,
               "block": {"type": "text", "text": "word " * self.chunks}}
        yield {"type": "usage", "usage": {"inputTokens": 1, "outputTokens": self.chunks}}
        yield {"type": "finish", "reason": {"kind": "stop"}}


async def _agent(provider: Any) -> Any:
    ctx = build_context(providers={"m": provider}, tools=[], retry=False, system_prompt=None)
    handle = await ctx.agents.create(CreateAgentOptions(
        session_id="bench", agent_options=AgentOptions(provider="m", model="m")))
    return handle.agent


class _NoGc:
    """The timed region runs with the collector collected, then paused."""

    def __enter__(self) -> None:
        gc.collect()
        gc.disable()

    def __exit__(self, *exc: object) -> None:
        gc.enable()


async def _turns(count: int) -> tuple[float, int]:
    model = ScriptedModel([text("ok")] * count)
    agent = await _agent(model)
    with _NoGc():
        start = time.perf_counter()
        for index in range(count):
            agent.followup(user_message(f"turn {index}"))
            await agent.when_idle()
        elapsed = time.perf_counter() - start
    return elapsed, len(agent.session.events)


async def _chunks(count: int) -> tuple[float, int]:
    agent = await _agent(_FastModel(count))
    with _NoGc():
        start = time.perf_counter()
        agent.followup(user_message("stream"))
        await agent.when_idle()
        elapsed = time.perf_counter() - start
    return elapsed, len(agent.session.events)


def _baseline(events: int, repeat: int = 3) -> float:
    """Best of `repeat` (it takes milliseconds, so one scheduler hiccup would show)."""
    best = float("inf")
    for _ in range(repeat):
        sink: list[dict[str, Any]] = []
        with _NoGc():
            start = time.perf_counter()
            for seq in range(events):
                sink.append({"type": "assistant/chunk", "seq": seq, "time": 0,
                             "data": {"turn": 1, "step": 1, "chunk": {
                                 "type": "text-delta", "index": 0, "text": "word "}}})
            best = min(best, time.perf_counter() - start)
        del sink
    return best


def _figure(value: float, unit: str, baseline: float, limit: float) -> Figure:
    """A rate against the bare-list rate: `ratio` is value / baseline (higher is better)."""
    ratio = value / baseline if baseline else None
    return {"value": round(value, 1), "unit": unit, "baseline": round(baseline, 1),
            "ratio": round(ratio, 4) if ratio is not None else None,
            "bar": {"on": "ratio", "op": ">=", "limit": limit},
            "ok": ratio is not None and ratio >= limit}


def run(quick: bool = False) -> Figures:
    turns = 200 if quick else 1000
    chunks = 20_000 if quick else 100_000
    turn_time, turn_events = asyncio.run(_turns(turns))
    chunk_time, chunk_events = asyncio.run(_chunks(chunks))
    turns_per_s = turns / turn_time
    chunks_per_s = chunks / chunk_time
    # Baseline: the same number of events appended to a bare list, as units of work per second.
    base_turns_per_s = turns / _baseline(turn_events)
    base_chunks_per_s = chunks / _baseline(chunk_events)
    # Bars: a full turn (a dozen validated durable records, notifications, a model call)
    # at least 1/100 of the rate of appending its events to a list; a logged chunk 1/20.
    return {
        "loop.turns_per_s": _figure(turns_per_s, "turns/s", base_turns_per_s, 0.01),
        "loop.chunks_per_s": _figure(chunks_per_s, "chunks/s", base_chunks_per_s, 0.05),
    }


if __name__ == "__main__":
    for name, figure in run(quick="--quick" in sys.argv).items():
        print(f"{name}: {figure['value']} {figure['unit']} (bare list {figure['baseline']}, "
              f"ratio {figure['ratio']}; bar >= {figure['bar']['limit']}) "
              f"{'ok' if figure['ok'] else 'MISSED'}")
