"""§3.8 Edit holds: a held pending item makes the driver wait at the boundary that would
claim it, until the hold is released, lapses, or the item leaves the claim's reach."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from dsh_tui.harness import new_world, user_message
from dsh_tui.harness.holds import DEFAULT_HOLD_LIMIT, HoldBook
from dsh_tui.harness.readonly import ReadOnlyError, register_log_agent
from dsh_tui.harness.session import SessionEvent
from dsh_tui.llm.scripted import text, tool_call

from .conftest import (
    block_text,
    bounded,
    events_of,
    filtered,
    m,
    request_text,
    settle,
    tool,
    turn_reasons,
    until,
    user_texts,
)


def _gated_tool(name: str = "slow") -> tuple[Any, asyncio.Event, asyncio.Event]:
    """A tool that signals it started and waits for the test to let it finish."""
    started, release = asyncio.Event(), asyncio.Event()

    async def run(_call: Any) -> str:
        started.set()
        await release.wait()
        return "tool done"

    return tool(name, run), started, release


def _waits(agent: Any) -> list[Any]:
    return events_of(agent, "inbox/hold-wait")


def _ends(agent: Any) -> list[Any]:
    return [e.data for e in events_of(agent, "inbox/hold-end")]


async def _steer_during_tool(make_world: Any) -> tuple[Any, Any, Any, asyncio.Event]:
    """A running agent inside a tool call, with a steer queued behind it."""
    slow, started, release = _gated_tool()
    world = make_world([tool_call("c1", "slow", {}), text("after the tool"), text("later")],
                       tools=[slow])
    agent = await world.agent()
    agent.followup(m("start"))
    await bounded(started.wait(), "tool start")
    steer = m("old steer")
    agent.steer(steer)
    return world, agent, steer, release


async def test_a_held_steer_waits_for_the_edit_and_the_step_sends_the_new_text(make_world):
    """Hold on: a steer whose editor opened during a tool call is not claimed at the step
    boundary until the edit is saved; the next request carries the edited text only."""
    world, agent, steer, release = await _steer_during_tool(make_world)
    hold = agent.hold(steer.id)
    assert hold is not None and hold.active and agent.holds == (hold,)
    release.set()
    await until(lambda: bool(_waits(agent)), "the driver waits on the hold")
    await settle()
    assert agent.inbox.get(steer.id) is not None  # not claimed while held
    assert filtered(agent, "step/start") == ["step/start"]
    assert len(world.model.requests) == 1
    wait = _waits(agent)[0]
    assert wait.ignorable is True
    assert wait.data["turn"] == 1 and wait.data["step"] == 2 and wait.data["held"] == [steer.id]
    assert 0 < wait.data["limitMs"] <= DEFAULT_HOLD_LIMIT * 1000
    assert hold.deadline is not None  # the countdown started with the wait

    assert agent.inbox.replace(steer.id, steer.with_text("new steer"))
    assert hold.release() is True
    assert hold.release() is False  # idempotent
    await bounded(agent.when_idle())

    assert _ends(agent) == [{"turn": 1, "step": 2, "reason": "released",
                             "waitedMs": _ends(agent)[0]["waitedMs"]}]
    assert user_texts(agent) == ["start", "new steer"]
    assert "new steer" in request_text(world.model.requests[1])
    assert "old steer" not in request_text(world.model.requests[1])
    assert filtered(agent, "turn/start") == ["turn/start"]
    assert agent.holds == ()


async def test_without_a_hold_the_boundary_claims_the_old_text_and_the_edit_fails(make_world):
    """Hold off (the race the hold exists for): the claim takes the steer as it was, and a
    save after it finds the item gone (`replace` is False)."""
    _world, agent, steer, release = await _steer_during_tool(make_world)
    release.set()
    await bounded(agent.when_idle())
    assert agent.inbox.replace(steer.id, steer.with_text("new steer")) is False
    assert user_texts(agent) == ["start", "old steer"]
    assert _waits(agent) == [] and _ends(agent) == []


async def test_a_hold_lapses_after_its_limit_and_the_claim_goes_ahead(make_world):
    """No agent waits forever: past the limit the hold lapses (`agent/inbox/released`
    reason lapsed) and the boundary claims the item as it is."""
    world, agent, steer, release = await _steer_during_tool(make_world)
    heard: list[tuple[str, str]] = []
    world.ctx.on("agent/inbox/released",
                 lambda p: heard.append((p["message_id"], p["reason"])))
    hold = agent.hold(steer.id, limit=0.05)
    assert hold is not None and hold.deadline is None  # nobody waits yet
    release.set()
    await bounded(agent.when_idle())
    assert hold.state == "lapsed" and not hold.active
    assert heard == [(steer.id, "lapsed")]
    assert [e["reason"] for e in _ends(agent)] == ["lapsed"]
    assert user_texts(agent) == ["start", "old steer"]
    assert agent.holds == ()


async def test_cancel_while_waiting_ends_the_turn_and_claims_nothing(make_world):
    _world, agent, steer, release = await _steer_during_tool(make_world)
    hold = agent.hold(steer.id)
    assert hold is not None
    release.set()
    await until(lambda: bool(_waits(agent)), "the driver waits on the hold")
    agent.cancel(keep_inbox=True)
    await bounded(agent.when_idle())
    assert [e["reason"] for e in _ends(agent)] == ["aborted"]
    assert turn_reasons(agent)[-1]["kind"] == "aborted"
    assert agent.inbox.get(steer.id) is not None  # kept, never claimed
    assert user_texts(agent) == ["start"]
    types = [e.type for e in agent.session.events]
    assert types.index("inbox/hold-end") < types.index("turn/end")


async def test_a_hold_on_an_item_the_claim_would_not_take_does_not_wait(make_world):
    """A turn's first boundary takes only the first prompt: holding the second one lets the
    first run; the second's own turn then waits for it."""
    world = make_world([text("one"), text("two")])
    agent = await world.agent()
    first, second = m("first"), m("second")
    agent.inbox.append("next-turn", first)
    agent.inbox.append("next-turn", second)
    hold = agent.hold(second.id)
    assert hold is not None
    assert agent.wake()
    await until(lambda: bool(_waits(agent)), "turn 2 waits on the held prompt")
    assert user_texts(agent) == ["first"]
    wait = _waits(agent)[0].data
    assert (wait["turn"], wait["step"], wait["held"]) == (2, 1, [second.id])
    assert agent.inbox.replace(second.id, second.with_text("second, edited"))
    hold.release()
    await bounded(agent.when_idle())
    assert user_texts(agent) == ["first", "second, edited"]


