"""§8 Model requests and errors (C-39 … C-46) and the rules of §6.4."""

from __future__ import annotations

import asyncio
import math

import pytest

from dsh_tui.harness import AgentOptions, LlmError, make_failure
from dsh_tui.llm.scripted import fail, max_tokens, raises, reply, text, tool_call

from .conftest import (
    Recorder,
    bounded,
    events_of,
    filtered,
    m,
    request_text,
    tool,
    turn_reasons,
    types,
    user_texts,
)


def retry_listener(log, *, cancel=False, raise_error=None):
    async def on_error(payload, next_):
        log.append({
            "turn": payload["turn"], "step": payload["step"], "code": payload["failure"]["code"],
            "provider": payload["provider"], "signal": payload["signal"],
            "retry_policy": payload["retry_policy"],
            "step_open": _step_open(payload["agent"]),
        })
        if cancel:
            payload["agent"].cancel({"kind": "user"})
        if raise_error is not None:
            raise raise_error
        return {"kind": "retry"}
    return on_error


def _step_open(agent):
    t = types(agent)
    return t.count("step/start") > t.count("step/end")


async def test_c39_request_error_retry(make_world):
    """C-39: attempts fail RATE_LIMIT then SERVICE_UNAVAILABLE then text(ok); a listener returns
    retry → request-error seen twice with (turn 1, step 1) and those codes in order, while the
    step is open; one turn/start, one step/start; statuses [running, idle]; one
    assistant/message whose sourceEventSeqs exclude the failed attempts' chunks (which stay)."""
    world = make_world([fail("RATE_LIMIT", after=text("doomed partial")),
                        fail("SERVICE_UNAVAILABLE"), text("ok")])
    agent = await world.agent()
    seen = []
    world.ctx.on("agent/request-error", retry_listener(seen))
    rec = Recorder(world.ctx).status(agent)
    agent.followup(m("go"))
    await bounded(agent.when_idle())

    assert [(s["turn"], s["step"], s["code"]) for s in seen] == [
        (1, 1, "RATE_LIMIT"), (1, 1, "SERVICE_UNAVAILABLE")]
    assert all(s["step_open"] for s in seen)
    assert seen[0]["provider"] == "mock" and seen[0]["retry_policy"] is None
    assert seen[0]["signal"] is world.model.requests[0]["signal"]
    assert filtered(agent, "turn/start", "step/start") == ["turn/start", "step/start"]
    assert rec.statuses() == ["running", "idle"]
    assert len(world.model.requests) == 3
    messages = events_of(agent, "assistant/message")
    assert len(messages) == 1
    assert messages[0].data["message"]["content"] == [{"type": "text", "text": "ok"}]
    assert "interrupted" not in messages[0].data
    doomed = [e.seq for e in events_of(agent, "assistant/chunk")
              if e.data["chunk"].get("text") == "d"]
    assert doomed, "the failed attempt's chunks stay in the log"
    chunk_seqs = [e.seq for e in events_of(agent, "assistant/chunk")]
    finishes = [e.seq for e in events_of(agent, "assistant/chunk")
                if e.data["chunk"]["type"] == "finish"]
    own = [s for s in chunk_seqs if s > finishes[1]]
    assert messages[0].source_event_seqs == own
    assert not set(doomed) & set(messages[0].source_event_seqs)
    assert turn_reasons(agent) == [{"kind": "completed"}]


async def test_c40_unhandled_model_failure(make_world):
    """C-40: a stream ending with finish{error, F} and no listener → turn/end{error: F} verbatim,
    agent/error once with an LlmError whose facts equal F at (turn 1, step 1); no
    assistant/message; step/start and step/end balanced."""
    world = make_world([fail("AUTH", "provider 401", status=401, retry_after_ms=2000)])
    agent = await world.agent()
    errors = []
    world.ctx.on("agent/error", lambda p: errors.append(p))
    agent.followup(m("go"))
    await bounded(agent.when_idle())
    expected = {"message": "provider 401", "code": "AUTH", "status": 401,
                "providerRetryAfterMs": 2000}
    assert turn_reasons(agent) == [{"kind": "error", "error": expected}]
    assert len(errors) == 1
    assert isinstance(errors[0]["error"], LlmError)
    assert errors[0]["error"].failure == expected
    assert (errors[0]["turn"], errors[0]["step"]) == (1, 1)
    assert filtered(agent, "assistant/message") == []
    assert filtered(agent, "step/start", "step/end") == ["step/start", "step/end"]


