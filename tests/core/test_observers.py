"""§8 Observer containment (C-95, C-97) and the dispatch modes of §5.1."""

from __future__ import annotations

import asyncio

import pytest

from dsh_tui.llm.scripted import fail, text

from .conftest import Recorder, bounded, filtered, m, turn_reasons, user_texts


@pytest.mark.parametrize("kind", ["turn/start", "step/start", "step/end", "turn/end",
                                  "user/message", "assistant/chunk", "assistant/message",
                                  "agent/inbox/spliced"])
@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_c95_raising_session_observer_does_not_change_the_turn(make_world, kind, mode):
    """C-95: a raising session/event listener on turn/start, step/start, step/end or turn/end (and
    any other event) does not change the turn: balanced boundaries, completed, no agent/error, and
    later turns run."""
    world = make_world([text("one"), text("two")])
    agent = await world.agent()
    errors = []
    world.ctx.on("agent/error", lambda p: errors.append(p))

    if mode == "sync":
        def observer(session, event):
            if event.type == kind:
                raise RuntimeError(f"observer broke on {kind}")
    else:
        async def observer(session, event):
            if event.type == kind:
                raise RuntimeError(f"observer rejected on {kind}")

    world.ctx.on("session/event", observer)
    later = []
    world.ctx.on("session/event", lambda s, e: later.append(e.seq))
    agent.followup(m("first"))
    await bounded(agent.when_idle())
    agent.followup(m("second"))
    await bounded(agent.when_idle())
    await asyncio.sleep(0)
    assert turn_reasons(agent) == [{"kind": "completed"}] * 2
    assert filtered(agent, "turn/start", "step/start", "step/end", "turn/end") == [
        "turn/start", "step/start", "step/end", "turn/end"] * 2
    assert errors == []
    assert user_texts(agent) == ["first", "second"]
    assert later == list(range(agent.session.seq))  # later observers saw every event


async def test_c97_raising_agent_error_listener(make_world):
    """C-97: a raising agent/error listener during a model-error path: the turn still closes with
    the error reason; statuses return idle; the next turn works."""
    world = make_world([fail("SERVER", "model broke"), text("next")])
    agent = await world.agent()

    def boom(payload):
        raise RuntimeError("error listener broke")

    world.ctx.on("agent/error", boom)
    rec = Recorder(world.ctx).status(agent)
    agent.followup(m("go"))
    await bounded(agent.when_idle())
    assert turn_reasons(agent) == [{"kind": "error", "error": {"message": "model broke",
                                                               "code": "SERVER"}}]
    assert filtered(agent, "step/start", "step/end") == ["step/start", "step/end"]
    assert rec.statuses() == ["running", "idle"]
    agent.followup(m("again"))
    await bounded(agent.when_idle())
    assert turn_reasons(agent)[-1] == {"kind": "completed"}


async def test_rule_raising_turn_stopping_listener_is_a_turn_error(make_world):
    """§5.1/§6.7: serial listener exceptions propagate to the loop: a raising agent/turn-stopping
    listener ends the turn with an error (agent/error first); the loop survives."""
    world = make_world([text("one"), text("two")])
    agent = await world.agent()
    raised = []

    def stopping(payload):
        if not raised:
            raised.append(1)
            raise RuntimeError("stopping broke")

    errors = []
    world.ctx.on("agent/turn-stopping", stopping)
    world.ctx.on("agent/error", lambda p: errors.append((p["turn"], p["step"], str(p["error"]))))
    agent.followup(m("go"))
    await bounded(agent.when_idle())
    assert turn_reasons(agent) == [{"kind": "error", "error": {"message": "stopping broke",
                                                               "code": "UNKNOWN"}}]
    assert errors == [(1, 1, "stopping broke")]
    agent.followup(m("again"))
    await bounded(agent.when_idle())
    assert turn_reasons(agent)[-1] == {"kind": "completed"}


