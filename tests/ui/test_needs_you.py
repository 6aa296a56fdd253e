"""Issue 28: which agents need the person, oldest first, from real agents' logs; no screen.

Real agents on a scripted model, real breakpoints (`agent/pre-step`), the activity folded
from each session as the bridge folds it (`AgentView.catch_up`)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from dsh_tui.llm.scripted import fail, text
from dsh_tui.ui.state.agent_view import AgentView
from dsh_tui.ui.state.breakpoints import CONTINUE, Breakpoints, Pause
from dsh_tui.ui.state.needs_you import (
    BLOCKED,
    FAILED,
    FINISHED_UNSEEN,
    KEPT,
    PAUSED,
    Facts,
    NeedsYou,
    facts_of,
)

from .conftest import add_agent, msg, world


class Watch:
    """The screen's side of the rule: views caught up, pauses noted, needs re-judged."""

    def __init__(self, ctx: Any) -> None:
        self.views: dict[str, AgentView] = {}
        self.paused: dict[str, float] = {}
        self.needs = NeedsYou()
        self.started: list[str] = []
        self.points = Breakpoints(ctx, self._pause, self._resume)

    def _pause(self, pause: Pause) -> None:
        self.paused[pause.agent.id] = time.time() * 1000

    def _resume(self, pause: Pause) -> None:
        self.paused.pop(pause.agent.id, None)

    def adopt(self, agent: Any) -> None:
        self.views[agent.id] = AgentView(agent)

    def facts(self, agent_id: str) -> Facts:
        view = self.views[agent_id]
        view.catch_up()
        agent = view.agent
        return facts_of(agent_id, agent.status, agent.inbox.has_pending, view.activity,
                        self.paused.get(agent_id))

    def flush(self) -> None:
        for agent_id in self.views:
            need = self.needs.update(self.facts(agent_id), time.time() * 1000)
            if need is not None:
                self.started.append(agent_id)

    def order(self) -> list[tuple[str, str]]:
        return [(need.agent_id, need.reason) for need in self.needs.ordered()]


async def until(predicate: Any, what: str) -> None:
    for _ in range(2000):
        if predicate():
            return
        await asyncio.sleep(0.001)
    raise AssertionError(f"{what} never happened")


async def test_two_breakpoints_and_a_failure_are_found_oldest_first_while_another_works() -> None:
    """The issue's scene in small: the person works with `worker`; `b1` then `b2` stop at
    their breakpoints, then `bad` fails. The jump key visits them in that order and
    wraps; looking at `bad` clears its failure, the pauses wait for an answer."""
    ctx, _model = world([fail("SERVER_ERROR", "upstream exploded"), text("the worker's reply"),
                         text("b1 goes on"), text("b2 goes on")])
    watch = Watch(ctx)
    agents = {}
    for name in ("worker", "b1", "b2", "bad"):
        agents[name] = await add_agent(ctx, name, name)
        watch.adopt(agents[name])
    watch.needs.looked_at(watch.facts("worker"))
    for name in ("b1", "b2"):
        watch.points.toggle(name)
        agents[name].followup(msg(f"go {name}", f"m-{name}", "follow-up"))
        await until(lambda name=name: name in watch.paused, f"{name} paused")
        watch.flush()
        await asyncio.sleep(0.002)  # the two pauses are told apart by when they began
    agents["bad"].followup(msg("go bad", "m-bad", "follow-up"))
    await asyncio.wait_for(agents["bad"].when_idle(), 5)
    agents["worker"].followup(msg("the person's own work", "m-w", "follow-up"))
    await asyncio.wait_for(agents["worker"].when_idle(), 5)
    watch.flush()

    assert watch.order() == [("b1", PAUSED), ("b2", PAUSED), ("bad", FAILED)]
    assert len(watch.needs) == 3 and watch.started == ["b1", "b2", "bad"]
    assert watch.needs.summary() == "3 need you · ◆2 ✗1"
    # worker finished its (the person's) turn while selected: seen as it happened
    assert "worker" not in watch.needs
    jumps, at = [], "worker"
    for _ in range(4):
        at = watch.needs.next_after(at)
        jumps.append(at)
    assert jumps == ["b1", "b2", "bad", "b1"]

    watch.needs.looked_at(watch.facts("bad"))
    watch.needs.looked_at(watch.facts("b1"))
    watch.flush()
    assert watch.order() == [("b1", PAUSED), ("b2", PAUSED)]  # a pause waits for an answer
    for name in ("b1", "b2"):
        watch.points.paused[name].resolve(CONTINUE)
        watch.points.disarm(name)
    await until(lambda: not watch.paused, "pauses answered")
    for name in ("b1", "b2"):
        await asyncio.wait_for(agents[name].when_idle(), 5)
    watch.flush()
    # b1 is selected: its turn ends seen; b2's finished turn (the person's) waits to be seen
    assert watch.order() == [("b2", FINISHED_UNSEEN)]
    assert watch.needs.next_after("b1") == "b2"
    watch.points.close()


