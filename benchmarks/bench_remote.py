"""Remote: the app over a running dsh runtime, against the same app over local agents.

The runtime is the published one (`deepseek-harness-runtime-bin`, installed by
`scripts/install_runtime.py`), run on 127.0.0.1 against the tests' fake model server
(`tests/remote/`); every figure's baseline is the same measure over this process's own
agents, in the same run. Without the runtime nothing is measured (and the run says so).

Figures:
- `remote.attach_first_screen_ms`: from `attach` (token exchange, listing, every log
  followed to its end) to the first screen whose agent tree lists 20 runtime sessions
  (each with one finished turn). Baseline: a local world with 20 agents built and shown
  the same way. Bar: ratio <= 20 (a network client reading 20 logs, not a local list).
- `remote.keys_p99_ms`: keystroke-to-screen p99 (`bench_keys.Probe`) while 5 runtime
  agents stream (50 chunks/s each). Baseline: 5 local agents streaming at the same rate.
  Bar <= 33 ms, as for local keys.
- `remote.stream_lag_p99_ms`: p99 of the time from a chunk reaching the client (a live
  frame; locally, the durable chunk event) to the flush that hands it to the screen.
  Baseline: the 5 local agents. Bar <= 50 ms.
- `remote.reconnect_lost_or_duplicated`: durable events and streamed chunks lost or
  shown twice over 20 forced socket drops while 2 agents stream, checked against the
  runtime's stored logs. No baseline; bar == 0.

Run alone: `python benchmarks/bench_remote.py [--quick]`.
"""

from __future__ import annotations

import asyncio
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "remote"))

from benchmarks.bench_keys import ALPHABET, Probe  # noqa: E402
from benchmarks.bench_soak import REAL_RATE, World  # noqa: E402
from benchmarks.bench_stream import SIZE, _percentile  # noqa: E402
from benchmarks.figures import Bar, Figure, Figures  # noqa: E402
from dsh_tui.harness import CreateAgentOptions, user_message  # noqa: E402
from dsh_tui.remote import RemoteAgent, RemoteWorld, attach, parse_endpoint  # noqa: E402
from dsh_tui.ui.app import DshApp  # noqa: E402

if TYPE_CHECKING:  # the remote tests' helpers, imported for real only when a run needs them
    from conftest import ModelThread
    from remote_runtime import RuntimeProcess

SESSIONS = 20
STREAMING = 5
RECONNECTS = 20
BUSY = "busy [words=400] [pause=0.02]"
"""A reply of 400 chunks at 50 chunks/s (REAL_RATE)."""


class RemoteFigure(Figure, total=False):
    """A figure with what the run saw beside it (printed and kept in `--json`, not judged)."""

    chunks_per_s: int
    baseline_chunks_per_s: int
    reconnects: int
    resent_and_skipped: int


def _figure(value: float, baseline: float | None, bar: Bar, unit: str = "ms"
            ) -> RemoteFigure:
    ratio = value / baseline if baseline else None
    subject = value if bar["on"] == "value" else ratio
    ok = subject is not None and (subject <= bar["limit"] if bar["op"] == "<=" else
                                  subject >= bar["limit"])
    return {"value": round(value, 2), "unit": unit,
            "baseline": round(baseline, 2) if baseline is not None else None,
            "ratio": round(ratio, 2) if ratio is not None else None, "bar": bar, "ok": ok}


class Runtime:
    """The shared runtime and its model server, as `tests/remote/conftest.py` runs them."""

    def __init__(self) -> None:
        from conftest import ModelThread
        from remote_runtime import RuntimeProcess, find_dsh

        dsh, self.why = find_dsh()
        self.model: ModelThread | None = None
        self.process: RuntimeProcess | None = None
        if dsh is None:
            return
        self.tmp = tempfile.TemporaryDirectory(prefix="dsh-bench-")
        self.model = ModelThread()
        url = self.model.start()
        self.process = RuntimeProcess(dsh, Path(self.tmp.name), url)
        self.line = self.process.start()

    async def world(self) -> RemoteWorld:
        from remote_runtime import ROUTE

        return await attach(parse_endpoint(self.line), cwd=str(self.running.work), route=ROUTE)

    @property
    def running(self) -> RuntimeProcess:
        """The runtime process (`run` measures nothing when there is none)."""
        assert self.process is not None
        return self.process

    def close(self) -> None:
        if self.process is not None:
            self.process.stop()
        if self.model is not None:
            self.model.stop()
            self.tmp.cleanup()


async def _until(check: Callable[[], Any], timeout: float, pump: Any = None) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError("benchmark condition never held")
        await (pump() if pump is not None else asyncio.sleep(0.01))


# -- attach to first screen ------------------------------------------------------------------


async def _seed_sessions(runtime: Runtime) -> None:
    world = await runtime.world()
    try:
        for n in range(SESSIONS):
            handle = await world.ctx.agents.create(CreateAgentOptions(session_id=f"bench-{n:02d}"))
            handle.agent.followup(user_message("hello [words=3]"))
        agents = list(world.agents.values())
        await _until(lambda: all(a.status == "idle" and a.current_turn for a in agents), 120)
    finally:
        await world.close()