async def test_rule_serial_bail_value_stops_the_chain(make_world):
    """§5.1 serial: listeners run one after another; a listener returning a bail value (anything
    but None/False) stops the chain; the loop ignores the value."""
    world = make_world([text("one")])
    agent = await world.agent()
    order = []

    async def first(payload):
        order.append("first")
        return False

    def second(payload):
        order.append("second")
        return "bail"

    world.ctx.on("agent/turn-stopping", first)
    world.ctx.on("agent/turn-stopping", second)
    world.ctx.on("agent/turn-stopping", lambda p: order.append("third"))
    agent.followup(m("go"))
    await bounded(agent.when_idle())
    assert order == ["first", "second"]
    assert turn_reasons(agent) == [{"kind": "completed"}]


async def test_rule_waterfall_chain_order_and_replacement(make_world):
    """§5.1 waterfall: listeners form a chain in registration order, each may call next() (finally
    the default) and transform the result; not calling next() replaces the rest."""
    world = make_world([text("ok")])
    agent = await world.agent()
    order = []

    async def outer(payload, next_):
        order.append("outer:before")
        result = await next_()
        order.append("outer:after")
        return result

    async def inner(payload, next_):
        order.append("inner")
        return {"kind": "enter", "messages": [payload["messages"][0].with_text("replaced")]}

    async def never(payload, next_):
        order.append("never")
        return await next_()

    world.ctx.on("agent/pre-step", outer)
    world.ctx.on("agent/pre-step", inner)
    world.ctx.on("agent/pre-step", never)
    agent.followup(m("go"))
    await bounded(agent.when_idle())
    assert order == ["outer:before", "inner", "outer:after"]
    assert user_texts(agent) == ["replaced"]


async def test_rule_raising_inbox_notification_listener_is_contained(make_world):
    """§5.1: agent/inbox/* notifications are contained: a raising listener never undoes the
    mutation nor stops the turn."""
    world = make_world([text("ok")])
    agent = await world.agent()

    def boom(payload):
        raise RuntimeError("notification listener broke")

    for name in ("agent/inbox/inserted", "agent/inbox/claimed", "agent/inbox/discarded"):
        world.ctx.on(name, boom)
    c = m("context")
    agent.inject(c)
    assert agent.inbox.next_step == (c,)
    agent.inbox.remove(c.id)
    assert agent.inbox.next_step == ()
    agent.followup(m("go"))
    await bounded(agent.when_idle())
    assert turn_reasons(agent) == [{"kind": "completed"}]


async def test_rule_created_listener_async_failure_does_not_veto(make_world):
    """§4.2/§5.1: a created listener whose returned awaitable fails is only logged (no veto)."""
    world = make_world([])

    async def failing(payload):
        raise RuntimeError("async created listener broke")

    world.ctx.on("agent/created", failing)
    agent = await world.agent("kept")
    await asyncio.sleep(0)
    assert world.ctx.agents.get("kept") is agent


async def test_rule_sync_created_listener_vetoes_factory_creation(make_world):
    """§4.4.5/§4.4.6: a synchronous agent/created (or session/created) raise vetoes publication;
    every announcement that happened is paired; the id is free again."""
    world = make_world([])
    log = []
    world.ctx.on("session/created", lambda s: log.append("session/created"))
    world.ctx.on("agent/created", lambda p: log.append("agent/created"))
    world.ctx.on("agent/disposed", lambda p: log.append("agent/disposed"))
    world.ctx.on("session/disposed", lambda s: log.append("session/disposed"))
    veto = {"on": "agent"}

    def agent_veto(payload):
        if veto["on"] == "agent":
            raise RuntimeError("agent veto")

    def session_veto(session):
        if veto["on"] == "session":
            raise RuntimeError("session veto")

    world.ctx.on("agent/created", agent_veto)
    world.ctx.on("session/created", session_veto)
    with pytest.raises(RuntimeError, match="agent veto"):
        await world.create("vetoed")
    assert log == ["session/created", "agent/created", "agent/disposed", "session/disposed"]
    assert world.ctx.agents.get("vetoed") is None and world.ctx.sessions.get("vetoed") is None
    log.clear()
    veto["on"] = "session"
    with pytest.raises(RuntimeError, match="session veto"):
        await world.create("vetoed")
    assert log == ["session/created", "session/disposed"]
    assert world.ctx.agents.get("vetoed") is None and world.ctx.sessions.get("vetoed") is None
    veto["on"] = None
    log.clear()
    await world.create("vetoed")
    assert log == ["session/created", "agent/created"]
