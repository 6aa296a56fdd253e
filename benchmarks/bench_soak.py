"""Soak: 20 agents keep streaming turn after turn into the running app; does memory stay bounded?

The world is the stream benchmark's (`build_context`, `JsonlPersistence` under a
temporary directory, 20 agents through `ctx.agents.create`, the real `DshApp`
headless at 160x50 with one agent shown), but the agents never stop: each one
gets a follow-up as soon as its turn ends, and every reply is paced at 250
chunks/s against the wall clock (5,000 chunks/s offered in total). Replies of the
shown agent are short (30-200 chunks), so its transcript keeps mounting new
blocks and pruning old ones; the others write 150-1,500 chunks a reply. The
window is 60 s (10 s with --quick); nothing goes idle inside it, so the app's
"collect when everything is idle" never happens.

Every 2 s it samples RSS (/proc/self/statm), the frozen generation
(`gc.get_freeze_count()`), the objects the collector still tracks outside it
(`len(gc.get_objects())`) and the events logged so far. At the end of the window,
before any agent finishes, it unfreezes and runs one full collection with
`gc.DEBUG_SAVEALL`, which keeps what it found: that is the cyclic garbage the app
was holding, sized with `sys.getsizeof`.

Figures:
- `soak.garbage_mb`: the cyclic garbage held at the end of the window. Baseline:
  the same soak with the GC pacing the app had before (freeze once a second
  while busy, collect only when everything is idle), which keeps every piece of
  garbage that was frozen. Bar: ratio <= 0.5.
- `soak.young_collect_ms`: the longest collection the app ran before a freeze
  (what keeping garbage out of the frozen heap costs). Baseline: one full
  collection of the same heap, timed at the end of the window: the pause a
  periodic "unfreeze and collect" would cost there. Bar <= 50 ms.
- `soak.p99_lag_ms` / `soak.max_lag_ms`: the lateness of a task that sleeps 10 ms
  at a time, as in the stream benchmark. Baseline: the old pacing. Bars <= 100 ms
  and <= 250 ms: the soak offers the stream benchmark's load with no pause between
  turns, and its p99 is not held to the stream bar of 50 ms.

RSS is sampled and printed when the benchmark runs alone, but it is not a figure:
both soaks share one process, and the second reuses the memory the first freed, so
its RSS growth would read as zero. The session logs dominate it anyway (every
event stays in memory, ~1 KB each here: ~250 MB a minute at this load).

Run alone: `python benchmarks/bench_soak.py [--quick] [--seconds N] [--old]`.
"""

from __future__ import annotations

import asyncio
import gc
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench_stream import SIZE, PacedModel, _lag_probe, _percentile
from dsh_tui.compose import build_context
from dsh_tui.harness import AgentOptions, CreateAgentOptions, user_message
from dsh_tui.harness.persistence import JsonlPersistence
from dsh_tui.ui.app import DshApp

AGENTS = 20
RATE = 250.0
SHOWN_REPLIES = (40, 120, 80, 200, 60, 30)
OTHER_REPLIES = (300, 900, 150, 1500, 600, 450, 1100, 250)
SHOWN_PAUSE = 1.0
"""Seconds between a reply of the shown agent and its next follow-up: the person reads."""
SAMPLE_EVERY = 2.0
PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def rss_mb() -> float:
    try:
        with open("/proc/self/statm") as handle:
            return int(handle.read().split()[1]) * PAGE / 1e6
    except OSError:
        return float("nan")


async def _keep_busy(agent: Any, end: float, pause: float = 0.0) -> None:
    """A follow-up whenever the agent's turn ends (after `pause` seconds), until the end."""
    n = 0
    while time.perf_counter() < end:
        n += 1
        agent.followup(user_message(f"go on ({n})"))
        await agent.when_idle()
        if pause:
            await asyncio.sleep(pause)


@dataclass
class Soak:
    """What one soak measured."""

    seconds: float
    events: int
    lags: list[float]
    samples: list[tuple[float, float, int, int, int]] = field(default_factory=list)
    """(t, rss MB, frozen objects, other tracked objects, events logged)"""
    garbage_mb: float = 0.0
    garbage_objects: int = 0
    collect_ms: float = 0.0  # a full collection of the heap at the end, timed here
    young_ms: float = 0.0  # the longest collection the app ran before a freeze


def _measure_garbage() -> tuple[int, float, float]:
    """(objects, MB, ms): what a full collection finds now, kept aside and sized."""
    start = time.perf_counter()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        gc.unfreeze()
        found = gc.collect()
    finally:
        gc.set_debug(0)
    elapsed = (time.perf_counter() - start) * 1000
    size = sum(sys.getsizeof(o) for o in gc.garbage)
    gc.garbage.clear()
    gc.collect()
    return found, size / 1e6, elapsed


def _old_pacing(app: DshApp) -> None:
    """The pacing before this benchmark existed: freeze once a second, nothing else."""
    pacing = app.gc_pacing

    def busy() -> None:
        now = pacing._clock()
        if now - pacing._last >= 1.0:  # the old FREEZE_EVERY
            pacing._last = now
            gc.freeze()
            pacing.frozen = True
            pacing.freezes += 1

    pacing.busy = busy  # type: ignore[method-assign]


