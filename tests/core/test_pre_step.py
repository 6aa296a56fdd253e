"""§8 Pre-step decisions (C-27 … C-37) and the rules of §6.2/§6.3."""

from __future__ import annotations

import asyncio

import pytest

from dsh_tui.llm.scripted import text, tool_call

from .conftest import (
    Recorder,
    block_text,
    bounded,
    ctx_msg,
    events_of,
    filtered,
    m,
    request_text,
    tool,
    turn_reasons,
    types,
    user_texts,
)


async def test_c27_default_enter_and_frozen_input(make_world):
    """C-27: a pass-through pre-step listener sees messages[0] text 'hello'; the recorded
    user/message is unchanged; the offered messages and their content/source are frozen
    (mutation raises) and so is the caller's original message object."""
    world = make_world([text("ok")])
    agent = await world.agent()
    seen = []

    async def pass_through(payload, next_):
        message = payload["messages"][0]
        seen.append(message)
        with pytest.raises((AttributeError, TypeError)):
            message.content = ()
        with pytest.raises(TypeError):
            message.content[0]["text"] = "listener mutation"
        with pytest.raises(TypeError):
            message.source["kind"] = "other"
        with pytest.raises((AttributeError, TypeError)):
            payload["messages"].append(message)
        return await next_()

    world.ctx.on("agent/pre-step", pass_through)
    original = m("hello", kind="plugin", plugin="accepted source")
    agent.followup(original)
    with pytest.raises(TypeError):
        original.content[0]["text"] = "caller mutation"
    with pytest.raises(TypeError):
        original.source["plugin"] = "caller mutation"
    await bounded(agent.when_idle())
    assert len(seen) == 1 and seen[0].text == "hello"
    assert seen[0].id == original.id
    assert events_of(agent, "user/message")[0].data == original.to_json()
    assert "hello" in request_text(world.model.requests[0])


@pytest.mark.parametrize("shape", ["with_text", "dict"])
async def test_c28_rewrite(make_world, shape):
    """C-28: returning enter([{...m, content:[text REWRITTEN]}]) records and sends REWRITTEN; the
    original text never reaches the model."""
    world = make_world([text("ok")])
    agent = await world.agent()

    async def rewrite(payload, next_):
        first = payload["messages"][0]
        if shape == "with_text":
            replacement = first.with_text("REWRITTEN")
        else:
            replacement = {**first.to_json(), "content": [{"type": "text", "text": "REWRITTEN"}]}
        return {"kind": "enter", "messages": [replacement]}

    world.ctx.on("agent/pre-step", rewrite)
    agent.followup(m("original"))
    await bounded(agent.when_idle())
    assert events_of(agent, "user/message")[0].data["content"] == [
        {"type": "text", "text": "REWRITTEN"}]
    sent = request_text(world.model.requests[0])
    assert "REWRITTEN" in sent and "original" not in sent


async def test_c29_extra_message(make_world):
    """C-29: returning enter([*messages, ctx]) records ctx as a separate user/message with its own
    plugin source, after the prompt; the request contains it."""
    world = make_world([text("ok")])
    agent = await world.agent()
    extra = ctx_msg("<system-reminder>extra ctx</system-reminder>", plugin="test")

    async def add(payload, next_):
        return {"kind": "enter", "messages": [*payload["messages"], extra]}

    world.ctx.on("agent/pre-step", add)
    agent.followup(m("go"))
    await bounded(agent.when_idle())
    recorded = events_of(agent, "user/message")
    assert [e.data["source"] for e in recorded] == [{"kind": "user"},
                                                    {"kind": "plugin", "plugin": "test"}]
    assert recorded[1].data == extra.to_json()
    assert "extra ctx" in request_text(world.model.requests[0])


async def test_c30_reject(make_world):
    """C-30: a pre-step reject → filtered log turn/start, turn/end{blocked}; no step/start, no
    user/message; 0 requests; the claimed prompt is not in the inbox and is not 'discarded'."""
    world = make_world([text("should not run")])
    agent = await world.agent()
    rec = Recorder(world.ctx).inbox(agent)

    async def reject(payload, next_):
        return {"kind": "reject"}

    world.ctx.on("agent/pre-step", reject)
    prompt = m("do something")
    agent.followup(prompt)
    await bounded(agent.when_idle())
    assert filtered(agent, "turn/start", "turn/end", "step/start", "user/message") == [
        "turn/start", "turn/end"]
    assert turn_reasons(agent) == [{"kind": "blocked"}]
    assert world.model.requests == []
    assert agent.inbox.next_turn == () and agent.inbox.has_pending is False
    assert rec.of("discarded") == []
    assert agent.inbox.remove(prompt.id) is False