async def test_c40_adapter_aborted_finish_is_an_error(make_world):
    """C-40: a finish{aborted} from the adapter (no cancel) ends the turn error coded ABORTED."""
    world = make_world([fail("ABORTED", "model stream aborted", kind="aborted")])
    agent = await world.agent()
    agent.followup(m("go"))
    await bounded(agent.when_idle())
    assert turn_reasons(agent) == [{"kind": "error", "error": {
        "message": "model stream aborted", "code": "ABORTED"}}]
    assert filtered(agent, "assistant/message") == []


async def test_rule_provider_raise_is_normalised_by_the_seam(make_world):
    """§6.4: an adapter that raises is turned into a terminal error finish; an LlmError keeps its
    facts verbatim; the failure is offered to agent/request-error first."""
    failure = make_failure("quota gone", "QUOTA", status=429, request_id="req-1")
    world = make_world([raises(LlmError(failure))])
    agent = await world.agent()
    offered = []

    async def observe(payload, next_):
        offered.append(dict(payload["failure"]))
        return await next_()

    world.ctx.on("agent/request-error", observe)
    agent.followup(m("go"))
    await bounded(agent.when_idle())
    assert offered == [failure]
    assert turn_reasons(agent) == [{"kind": "error", "error": failure}]


async def test_c41_cancellation_beats_retry(make_world):
    """C-41: a recovery listener that cancels (user) and returns retry → 1 request, turn/end
    {aborted, {user}}, and the failed stream is not finalized as an assistant/message."""
    world = make_world([fail("SERVER", after=text("doomed")), text("never")])
    agent = await world.agent()
    seen = []
    world.ctx.on("agent/request-error", retry_listener(seen, cancel=True))
    agent.followup(m("go"))
    await bounded(agent.when_idle())
    assert len(world.model.requests) == 1
    assert turn_reasons(agent) == [{"kind": "aborted", "reason": {"kind": "user"}}]
    assert filtered(agent, "assistant/message") == []
    assert filtered(agent, "step/start", "step/end") == ["step/start", "step/end"]


async def test_c42_recovery_listener_raises(make_world):
    """C-42: a recovery listener that raises → no retry, turn/end reason kind 'error'."""
    world = make_world([fail("SERVER"), text("never")])
    agent = await world.agent()
    seen = []
    world.ctx.on("agent/request-error",
                 retry_listener(seen, raise_error=RuntimeError("recovery broke")))
    errors = []
    world.ctx.on("agent/error", lambda p: errors.append(p["error"]))
    agent.followup(m("go"))
    await bounded(agent.when_idle())
    assert len(world.model.requests) == 1
    [reason] = turn_reasons(agent)
    assert reason["kind"] == "error"
    assert "recovery broke" in reason["error"]["message"]
    assert len(errors) == 1


async def test_rule_recovery_returning_nothing_keeps_original_failure(make_world):
    """§6.4: a recovery listener that returns nothing → turn error with the original failure."""
    world = make_world([fail("SERVER", "boom")])
    agent = await world.agent()

    async def none(payload, next_):
        return None

    world.ctx.on("agent/request-error", none)
    agent.followup(m("go"))
    await bounded(agent.when_idle())
    assert turn_reasons(agent) == [{"kind": "error", "error": {"message": "boom",
                                                               "code": "SERVER"}}]


async def test_c43_middleware_failure_not_recoverable(make_world):
    """C-43: an agent/request listener that raises → agent/request-error never called, 0 requests,
    turn error (balanced step)."""
    world = make_world([text("never")])
    agent = await world.agent()
    offered = []

    async def broken(payload, next_):
        raise RuntimeError("middleware broke")

    async def recovery(payload, next_):
        offered.append(payload)
        return {"kind": "retry"}

    world.ctx.on("agent/request", broken)
    world.ctx.on("agent/request-error", recovery)
    agent.followup(m("go"))
    await bounded(agent.when_idle())
    assert offered == []
    assert world.model.requests == []
    assert turn_reasons(agent) == [{"kind": "error", "error": {"message": "middleware broke",
                                                               "code": "UNKNOWN"}}]
    assert filtered(agent, "step/start", "step/end") == ["step/start", "step/end"]


