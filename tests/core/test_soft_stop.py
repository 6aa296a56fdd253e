"""§3.7 Stop after this step: the step in progress ends, nothing more is claimed, the
inbox is kept (this project's addition to the agent surface)."""

from __future__ import annotations

import asyncio

import pytest

from dsh_tui.harness import new_world
from dsh_tui.harness.readonly import ReadOnlyError, register_log_agent
from dsh_tui.llm.scripted import text, tool_call

from .conftest import bounded, canceled_splices, events_of, m, tool, turn_reasons, user_texts

USER = {"kind": "user"}


def _gated_tool(gate: asyncio.Event, started: asyncio.Event) -> object:
    async def run(call: object) -> str:
        started.set()
        await gate.wait()
        return "tool done"
    return tool("slow", run)


async def test_a_soft_stop_lets_the_step_and_its_tools_finish_then_keeps_the_steer(make_world):
    """Mid-tool: the tool runs to its result, `step/end` is written, the steer sent during
    the step stays pending in next-step, no second request goes out, and the turn ends
    aborted with the cause; the agent is idle with its work kept."""
    gate, started = asyncio.Event(), asyncio.Event()
    world = make_world([tool_call("c1", "slow", {}), text("never asked for")],
                       tools=[_gated_tool(gate, started)])
    agent = await world.agent()
    agent.followup(m("start"))
    await bounded(started.wait(), "tool start")
    agent.steer(m("change of plans"))
    assert agent.stop_after_step() is True
    gate.set()
    await bounded(agent.when_idle())

    assert len(world.model.requests) == 1
    assert [e.data["step"] for e in events_of(agent, "step/end")] == [1]
    results = events_of(agent, "tool/result")
    assert len(results) == 1 and "tool done" in str(results[0].data)
    assert turn_reasons(agent) == [{"kind": "aborted", "reason": USER}]
    assert [msg.text for msg in agent.inbox.next_step] == ["change of plans"]
    assert canceled_splices(agent) == []  # kept, never discarded
    assert agent.status == "idle"
    assert user_texts(agent) == ["start"]


async def test_a_step_that_ends_the_turn_ends_it_completed_and_the_next_prompt_waits(
        make_world):
    """The last step of a turn: the turn ends `completed` as it would have; the prompt
    queued behind it is not started (it waits, kept) until a waking send."""
    gate, started = asyncio.Event(), asyncio.Event()

    async def reply_after_gate(request: object) -> object:
        started.set()
        await gate.wait()
        return text("first answer")

    world = make_world([reply_after_gate, text("second answer")])
    agent = await world.agent()
    agent.followup(m("first"))
    await bounded(started.wait(), "request")
    agent.followup(m("second"))
    assert agent.stop_after_step() is True
    gate.set()
    await bounded(agent.when_idle())

    assert turn_reasons(agent) == [{"kind": "completed"}]
    assert [msg.text for msg in agent.inbox.next_turn] == ["second"]
    assert agent.status == "idle" and len(world.model.requests) == 1

    assert agent.wake() is True  # delivering the kept prompt runs it, in order
    await bounded(agent.when_idle())
    assert user_texts(agent) == ["first", "second"]
    assert turn_reasons(agent)[-1] == {"kind": "completed"}


async def test_an_idle_agent_has_nothing_to_stop(make_world):
    world = make_world([])
    agent = await world.agent()
    agent.inject(m("context for later"))
    assert agent.stop_after_step() is False
    assert [msg.text for msg in agent.inbox.next_step] == ["context for later"]
    assert events_of(agent, "turn/start") == []


async def test_the_first_cause_wins_and_a_cancel_still_acts_at_once(make_world):
    """Asked twice, the first cause is the one recorded; a hard cancel meanwhile ends the
    turn at once (mid-tool) with its own cause, as §3.3 says."""
    gate, started = asyncio.Event(), asyncio.Event()
    world = make_world([tool_call("c1", "slow", {}), text("unused")],
                       tools=[_gated_tool(gate, started)])
    first = await world.agent("first")
    first.followup(m("go"))
    await bounded(started.wait(), "tool start")
    assert first.stop_after_step({"kind": "hook", "reason": "budget"})
    assert first.stop_after_step(USER)
    gate.set()
    await bounded(first.when_idle())
    assert turn_reasons(first) == [{"kind": "aborted",
                                    "reason": {"kind": "hook", "reason": "budget"}}]

    gate2, started2 = asyncio.Event(), asyncio.Event()
    world2 = make_world([tool_call("c2", "slow", {}), text("unused")],
                        tools=[_gated_tool(gate2, started2)])
    second = await world2.agent("second")
    second.followup(m("go"))
    await bounded(started2.wait(), "tool start")
    assert second.stop_after_step()
    second.cancel({"kind": "parent"}, keep_inbox=True)
    gate2.set()
    await bounded(second.when_idle())
    assert turn_reasons(second) == [{"kind": "aborted", "reason": {"kind": "parent"}}]
    assert second.stop_after_step() is False  # idle now


async def test_a_send_after_the_stop_took_effect_runs_the_kept_work_first(make_world):
    """Once the boundary ended the turn, a waking send starts a fresh turn that claims the
    kept steer before the new prompt (§6.3, C-5): nothing kept was lost or reordered."""
    gate, started = asyncio.Event(), asyncio.Event()
    world = make_world([tool_call("c1", "slow", {}), text("after the stop")],
                       tools=[_gated_tool(gate, started)])
    agent = await world.agent()
    agent.followup(m("start"))
    await bounded(started.wait(), "tool start")
    agent.steer(m("kept steer"))
    agent.stop_after_step()
    gate.set()
    await bounded(agent.when_idle())
    agent.followup(m("go on"))
    await bounded(agent.when_idle())
    assert user_texts(agent) == ["start", "kept steer", "go on"]
    assert [r["kind"] for r in turn_reasons(agent)] == ["aborted", "completed"]
    assert not agent.inbox.has_pending


def test_a_recorded_agent_refuses_a_soft_stop() -> None:
    ctx = new_world(read_only=True)
    agent = register_log_agent(ctx, {"id": "rec", "version": 0, "createdAt": 0}, [])
    with pytest.raises(ReadOnlyError):
        agent.stop_after_step()