async def test_rule_blocked_prompt_preserves_adjacent_queued_prompts(make_world):
    """§6.2: after a blocked turn the driver stops even if next_turn holds prompts; they wait for
    the next waking send, which runs them in order (the blocked prompt never reaches the model)."""
    world = make_world([text("safe reply"), text("wake reply")])
    agent = await world.agent()

    async def gate(payload, next_):
        joined = "".join(x.text for x in payload["messages"])
        return {"kind": "reject"} if joined == "secret" else await next_()

    world.ctx.on("agent/pre-step", gate)
    agent.followup(m("secret"))
    agent.followup(m("safe"))
    await bounded(agent.when_idle())
    assert filtered(agent, "turn/start", "turn/end") == ["turn/start", "turn/end"]
    assert turn_reasons(agent) == [{"kind": "blocked"}]
    assert [x.text for x in agent.inbox.next_turn] == ["safe"]
    assert world.model.requests == []
    agent.followup(m("wake"))
    await bounded(agent.when_idle())
    assert user_texts(agent) == ["safe", "wake"]
    assert "secret" not in request_text(world.model.requests[0])
    assert [e.data["turn"] for e in events_of(agent, "turn/end")] == [1, 2, 3]


async def test_rule_input_staged_after_blocked_claim_survives(make_world):
    """§6.3.5: inject/steer issued while the pre-step decision is pending stays pending after a
    reject (only the claimed batch is owned by the turn); a later wake runs it."""
    world = make_world([text("retried")])
    agent = await world.agent()
    entered = asyncio.Event()
    decision: asyncio.Future = asyncio.get_running_loop().create_future()

    async def block(payload, next_):
        entered.set()
        return await decision

    off = world.ctx.on("agent/pre-step", block)
    agent.followup(m("blocked prompt"))
    await bounded(entered.wait())
    agent.inject(ctx_msg("staged context"))
    agent.steer(m("staged steering"))
    assert agent.status == "running"
    assert filtered(agent, "user/message") == []
    decision.set_result({"kind": "reject"})
    await bounded(agent.when_idle())
    assert [x.text for x in agent.inbox.next_step] == ["staged context", "staged steering"]
    assert filtered(agent, "turn/start", "turn/end") == ["turn/start", "turn/end"]
    assert world.model.requests == []
    off()
    agent.followup(m("resume"))
    await bounded(agent.when_idle())
    assert user_texts(agent) == ["staged context", "staged steering", "resume"]
    sent = request_text(world.model.requests[0])
    assert "blocked prompt" not in sent and "staged steering" in sent


async def test_rule_input_staged_during_entered_pre_step_lands_next_step(make_world):
    """§6.6: steering submitted during a pre-step wait lands in the step after the one being
    decided (request 1 lacks it, request 2 has it)."""
    world = make_world([text("one"), text("two")])
    agent = await world.agent()
    entered = asyncio.Event()
    decision: asyncio.Future = asyncio.get_running_loop().create_future()
    first = []

    async def hold(payload, next_):
        if first:
            return await next_()
        first.append(payload["messages"])
        entered.set()
        return await decision

    world.ctx.on("agent/pre-step", hold)
    agent.followup(m("entered prompt"))
    await bounded(entered.wait())
    agent.inject(ctx_msg("attached context"))
    agent.steer(m("pre-step steering"))
    decision.set_result({"kind": "enter", "messages": list(first[0])})
    await bounded(agent.when_idle())
    assert user_texts(agent) == ["entered prompt", "attached context", "pre-step steering"]
    assert filtered(agent, "turn/start") == ["turn/start"]
    r1, r2 = (request_text(r) for r in world.model.requests)
    assert "attached context" not in r1 and "pre-step steering" not in r1
    assert "attached context" in r2 and "pre-step steering" in r2


