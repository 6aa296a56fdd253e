"""The typed seam at run time: a recorded agent is an `Agent` like a live one, its inbox
shows what the log left pending and refuses every edit by raising ReadOnlyError (the
UI's read-only mode relies on the refusal, never on a missing method)."""

from __future__ import annotations

import pytest

from dsh_tui.harness import Agent, new_world, user_message
from dsh_tui.harness.readonly import ReadOnlyError, register_log_agent
from dsh_tui.harness.session import SessionEvent

from .conftest import WorldFactory


def _recorded_log() -> list[SessionEvent]:
    first, second = user_message("first"), user_message("second")
    splice = {"target": "next-turn", "start": 0, "removedCount": 0,
              "inserted": [first.to_json(), second.to_json()]}
    return [SessionEvent("agent/inbox/spliced", 0, 1, splice)]


def test_a_recorded_agent_is_an_agent_whose_inbox_refuses_every_edit() -> None:
    ctx = new_world(read_only=True)
    agent = register_log_agent(ctx, {"id": "rec", "version": 0, "createdAt": 0},
                               _recorded_log())
    assert isinstance(agent, Agent)
    assert ctx.agents.get("rec") is agent and ctx.agents.roots() == [agent]
    assert agent.status == "idle" and agent.ctx.read_only
    inbox = agent.inbox
    assert [m.text for m in inbox.next_turn] == ["first", "second"] and inbox.has_pending
    pending = inbox.next_turn[1]
    assert inbox.get(pending.id) == pending and inbox.get("nope") is None
    for edit in (lambda: inbox.append("next-turn", user_message("x")),
                 lambda: inbox.prepend("next-step", user_message("x")),
                 lambda: inbox.replace(pending.id, pending.with_text("y")),
                 lambda: inbox.remove(pending.id),
                 lambda: inbox.move(pending.id, "next-step", 0),
                 lambda: inbox.splice("next-turn", 0, 1),
                 inbox.clear):
        with pytest.raises(ReadOnlyError):
            edit()
    assert [m.text for m in inbox.next_turn] == ["first", "second"]


async def test_a_live_agent_is_an_agent_and_the_registry_hands_it_out_typed(
        make_world: WorldFactory) -> None:
    world = make_world()
    agent = await world.agent("live")
    assert isinstance(agent, Agent)
    assert world.ctx.agents.get("live") is agent and agent in world.ctx.agents.list()
    assert world.ctx.agents.children_of(None) == [agent]
    assert world.ctx.agents.get("gone") is None
