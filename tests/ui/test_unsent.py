"""Claimed, never sent: the app's own reading of the session log, without a terminal.

Real agents on a scripted model; the turn ends before its claimed batch reaches a
model (a pre-step reject, as a breakpoint's skip does; a cancel while the pre-step
waits; a pre-step that drops a message). The folder must name exactly the claimed
messages no `user/message` recorded, in their lanes, and forget them once they are
pending again (put back, or re-queued by a resume).
"""

from __future__ import annotations

import asyncio
from typing import Any

from dsh_tui.llm.scripted import text
from dsh_tui.ui.state.agent_view import AgentView
from dsh_tui.ui.state.inbox_rows import inbox_rows
from dsh_tui.ui.state.unsent import UnsentTracker

from .conftest import add_agent, msg, world


def folded(agent: Any) -> UnsentTracker:
    """A fresh folder over the agent's whole log, as a resumed app would build it."""
    view = AgentView(agent)
    view.catch_up()
    return view.unsent


def offered(agent: Any) -> list[tuple[str, str, str]]:
    return [(u.id, u.target, u.message["content"][0]["text"]) for u in folded(agent).unsent]


async def test_a_rejected_step_offers_its_whole_batch_back_in_lane_order() -> None:
    ctx, model = world([text("never")])
    agent = await add_agent(ctx, "a", "a")
    ctx.on("agent/pre-step", lambda payload, downstream: {"kind": "reject"})
    agent.inject(msg("context first", "i1", "inject"))
    agent.steer(msg("steer it", "s1", "steer"))
    await asyncio.wait_for(agent.when_idle(), 5)
    assert model.requests == []
    assert offered(agent) == [("i1", "next-step", "context first"),
                              ("s1", "next-step", "steer it")]
    assert folded(agent).unsent[0].reason == "blocked before a step"


async def test_a_completed_turn_offers_nothing() -> None:
    ctx, model = world([text("fine"), text("again")])
    agent = await add_agent(ctx, "a", "a")
    agent.followup(msg("one", "m1"))
    await asyncio.wait_for(agent.when_idle(), 5)
    agent.followup(msg("two", "m2"))
    await asyncio.wait_for(agent.when_idle(), 5)
    assert len(model.requests) == 2
    assert offered(agent) == []


async def test_a_cancel_while_the_pre_step_waits_offers_the_claim_and_keeps_the_inbox() -> None:
    ctx, _model = world([text("never")])
    agent = await add_agent(ctx, "a", "a")
    waiting = asyncio.Event()

    async def hold(payload: Any, downstream: Any) -> Any:
        stopped = asyncio.get_running_loop().create_future()
        payload["signal"].add_listener(lambda _reason: stopped.done() or stopped.set_result(1))
        waiting.set()
        await stopped  # as a breakpoint waits: until the person decides, or a cancel
        return await downstream()

    ctx.on("agent/pre-step", hold)
    agent.followup(msg("first", "m1"))
    await asyncio.wait_for(waiting.wait(), 5)
    agent.followup(msg("second", "m2"))
    agent.cancel(None, keep_inbox=True)
    await asyncio.wait_for(agent.when_idle(), 5)
    assert offered(agent) == [("m1", "next-turn", "first")]  # the claimed one only
    assert [m.id for m in agent.inbox.next_turn] == ["m2"]  # pending, not offered
    assert "aborted" in folded(agent).unsent[0].reason


async def test_a_pre_step_that_drops_a_message_offers_only_that_one() -> None:
    ctx, model = world([text("done")])
    agent = await add_agent(ctx, "a", "a")

    async def keep_first(payload: Any, downstream: Any) -> Any:
        return {"kind": "enter", "messages": list(payload["messages"][:1])}

    ctx.on("agent/pre-step", keep_first)
    agent.inject(msg("kept", "i1", "inject"))
    agent.followup(msg("dropped", "m1"))
    await asyncio.wait_for(agent.when_idle(), 5)
    assert len(model.requests) == 1
    assert offered(agent) == [("m1", "next-turn", "dropped")]


async def test_putting_back_is_one_splice_and_the_offer_is_gone_live_and_on_reload() -> None:
    ctx, _model = world([text("never")])
    agent = await add_agent(ctx, "a", "a")
    ctx.on("agent/pre-step", lambda payload, downstream: {"kind": "reject"})
    view = AgentView(agent)
    agent.steer(msg("steer it", "s1", "steer"))
    await asyncio.wait_for(agent.when_idle(), 5)
    view.catch_up()
    before = view.unsent.version
    assert [u.id for u in view.unsent.unsent] == ["s1"]
    rows = inbox_rows(agent.inbox.next_step, agent.inbox.next_turn, (), paused=False,
                      unsent=view.unsent.unsent)
    assert [(r.kind, r.target, r.lane) for r in rows if r.kind == "unsent"] == [
        ("unsent", "next-step", "steer")]
    message = view.unsent.unsent[0].message
    from dsh_tui.harness import UserMessage

    agent.inbox.splice("next-step", 0, 0, [UserMessage.from_json(message)])
    view.catch_up()
    assert view.unsent.unsent == [] and view.unsent.version > before
    assert folded(agent).unsent == []  # a reload reads the same
    assert agent.inbox.next_step[0].id == "s1"
    assert agent.inbox.next_step[0].source.get("lane") == "steer"


def test_a_malformed_log_offers_nothing_and_never_raises() -> None:
    tracker = UnsentTracker()

    class Event:
        def __init__(self, type_: str, data: Any) -> None:
            self.type, self.data = type_, data

    for event in (Event("agent/inbox/spliced", {"target": "next-step", "start": "x"}),
                  Event("agent/inbox/spliced", {"target": "elsewhere", "start": 0}),
                  Event("turn/start", "not a mapping"),
                  Event("turn/end", {"turn": 1}),
                  Event("user/message", {"id": 3})):
        tracker.apply(event)
    assert tracker.unsent == []


def test_dismissed_messages_are_no_longer_offered() -> None:
    tracker = UnsentTracker()

    class Event:
        def __init__(self, type_: str, data: Any) -> None:
            self.type, self.data = type_, data

    message = {"id": "m1", "role": "user", "content": [{"type": "text", "text": "hi"}]}
    for event in (Event("agent/inbox/spliced", {"target": "next-turn", "start": 0,
                                                "inserted": [message]}),
                  Event("turn/start", {"turn": 1}),
                  Event("agent/inbox/spliced", {"target": "next-turn", "start": 0,
                                                "removedCount": 1, "inserted": []}),
                  Event("turn/end", {"turn": 1, "reason": {"kind": "blocked"}})):
        tracker.apply(event)
    assert [u.id for u in tracker.unsent] == ["m1"]
    tracker.dismiss({"m1"})
    assert tracker.unsent == []