async def test_c33_reject_at_a_later_boundary(make_world):
    """C-33: step 1 completes, turn-stopping injects context, the second pre-step rejects → 1
    request, turn/end{blocked} (a reject at any boundary ends the turn blocked)."""
    world = make_world([text("one"), text("two")])
    agent = await world.agent()
    stopping = []

    def on_stopping(payload):
        if not stopping:
            stopping.append(1)
            payload["agent"].inject(ctx_msg("more"))

    async def pre(payload, next_):
        return {"kind": "reject"} if payload["step"] == 2 else await next_()

    world.ctx.on("agent/turn-stopping", on_stopping)
    world.ctx.on("agent/pre-step", pre)
    agent.followup(m("go"))
    await bounded(agent.when_idle())
    assert len(world.model.requests) == 1
    assert turn_reasons(agent) == [{"kind": "blocked"}]
    assert filtered(agent, "step/start", "step/end") == ["step/start", "step/end"]


async def test_c34_empty_first_batch(make_world):
    """C-34: pre-step returns enter([]) → filtered log turn/start, turn/end{1, completed}; no
    step; 0 requests; next_turn empty."""
    world = make_world([text("never")])
    agent = await world.agent()

    async def empty(payload, next_):
        return {"kind": "enter", "messages": []}

    world.ctx.on("agent/pre-step", empty)
    agent.followup(m("go"))
    await bounded(agent.when_idle())
    assert filtered(agent, "turn/start", "turn/end", "step/start") == ["turn/start", "turn/end"]
    assert events_of(agent, "turn/end")[0].data == {"turn": 1, "reason": {"kind": "completed"}}
    assert world.model.requests == []
    assert agent.inbox.next_turn == ()


async def test_rule_empty_first_batch_stops_driver_with_prompts_queued(make_world):
    """§6.2: after an empty first batch the driver stops even if next_turn still holds prompts."""
    world = make_world([text("later"), text("latest")])
    agent = await world.agent()

    async def empty_first(payload, next_):
        if payload["turn"] == 1:
            return {"kind": "enter", "messages": []}
        return await next_()

    world.ctx.on("agent/pre-step", empty_first)
    agent.followup(m("a"))
    agent.followup(m("b"))
    await bounded(agent.when_idle())
    assert [x.text for x in agent.inbox.next_turn] == ["b"]
    assert filtered(agent, "turn/start") == ["turn/start"]
    agent.followup(m("c"))
    await bounded(agent.when_idle())
    assert user_texts(agent) == ["b", "c"]
    assert turn_reasons(agent) == [{"kind": "completed"}] * 3


async def test_c35_empty_later_batch(make_world):
    """C-35: step 1 completes, turn-stopping injects context, the later pre-step returns enter([])
    → only 1 step and 1 request; the turn keeps its completed reason."""
    world = make_world([text("done")])
    agent = await world.agent()

    def on_stopping(payload):
        payload["agent"].inject(ctx_msg("pending context"))

    async def pre(payload, next_):
        decision = await next_()
        return decision if payload["step"] == 1 else {"kind": "enter", "messages": []}

    world.ctx.on("agent/turn-stopping", on_stopping)
    world.ctx.on("agent/pre-step", pre)
    agent.followup(m("finish once"))
    await bounded(agent.when_idle())
    assert len(world.model.requests) == 1
    assert filtered(agent, "step/start") == ["step/start"]
    assert turn_reasons(agent) == [{"kind": "completed"}]


async def test_c36_pre_step_coordinates(make_world):
    """C-36: model [tool, text(done)] → pre-step fired with (turn 1, step 1, 1 message) then
    (turn 1, step 2, 0 messages), the same signal object both times, and step/start of the
    proposed step not yet logged when pre-step runs."""
    world = make_world([tool_call("c1", "echo", {}), text("done")],
                       tools=[tool("echo", lambda call: "ok")])
    agent = await world.agent()
    seen = []

    async def observe(payload, next_):
        starts = [e.data["step"] for e in events_of(agent, "step/start")]
        seen.append((payload["turn"], payload["step"], len(payload["messages"]),
                     payload["signal"], payload["agent"], starts))
        return await next_()

    world.ctx.on("agent/pre-step", observe)
    agent.followup(m("hello"))
    await bounded(agent.when_idle())
    assert [s[:3] for s in seen] == [(1, 1, 1), (1, 2, 0)]
    assert seen[0][3] is seen[1][3]
    assert seen[0][4] is agent
    assert seen[0][5] == [] and seen[1][5] == [1]
    assert world.model.requests[0]["signal"] is seen[0][3]


