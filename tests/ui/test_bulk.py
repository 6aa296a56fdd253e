"""Issue 28: acting on many agents at once, over real agents on a scripted model; no screen.

Each action says how many agents it touched; broadcast and discard are one history entry
each, undone and redone as one step."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from dsh_tui.harness.readonly import register_log_agent
from dsh_tui.llm.scripted import hang, text, tool_call
from dsh_tui.loop import Tool
from dsh_tui.ui.state.bulk import (
    Broadcast,
    Marks,
    broadcast,
    dispose_all,
    finished_children,
    stop,
    stop_tree,
    subtree,
)
from dsh_tui.ui.state.inbox_edits import EditRefused, Remove
from dsh_tui.ui.state.lanes import lane_of

from .conftest import add_agent, msg, world


def reasons(agent: Any) -> list[str]:
    return [e.data["reason"]["kind"] for e in agent.session.events if e.type == "turn/end"]


def inboxes_of(ctx: Any) -> Any:
    """Agent id → its inbox, as the screen's history reads them (None once gone)."""
    return lambda agent_id: (agent.inbox if (agent := ctx.agents.get(agent_id)) else None)


def canceled(agent: Any) -> int:
    return sum(1 for e in agent.session.events
               if e.type == "agent/inbox/spliced" and e.data.get("outcome") == "canceled")


async def running(*agents: Any) -> None:
    for agent in agents:
        agent.followup(msg(f"work {agent.id}", f"w-{agent.id}", "follow-up"))
    for _ in range(1000):
        if all(a.status == "running" and a.session.events[-1].type == "assistant/chunk"
               for a in agents):
            return
        await asyncio.sleep(0.001)
    raise AssertionError("the agents never started streaming")


async def test_a_steer_broadcast_reaches_each_marked_agent_in_its_steer_lane_and_undoes() -> None:
    ctx, _model = world([hang("a"), hang("b"), hang("c")])
    agents = [await add_agent(ctx, name, name) for name in ("a", "b", "c", "bystander")]
    marks = Marks()
    for agent in agents[:3]:
        assert marks.toggle(agent.id)
    await running(*agents[:3])
    targets = [ctx.agents.get(agent_id) for agent_id in marks.ids]
    result = broadcast(targets, "wrap up and report", "steer")
    assert result.touched == ["a", "b", "c"] and not result.errors
    assert result.say("Steered") == "Steered 3 agents."
    for agent in agents[:3]:
        (message,) = agent.inbox.next_step
        assert message.text == "wrap up and report"
        assert lane_of(message.source, "next-step") == "steer"
    assert not agents[3].inbox.has_pending
    ids = {agent.inbox.next_step[0].id for agent in agents[:3]}
    assert len(ids) == 3  # a message of its own each
    edit = result.edit
    assert isinstance(edit, Broadcast) and edit.name == "broadcast to 3 agents"
    edit.revert(inboxes_of(ctx))
    assert all(not agent.inbox.has_pending for agent in agents)
    assert all(canceled(agent) == 1 for agent in agents[:3])  # unsent durably
    assert edit.detail == ""  # every copy came back
    edit.apply(inboxes_of(ctx))  # a redo: the same copies, same ids, in the steer lane
    assert {agent.inbox.next_step[0].id for agent in agents[:3]} == ids
    assert all(lane_of(a.inbox.next_step[0].source, "next-step") == "steer" for a in agents[:3])
    for agent in agents[:3]:
        agent.cancel()
        await asyncio.wait_for(agent.when_idle(), 5)


