"""Scale: selecting an agent in a big world paints fast; stored events stay small.

The world: 200 agents in the tree (50 roots with 3 owned children each, every one
with a short in-memory history), one of them holding a 100,000-event session (the
realistic mix `bench_resume.build_session` writes: turns, steps, prompts, streamed
chunks, assistant messages, tool calls and results, inbox splices), another one
with 10,000 items queued in its inbox. The real `DshApp` runs headless.

Figures:
- `scale.select_100k_ms`: from issuing the select action (the tree cursor moves
  to the agent, as an arrow key does) until the transcript shows that agent's
  last event (its last item drawn, current, at the bottom of the view).
  Baseline: the same for an agent with a short session. Bar < 200 ms.
- `scale.select_inbox_10k_ms`: the same for the agent with 10,000 queued items,
  until the inbox pane lists them as well: the rows that fill the pane (it builds only
  those and the next screen; a pane without `fills_pane` had to hold its first 100).
  Baseline: a short agent. Bar < 200 ms.
- `scale.bytes_per_event`: `tracemalloc`'s retained bytes after building the
  100,000-event session, per event. Baseline: the average JSON line length of
  those events (what the same event costs on disk). Bar < 2 KB.
- `scale.view_bytes_per_event`: what the app keeps on top of the session for the
  same events (the transcript view model the bridge folds them into), per event.
  Baseline: the average JSON line length. Bar < 2 KB for the two together is the
  product's; this one is held to the same 2 KB on its own.

Medians over several selections, alternating agents so every one is a real change.
"""

from __future__ import annotations

import asyncio
import gc
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench_resume import build_session
from dsh_tui.compose import build_context
from dsh_tui.harness import (
    Agent,
    AgentOptions,
    CreateAgentOptions,
    Session,
    dumps_compact,
    user_message,
)
from dsh_tui.llm.scripted import ScriptedModel
from dsh_tui.ui.app import DshApp
from dsh_tui.ui.state.agent_view import AgentView

if TYPE_CHECKING:
    from benchmarks.figures import Bar, Figure, Figures

ROOTS = 50
CHILDREN = 3  # 50 * (1 + 3) = 200 agents
BIG_EVENTS = 100_000
INBOX_ITEMS = 10_000
SIZE = (160, 50)
SELECT_BAR: Bar = {"on": "value", "op": "<=", "limit": 200}
MEMORY_BAR: Bar = {"on": "value", "op": "<=", "limit": 2048}
BIG_ID = "big-session"
INBOX_ID = "big-inbox"


def short_history(turns: int = 2) -> list[dict[str, Any]]:
    """A few completed turns as seed records (what a short-lived agent leaves behind)."""
    session = Session("short", header={"version": 0, "id": "short", "createdAt": 1})
    for turn in range(1, turns + 1):
        session.append("turn/start", {"turn": turn})
        session.append("step/start", {"turn": turn, "step": 1})
        session.append("user/message", user_message(f"question {turn}").to_json(),
                       surface_op="append")
        session.append("assistant/message", {"turn": turn, "step": 1, "message": {
            "id": f"a-{turn}", "role": "assistant",
            "content": [{"type": "text", "text": f"Answer {turn}: **done**, see `notes.md`."}],
            "source": {"kind": "model", "provider": "scripted", "model": "scripted"}}},
            surface_op="append", source_event_seqs=[])
        session.append("step/end", {"turn": turn, "step": 1})
        session.append("turn/end", {"turn": turn, "reason": {"kind": "completed"}})
    return [event.to_json() for event in session.events]


async def build_world() -> tuple[Any, list[Any]]:
    """The 200-agent world; returns (ctx, handles)."""
    ctx = build_context(providers={"scripted": ScriptedModel()}, tools=[], retry=False,
                        system_prompt=None)
    route = AgentOptions(provider="scripted", model="scripted")
    history = short_history()
    big_seed = [event.to_json() for event in build_session(BIG_EVENTS).events]
    handles = []
    for r in range(ROOTS):
        root_id = BIG_ID if r == ROOTS // 2 else INBOX_ID if r == ROOTS // 3 else f"root-{r:02d}"
        seed = big_seed if root_id == BIG_ID else history
        root = await ctx.agents.create(CreateAgentOptions(session_id=root_id,
                                                          agent_options=route, seed=seed))
        handles.append(root)
        for c in range(CHILDREN):
            child_id = f"{root_id}.child-{c}"
            handles.append(await root.agent.ctx.agents.create(CreateAgentOptions(
                session_id=child_id, agent_options=route, seed=history,
                meta={"parentSession": root_id, "origin": "subagent", "delegationDepth": 1})))
    inbox_agent = ctx.agents.get(INBOX_ID)
    assert inbox_agent is not None
    inbox = inbox_agent.inbox
    for i in range(INBOX_ITEMS):
        inbox.append("next-turn", user_message(f"queued follow-up {i}: check part {i % 97}",
                                               id=f"q-{i:05d}"))
    return ctx, handles