async def test_an_idle_followup_behind_a_held_prompt_opens_its_turn_then_waits(make_world):
    """C-2 without a hold is unchanged (claim before `followup` returns); with the first
    prompt held the turn opens and its claim waits for the release."""
    world = make_world([text("one"), text("two")])
    agent = await world.agent()
    queued = m("queued first")
    agent.inbox.append("next-turn", queued)
    hold = agent.hold(queued.id)
    assert hold is not None
    agent.followup(m("sent now"))
    assert filtered(agent, "turn/start") == ["turn/start"]
    assert agent.inbox.get(queued.id) is not None  # held: not claimed synchronously
    assert [e.data["held"] for e in _waits(agent)] == [[queued.id]]
    hold.release()
    await bounded(agent.when_idle())
    assert user_texts(agent) == ["queued first", "sent now"]


async def test_moving_the_held_item_out_of_reach_lets_the_boundary_go_on(make_world):
    """A held steer moved to next-turn no longer blocks the step boundary (reason
    `unblocked`, the hold stays); its own turn then waits for it again."""
    world, agent, steer, release = await _steer_during_tool(make_world)
    hold = agent.hold(steer.id, limit=30)
    assert hold is not None
    release.set()
    await until(lambda: bool(_waits(agent)), "the driver waits on the hold")
    assert agent.inbox.move(steer.id, "next-turn", 0)
    await until(lambda: len(_waits(agent)) == 2, "turn 2 waits on the moved item")
    assert [e["reason"] for e in _ends(agent)] == ["unblocked"]
    assert hold.active
    assert [e.data["turn"] for e in _waits(agent)] == [1, 2]
    hold.release()
    await bounded(agent.when_idle())
    assert [e["reason"] for e in _ends(agent)] == ["unblocked", "released"]
    assert user_texts(agent) == ["start", "old steer"]
    # turn 1's step 2 ran without it; turn 2 sent it
    assert "old steer" not in request_text(world.model.requests[1])
    assert "old steer" in request_text(world.model.requests[2])
    assert [r["kind"] for r in turn_reasons(agent)] == ["completed", "completed"]


