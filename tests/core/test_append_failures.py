"""§6.8 Append failures inside the driver: a log that refuses a boundary record.

The session's own `append` is made to fail for one event type (as a full disk or a
broken store would make it fail), everything else stays real.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from dsh_tui.llm.scripted import text

from .conftest import Recorder, bounded, m, types


class LogRefused(RuntimeError):
    pass


def refuse(agent: Any, monkeypatch: pytest.MonkeyPatch, event_type: str,
           times: int = 1) -> list[str]:
    """Make `agent.session.append` raise for the next `times` events of `event_type`."""
    session = agent.session
    real: Callable[..., Any] = session.append
    refused: list[str] = []

    def append(type_: str, *args: Any, **kwargs: Any) -> Any:
        if type_ == event_type and len(refused) < times:
            refused.append(type_)
            raise LogRefused(f"cannot write {type_}")
        return real(type_, *args, **kwargs)

    monkeypatch.setattr(session, "append", append)
    return refused


def _errors(world: Any, agent: Any) -> list[Any]:
    errors: list[Any] = []
    world.ctx.on("agent/error", lambda p: errors.append(p["error"]) if p["agent"] is agent
                 else None)
    return errors


async def test_turn_start_refused_keeps_the_prompt_queued(make_world, monkeypatch):
    world = make_world([text("answer")])
    agent = await world.agent()
    errors = _errors(world, agent)
    statuses = Recorder(world.ctx).status(agent)
    refused = refuse(agent, monkeypatch, "turn/start")
    prompt = m("hi")

    agent.followup(prompt)
    await bounded(agent.when_idle())

    assert refused == ["turn/start"]
    assert [type(e) for e in errors] == [LogRefused]
    assert types(agent) == ["agent/inbox/spliced"]  # no turn state at all
    assert [x.id for x in agent.inbox.next_turn] == [prompt.id]  # not claimed
    assert agent.status == "idle" and statuses.statuses() == ["running", "idle"]
    assert agent.current_turn == 0

    # The log accepts records again: the kept prompt is delivered by the next wake.
    agent.wake()
    await bounded(agent.when_idle())
    assert types(agent)[1:3] == ["turn/start", "agent/inbox/spliced"]
    assert agent.session.events[1].data == {"turn": 1}
    assert not agent.inbox.has_pending


async def test_step_start_refused_ends_the_turn_with_that_error(make_world, monkeypatch):
    world = make_world([text("answer")])
    agent = await world.agent()
    errors = _errors(world, agent)
    refuse(agent, monkeypatch, "step/start")

    agent.followup(m("hi"))
    await bounded(agent.when_idle())

    kinds = types(agent)
    assert "step/start" not in kinds and "step/end" not in kinds
    assert "user/message" not in kinds and "request/header" not in kinds
    end = agent.session.events[-1]
    assert end.type == "turn/end"
    assert end.data["reason"]["kind"] == "error"
    assert "cannot write step/start" in end.data["reason"]["error"]["message"]
    assert [type(e) for e in errors] == [LogRefused]
    assert agent.status == "idle"


async def test_turn_end_refused_reports_and_returns_to_idle(make_world, monkeypatch):
    world = make_world([text("answer"), text("second")])
    agent = await world.agent()
    errors = _errors(world, agent)
    statuses = Recorder(world.ctx).status(agent)
    refuse(agent, monkeypatch, "turn/end")

    agent.followup(m("hi"))
    await bounded(agent.when_idle())

    kinds = types(agent)
    assert "turn/end" not in kinds and kinds[-1] == "step/end"
    assert "assistant/message" in kinds
    assert [type(e) for e in errors] == [LogRefused]
    assert agent.status == "idle" and statuses.statuses() == ["running", "idle"]

    # The next turn works and is numbered after the one whose end was lost.
    agent.followup(m("again"))
    await bounded(agent.when_idle())
    assert agent.session.events[-1].type == "turn/end"
    assert agent.session.events[-1].data["turn"] == 2


async def test_a_failing_session_listener_never_affects_the_loop(make_world):
    world = make_world([text("answer")])
    agent = await world.agent()

    def broken(session: Any, event: Any) -> None:
        raise RuntimeError("listener broke")

    world.ctx.on("session/event", broken)
    agent.followup(m("hi"))
    await bounded(agent.when_idle())
    assert agent.session.events[-1].data == {"turn": 1, "reason": {"kind": "completed"}}