def _shows_last(app: DshApp, view: AgentView, before: int) -> bool:
    """The transcript was indexed again for `view`, and its last item is drawn, current,
    at the bottom of the view."""
    transcript = app.main.transcript
    if transcript.view is not view or transcript.render_count == before:
        return False
    items = view.transcript.items
    lines = transcript.lines
    if not items or lines.items is not items or len(lines.index) != len(items):
        return False
    if not lines.is_exact(len(items) - 1):
        return False
    return transcript.scroll_y == transcript.max_scroll_y and transcript.region.height > 0


def _inbox_listed(app: DshApp, view: AgentView) -> bool:
    inbox = app.main.inbox
    if inbox.view is not view or not inbox.is_mounted or not inbox.rows:
        return False
    return inbox.fills_pane


async def _time_select(app: DshApp, agent_id: str,
                       extra: Callable[[DshApp, AgentView], bool] | None = None) -> float:
    """Seconds from selecting `agent_id` (the tree cursor follows) until its last event is shown."""
    view = app.bridge.views[agent_id]
    before = app.main.transcript.render_count
    start = time.perf_counter()
    app.main.select_agent(agent_id)
    while True:
        if _shows_last(app, view, before) and (extra is None or extra(app, view)):
            return time.perf_counter() - start
        if time.perf_counter() - start > 30:
            raise TimeoutError(f"selecting {agent_id} never painted")
        await asyncio.sleep(0.001)


async def _selections(repeat: int) -> dict[str, list[float]]:
    ctx, handles = await build_world()
    app = DshApp(ctx)
    times: dict[str, list[float]] = {"small": [], "big": [], "inbox": []}
    try:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            for _ in range(3):
                app.bridge.flush()
                await pilot.pause()
            for r in range(repeat):
                small = f"root-{1 + (r * 7) % (ROOTS - 1):02d}"
                if small not in app.bridge.views or small == app.main.selected_id:
                    small = "root-01.child-0"
                times["small"].append(await _time_select(app, small))
                await pilot.pause()
                times["big"].append(await _time_select(app, BIG_ID))
                await pilot.pause()
                times["inbox"].append(await _time_select(app, INBOX_ID, _inbox_listed))
                await pilot.pause()
    finally:
        for handle in reversed(handles):
            await handle.dispose()
        await ctx.scope.dispose()
    return times


def _memory() -> tuple[float, float, float]:
    """(session bytes/event, view-model bytes/event, average JSON line length)."""
    gc.collect()
    tracemalloc.start()
    try:
        gc.collect()
        start = tracemalloc.get_traced_memory()[0]
        session = build_session(BIG_EVENTS)
        gc.collect()
        stored = tracemalloc.get_traced_memory()[0] - start

        class _Agent:  # what AgentView reads: an id and a session
            id = session.id

        _Agent.session = session  # type: ignore[attr-defined]
        gc.collect()
        before_view = tracemalloc.get_traced_memory()[0]
        view = AgentView(cast(Agent, _Agent()))
        view.catch_up()
        gc.collect()
        viewed = tracemalloc.get_traced_memory()[0] - before_view
    finally:
        tracemalloc.stop()
    count = len(session.events)
    line = sum(len(dumps_compact(e.to_json()).encode("utf-8")) for e in session.events) / count
    del view
    return stored / count, viewed / count, line


def _select_figure(times: list[float], base: list[float]) -> Figure:
    value = statistics.median(times) * 1000
    baseline = statistics.median(base) * 1000
    return {"value": round(value, 1), "unit": "ms", "baseline": round(baseline, 1),
            "ratio": round(value / baseline, 2) if baseline else None, "bar": SELECT_BAR,
            "ok": value <= SELECT_BAR["limit"]}


def _memory_figure(value: float, line: float) -> Figure:
    return {"value": round(value), "unit": "B/event", "baseline": round(line, 1),
            "ratio": round(value / line, 2), "bar": MEMORY_BAR,
            "ok": value <= MEMORY_BAR["limit"]}


def run(quick: bool = False) -> Figures:
    times = asyncio.run(_selections(3 if quick else 7))
    per_event, view_per_event, line = _memory()
    return {
        "scale.select_100k_ms": _select_figure(times["big"], times["small"]),
        "scale.select_inbox_10k_ms": _select_figure(times["inbox"], times["small"]),
        "scale.bytes_per_event": _memory_figure(per_event, line),
        "scale.view_bytes_per_event": _memory_figure(view_per_event, line),
    }


if __name__ == "__main__":
    for figure_name, figure in run(quick="--quick" in sys.argv).items():
        print(figure_name, figure)