async def test_one_agent_refusing_a_broadcast_does_not_stop_the_others() -> None:
    ctx, _model = world([text("one"), text("two")])
    first = await add_agent(ctx, "first", "first")
    second = await add_agent(ctx, "second", "second")
    from dsh_tui.harness import new_world

    recorded = register_log_agent(new_world(read_only=True),
                                  {"id": "rec", "version": 0, "createdAt": 0}, [])
    result = broadcast([first, recorded, second], "hello all", "follow-up")
    assert result.touched == ["first", "second"] and [e[0] for e in result.errors] == ["rec"]
    assert result.say("Sent to").startswith("Sent to 2 agents; 1 failed (rec:")
    for agent in (first, second):
        await asyncio.wait_for(agent.when_idle(), 5)
        assert reasons(agent) == ["completed"]
    edit = result.edit
    assert edit is not None
    with pytest.raises(EditRefused, match="every copy had already gone to its model"):
        edit.revert(inboxes_of(ctx))  # all claimed: sent for good, nothing written
    empty = Marks()
    empty.set(["x", "y"])
    empty.prune(["y"])
    assert empty.ids == ["y"] and "y" in empty and len(empty) == 1
    empty.clear()
    assert len(empty) == 0


async def test_a_broadcast_undo_takes_back_the_copies_still_pending_and_names_the_rest() -> None:
    ctx, _model = world([hang("busy"), text("done")])
    busy = await add_agent(ctx, "busy", "busy")
    idle = await add_agent(ctx, "idle", "idle")
    await running(busy)
    result = broadcast([busy, idle], "and then summarise", "follow-up")
    await asyncio.wait_for(idle.when_idle(), 5)  # the idle one took its copy at once
    edit = result.edit
    assert edit is not None
    edit.revert(inboxes_of(ctx))
    assert not busy.inbox.next_turn and edit.detail == "1 copy unsent, 1 already sent"
    edit.apply(inboxes_of(ctx))  # redo sends again only what the undo took back
    assert [m.text for m in busy.inbox.next_turn] == ["and then summarise"]
    assert edit.detail == "1 copy sent again"
    busy.cancel()
    await asyncio.wait_for(busy.when_idle(), 5)


async def test_stop_many_keeps_every_inbox_and_skips_the_idle() -> None:
    ctx, _model = world([hang("a"), hang("b")])
    a, b, idle = [await add_agent(ctx, n, n) for n in ("a", "b", "idle")]
    await running(a, b)
    for agent in (a, b):
        agent.followup(msg(f"later {agent.id}", f"l-{agent.id}", "follow-up"))
    result = stop([a, b, idle])
    assert result.touched == ["a", "b"] and result.skipped == ["idle"]
    assert result.say("Stopped", "were not running") == "Stopped 2 agents (1 were not running)."
    assert result.edit is None
    for agent in (a, b):
        await asyncio.wait_for(agent.when_idle(), 5)
        assert reasons(agent) == ["aborted"]
        assert [m.text for m in agent.inbox.next_turn] == [f"later {agent.id}"]
        assert canceled(agent) == 0


async def test_stop_after_this_step_lets_each_step_finish_and_keeps_the_batch() -> None:
    gate = asyncio.Event()
    started: list[str] = []

    async def slow(call: Any) -> str:
        started.append(call.agent.id)
        await gate.wait()
        return "slow done"

    ctx, model = world([tool_call("c1", "slow", {}), tool_call("c2", "slow", {})],
                       tools=[Tool("slow", "slow", {"type": "object"}, slow)])
    a, b = [await add_agent(ctx, n, n) for n in ("a", "b")]
    a.followup(msg("go a", "ga", "follow-up"))
    b.followup(msg("go b", "gb", "follow-up"))
    for _ in range(1000):
        if len(started) == 2:
            break
        await asyncio.sleep(0.001)
    broadcast([a, b], "next, look at the tests", "steer")
    result = stop([a, b], after_step=True)
    assert result.touched == ["a", "b"]
    gate.set()
    for agent in (a, b):
        await asyncio.wait_for(agent.when_idle(), 5)
        assert reasons(agent) == ["aborted"]
        results = [e for e in agent.session.events if e.type == "tool/result"]
        assert len(results) == 1 and "slow done" in str(results[0].data)
        assert [m.text for m in agent.inbox.next_step] == ["next, look at the tests"]
    assert len(model.requests) == 2  # no step after the boundary


