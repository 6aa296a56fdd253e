"""§8 Steering and injection (C-10 … C-18) and the tool rules of §6.5/§6.6."""

from __future__ import annotations

import asyncio

import pytest

from dsh_tui.harness import user_message
from dsh_tui.llm.scripted import reply, text, tool_call
from dsh_tui.loop import ToolOutput

from .conftest import (
    Recorder,
    block_text,
    bounded,
    ctx_msg,
    events_of,
    filtered,
    m,
    request_text,
    request_texts,
    tool,
    user_texts,
)


async def test_c10_steering_mid_tool(make_world):
    """C-10: model [tool('c1','slow'), text]; the tool steers s while executing → one turn,
    2 requests, s's user/message seq > the second step/start seq, request 2 contains s."""
    holder = {}

    async def slow(call):
        await asyncio.sleep(0)
        call.agent.steer(m("change of plans"))
        return "tool done"

    world = make_world([tool_call("c1", "slow", {}), text("addressed")],
                       tools=[tool("slow", slow)])
    agent = holder["agent"] = await world.agent()
    agent.followup(m("start"))
    await bounded(agent.when_idle())

    assert filtered(agent, "turn/start") == ["turn/start"]
    assert len(world.model.requests) == 2
    steering = [e for e in events_of(agent, "user/message")
                if block_text(e.data["content"]) == "change of plans"]
    assert len(steering) == 1
    second_step = events_of(agent, "step/start")[1]
    assert steering[0].seq > second_step.seq
    assert "change of plans" in request_text(world.model.requests[1])
    assert "change of plans" not in request_text(world.model.requests[0])


async def test_c11_idle_steer_then_running_steer(make_world):
    """C-11: steer(s1) while idle → immediately running with exactly one turn/start; then
    steer(s2) → one turn, two steps, 2 requests; user/messages [s1, s2]; request 1 has s1 not s2;
    request 2 has s2."""
    world = make_world([text("first"), text("second")])
    agent = await world.agent()
    agent.steer(m("first idle steer"))
    assert agent.status == "running"
    assert filtered(agent, "turn/start") == ["turn/start"]
    agent.steer(m("second idle steer"))
    await bounded(agent.when_idle())

    assert filtered(agent, "turn/start") == ["turn/start"]
    assert filtered(agent, "step/start") == ["step/start"] * 2
    assert user_texts(agent) == ["first idle steer", "second idle steer"]
    assert len(world.model.requests) == 2
    r1, r2 = (request_text(r) for r in world.model.requests)
    assert "first idle steer" in r1 and "second idle steer" not in r1
    assert "second idle steer" in r2


async def test_c12_inject_during_a_tool(make_world):
    """C-12: a tool injects two contexts (mutating the first content object after inject); both
    appear as user/message after the tool/result with the ORIGINAL text, in injection order,
    in one turn; in request 2 both follow the tool result."""
    during = {}

    async def noticer(call):
        await asyncio.sleep(0)
        first_block = {"type": "text", "text": "mid-turn notice"}
        first = {"id": "ctx-1", "role": "user", "content": [first_block],
                 "source": {"kind": "plugin", "plugin": "x"}}
        call.agent.inject(first)
        first_block["text"] = "mutated after inject"
        first["content"].append({"type": "text", "text": "appended after inject"})
        call.agent.inject(ctx_msg("second notice", plugin="x"))
        during["visible"] = any(e.type == "user/message" and e.data["source"]["kind"] == "plugin"
                                for e in call.agent.session.events)
        return "ok"

    world = make_world([tool_call("c1", "noticer", {}), text("done")],
                       tools=[tool("noticer", noticer)])
    agent = await world.agent()
    agent.followup(m("go"))
    await bounded(agent.when_idle())

    assert during["visible"] is False
    assert filtered(agent, "turn/start") == ["turn/start"]
    result = events_of(agent, "tool/result")[0]
    contexts = [e for e in events_of(agent, "user/message")
                if e.data["source"]["kind"] == "plugin"]
    assert [block_text(e.data["content"]) for e in contexts] == ["mid-turn notice",
                                                                 "second notice"]
    assert contexts[0].data["content"] == [{"type": "text", "text": "mid-turn notice"}]
    assert all(result.seq < e.seq for e in contexts)
    messages = world.model.requests[1]["messages"]
    result_index = next(i for i, msg in enumerate(messages)
                        if any(b.get("type") == "tool-result" for b in msg["content"]))
    context_indexes = [i for i, msg in enumerate(messages)
                       if block_text(msg["content"]) in ("mid-turn notice", "second notice")]
    assert len(context_indexes) == 2
    assert all(i > result_index for i in context_indexes)


