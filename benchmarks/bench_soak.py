"""Soak: 20 agents keep streaming turn after turn into the running app; does memory stay bounded?

The world is the stream benchmark's (`build_context`, `JsonlPersistence` under a
temporary directory, 20 agents through `ctx.agents.create`, the real `DshApp`
headless at 160x50 with one agent shown), but the agents never stop: each one gets a
follow-up as soon as its turn ends, every reply paced at 250 chunks/s (5,000 chunks/s
in total: a working day of 20 agents x 50 chunks/s, accelerated five times). The
shown agent's replies are short (30-200 chunks), the others' 150-1,500. Every soak
runs in a process of its own (`--child`). The app freezes the heap once, after its
first frame, and never again (issue 26): collections run as CPython schedules them.

Figures (history of the figures: docs/performance.md):
- `soak.p99_lag_ms` / `soak.max_lag_ms`: the lateness of a task that sleeps 10 ms at a
  time. Baseline: the same soak with every chunk kept live (`Session.compact_chunks`
  off). Bars <= 100 ms and <= 250 ms.
- `soak.rss_mb_per_hour`: RSS growth per simulated hour: the least-squares slope of RSS
  against events over the samples after the first third of the window, times the 3.6
  million events such an hour logs. Baseline: chunks kept live. Bar <= 100 MB/hour.
- `soak.heap_bytes_per_event`: traced heap bytes (`tracemalloc`) an event still holds
  after its step ended: 10 agents, replies as fast as the loop goes, every agent idle
  and a full collection run at both ends of the measured turns (after `warm` turns:
  the bounded caches, the transcript's line cache among them, are full by then).
  Baseline: chunks kept live. Bar <= 64.
- `soak.readback_p99_lag_ms`: the lag p99 at the real rate (20 agents x 50 chunks/s)
  while the shown agent's 100,000-event history (packed up front) is read back, one key
  every 0.1 s (`KEY_REPEAT`), round after round: `pageup` three times (`ROUND_PAGES`),
  ctrl+f with the query typed in the first round (`QUERY`: 26 matches ~70 items apart)
  and enter twice (each an older match, far back), escape; f2, filter `chunk` (packed
  chunks formatted), `-chunk`, f2; every third round `end`. Baseline: an equal window
  just before, without the driver. Bar <= 50 ms.
- `soak.full_collect_ms`: the longest of several full (generation 2) collections with
  the app showing that 100,000-event history and 20 agents idle. Baseline: a bare
  interpreter holding the same packed history. Bar <= 20 ms.

Run alone: `python benchmarks/bench_soak.py [--quick] [--seconds N] [--old] [--heap]
[--readback] [--collect]`.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
import tracemalloc
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench_stream import SIZE, PacedModel, _lag_probe, _percentile
from dsh_tui.compose import build_context
from dsh_tui.harness import AgentOptions, CreateAgentOptions, Session, user_message
from dsh_tui.harness.eventlog import forget_decoded
from dsh_tui.harness.persistence import JsonlPersistence
from dsh_tui.ui.app import DshApp

if TYPE_CHECKING:
    from benchmarks.figures import Bar, Figure, Figures

AGENTS = 20
RATE = 250.0
REAL_RATE = 50.0
"""Chunks/s of one agent in a real working day; RATE runs the soak five times faster."""
EVENTS_PER_HOUR = AGENTS * REAL_RATE * 3600
SHOWN_REPLIES = (40, 120, 80, 200, 60, 30)
OTHER_REPLIES = (300, 900, 150, 1500, 600, 450, 1100, 250)
SHOWN_PAUSE = 1.0
"""Seconds between a reply of the shown agent and its next follow-up: the person reads."""
SAMPLE_EVERY = 2.0
HISTORY_EVENTS = 100_000
HEAP_AGENTS = 10
"""Agents of the heap soak: the figure is per event, and tracemalloc makes every one slow."""
COLLECTIONS = 5
"""Full collections timed for `soak.full_collect_ms` (the longest counts)."""
HEAP_PHASE = {"warm": 6, "turns": 12}
"""The heap soak of a full run: six warm-up turns of every agent, then twelve measured."""
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


class World:
    """The soak's world: 20 paced agents, persistence in a temporary directory, the app."""

    def __init__(self, tmp: str, agents: int, rate: float) -> None:
        self.models = {f"soak{n}": PacedModel(rate, SHOWN_REPLIES if n == 0 else OTHER_REPLIES)
                       for n in range(agents)}
        self.ctx = build_context(providers=self.models, persistence=JsonlPersistence(Path(tmp)),
                                 tools=[], retry=False, system_prompt=None)
        self.agents = agents
        self.handles: list[Any] = []
        self.app: DshApp | None = None

    async def start(self, seed: list[dict[str, Any]] | None = None) -> DshApp:
        for n in range(self.agents):
            self.handles.append(await self.ctx.agents.create(CreateAgentOptions(
                session_id=f"soak-{n:02d}", seed=seed if n == 0 else None,
                agent_options=AgentOptions(provider=f"soak{n}", model="soak"))))
        self.app = DshApp(self.ctx)
        return self.app

    def drive(self, end: float) -> list[asyncio.Task[None]]:
        """Keep every agent busy until `end` (wall clock, perf_counter)."""
        for model in self.models.values():
            model.end = end
        return [asyncio.create_task(_keep_busy(h.agent, end, SHOWN_PAUSE if n == 0 else 0.0))
                for n, h in enumerate(self.handles)]

    async def idle(self, drivers: list[asyncio.Task[None]]) -> None:
        await asyncio.gather(*drivers)
        for handle in self.handles:
            await asyncio.wait_for(handle.agent.when_idle(), 60)

    @property
    def events(self) -> int:
        return sum(h.agent.session.seq for h in self.handles)

    async def close(self) -> None:
        for handle in reversed(self.handles):
            await handle.dispose()
        await self.ctx.scope.dispose()