async def _tree(ctx: Any) -> tuple[Any, list[Any]]:
    lead = await add_agent(ctx, "lead", "lead")
    kids = [await add_agent(ctx, f"kid{i}", f"kid {i}", owner=lead) for i in range(2)]
    grandkid = await add_agent(ctx, "grandkid", "grandkid", owner=kids[0])
    return lead, [lead, *kids, grandkid]


async def test_a_subtree_stop_keeps_every_inbox_when_asked() -> None:
    ctx, _model = world([hang(str(i)) for i in range(4)])
    lead, everyone = await _tree(ctx)
    assert [agent.id for agent in subtree(ctx.agents, lead)] == ["lead", "kid0", "kid1",
                                                                 "grandkid"]
    await running(*everyone)
    for agent in everyone:
        agent.followup(msg(f"queued for {agent.id}", f"q-{agent.id}", "follow-up"))
        agent.inject(msg(f"context for {agent.id}", f"i-{agent.id}", "inject"))
    result = stop_tree(ctx.agents, lead, keep=True)
    assert sorted(result.touched) == sorted(a.id for a in everyone) and result.edit is None
    for agent in everyone:
        await asyncio.wait_for(agent.when_idle(), 5)
        assert reasons(agent) == ["aborted"] and canceled(agent) == 0
        assert len(agent.inbox.next_turn) == 1 and len(agent.inbox.next_step) == 1


async def test_a_subtree_stop_that_discards_clears_every_inbox_and_undoes_as_one() -> None:
    ctx, _model = world([hang(str(i)) for i in range(3)])
    lead, everyone = await _tree(ctx)
    await running(*everyone[:3])  # the grandchild is idle, with work kept
    before = {}
    for agent in everyone:
        agent.followup(msg(f"first for {agent.id}", f"a-{agent.id}", "follow-up"))
        agent.followup(msg(f"second for {agent.id}", f"b-{agent.id}", "follow-up"))
        before[agent.id] = [m.id for m in agent.inbox.next_turn]
    grandkid = everyone[3]
    grandkid.cancel(None, keep_inbox=True)  # the follow-up woke it: stop it, work kept
    await asyncio.wait_for(grandkid.when_idle(), 5)
    before["grandkid"] = [m.id for m in grandkid.inbox.next_turn]
    result = stop_tree(ctx.agents, lead, keep=False)
    assert len(result.touched) == 4
    for agent in everyone:
        await asyncio.wait_for(agent.when_idle(), 5)
        assert not agent.inbox.has_pending and canceled(agent) >= 1
    edit = result.edit
    assert isinstance(edit, Remove)
    assert edit.name == f"clear {sum(len(ids) for ids in before.values())} items of 4 " \
                        "stopped agents"
    edit.revert(inboxes_of(ctx))
    for agent in everyone:
        assert [m.id for m in agent.inbox.next_turn] == before[agent.id]


async def test_finished_children_go_in_one_bulk_dispose_and_the_busy_one_stays() -> None:
    ctx, _model = world([text("done 0"), text("done 1"), hang("busy")])
    lead = await add_agent(ctx, "lead", "lead")
    kids = [await add_agent(ctx, f"kid{i}", f"kid {i}", owner=lead) for i in range(3)]
    for kid in kids[:2]:
        kid.followup(msg("research", f"r-{kid.id}", "follow-up"))
        await asyncio.wait_for(kid.when_idle(), 5)
    await running(kids[2])

    def finished(agent: Any) -> bool:
        return agent.status == "idle" and not agent.inbox.has_pending

    done = finished_children(ctx.agents, [lead], finished)
    assert [agent.id for agent in done] == ["kid0", "kid1"]
    result = await dispose_all(ctx.agents, done)
    assert result.touched == ["kid0", "kid1"] and result.say("Disposed") == "Disposed 2 agents."
    assert [a.id for a in ctx.agents.children_of(lead)] == ["kid2"]
    again = await dispose_all(ctx.agents, done)
    assert again.touched == [] and again.skipped == ["kid0", "kid1"]
    kids[2].cancel()
    await asyncio.wait_for(kids[2].when_idle(), 5)