async def soak(duration: float, agents: int = AGENTS, old_pacing: bool = False) -> Soak:
    with tempfile.TemporaryDirectory() as tmp:
        models = {f"soak{n}": PacedModel(RATE, SHOWN_REPLIES if n == 0 else OTHER_REPLIES)
                  for n in range(agents)}
        ctx = build_context(providers=models, persistence=JsonlPersistence(Path(tmp)),
                            tools=[], retry=False, system_prompt=None)
        handles = []
        for n in range(agents):
            handles.append(await ctx.agents.create(CreateAgentOptions(
                session_id=f"soak-{n:02d}",
                agent_options=AgentOptions(provider=f"soak{n}", model="soak"))))
        app = DshApp(ctx)
        if old_pacing:
            _old_pacing(app)
        lags: list[float] = []
        result = Soak(duration, 0, lags)
        try:
            async with app.run_test(size=SIZE) as pilot:
                app.select_agent(handles[0].agent.id)
                await pilot.pause()
                gc.collect()  # what starting the app left is not the soak's garbage
                start = time.perf_counter()
                end = start + duration
                for model in models.values():
                    model.end = end
                drivers = [asyncio.create_task(_keep_busy(h.agent, end, SHOWN_PAUSE if n == 0
                                                          else 0.0))
                           for n, h in enumerate(handles)]
                stop = asyncio.Event()
                probe = asyncio.create_task(_lag_probe(lags, stop))
                next_sample = start
                while (now := time.perf_counter()) < end:
                    if now >= next_sample:
                        result.samples.append(_sample(now - start, handles))
                        next_sample += SAMPLE_EVERY
                    await asyncio.sleep(min(0.05, end - now))
                stop.set()
                await probe
                # Synchronously, before any agent finishes its turn and the app settles.
                result.samples.append(_sample(time.perf_counter() - start, handles))
                result.events = sum(h.agent.session.seq for h in handles)
                result.young_ms = app.gc_pacing.young_pause_max * 1000
                found, size, _ = _measure_garbage()
                result.garbage_objects, result.garbage_mb = found, size
                begin = time.perf_counter()
                gc.collect()
                result.collect_ms = (time.perf_counter() - begin) * 1000
                gc.freeze()
                await asyncio.gather(*drivers)
                for handle in handles:
                    await asyncio.wait_for(handle.agent.when_idle(), 30)
                await pilot.pause()
        finally:
            for handle in reversed(handles):
                await handle.dispose()
            await ctx.scope.dispose()
            gc.unfreeze()
    return result


def _sample(t: float, handles: list[Any]) -> tuple[float, float, int, int, int]:
    return (round(t, 1), round(rss_mb(), 1), gc.get_freeze_count(), len(gc.get_objects()),
            sum(h.agent.session.seq for h in handles))


BARS: dict[str, dict[str, Any]] = {
    "soak.garbage_mb": {"on": "ratio", "op": "<=", "limit": 0.5},
    "soak.young_collect_ms": {"on": "value", "op": "<=", "limit": 50},
    "soak.p99_lag_ms": {"on": "value", "op": "<=", "limit": 100},
    "soak.max_lag_ms": {"on": "value", "op": "<=", "limit": 250},
}
UNITS = {"soak.garbage_mb": "MB",
         "soak.young_collect_ms": "ms", "soak.p99_lag_ms": "ms", "soak.max_lag_ms": "ms"}


def _figure(name: str, value: float, baseline: float | None) -> dict[str, Any]:
    bar = BARS[name]
    ratio = value / baseline if baseline else None
    subject = value if bar["on"] == "value" else ratio
    ok = subject is not None and (subject <= bar["limit"] if bar["op"] == "<="
                                  else subject >= bar["limit"])
    return {"value": round(value, 1), "unit": UNITS[name],
            "baseline": round(baseline, 1) if baseline is not None else None,
            "ratio": round(ratio, 3) if ratio is not None else None, "bar": bar, "ok": ok}


def _one(duration: float, old_pacing: bool = False) -> Soak:
    gc.collect()
    return asyncio.run(soak(duration, old_pacing=old_pacing))


def run(quick: bool = False) -> dict[str, dict[str, Any]]:
    duration = 10.0 if quick else 60.0
    asyncio.run(soak(0.5, agents=2))  # warm-up: imports, CSS, first-mount caches
    old = _one(duration, old_pacing=True)
    new = _one(duration)
    p99 = _percentile(new.lags, 0.99) * 1000
    return {
        "soak.garbage_mb": _figure("soak.garbage_mb", new.garbage_mb, old.garbage_mb),
        "soak.young_collect_ms": _figure("soak.young_collect_ms", new.young_ms,
                                         new.collect_ms),
        "soak.p99_lag_ms": _figure("soak.p99_lag_ms", p99,
                                   _percentile(old.lags, 0.99) * 1000),
        "soak.max_lag_ms": _figure("soak.max_lag_ms", max(new.lags, default=0.0) * 1000,
                                   max(old.lags, default=0.0) * 1000),
    }


def _print_samples(label: str, result: Soak) -> None:
    print(f"{label}: {result.events:,} events in {result.seconds:.0f} s, garbage "
          f"{result.garbage_mb:.1f} MB ({result.garbage_objects:,} objects), full collection "
          f"{result.collect_ms:.0f} ms, longest collection before a freeze "
          f"{result.young_ms:.0f} ms, lag p99 "
          f"{_percentile(result.lags, 0.99) * 1000:.1f} ms max {max(result.lags) * 1000:.1f} ms")
    print("    t    rss MB     frozen    tracked     events")
    for t, rss, frozen, tracked, events in result.samples:
        print(f"{t:5.1f} {rss:9.1f} {frozen:10,} {tracked:10,} {events:10,}")


if __name__ == "__main__":
    quick = "--quick" in sys.argv
    seconds = 10.0 if quick else 60.0
    if "--seconds" in sys.argv:
        seconds = float(sys.argv[sys.argv.index("--seconds") + 1])
    asyncio.run(soak(0.5, agents=2))
    if "--old" in sys.argv:
        _print_samples("old pacing", _one(seconds, old_pacing=True))
    _print_samples("pacing", _one(seconds))