async def soak(duration: float, agents: int = AGENTS, old: bool = False) -> Soak:
    """One window of `duration` s; `old`: the baseline (chunks kept live)."""
    Session.compact_chunks = not old
    with tempfile.TemporaryDirectory() as tmp:
        world = World(tmp, agents, RATE)
        app = await world.start()
        lags: list[float] = []
        result = Soak(duration, 0, lags)
        try:
            async with app.run_test(size=SIZE) as pilot:
                app.main.select_agent(world.handles[0].agent.id)
                await pilot.pause()
                gc.collect()  # what starting the app left is not the soak's garbage
                start = time.perf_counter()
                end = start + duration
                drivers = world.drive(end)
                stop = asyncio.Event()
                probe = asyncio.create_task(_lag_probe(lags, stop))
                next_sample = start
                while (now := time.perf_counter()) < end:
                    if now >= next_sample:
                        result.samples.append(_sample(now - start, world.events))
                        next_sample += SAMPLE_EVERY
                    await asyncio.sleep(min(0.05, end - now))
                stop.set()
                await probe
                # Synchronously, before any agent finishes its turn and the app settles.
                result.samples.append(_sample(time.perf_counter() - start, world.events))
                result.events = world.events
                found, size, _ = _measure_garbage()
                result.garbage_objects, result.garbage_mb = found, size
                begin = time.perf_counter()
                gc.collect()
                result.collect_ms = (time.perf_counter() - begin) * 1000
                await world.idle(drivers)
                await pilot.pause()
        finally:
            await world.close()
            Session.compact_chunks = True
    return result


def _sample(t: float, events: int) -> tuple[float, float, int, int, int]:
    return (round(t, 1), round(rss_mb(), 1), gc.get_freeze_count(), len(gc.get_objects()),
            events)


def rss_slope_mb_per_hour(samples: list[Any]) -> float:
    """Least-squares MB per event over the samples after the first third, per hour."""
    if not samples:
        return float("nan")
    horizon = samples[-1][0]
    points = [(s[4], s[1]) for s in samples if s[0] >= horizon / 3]
    if len(points) < 3:
        return float("nan")
    mean_x = sum(x for x, _ in points) / len(points)
    mean_y = sum(y for _, y in points) / len(points)
    var = sum((x - mean_x) ** 2 for x, _ in points)
    if not var:
        return float("nan")
    slope = sum((x - mean_x) * (y - mean_y) for x, y in points) / var
    return slope * EVENTS_PER_HOUR