async def test_rule_turn_stopping_steer_runs_another_step(make_world):
    """§6.2: agent/turn-stopping listeners that steer() make the loop re-check next_step and run
    another step of the same turn (the '/loop' pattern)."""
    world = make_world([text("step 1"), text("step 2"), text("step 3")])
    agent = await world.agent()
    steps = []
    world.ctx.on("session/event",
                 lambda s, e: steps.append(e.seq) if e.type == "step/end" else None)

    def stopping(payload):
        if len(steps) < 3:
            payload["agent"].steer(ctx_msg("continue", plugin="loop-test"))

    world.ctx.on("agent/turn-stopping", stopping)
    agent.followup(m("go"))
    await bounded(agent.when_idle())
    assert len(steps) == 3
    assert len(world.model.requests) == 3
    assert filtered(agent, "turn/start", "turn/end") == ["turn/start", "turn/end"]


async def test_rule_turn_stopping_payload_and_only_when_next_step_empty(make_world):
    """§5.2/§6.2: agent/turn-stopping is serial with {agent, turn, signal}; it runs only when a step
    ended the turn naturally and next_step is empty (steering that arrived mid-step skips it)."""
    heard = []

    async def steering_tool(call):
        call.agent.steer(m("mid"))
        return "done"

    world = make_world([tool_call("c1", "st", {}), text("a"), text("b")],
                       tools=[tool("st", steering_tool)])
    agent = await world.agent()

    async def stopping(payload):
        await asyncio.sleep(0)
        heard.append((payload["agent"], payload["turn"], payload["signal"].aborted,
                      len(agent.inbox.next_step)))

    world.ctx.on("agent/turn-stopping", stopping)
    agent.followup(m("go"))
    await bounded(agent.when_idle())
    # step 1 ran a tool (no natural end), step 2 ended naturally → one turn-stopping
    assert heard == [(agent, 1, False, 0)]
    assert len(world.model.requests) == 2


async def test_rule_non_json_context_rejected_nothing_queued(make_world):
    """§2.2.7/§9.9: injecting a message that is not lossless JSON raises from the durable append
    (non-JSON-serializable) and nothing is queued or recorded."""
    seen = {}

    async def bad(call):
        before = call.agent.session.seq
        try:
            call.agent.inject({"id": "bad", "role": "user",
                               "content": [{"type": "text", "text": "invalid"}],
                               "source": {"kind": "plugin", "plugin": "t", "n": float("nan")}})
        except Exception as error:
            seen["error"] = str(error)
        seen["unchanged"] = call.agent.session.seq == before and not call.agent.inbox.next_step
        return "rejected invalid context"

    world = make_world([tool_call("c1", "bad", {}), text("done")], tools=[tool("bad", bad)])
    agent = await world.agent()
    agent.followup(m("go"))
    await bounded(agent.when_idle())
    assert "non-JSON-serializable" in seen["error"]
    assert seen["unchanged"] is True
    assert not any(e.data["source"]["kind"] == "plugin" for e in events_of(agent, "user/message"))


async def test_c15_steering_during_a_concluding_tool(make_world):
    """C-15: the tool steers and concludes the turn → 2 requests, one turn/end, request 2 contains
    the steering."""
    def finalize(call):
        call.agent.steer(m("late steering"))
        return ToolOutput.text("final", concludes_turn=True)

    world = make_world([tool_call("c1", "finalize", {}), text("next")],
                       tools=[tool("finalize", finalize)])
    agent = await world.agent()
    agent.followup(m("go"))
    await bounded(agent.when_idle())
    assert len(world.model.requests) == 2
    assert filtered(agent, "turn/end") == ["turn/end"]
    assert "late steering" in request_texts(world.model.requests[1])


async def test_c16_tool_concludes_the_turn(make_world):
    """C-16: a concluding tool result means no follow-up request (1 request); the tool/result is
    recorded and the turn ends completed."""
    world = make_world([tool_call("c1", "echo", {"text": "x"})],
                       tools=[tool("echo", lambda call: ToolOutput.text(
                           call.arguments["text"], concludes_turn=True))])
    agent = await world.agent()
    agent.followup(m("go"))
    await bounded(agent.when_idle())
    assert len(world.model.requests) == 1
    results = events_of(agent, "tool/result")
    assert len(results) == 1
    assert results[0].data["message"]["content"][0]["content"] == [{"type": "text", "text": "x"}]
    assert events_of(agent, "turn/end")[0].data["reason"] == {"kind": "completed"}