async def test_c37_pre_step_raises(make_world):
    """C-37: the first pre-step raises 'prompt hook broke' with two prompts queued → agent/error
    once (that error) emitted before turn/end; one turn ending
    {error:{message:'prompt hook broke', code:'UNKNOWN'}}; statuses [running, idle]; 0 requests;
    next_turn == [second]; a later follow-up completes normally."""
    world = make_world([text("after"), text("third")])
    agent = await world.agent()
    boom = RuntimeError("prompt hook broke")
    threw = []

    async def pre(payload, next_):
        if not threw:
            threw.append(1)
            raise boom
        return await next_()

    errors = []
    order = []
    world.ctx.on("agent/pre-step", pre)
    world.ctx.on("agent/error", lambda p: (errors.append(p), order.append("agent/error")))
    world.ctx.on("session/event",
                 lambda s, e: order.append(e.type) if e.type == "turn/end" else None)
    rec = Recorder(world.ctx).status(agent)
    agent.followup(m("first"))
    agent.followup(m("second"))
    await bounded(agent.when_idle())
    assert [p["error"] for p in errors] == [boom]
    assert (errors[0]["turn"], errors[0]["step"], errors[0]["agent"]) == (1, 0, agent)
    assert order == ["agent/error", "turn/end"]
    assert filtered(agent, "turn/start", "turn/end") == ["turn/start", "turn/end"]
    assert turn_reasons(agent) == [{"kind": "error",
                                    "error": {"message": "prompt hook broke",
                                              "code": "UNKNOWN"}}]
    assert rec.statuses() == ["running", "idle"]
    assert world.model.requests == []
    assert [x.text for x in agent.inbox.next_turn] == ["second"]
    agent.followup(m("third"))
    await bounded(agent.when_idle())
    assert turn_reasons(agent)[1:] == [{"kind": "completed"}, {"kind": "completed"}]
    assert user_texts(agent) == ["second", "third"]


async def test_rule_pre_step_raise_retains_steering_until_wake(make_world):
    """§6.2/§6.7: a throwing pre-step listener ends the turn error and the driver stops; steering
    it queued stays pending until the next waking send."""
    world = make_world([text("recovered")])
    agent = await world.agent()
    threw = []

    def pre(payload, next_):
        if threw:
            return next_()
        threw.append(1)
        payload["agent"].steer(m("pending steering"))
        raise RuntimeError("pre-step failed")

    world.ctx.on("agent/pre-step", pre)
    agent.followup(m("prompt"))
    await bounded(agent.when_idle())
    assert world.model.requests == []
    assert [x.text for x in agent.inbox.next_step] == ["pending steering"]
    agent.followup(m("resume"))
    await bounded(agent.when_idle())
    assert len(world.model.requests) == 1
    assert "pending steering" in request_text(world.model.requests[0])


async def test_rule_pre_step_runs_after_claim_and_prompt_assembly_before_step(make_world):
    """§6.3: the claim splice and agent/inbox/claimed precede the pre-step waterfall; step/start,
    user/message and request records follow it."""
    world = make_world([text("ok")])
    agent = await world.agent()
    snapshot = []

    async def pre(payload, next_):
        snapshot.append(types(agent))
        return await next_()

    world.ctx.on("agent/pre-step", pre)
    agent.followup(m("go"))
    await bounded(agent.when_idle())
    assert snapshot == [["agent/inbox/spliced", "turn/start", "agent/inbox/spliced"]]


async def test_rule_scoped_pre_step_listener_only_sees_its_agent(make_world):
    """§5.3: a waterfall listener registered through a.ctx is skipped for other agents."""
    world = make_world([text("a"), text("b")])
    a = await world.agent("a")
    b = await world.agent("b")

    async def reject(payload, next_):
        return {"kind": "reject"}

    a.ctx.on("agent/pre-step", reject)
    b.followup(m("for b"))
    await bounded(b.when_idle())
    a.followup(m("for a"))
    await bounded(a.when_idle())
    assert turn_reasons(b) == [{"kind": "completed"}]
    assert turn_reasons(a) == [{"kind": "blocked"}]
    assert len(world.model.requests) == 1
    assert block_text(world.model.requests[0]["messages"][0]["content"]) == "for b"