async def test_removing_the_held_item_unblocks_and_nothing_is_sent(make_world):
    _world, agent, steer, release = await _steer_during_tool(make_world)
    hold = agent.hold(steer.id)
    assert hold is not None
    release.set()
    await until(lambda: bool(_waits(agent)), "the driver waits on the hold")
    assert agent.inbox.remove(steer.id)
    await bounded(agent.when_idle())
    assert [e["reason"] for e in _ends(agent)] == ["unblocked"]
    assert user_texts(agent) == ["start"]
    hold.release()


async def test_hold_events_and_refusals(make_world):
    world = make_world([])
    agent = await world.agent()
    heard: list[Any] = []
    world.ctx.on("agent/inbox/held", lambda p: heard.append(("held", p["message"].id)))
    world.ctx.on("agent/inbox/released",
                 lambda p: heard.append(("released", p["message_id"], p["reason"])))
    assert agent.hold("nobody") is None
    item = m("queued")
    agent.inbox.append("next-turn", item)
    with pytest.raises(ValueError):
        agent.hold(item.id, limit=-1)
    hold = agent.hold(item.id)
    assert hold is not None
    hold.release()
    assert heard == [("held", item.id), ("released", item.id, "released")]
    assert [e.type for e in agent.session.events if e.type.startswith("inbox/")] == []


def test_a_recorded_agent_holds_nothing() -> None:
    ctx = new_world(read_only=True)
    message = user_message("queued")
    events = [SessionEvent("agent/inbox/spliced", 0, 1, {"target": "next-turn", "start": 0,
                                                          "inserted": [message.to_json()]})]
    agent = register_log_agent(ctx, {"version": 0, "id": "rec", "createdAt": 1}, events)
    assert agent.holds == ()
    with pytest.raises(ReadOnlyError):
        agent.hold(message.id)


def test_the_hold_book_counts_down_only_while_someone_waits() -> None:
    now = [100.0]
    ended: list[tuple[str, str]] = []
    book = HoldBook(lambda hold, reason: ended.append((hold.message_id, reason)),
                    clock=lambda: now[0])
    a, b = book.place("a", 10), book.place("b", 5)
    assert book.blocking(["b", "x"]) == [b] and book.held_ids() == {"a", "b"}
    now[0] = 1000.0
    assert book.lapse_due() == []  # nobody waited: no countdown
    book.begin_wait([a, b])
    now[0] = 1005.0
    assert b.remaining() == 0.0 and a.remaining() == 5.0
    assert book.lapse_due() == [b] and b.state == "lapsed"
    book.begin_wait([a])  # a second wait does not restart the countdown
    assert a.deadline == 1010.0
    assert a.release() and ended == [("b", "lapsed"), ("a", "released")]
    assert book.active == ()


async def test_a_log_with_hold_records_resumes_under_the_strict_loader(tmp_path):
    """The hold records are this project's own (`ignorable: true`): a resume reads them."""
    from dsh_tui.harness import ResumeAgentOptions
    from dsh_tui.harness.persistence import JsonlPersistence

    from .conftest import compose

    slow, started, release = _gated_tool()
    world = compose([tool_call("c1", "slow", {}), text("after")], tools=[slow],
                    persistence=JsonlPersistence(tmp_path))
    handle = await world.create("held")
    agent = handle.agent
    agent.followup(m("start"))
    await bounded(started.wait(), "tool start")
    steer = m("steer")
    agent.steer(steer)
    hold = agent.hold(steer.id)
    assert hold is not None
    release.set()
    await until(lambda: bool(_waits(agent)), "the driver waits on the hold")
    hold.release()
    await bounded(agent.when_idle())
    await bounded(handle.dispose())

    again = compose([], persistence=JsonlPersistence(tmp_path))
    resumed = await again.ctx.agents.resume(ResumeAgentOptions(resume_session_id="held"))
    try:
        kinds = [e.type for e in resumed.agent.session.events]
        assert kinds.count("inbox/hold-wait") == 1 and kinds.count("inbox/hold-end") == 1
        assert [block_text(e.data["content"]) for e in events_of(resumed.agent,
                                                                 "user/message")] == [
            "start", "steer"]
    finally:
        await bounded(resumed.dispose())