async def test_c17_additional_contexts_after_all_results(make_world):
    """C-17: one step, two tool calls, each post-execute adds context ctx-<callId> → both
    tool/result precede the first context user/message; contexts [ctx-c1, ctx-c2] in model
    order (recorded at the next step)."""
    world = make_world([reply(tool_call("c1", "echo", {}), tool_call("c2", "echo", {})),
                        text("done")],
                       tools=[tool("echo", lambda call: "ok")])
    agent = await world.agent()

    async def post(payload, next_):
        result = await next_()
        call = payload["call"]
        return {**result, "additionalContexts": [ctx_msg(f"ctx-{call.call_id}", "post")]}

    world.ctx.on("tools/post-execute", post)
    agent.followup(m("go"))
    await bounded(agent.when_idle())

    results = events_of(agent, "tool/result")
    contexts = [e for e in events_of(agent, "user/message")
                if e.data["source"].get("plugin") == "post"]
    assert [r.data["message"]["source"]["callId"] for r in results] == ["c1", "c2"]
    assert [block_text(e.data["content"]) for e in contexts] == ["ctx-c1", "ctx-c2"]
    assert max(r.seq for r in results) < contexts[0].seq
    second_step = events_of(agent, "step/start")[1]
    assert all(e.seq > second_step.seq for e in contexts)
    assert len(world.model.requests) == 2


async def test_rule_tool_additional_contexts_from_output_and_defer(make_world):
    """§6.5: a result's additionalContexts and contexts deferred by the tool are appended to the end
    of next_step right after that result is recorded; they become user/message at the next step."""
    order = []

    def body(call):
        call.defer_context(ctx_msg("deferred", "t"))
        return ToolOutput.text("r", additional_contexts=[ctx_msg("additional", "t")])

    world = make_world([tool_call("c1", "t", {}), text("done")], tools=[tool("t", body)])
    agent = await world.agent()

    def on_event(session, event):
        if session is agent.session and event.type in ("tool/result", "agent/inbox/spliced"):
            order.append(event.type)

    world.ctx.on("session/event", on_event)
    agent.followup(m("go"))
    await bounded(agent.when_idle())
    texts = [block_text(e.data["content"]) for e in events_of(agent, "user/message")]
    assert texts == ["go", "additional", "deferred"]
    # tool/result, then the two context insertions, then the claim at the next boundary
    at = order.index("tool/result")
    assert order[at:at + 3] == ["tool/result", "agent/inbox/spliced", "agent/inbox/spliced"]


async def test_rule_tool_arguments_parsing(make_world):
    """§6.5: the raw argument string is logged in tool/call; execution receives parsed JSON
    ('' → {}; invalid JSON → the raw string)."""
    got = []
    world = make_world([reply(tool_call("c1", "t", ""), tool_call("c2", "t", "{not json"),
                              tool_call("c3", "t", {"a": [1, 2]})), text("done")],
                       tools=[tool("t", lambda call: got.append(call.arguments) or "ok")])
    agent = await world.agent()
    agent.followup(m("go"))
    await bounded(agent.when_idle())
    assert got == [{}, "{not json", {"a": [1, 2]}]
    assert [e.data["arguments"] for e in events_of(agent, "tool/call")] == [
        "", "{not json", '{"a":[1,2]}']


async def test_rule_pre_execute_deny_becomes_error_result(make_world):
    """§6.5 (tools/pre-execute): a deny short-circuits dispatch into an isError tool/result the
    model sees in the follow-up request; the body never runs."""
    ran = []
    world = make_world([tool_call("c1", "danger", {}), text("ok")],
                       tools=[tool("danger", lambda call: ran.append(1) or "ran")])
    agent = await world.agent()

    async def deny(payload, next_):
        return {"kind": "deny", "reason": "not allowed"}

    world.ctx.on("tools/pre-execute", deny)
    agent.followup(m("go"))
    await bounded(agent.when_idle())
    assert ran == []
    result = events_of(agent, "tool/result")[0].data["message"]["content"][0]
    assert result["isError"] is True
    assert "not allowed" in block_text(result["content"])
    second = world.model.requests[1]["messages"]
    assert any(b.get("type") == "tool-result" and b.get("isError") for msg in second
               for b in msg["content"])