async def _first_screen(build: Callable[[], Any], count: int) -> float:
    start = time.perf_counter()
    ctx, closing = await build()
    app = DshApp(ctx)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await _until(lambda: len(app.main.agent_tree.listed) >= count, 60,
                         pump=lambda: pilot.pause(0))
            await pilot.pause()
            elapsed = time.perf_counter() - start
    finally:
        await closing()
    return elapsed * 1000


async def _attach_figure(runtime: Runtime, repeats: int) -> RemoteFigure:
    async def remote() -> Any:
        world = await runtime.world()
        return world.ctx, world.close

    async def local() -> Any:
        from dsh_tui.compose import build_context
        from dsh_tui.llm.scripted import ScriptedModel

        ctx = build_context(providers={"mock": ScriptedModel([])}, tools=[], retry=False,
                            system_prompt=None)
        for n in range(SESSIONS):
            await ctx.agents.create(CreateAgentOptions(session_id=f"local-{n:02d}"))

        async def closing() -> None:
            await ctx.scope.dispose()

        return ctx, closing

    remote_ms, local_ms = [], []
    for _ in range(repeats):
        local_ms.append(await _first_screen(local, SESSIONS))
        remote_ms.append(await _first_screen(remote, SESSIONS))
    return _figure(statistics.median(remote_ms), statistics.median(local_ms),
                   {"on": "ratio", "op": "<=", "limit": 20})


# -- typing and streaming with 5 agents ------------------------------------------------------


class Lag:
    """Chunk arrival → the flush that hands it to the screen, per agent."""

    def __init__(self, app: DshApp, remote: bool) -> None:
        self.waiting: dict[str, list[float]] = {}
        self.samples: list[float] = []
        ctx = app.ctx
        if remote:
            ctx.on("agent/assistant-stream", lambda p: self._arrived(p["agent"].id)
                   if p["frame"].get("type") == "chunk" else None)
        else:
            ctx.on("session/event", lambda session, event: self._arrived(session.id)
                   if event.type == "assistant/chunk" else None)
        flushed = app.bridge.on_flush

        def on_flush(batch: Any) -> None:
            if flushed is not None:
                flushed(batch)
            now = time.perf_counter()
            for agent_id in batch.transcripts:
                for arrived in self.waiting.pop(agent_id, ()):
                    self.samples.append((now - arrived) * 1000)

        app.bridge.on_flush = on_flush

    def _arrived(self, agent_id: str) -> None:
        self.waiting.setdefault(agent_id, []).append(time.perf_counter())
        self.arrived += 1

    arrived = 0
    """Chunks that reached the client (with the window's length: the streaming rate)."""


async def _type(app: DshApp, pilot: Any, keys: int) -> list[float]:
    rng = random.Random(27)
    probe = Probe(app)
    for n in range(keys):
        if n % len(ALPHABET) == 0:
            app.main.composer.text = ""
            await pilot.pause()
        await probe.type(ALPHABET[n % len(ALPHABET)])
        await asyncio.sleep(rng.uniform(0.04, 0.09))
    return [latency * 1000 for latency in probe.latencies]


async def _remote_streaming(runtime: Runtime, keys: int
                            ) -> tuple[list[float], list[float], float]:
    world = await runtime.world()
    agents: list[RemoteAgent] = []
    for n in range(STREAMING):
        handle = await world.ctx.agents.create(CreateAgentOptions(session_id=f"stream-{n}-"
                                                                   f"{time.monotonic_ns()}"))
        assert isinstance(handle.agent, RemoteAgent)
        agents.append(handle.agent)
    stop = asyncio.Event()

    async def busy(agent: RemoteAgent) -> None:
        while not stop.is_set():
            agent.followup(user_message(BUSY))
            await _until(lambda: agent.status == "running", 30)
            await _until(lambda: agent.status == "idle" or stop.is_set(), 120)

    app = DshApp(world.ctx)
    try:
        async with app.run_test(size=SIZE) as pilot:
            lag = Lag(app, remote=True)
            app.main.select_agent(agents[0].id)
            app.main.composer.focus()
            tasks = [asyncio.create_task(busy(a)) for a in agents]
            await asyncio.sleep(3.0)  # every agent is mid-reply
            start, before = time.perf_counter(), lag.arrived
            latencies = await _type(app, pilot, keys)
            rate = (lag.arrived - before) / (time.perf_counter() - start)
            stop.set()
            for agent in agents:
                if agent.status == "running":
                    agent.cancel(None, keep_inbox=True)
            await asyncio.gather(*tasks, return_exceptions=True)
    finally:
        await world.close()
    return latencies, lag.samples, rate


