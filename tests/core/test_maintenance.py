"""Maintenance (C-63, §3.5): the maintenance phase, its latch and its cancellation."""

from __future__ import annotations

import asyncio

import pytest

from dsh_tui.llm.scripted import hang, text

from .conftest import (
    Recorder,
    bounded,
    ctx_msg,
    filtered,
    m,
    settle,
    text_deltas,
    until,
    user_texts,
)

USER = {"kind": "user"}


class MaintenanceAborted(Exception):
    pass


def gated_task(started: asyncio.Event, finish: asyncio.Event, result="done", seen=None):
    """A task(signal) that records its invocation synchronously and returns an awaitable that
    finishes when `finish` is set, or fails with MaintenanceAborted when the signal aborts."""
    def task(signal):
        started.set()
        if seen is not None:
            seen.append(signal)
        return body(signal)

    async def body(signal):
        waiter = asyncio.ensure_future(signal.wait())
        gate = asyncio.ensure_future(finish.wait())
        done, pending = await asyncio.wait({waiter, gate}, return_when=asyncio.FIRST_COMPLETED)
        for p in pending:
            p.cancel()
        if waiter in done:
            raise MaintenanceAborted("maintenance aborted")
        return result
    return task


async def test_c63_maintenance_runs_task_synchronously_and_keeps_status_idle(make_world):
    """C-63 / §3.5: run_maintenance invokes task(signal) before returning, the public status stays
    idle with no agent/status event, when_idle() waits for the task, and the awaitable carries the
    task's result."""
    world = make_world([])
    agent = await world.agent()
    rec = Recorder(world.ctx).status(agent)
    started, finish = asyncio.Event(), asyncio.Event()
    result = agent.run_maintenance(gated_task(started, finish, result=42))
    assert started.is_set()
    assert agent.status == "idle"
    idle = asyncio.ensure_future(agent.when_idle())
    await settle()
    assert not idle.done()
    finish.set()
    assert await bounded(result) == 42
    await bounded(idle)
    assert rec.statuses() == []
    assert list(agent.session.events) == []


async def test_c63_maintenance_rejects_when_busy(make_world):
    """C-63 / §3.5: run_maintenance raises synchronously 'agent "<id>" already has active work'
    while running or while another maintenance task is active."""
    world = make_world([hang()])
    agent = await world.agent()
    started, finish = asyncio.Event(), asyncio.Event()
    first = agent.run_maintenance(gated_task(started, finish))
    called = []
    with pytest.raises(Exception, match='agent "a1" already has active work'):
        agent.run_maintenance(lambda signal: called.append(1))
    finish.set()
    await bounded(first)
    agent.followup(m("go"))
    with pytest.raises(Exception, match='agent "a1" already has active work'):
        agent.run_maintenance(lambda signal: called.append(1))
    assert called == []
    agent.cancel(USER)
    await bounded(agent.when_idle())


async def test_c63_wake_latched_behind_maintenance_replays(make_world):
    """C-63 / §3.5: a waking send during maintenance is inserted but not started (no turn/start);
    when the task settles the latch replays it."""
    world = make_world([text("wake reply")])
    agent = await world.agent()
    started, finish = asyncio.Event(), asyncio.Event()
    maintenance = agent.run_maintenance(gated_task(started, finish))
    agent.followup(m("wake behind maintenance"))
    await settle()
    assert filtered(agent, "turn/start") == []
    assert agent.status == "idle"
    assert [x.text for x in agent.inbox.next_turn] == ["wake behind maintenance"]
    finish.set()
    await bounded(maintenance)
    await bounded(agent.when_idle())
    assert user_texts(agent) == ["wake behind maintenance"]
    assert len(world.model.requests) == 1