async def test_rule_tool_results_in_model_order_with_parallel_pool(make_world):
    """§6.5: parallel-safe calls overlap in execution, but tool/result records (and their
    contexts) are committed in model order."""
    gate = asyncio.Event()
    started = []

    async def slow(call):
        started.append(call.call_id)
        await gate.wait()
        return "slow"

    async def fast(call):
        started.append(call.call_id)
        gate.set()
        return "fast"

    world = make_world([reply(tool_call("c1", "slow", {}), tool_call("c2", "fast", {})),
                        text("done")],
                       tools=[tool("slow", slow, concurrency_safe=True),
                              tool("fast", fast, concurrency_safe=True)])
    agent = await world.agent()
    agent.followup(m("go"))
    await bounded(agent.when_idle())
    assert started == ["c1", "c2"]
    assert [e.data["message"]["source"]["callId"] for e in events_of(agent, "tool/result")] == [
        "c1", "c2"]
    assert [e.data["callId"] for e in events_of(agent, "tool/call")] == ["c1", "c2"]


async def test_c18_session_start_injection(make_world):
    """C-18: an agent/session-start listener injects `pre`: source 'startup' for create, exactly
    once, synchronously during creation before any turn; the first request contains `pre`,
    recorded with its plugin source."""
    world = make_world([text("ok")])
    starts = []

    def on_start(payload):
        agent = payload["agent"]
        starts.append((payload["source"], agent.id, agent.status,
                       [e.type for e in agent.session.events]))
        agent.inject(ctx_msg("pre", plugin="starter"))

    world.ctx.on("agent/session-start", on_start)
    agent = await world.agent()
    assert starts == [("startup", "a1", "idle", [])]
    assert agent.inbox.next_step[0].text == "pre"
    agent.followup(m("go"))
    await bounded(agent.when_idle())
    assert len(starts) == 1
    assert "pre" in request_texts(world.model.requests[0])
    pre = events_of(agent, "user/message")[0]
    assert pre.data["source"] == {"kind": "plugin", "plugin": "starter"}


async def test_c18_session_start_order_and_raising_listener(make_world):
    """C-18 / §4.4.5: session-start fires after agent/created; a raising session-start listener
    does not prevent creation or later turns."""
    world = make_world([text("ok")])
    order = []
    world.ctx.on("agent/created", lambda p: order.append("created"))
    world.ctx.on("agent/session-start", lambda p: order.append("session-start"))

    def boom(payload):
        raise RuntimeError("session-start broke")

    world.ctx.on("agent/session-start", boom)
    agent = await world.agent()
    assert order == ["created", "session-start"]
    assert world.ctx.agents.get("a1") is agent
    agent.followup(m("go"))
    await bounded(agent.when_idle())
    assert events_of(agent, "turn/end")[0].data["reason"] == {"kind": "completed"}


async def test_rule_inject_during_running_step_is_not_a_wake(make_world):
    """§3.2/§6.6: inject (non-waking) while running appends to next_step and is consumed at the
    next boundary of the same turn (it keeps the turn open like steering)."""
    def body(call):
        call.agent.inject(ctx_msg("note"))
        return "ok"

    world = make_world([tool_call("c1", "t", {}), text("done")], tools=[tool("t", body)])
    agent = await world.agent()
    rec = Recorder(world.ctx).status(agent)
    agent.followup(m("go"))
    await bounded(agent.when_idle())
    assert user_texts(agent) == ["go", "note"]
    assert rec.statuses() == ["running", "idle"]
    assert filtered(agent, "turn/start") == ["turn/start"]


@pytest.mark.parametrize("via", ["steer", "inject"])
async def test_rule_steering_during_pre_step_lands_in_the_entered_step_or_later(make_world, via):
    """§6.3.5/§6.6: anything inserted after the claim (e.g. by a pre-step listener) stays pending
    for a later boundary; it is not part of the batch being decided."""
    world = make_world([text("one"), text("two")])
    agent = await world.agent()
    done = []

    async def pre(payload, next_):
        if not done:
            done.append(1)
            getattr(payload["agent"], via)(user_message("staged"))
        return await next_()

    world.ctx.on("agent/pre-step", pre)
    agent.followup(m("go"))
    await bounded(agent.when_idle())
    assert user_texts(agent) == ["go", "staged"]
    step_of = {}
    step = None
    for event in agent.session.events:
        if event.type == "step/start":
            step = event.data["step"]
        if event.type == "user/message":
            step_of[block_text(event.data["content"])] = step
    assert step_of == {"go": 1, "staged": 2}