async def _local_streaming(keys: int) -> tuple[list[float], list[float], float]:
    with tempfile.TemporaryDirectory() as tmp:
        world = World(tmp, STREAMING, REAL_RATE)
        app = await world.start()
        try:
            async with app.run_test(size=SIZE) as pilot:
                lag = Lag(app, remote=False)
                app.main.select_agent(world.handles[0].agent.id)
                app.main.composer.focus()
                drivers = world.drive(time.perf_counter() + 3600)
                await asyncio.sleep(3.0)
                start, before = time.perf_counter(), lag.arrived
                latencies = await _type(app, pilot, keys)
                rate = (lag.arrived - before) / (time.perf_counter() - start)
                for model in world.models.values():
                    model.end = 0.0
                for task in drivers:
                    task.cancel()
                await asyncio.gather(*drivers, return_exceptions=True)
                for handle in world.handles:
                    await asyncio.wait_for(handle.agent.when_idle(), 60)
        finally:
            await world.close()
    return latencies, lag.samples, rate


# -- forced reconnects -----------------------------------------------------------------------


def _reconnected(world: RemoteWorld, before: int) -> bool:
    return world.mux.reconnects > before and world.mux.connected


def _stored(runtime: Runtime, agent: RemoteAgent) -> bool:
    """The runtime has stored every event this client admitted for `agent`."""
    return len(runtime.running.stored_log(agent.id)[1]) >= agent.session.seq


async def _reconnects(runtime: Runtime, drops: int) -> RemoteFigure:
    from remote_support import Frames, stored_chunks

    world = await runtime.world()
    frames = Frames(world)
    lost = 0
    try:
        agents: list[RemoteAgent] = []
        for n in range(2):
            handle = await world.ctx.agents.create(CreateAgentOptions(
                session_id=f"drops-{n}-{time.monotonic_ns()}"))
            assert isinstance(handle.agent, RemoteAgent)
            agents.append(handle.agent)
        rng = random.Random(20)
        for agent in agents:
            agent.followup(user_message("drops [words=300] [pause=0.02]"))
            agent.followup(user_message("drops again [words=300] [pause=0.02]"))
        await _until(lambda: all(a.status == "running" for a in agents), 30)
        for _ in range(drops):
            await asyncio.sleep(rng.uniform(0.1, 0.4))
            before = world.mux.reconnects
            await world.mux.drop()
            await _until(partial(_reconnected, world, before), 30)
        await _until(lambda: all(a.status == "idle" and not a.inbox.has_pending
                                 for a in agents), 120)
        for agent in agents:
            await _until(partial(_stored, runtime, agent), 30)
            _header, stored = runtime.running.stored_log(agent.id)
            wire = agent.session.wire
            lost += abs(len(stored) - len(wire))
            lost += sum(1 for a, b in zip(stored, wire, strict=False) if a != b)
            streamed = frames.chunks_by_attempt(agent.id)
            for seq, attempt in frames.committed(agent.id).items():
                expected = stored_chunks(stored[seq])
                got = streamed.get(attempt, [])
                if got != expected:
                    lost += max(len(expected), len(got)) - sum(
                        1 for a, b in zip(expected, got, strict=False) if a == b)
        duplicates = sum(world.followers[a.id].stats.duplicates for a in agents)
        mismatches = sum(world.followers[a.id].stats.mismatches for a in agents)
        drops_done = world.mux.reconnects
    finally:
        await world.close()
    figure = _figure(lost + mismatches, None, {"on": "value", "op": "<=", "limit": 0},
                     unit="events")
    figure["reconnects"] = drops_done
    figure["resent_and_skipped"] = duplicates
    return figure


def run(quick: bool = False) -> Figures:
    runtime = Runtime()
    if runtime.process is None:
        print(f"bench_remote: skipped: {runtime.why}", file=sys.stderr)
        return {}

    async def measure() -> Figures:
        await _seed_sessions(runtime)
        figures: Figures = {"remote.attach_first_screen_ms": await _attach_figure(
            runtime, 1 if quick else 3)}
        keys = 40 if quick else 150
        local_keys, local_lag, local_rate = await _local_streaming(keys)
        remote_keys, remote_lag, remote_rate = await _remote_streaming(runtime, keys)
        keys_figure = _figure(_percentile(remote_keys, 0.99), _percentile(local_keys, 0.99),
                              {"on": "value", "op": "<=", "limit": 33})
        lag_figure = _figure(_percentile(remote_lag, 0.99), _percentile(local_lag, 0.99),
                             {"on": "value", "op": "<=", "limit": 50})
        for rated in (keys_figure, lag_figure):
            rated["chunks_per_s"] = round(remote_rate)
            rated["baseline_chunks_per_s"] = round(local_rate)
        figures["remote.keys_p99_ms"] = keys_figure
        figures["remote.stream_lag_p99_ms"] = lag_figure
        figures["remote.reconnect_lost_or_duplicated"] = await _reconnects(
            runtime, 5 if quick else RECONNECTS)
        return figures

    try:
        return asyncio.run(measure())
    finally:
        runtime.close()


if __name__ == "__main__":
    import json

    print(json.dumps(run("--quick" in sys.argv), indent=2))