async def test_a_sub_agents_finish_is_its_parents_business_but_its_failure_is_not() -> None:
    ctx, _model = world([text("done for the parent"), fail("SERVER_ERROR")])
    watch = Watch(ctx)
    parent = await add_agent(ctx, "parent", "parent")
    child = await add_agent(ctx, "child", "child", owner=parent)
    other = await add_agent(ctx, "other", "other", owner=parent)
    for agent in (parent, child, other):
        watch.adopt(agent)
    from dsh_tui.harness import user_message

    child.followup(user_message("research this", source={"kind": "plugin",
                                                          "plugin": "spawn_agent"}))
    await asyncio.wait_for(child.when_idle(), 5)
    other.followup(user_message("and this", source={"kind": "plugin", "plugin": "spawn_agent"}))
    await asyncio.wait_for(other.when_idle(), 5)
    watch.flush()
    assert watch.order() == [("other", FAILED)]


async def test_work_kept_after_a_stop_waits_for_an_action_and_a_blocked_step_for_a_look(
        ) -> None:
    ctx, _model = world([])
    watch = Watch(ctx)
    kept = await add_agent(ctx, "kept", "kept")
    blocked = await add_agent(ctx, "blocked", "blocked")
    for agent in (kept, blocked):
        watch.adopt(agent)
    gate = asyncio.Event()

    async def hold(payload: Any, downstream: Any) -> Any:
        if payload["agent"] is blocked:
            return {"kind": "reject"}
        await gate.wait()
        return await downstream()

    ctx.on("agent/pre-step", hold)
    kept.followup(msg("first", "k1", "follow-up"))
    kept.followup(msg("second", "k2", "follow-up"))
    kept.cancel(None, keep_inbox=True)
    gate.set()
    await asyncio.wait_for(kept.when_idle(), 5)
    blocked.followup(msg("never runs", "b1", "follow-up"))
    await until(lambda: any(e.type == "turn/end" for e in blocked.session.events),
                "the blocked turn's end")  # (idle may be seen before the turn starts)
    await asyncio.wait_for(blocked.when_idle(), 5)
    watch.flush()
    assert kept.inbox.has_pending
    assert dict(watch.order()) == {"kept": KEPT, "blocked": BLOCKED}
    watch.needs.looked_at(watch.facts("kept"))
    watch.needs.looked_at(watch.facts("blocked"))
    watch.flush()
    assert watch.order() == [("kept", KEPT)]  # looking delivers nothing: still waiting
    kept.inbox.clear()
    watch.flush()
    assert watch.order() == []


async def test_a_reopened_log_flags_nothing_and_a_disposed_agent_is_forgotten() -> None:
    ctx, _model = world([fail("SERVER_ERROR"), text("fine")])
    first = await add_agent(ctx, "first", "first")
    first.followup(msg("fails", "f1", "follow-up"))
    await asyncio.wait_for(first.when_idle(), 5)
    later = AgentView(first, now_ms=time.time() * 1000 + 1)  # adopted after the failure
    later.catch_up()
    needs = NeedsYou()
    assert needs.update(facts_of("first", "idle", False, later.activity), 0) is None
    assert len(needs) == 0

    live = AgentView(first, now_ms=0)
    live.catch_up()
    assert needs.update(facts_of("first", "idle", False, live.activity), 5) is not None
    assert needs.update(facts_of("first", "idle", False, live.activity), 6) is None  # once
    needs.forget(["first"])
    assert len(needs) == 0 and needs.next_after(None) is None and needs.summary() == ""


def test_a_need_keeps_its_place_in_line_when_its_reason_changes() -> None:
    needs = NeedsYou()
    needs.update(Facts("a", running=False, pending=True), now=100)
    needs.update(Facts("b", running=False, pending=True), now=200)
    needs.update(Facts("a", running=False, pending=True, paused_since=300), now=300)
    assert [(n.agent_id, n.reason) for n in needs.ordered()] == [("a", PAUSED), ("b", KEPT)]
    assert needs.counts() == {PAUSED: 1, KEPT: 1}
    assert needs.summary() == "2 need you · ◆1 ‖1"
    assert needs.next_after("b") == "a"