async def test_c44_no_provider_or_model(make_world):
    """C-44: an agent with empty options and no router → turn/end{error} whose message contains
    'has no provider/model' and 'agent/request'."""
    world = make_world([text("never")])
    agent = await world.agent(options=AgentOptions())
    agent.followup(m("go"))
    await bounded(agent.when_idle())
    [reason] = turn_reasons(agent)
    assert reason["kind"] == "error"
    assert "has no provider/model" in reason["error"]["message"]
    assert "agent/request" in reason["error"]["message"]
    assert world.model.requests == []


async def test_c44_request_listener_supplies_provider_and_model(make_world):
    """C-44: with an agent/request listener supplying provider+model the request succeeds."""
    world = make_world([text("ok")])
    agent = await world.agent(options=AgentOptions())

    async def supply(payload, next_):
        config = await next_()
        return {**config, "provider": "mock", "model": "mock-model"}

    world.ctx.on("agent/request", supply)
    agent.followup(m("go"))
    await bounded(agent.when_idle())
    assert turn_reasons(agent) == [{"kind": "completed"}]
    assert world.model.requests[0]["model"] == "mock-model"


@pytest.mark.parametrize("value", [0, -1, 1.5, math.nan, 2**53])
async def test_c46_invalid_max_tokens(make_world, value):
    """C-46: max_tokens 0, -1, 1.5, NaN, 2^53 → creation raises 'agent maxTokens must be a positive
    safe integer'; no agent and no session published (no created events)."""
    world = make_world([])
    created = []
    world.ctx.on("agent/created", lambda p: created.append(p))
    world.ctx.on("session/created", lambda s: created.append(s))
    with pytest.raises(TypeError, match="agent maxTokens must be a positive safe integer"):
        await world.create("invalid-max-tokens", max_tokens=value)
    assert world.ctx.agents.list() == []
    assert world.ctx.sessions.list() == []
    assert created == []
    handle = await world.create("invalid-max-tokens")
    assert handle.agent.id == "invalid-max-tokens"


async def test_c46_valid_max_tokens_reaches_the_request(make_world):
    """C-46: max_tokens 256 → the first request carries maxTokens 256."""
    world = make_world([text("bounded")])
    agent = await world.agent(max_tokens=256)
    agent.followup(m("go"))
    await bounded(agent.when_idle())
    assert world.model.requests[0]["maxTokens"] == 256
    header = events_of(agent, "request/header")[0].data["header"]
    assert header["config"]["maxTokens"] == 256


async def test_rule_request_shape_and_frozen_seed(make_world):
    """§6.4: the request carries the config, history, sessionId and the turn signal, omits an
    empty system and empty tools; the agent/request default returns the frozen seed config."""
    raw = []

    def entry(request):  # a script entry sees the request exactly as the loop sent it
        raw.append(dict(request))
        return text("ok")

    world = make_world([entry])
    agent = await world.agent()
    seeds = []

    async def observe(payload, next_):
        config = await next_()
        seeds.append(config)
        with pytest.raises(TypeError):
            config["model"] = "other"
        assert (payload["turn"], payload["step"]) == (1, 1)
        return config

    world.ctx.on("agent/request", observe)
    agent.followup(m("go"))
    await bounded(agent.when_idle())
    [request] = raw
    assert dict(seeds[0]) == {"provider": "mock", "model": "mock"}
    assert request["provider"] == "mock" and request["model"] == "mock"
    assert request["sessionId"] == "a1"
    assert "system" not in request and "tools" not in request
    assert request["signal"].aborted is False
    assert [msg["role"] for msg in request["messages"]] == ["user"]


async def test_rule_request_switch_is_logged_as_header_change(make_world):
    """§1.5/§6.4: request/header is 'initial' for the first request, not repeated while the
    canonical header is unchanged, 'change' when agent/request switches the model; request/context
    is written only when provider/model differ from the last one."""
    world = make_world([text("one"), text("two"), text("three")])
    agent = await world.agent()
    switch = []

    async def maybe_switch(payload, next_):
        config = await next_()
        return {**config, "model": "other-model"} if switch else config

    world.ctx.on("agent/request", maybe_switch)
    agent.followup(m("a"))
    await bounded(agent.when_idle())
    agent.followup(m("b"))
    await bounded(agent.when_idle())
    switch.append(True)
    agent.followup(m("c"))
    await bounded(agent.when_idle())
    headers = events_of(agent, "request/header")
    assert [h.data["reason"] for h in headers] == ["initial", "change"]
    assert headers[1].data["header"]["config"]["model"] == "other-model"
    contexts = events_of(agent, "request/context")
    assert [c.data for c in contexts] == [{"provider": "mock", "model": "mock"},
                                          {"provider": "mock", "model": "other-model"}]
    assert world.model.requests[2]["model"] == "other-model"


