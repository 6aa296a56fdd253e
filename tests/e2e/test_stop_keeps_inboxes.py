"""Stopping an agent keeps every inbox, its sub-agents' included (issue 9: only ctrl+l,
the inbox's clear, a removal and dispose throw work away).

A parent runs `spawn_agent`; the person queues messages for the running sub-agent, then
stops the parent (escape: cancel keeping its inbox). The sub-agent stops too, as the
parent's tool call ends, but what the person queued for it stays pending and no discard
is written.
"""

from __future__ import annotations

import asyncio

from dsh_tui.compose import build_context
from dsh_tui.harness import user_message
from dsh_tui.llm.scripted import ScriptedModel, hang, tool_call
from dsh_tui.ui.state.world import create_agent, dispose_all


async def test_stopping_a_parent_keeps_what_was_queued_for_its_sub_agent() -> None:
    model = ScriptedModel([tool_call("c1", "spawn_agent", {"task": "dig", "name": "kid"}),
                           hang("digging")])
    ctx = build_context(providers={"m": model}, retry=False, system_prompt=None)
    try:
        parent = (await create_agent(ctx, provider="m", model="m", session_id="p")).agent
        parent.followup(user_message("delegate it"))
        for _ in range(500):
            kids = [a for a in ctx.agents.list() if a is not parent]
            if kids and len(model.requests) == 2:
                break
            await asyncio.sleep(0.01)
        kid = kids[0]
        assert kid.status == "running"
        later = user_message("for the kid, later")
        steer = user_message("and steer it")
        kid.followup(later)
        kid.steer(steer)
        parent.cancel(keep_inbox=True)  # escape on the parent
        await asyncio.wait_for(asyncio.gather(parent.when_idle(), kid.when_idle()), 5)
        ends = [e.data["reason"] for e in kid.session.events if e.type == "turn/end"]
        assert ends == [{"kind": "aborted", "reason": {"kind": "parent"}}]
        assert [m.id for m in kid.inbox.next_turn] == [later.id]
        assert [m.id for m in kid.inbox.next_step] == [steer.id]
        discards = [e.data for e in kid.session.events
                    if e.type == "agent/inbox/spliced" and "outcome" in e.data]
        assert discards == []
    finally:
        await dispose_all(ctx)
        await ctx.scope.dispose()