async def test_c63_when_idle_follows_the_replay_driver(make_world):
    """§3.4/§3.5: a when_idle() issued during maintenance also waits for the latch-replay driver."""
    world = make_world([text("reply")])
    agent = await world.agent()
    started, finish = asyncio.Event(), asyncio.Event()
    agent.run_maintenance(gated_task(started, finish))
    agent.followup(m("latched"))
    idle = asyncio.ensure_future(agent.when_idle())
    finish.set()
    await bounded(idle)
    assert user_texts(agent) == ["latched"]
    assert agent.status == "idle"


async def test_c63_removed_latched_maintenance_wake_suppresses_replay(make_world):
    """C-63 / §3.5: a latched wake removed before the task ends produces no turn."""
    world = make_world([])
    agent = await world.agent()
    started, finish = asyncio.Event(), asyncio.Event()
    maintenance = agent.run_maintenance(gated_task(started, finish))
    wake = m("removed wake")
    agent.followup(wake)
    assert agent.inbox.remove(wake.id) is True
    finish.set()
    await bounded(maintenance)
    await bounded(agent.when_idle())
    await settle()
    assert filtered(agent, "turn/start") == []
    assert world.model.requests == []


async def test_c63_cancel_drops_queued_wake_and_relatches_newer_intent(make_world):
    """C-63 / §3.5: cancel() aborts the task's signal and (without keep_inbox) clears the inbox and
    the latch; a waking send after that cancel is rerouted to next-turn, latched again and replays
    after the task ends; the returned awaitable carries the task's exception."""
    world = make_world([text("park reply")])
    agent = await world.agent()
    started, finish = asyncio.Event(), asyncio.Event()
    signals = []
    maintenance = agent.run_maintenance(gated_task(started, finish, seen=signals))
    agent.followup(m("discard this wakeup"))
    agent.cancel(USER)
    assert signals[0].aborted and signals[0].reason == USER
    agent.followup(m("park after cancellation"))
    with pytest.raises(MaintenanceAborted, match="maintenance aborted"):
        await bounded(maintenance)
    await bounded(agent.when_idle())
    assert user_texts(agent) == ["park after cancellation"]
    assert agent.inbox.next_turn == ()
    assert len(world.model.requests) == 1


async def test_c63_steer_after_maintenance_cancel_is_rerouted(make_world):
    """§3.2/§3.5: after a maintenance cancel, even a steer is rerouted to next-turn and latched."""
    world = make_world([text("reply")])
    agent = await world.agent()
    started, finish = asyncio.Event(), asyncio.Event()
    maintenance = agent.run_maintenance(gated_task(started, finish))
    agent.cancel(USER, keep_inbox=True)
    s = m("steer")
    agent.steer(s)
    assert agent.inbox.next_turn == (s,) and agent.inbox.next_step == ()
    with pytest.raises(MaintenanceAborted):
        await bounded(maintenance)
    await bounded(agent.when_idle())
    assert user_texts(agent) == ["steer"]


async def test_c63_steer_during_live_maintenance_is_latched_in_next_step(make_world):
    """§3.2: during a live (not aborted) maintenance a steer keeps its target next-step and is
    latched; inject is neither rerouted nor latched."""
    world = make_world([text("reply")])
    agent = await world.agent()
    started, finish = asyncio.Event(), asyncio.Event()
    maintenance = agent.run_maintenance(gated_task(started, finish))
    c = ctx_msg("note")
    agent.inject(c)
    s = m("steer")
    agent.steer(s)
    assert agent.inbox.next_step == (c, s)
    finish.set()
    await bounded(maintenance)
    await bounded(agent.when_idle())
    assert user_texts(agent) == ["note", "steer"]


async def test_c63_inject_only_during_maintenance_does_not_wake(make_world):
    """§3.5: inject (non-waking) during maintenance sets no latch: no turn after the task ends."""
    world = make_world([])
    agent = await world.agent()
    started, finish = asyncio.Event(), asyncio.Event()
    maintenance = agent.run_maintenance(gated_task(started, finish))
    agent.inject(ctx_msg("note"))
    finish.set()
    await bounded(maintenance)
    await settle()
    assert filtered(agent, "turn/start") == []
    assert [x.text for x in agent.inbox.next_step] == ["note"]