async def test_rule_max_tokens_is_sticky_and_truncated_tools_never_run(make_world):
    """§6.2/§6.4: a max-tokens step's tool calls are never run; a later completed step in the same
    turn does not downgrade max-tokens; max-tokens does not leak into the next turn."""
    ran = []
    world = make_world([max_tokens(reply(text("cut"), tool_call("c1", "t", {}))),
                        text("completed step"), text("next turn")],
                       tools=[tool("t", lambda call: ran.append(1) or "ran")])
    agent = await world.agent()
    steered = []

    def on_stopping(payload):
        if payload["turn"] == 1 and not steered:
            steered.append(1)
            payload["agent"].steer(m("keep going"))

    world.ctx.on("agent/turn-stopping", on_stopping)
    agent.followup(m("go"))
    await bounded(agent.when_idle())
    assert ran == []
    assert filtered(agent, "tool/call", "tool/result") == []
    assert turn_reasons(agent) == [{"kind": "max-tokens"}]
    assert len(world.model.requests) == 2
    truncated = events_of(agent, "assistant/message")[0].data["message"]["content"]
    assert truncated[0] == {"type": "text", "text": "cut"}
    agent.followup(m("again"))
    await bounded(agent.when_idle())
    assert turn_reasons(agent) == [{"kind": "max-tokens"}, {"kind": "completed"}]


async def test_rule_max_tokens_then_tool_step_closes_the_turn(make_world):
    """§6.2 edge: once a step hit max-tokens, a later step that runs tools does not clear the
    turn's end, so the turn goes to turn-stopping and closes without the tool follow-up request."""
    world = make_world([max_tokens(text("cut")), tool_call("c1", "t", {}), text("never")],
                       tools=[tool("t", lambda call: "ran")])
    agent = await world.agent()
    steered = []

    def on_stopping(payload):
        if not steered:
            steered.append(1)
            payload["agent"].steer(m("use the tool"))

    world.ctx.on("agent/turn-stopping", on_stopping)
    agent.followup(m("go"))
    await bounded(agent.when_idle())
    assert len(world.model.requests) == 2
    assert filtered(agent, "tool/result") == ["tool/result"]
    assert turn_reasons(agent) == [{"kind": "max-tokens"}]


async def test_rule_empty_assistant_message_is_still_recorded(make_world):
    """§1.5: one assistant/message per successful provider call even with empty content; it does
    not enter the derived history."""
    world = make_world([reply()])
    agent = await world.agent()
    agent.followup(m("go"))
    await bounded(agent.when_idle())
    [message] = events_of(agent, "assistant/message")
    assert message.data["message"]["content"] == []
    assert message.data["message"]["source"] == {"kind": "model", "provider": "mock",
                                                  "model": "mock"}
    assert [msg["role"] for msg in agent.session.derive_messages()] == ["user"]
    assert turn_reasons(agent) == [{"kind": "completed"}]


async def test_rule_agent_error_and_next_turn_after_model_failure(make_world):
    """§6.7: after a model failure the driver stops even with prompts queued; a later waking send
    runs them (the failed turn's user message stays in history)."""
    world = make_world([fail("SERVER"), text("b reply"), text("c reply")])
    agent = await world.agent()
    agent.followup(m("a"))
    agent.followup(m("b"))
    await bounded(agent.when_idle())
    assert [x.text for x in agent.inbox.next_turn] == ["b"]
    agent.followup(m("c"))
    await bounded(agent.when_idle())
    assert user_texts(agent) == ["a", "b", "c"]
    assert [r["kind"] for r in turn_reasons(agent)] == ["error", "completed", "completed"]
    assert "a" in request_text(world.model.requests[1])


async def test_rule_initiator_visible_in_model_adapter(make_world):
    """§4.6: the model adapter observes require_initiator() is the agent, before and after awaits."""
    seen = []

    async def entry(request):
        seen.append(world.ctx.agents.require_initiator())
        await asyncio.sleep(0)
        seen.append(world.ctx.agents.current_initiator())
        return text("ok")

    world = make_world([entry])
    agent = await world.agent()
    agent.followup(m("go"))
    await bounded(agent.when_idle())
    assert seen == [agent, agent]