# ---- heap bytes per finished event -------------------------------------------------------


async def _settled_heap(world: World, pilot: Any) -> tuple[int, int]:
    """(traced heap bytes, events) with every agent idle, the app flushed, garbage gone."""
    for _ in range(3):
        world.app.bridge.flush()  # type: ignore[union-attr]
        await pilot.pause()
    gc.unfreeze()
    gc.collect()
    forget_decoded()
    return tracemalloc.get_traced_memory()[0], world.events


async def _turns(world: World, turns: int) -> None:
    """Every agent runs `turns` more turns back to back (replies as fast as the loop goes)."""
    async def one(agent: Any) -> None:
        for n in range(turns):
            agent.followup(user_message(f"go on ({n})"))
            await agent.when_idle()

    await asyncio.gather(*(one(h.agent) for h in world.handles))


async def heap_soak(warm: int, turns: int, old: bool) -> dict[str, Any]:
    """Heap growth per event over `turns` turns of every agent, measured with every step ended.

    Replies are not paced here (tracemalloc slows every allocation, and a paced run
    would log a handful of events): each one streams its chunks with a bare yield
    between them, so the figure is per event, whatever the machine's speed. `cycles`
    holds the figure from the start of the measured phase to the end of each third of it:
    a bounded cost still filling shrinks as the phase grows, growth per event does not.
    """
    Session.compact_chunks = not old
    tracemalloc.start()
    cycles: list[dict[str, float]] = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            world = World(tmp, HEAP_AGENTS, 1e9)
            for model in world.models.values():
                model.end = float("inf")
            app = await world.start()
            try:
                async with app.run_test(size=SIZE) as pilot:
                    app.main.select_agent(world.handles[0].agent.id)
                    await pilot.pause()
                    await _turns(world, warm)
                    heap0, events0 = await _settled_heap(world, pilot)
                    heap1, events1 = heap0, events0
                    third = max(1, turns // 3)
                    for ran in range(third, turns + 1, third):
                        await _turns(world, third)
                        heap1, events1 = await _settled_heap(world, pilot)
                        cycles.append({"turns": ran, "events": events1 - events0,
                                       "bytes_per_event": round(
                                           (heap1 - heap0) / max(1, events1 - events0), 1)})
            finally:
                await world.close()
    finally:
        tracemalloc.stop()
        Session.compact_chunks = True
    return {"bytes_per_event": (heap1 - heap0) / max(1, events1 - events0),
            "events": events1 - events0, "warm_turns": warm, "turns": turns,
            "cycles": cycles}


# ---- lag while compacted history is read back ----------------------------------------------


KEY_REPEAT = 0.1
"""Seconds between two keys of the read-back driver: a person holding a key down."""
ROUND_PAGES = 3
"""`pageup` presses in each round of the read-back driver."""
ROUND_MATCHES = 2
"""Older search matches each round steps to."""
END_EVERY = 3
"""The driver goes back to the live tail (`end`) every this many rounds."""
QUERY = "0: summarise"
"""The driver's search: the prompt of every tenth turn of the seeded history (26 matches,
~70 items apart, so each older match is a jump far back)."""


async def _read_back(app: DshApp, agent_id: str, stop: asyncio.Event,
                     counts: dict[str, int]) -> None:
    """Round after round until `stop`: page up, search far back, read chunks in the event
    log, and now and then go back to the end. A step is counted when it starts inside the
    window; the driver stops at the first step after `stop`."""
    app.main.select_agent(agent_id)
    await asyncio.sleep(KEY_REPEAT)
    typed = False
    while not stop.is_set():
        transcript = app.main.transcript
        for _ in range(ROUND_PAGES):  # pageup, pageup, pageup
            if stop.is_set() or transcript.scroll_y == 0:
                break
            transcript.scroll_page_up(animate=False)
            counts["pages"] += 1
            await asyncio.sleep(KEY_REPEAT)
        if stop.is_set():
            break
        app.main.action_search()  # ctrl+f: the bar opens with the last query
        field = app.main.search_bar.input  # (keys go to it as the bindings send them)
        await asyncio.sleep(KEY_REPEAT)
        if not typed:
            for char in QUERY:  # typed once; every key searches and shows the newest match
                field.insert_text_at_cursor(char)
                await asyncio.sleep(KEY_REPEAT)
            typed = True
        for _ in range(ROUND_MATCHES):  # enter: the next older match, far back
            if stop.is_set():
                break
            field.action_step(True)
            counts["searches"] += 1
            await asyncio.sleep(KEY_REPEAT)
        field.action_close()  # escape
        if stop.is_set():
            break
        log = app.main.event_log  # f2, then the stream chunks packed in the log
        app.main.action_toggle_event_log()
        await asyncio.sleep(KEY_REPEAT)
        written = log.lines_written
        log.set_filter("chunk")
        await asyncio.sleep(KEY_REPEAT)
        counts["log_lines"] += log.lines_written - written
        log.set_filter("-chunk")
        app.main.action_toggle_event_log()
        counts["logs"] += 1
        await asyncio.sleep(KEY_REPEAT)
        counts["rounds"] += 1
        if counts["rounds"] % END_EVERY == 0 and not stop.is_set():
            app.main.transcript.action_follow()  # end: back to the live tail
            counts["ends"] += 1
            await asyncio.sleep(KEY_REPEAT)


async def readback_soak(duration: float) -> dict[str, Any]:
    """Two windows at the real rate: plain streaming, then streaming while reading back."""
    from benchmarks.bench_resume import build_session

    Session.compact_chunks = True
    seed = [event.to_json() for event in build_session(HISTORY_EVENTS).events]
    with tempfile.TemporaryDirectory() as tmp:
        world = World(tmp, AGENTS, REAL_RATE)
        app = await world.start(seed)
        plain: list[float] = []
        reading: list[float] = []
        counts = {"pages": 0, "searches": 0, "logs": 0, "ends": 0, "log_lines": 0, "rounds": 0}
        try:
            async with app.run_test(size=SIZE) as pilot:
                shown = world.handles[0].agent
                shown.session.pack()  # the resumed history, packed up front
                await world.ctx.sessions.flush(shown.session)  # and written out
                app.main.select_agent(shown.id)
                await pilot.pause()
                drivers = world.drive(time.perf_counter() + 2 * duration + 4.5)
                await asyncio.sleep(4)  # warm-up: every agent is mid-reply
                for lags, driver in ((plain, False), (reading, True)):
                    stop = asyncio.Event()
                    probe = asyncio.create_task(_lag_probe(lags, stop))
                    task = asyncio.create_task(_read_back(app, shown.id, stop, counts)) \
                        if driver else None
                    await asyncio.sleep(duration)
                    stop.set()
                    await probe
                    if task is not None:
                        await task
                packed = shown.session._log.packed_runs
                await world.idle(drivers)
        finally:
            await world.close()
    return {"plain_p99_ms": _percentile(plain, 0.99) * 1000,
            "reading_p99_ms": _percentile(reading, 0.99) * 1000,
            "reading_max_ms": max(reading, default=0.0) * 1000,
            "packed_runs": packed, **counts}


# ---- a full collection with a working day loaded ------------------------------------------


def _time_collections() -> float:
    """The longest of COLLECTIONS full collections, in ms."""
    longest = 0.0
    for _ in range(COLLECTIONS):
        start = time.perf_counter()
        gc.collect()
        longest = max(longest, time.perf_counter() - start)
    return longest * 1000


async def collect_app() -> dict[str, Any]:
    """The app showing a 100,000-event history (packed), 20 agents idle: its full
    collections, with the one freeze the app makes after its first frame."""
    from benchmarks.bench_resume import build_session

    seed = [event.to_json() for event in build_session(HISTORY_EVENTS).events]
    with tempfile.TemporaryDirectory() as tmp:
        world = World(tmp, AGENTS, REAL_RATE)
        app = await world.start(seed)
        try:
            async with app.run_test(size=SIZE) as pilot:
                shown = world.handles[0].agent
                shown.session.pack()
                app.main.select_agent(shown.id)
                for _ in range(5):
                    await pilot.pause()
                transcript = app.main.transcript
                transcript.scroll_home(animate=False, immediate=True)  # read some back
                await pilot.pause()
                transcript.scroll_end(animate=False, immediate=True)
                await pilot.pause()
                del seed
                longest = _time_collections()
                tracked = len(gc.get_objects())
                frozen = gc.get_freeze_count()
                gc.unfreeze()  # for the record: what the one freeze spares each collection
                unfrozen = _time_collections()
                gc.freeze()
        finally:
            await world.close()
    return {"longest_ms": longest, "tracked": tracked, "frozen": frozen,
            "unfrozen_longest_ms": unfrozen}


BARE = f"""
import gc, json, sys, time
sys.path.insert(0, {str(Path(__file__).resolve().parent.parent)!r})
from benchmarks.bench_resume import build_session
session = build_session({HISTORY_EVENTS})
session.pack()
gc.collect()
longest = 0.0
for _ in range({COLLECTIONS}):
    start = time.perf_counter()
    gc.collect()
    longest = max(longest, time.perf_counter() - start)
print("RESULT " + json.dumps({{"longest_ms": longest * 1000, "tracked": len(gc.get_objects()),
                              "events": len(session.events)}}))
"""
"""A bare interpreter holding the same packed history: the harness and the history, no
app, no Textual, nothing frozen."""


# ---- running children ----------------------------------------------------------------------


def _child(spec: dict[str, Any]) -> dict[str, Any]:
    """Run one soak in a fresh process; its result as a dict."""
    command = [sys.executable, "-c", BARE] if spec["mode"] == "bare" else \
        [sys.executable, str(Path(__file__).resolve()), "--child", json.dumps(spec)]
    proc = subprocess.run(command, capture_output=True, text=True, check=False)
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    raise RuntimeError(f"soak child {spec} failed:\n{proc.stdout[-2000:]}{proc.stderr[-4000:]}")


def _run_child(spec: dict[str, Any]) -> dict[str, Any]:
    mode = spec["mode"]
    if mode == "window":
        asyncio.run(soak(0.5, agents=2, old=spec["old"]))  # warm-up: imports, CSS, caches
        gc.collect()
        return asdict(asyncio.run(soak(spec["seconds"], old=spec["old"])))
    if mode == "heap":
        return asyncio.run(heap_soak(spec["warm"], spec["turns"], spec["old"]))
    if mode == "readback":
        return asyncio.run(readback_soak(spec["seconds"]))
    if mode == "collect":
        return asyncio.run(collect_app())
    raise ValueError(mode)


BARS: dict[str, Bar] = {
    "soak.p99_lag_ms": {"on": "value", "op": "<=", "limit": 100},
    "soak.max_lag_ms": {"on": "value", "op": "<=", "limit": 250},
    "soak.rss_mb_per_hour": {"on": "value", "op": "<=", "limit": 100},
    "soak.heap_bytes_per_event": {"on": "value", "op": "<=", "limit": 64},
    "soak.readback_p99_lag_ms": {"on": "value", "op": "<=", "limit": 50},
    "soak.full_collect_ms": {"on": "value", "op": "<=", "limit": 20},
}
UNITS = {"soak.p99_lag_ms": "ms", "soak.max_lag_ms": "ms", "soak.rss_mb_per_hour": "MB/hour",
         "soak.heap_bytes_per_event": "B/event", "soak.readback_p99_lag_ms": "ms",
         "soak.full_collect_ms": "ms"}


def _figure(name: str, value: float, baseline: float | None) -> Figure:
    bar = BARS[name]
    ratio = value / baseline if baseline else None
    subject = value if bar["on"] == "value" else ratio
    ok = subject is not None and subject == subject and (
        subject <= bar["limit"] if bar["op"] == "<=" else subject >= bar["limit"])
    return {"value": round(value, 1), "unit": UNITS[name],
            "baseline": round(baseline, 1) if baseline is not None else None,
            "ratio": round(ratio, 3) if ratio is not None else None, "bar": bar, "ok": ok}


def run(quick: bool = False) -> Figures:
    duration = 10.0 if quick else 60.0
    old = _child({"mode": "window", "seconds": duration, "old": True})
    new = _child({"mode": "window", "seconds": duration, "old": False})
    turns = {"warm": 2, "turns": 3} if quick else HEAP_PHASE
    heap_old = _child({"mode": "heap", **turns, "old": True})
    heap_new = _child({"mode": "heap", **turns, "old": False})
    readback = _child({"mode": "readback", "seconds": 8.0 if quick else 20.0})
    collect = _child({"mode": "collect"})
    bare = _child({"mode": "bare"})
    p99 = _percentile(new["lags"], 0.99) * 1000
    return {
        "soak.p99_lag_ms": _figure("soak.p99_lag_ms", p99,
                                   _percentile(old["lags"], 0.99) * 1000),
        "soak.max_lag_ms": _figure("soak.max_lag_ms", max(new["lags"], default=0.0) * 1000,
                                   max(old["lags"], default=0.0) * 1000),
        "soak.rss_mb_per_hour": _figure("soak.rss_mb_per_hour",
                                        rss_slope_mb_per_hour(new["samples"]),
                                        rss_slope_mb_per_hour(old["samples"])),
        "soak.heap_bytes_per_event": _figure("soak.heap_bytes_per_event",
                                             heap_new["bytes_per_event"],
                                             heap_old["bytes_per_event"]),
        "soak.readback_p99_lag_ms": _figure("soak.readback_p99_lag_ms",
                                            readback["reading_p99_ms"],
                                            readback["plain_p99_ms"]),
        "soak.full_collect_ms": _figure("soak.full_collect_ms", collect["longest_ms"],
                                        bare["longest_ms"]),
    }


def _print_samples(label: str, result: dict[str, Any]) -> None:
    lags = result["lags"]
    print(f"{label}: {result['events']:,} events in {result['seconds']:.0f} s, garbage "
          f"{result['garbage_mb']:.1f} MB ({result['garbage_objects']:,} objects), full "
          f"collection {result['collect_ms']:.0f} ms, lag p99 {_percentile(lags, 0.99) * 1000:.1f} ms max "
          f"{max(lags) * 1000:.1f} ms, RSS slope "
          f"{rss_slope_mb_per_hour(result['samples']):.0f} MB/simulated hour")
    print("    t    rss MB     frozen    tracked     events")
    for t, rss, frozen, tracked, events in result["samples"]:
        print(f"{t:5.1f} {rss:9.1f} {frozen:10,} {tracked:10,} {events:10,}")


if __name__ == "__main__":
    if "--child" in sys.argv:
        outcome = _run_child(json.loads(sys.argv[sys.argv.index("--child") + 1]))
        print("RESULT " + json.dumps(outcome), flush=True)
        sys.exit(0)
    quick = "--quick" in sys.argv
    seconds = 10.0 if quick else 60.0
    if "--seconds" in sys.argv:
        seconds = float(sys.argv[sys.argv.index("--seconds") + 1])
    if "--old" in sys.argv:
        _print_samples("baseline (chunks live)",
                       _child({"mode": "window", "seconds": seconds, "old": True}))
    _print_samples("now", _child({"mode": "window", "seconds": seconds, "old": False}))
    if "--heap" in sys.argv:
        for old in (True, False):
            print("heap", "baseline" if old else "now",
                  _child({"mode": "heap", **HEAP_PHASE, "old": old}))
    if "--readback" in sys.argv:
        print("readback", _child({"mode": "readback", "seconds": seconds / 2}))
    if "--collect" in sys.argv:
        print("collect: app", _child({"mode": "collect"}), "bare", _child({"mode": "bare"}))