async def test_c63_failing_task_still_releases_the_phase(make_world):
    """§3.5: when the task fails (sync raise or async failure) the phase returns to idle, a latched
    wake replays, and the awaitable carries the failure."""
    world = make_world([text("after failure"), text("after sync failure")])
    agent = await world.agent()

    async def failing(signal):
        await asyncio.sleep(0)
        raise ValueError("task broke")

    result = agent.run_maintenance(failing)
    agent.followup(m("queued"))
    with pytest.raises(ValueError, match="task broke"):
        await bounded(result)
    await bounded(agent.when_idle())
    assert user_texts(agent) == ["queued"]

    def sync_failing(signal):
        raise KeyError("sync broke")

    with pytest.raises(KeyError):
        await bounded(agent.run_maintenance(sync_failing))
    agent.followup(m("again"))
    await bounded(agent.when_idle())
    assert user_texts(agent) == ["queued", "again"]


async def test_c63_keep_inbox_cancel_keeps_the_latch(make_world):
    """§3.3/§3.5: cancel(keep_inbox=True) during maintenance aborts the task but keeps both the
    pending item and the latch, so it replays when the task settles."""
    world = make_world([text("reply")])
    agent = await world.agent()
    started, finish = asyncio.Event(), asyncio.Event()
    maintenance = agent.run_maintenance(gated_task(started, finish))
    agent.followup(m("kept"))
    agent.cancel(USER, keep_inbox=True)
    with pytest.raises(MaintenanceAborted):
        await bounded(maintenance)
    await bounded(agent.when_idle())
    assert user_texts(agent) == ["kept"]


async def test_c63_disposal_during_maintenance_never_latches(make_world):
    """§3.2/§4.5: a disposed cancel never latches: disposal aborts maintenance and a waking send
    during disposal stays parked (no turn)."""
    world = make_world([text("never")])
    handle = await world.create("maint-dispose")
    agent = handle.agent
    started, finish = asyncio.Event(), asyncio.Event()
    maintenance = agent.run_maintenance(gated_task(started, finish))
    disposal = asyncio.ensure_future(handle.dispose())
    await until(lambda: maintenance.done(), "maintenance aborted by disposal")
    with pytest.raises(MaintenanceAborted):
        maintenance.result()
    await bounded(disposal)
    assert filtered(agent, "turn/start") == []
    assert world.model.requests == []
    assert world.ctx.agents.get("maint-dispose") is None


async def test_c63_running_agent_hang_then_maintenance_after_idle(make_world):
    """§3.5: once the driver converged to idle, maintenance can start again."""
    world = make_world([hang()])
    agent = await world.agent()
    agent.followup(m("go"))
    await until(lambda: len(text_deltas(agent)) >= 7)
    agent.cancel(USER)
    await bounded(agent.when_idle())

    async def quick(signal):
        return "ok"

    assert await bounded(agent.run_maintenance(quick)) == "ok"


async def test_c63_async_task_body_starts_before_run_maintenance_returns(make_world):
    """C-63 / §3.5: run_maintenance invokes task(signal) synchronously: the synchronous prefix of an
    async task body has run when run_maintenance returns (so a cancel issued right after it is
    observed by a listener the task registered)."""
    world = make_world([])
    agent = await world.agent()
    trace = []

    async def task(signal):
        trace.append("started")
        signal.add_listener(lambda reason: trace.append(("aborted", reason["kind"])))
        await asyncio.sleep(0)
        return "done"

    result = agent.run_maintenance(task)
    assert trace == ["started"]
    agent.cancel(USER, keep_inbox=True)
    assert trace == ["started", ("aborted", "user")]
    assert await bounded(result) == "done"
