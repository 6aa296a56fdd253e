"""§8 Basic flow and ordering (C-1 … C-9) and the ordering guarantees of §1.5/§1.6."""

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
    splices,
    tool,
    types,
    user_texts,
)


async def test_c01_simple_turn(make_world):
    """C-1: followup(m("hi")) with model [text("hello there")] logs exactly splice(+next-turn),
    turn/start{1}, the claim splice without `outcome`, step/start, user/message,
    request/header{initial}, request/context, 15 chunks, assistant/message with usage
    {10, 11}, step/end, turn/end completed; statuses [running, idle]; history [user, assistant]."""
    world = make_world([text("hello there")])
    agent = await world.agent()
    rec = Recorder(world.ctx).status(agent)
    prompt = m("hi")

    agent.followup(prompt)
    await bounded(agent.when_idle())

    assert types(agent) == [
        "agent/inbox/spliced", "turn/start", "agent/inbox/spliced", "step/start", "user/message",
        "request/header", "request/context", *["assistant/chunk"] * 15, "assistant/message",
        "step/end", "turn/end",
    ]
    events = agent.session.events
    assert events[0].data == {"target": "next-turn", "start": 0, "inserted": [prompt.to_json()]}
    assert events[1].data == {"turn": 1}
    assert events[2].data == {"target": "next-turn", "start": 0, "removedCount": 1,
                              "inserted": []}
    assert "outcome" not in events[2].data
    assert events[3].data == {"turn": 1, "step": 1}
    assert events[4].data == prompt.to_json()
    assert events[5].data["reason"] == "initial"
    message = events_of(agent, "assistant/message")[0]
    assert message.data["usage"] == {"inputTokens": 10, "outputTokens": 11}
    assert events[-2].data == {"turn": 1, "step": 1}
    assert events[-1].data == {"turn": 1, "reason": {"kind": "completed"}}
    assert rec.statuses() == ["running", "idle"]
    assert [msg["role"] for msg in agent.session.derive_messages()] == ["user", "assistant"]


async def test_c01_envelope_and_seq_contiguity(make_world):
    """§1.1/§1.6.1: every record has type/seq/time/data (+surface keys only on surface types),
    seq contiguous from 0, time an int of epoch milliseconds; loop surface events carry
    surfaceOp 'append'."""
    world = make_world([text("ok")])
    agent = await world.agent()
    agent.followup(m("hi"))
    await bounded(agent.when_idle())
    surface = {"user/message", "assistant/message", "tool/result"}
    for index, event in enumerate(agent.session.events):
        record = event.to_json()
        assert record["seq"] == index
        assert isinstance(record["time"], int) and record["time"] > 1_000_000_000_000
        if event.type in surface:
            assert record["surfaceOp"] == "append"
        else:
            assert "surfaceOp" not in record and "sourceEventSeqs" not in record
        assert set(record) <= {"type", "seq", "time", "data", "surfaceOp", "sourceEventSeqs",
                               "ignorable"}
    assert agent.session.seq == len(agent.session.events)


async def test_c02_waking_send_is_synchronous(make_world):
    """C-2: when followup(p) returns (no await) status is running, the log is
    [splice(+next-turn p), turn/start{1}, splice(-next-turn 1)] and the live order is
    inserted(p), status(running), session turn/start, claimed(p, 1)."""
    world = make_world([text("ok")])
    agent = await world.agent()
    rec = Recorder(world.ctx).inbox(agent).status(agent).session("turn/start", agent=agent)
    p = m("p")

    agent.followup(p)

    assert agent.status == "running"
    assert types(agent) == ["agent/inbox/spliced", "turn/start", "agent/inbox/spliced"]
    assert splices(agent)[1] == {"target": "next-turn", "start": 0, "removedCount": 1,
                                 "inserted": []}
    assert rec.log == [("inserted", p), ("status", "running"), ("session", "turn/start"),
                       ("claimed", p, 1)]
    await bounded(agent.when_idle())


async def test_c03_chunk_logging(make_world):
    """C-3: text("abc") logs exactly 7 assistant/chunk events (block-start, 3 deltas,
    block-end, usage, finish), the deltas join to 'abc', and assistant/message
    sourceEventSeqs equals those 7 seqs."""
    world = make_world([text("abc")])
    agent = await world.agent()
    agent.followup(m("go"))
    await bounded(agent.when_idle())

    chunks = events_of(agent, "assistant/chunk")
    assert [c.data["chunk"]["type"] for c in chunks] == [
        "block-start", "text-delta", "text-delta", "text-delta", "block-end", "usage", "finish"]
    assert all(c.data["turn"] == 1 and c.data["step"] == 1 for c in chunks)
    assert "".join(c.data["chunk"]["text"] for c in chunks
                   if c.data["chunk"]["type"] == "text-delta") == "abc"
    message = events_of(agent, "assistant/message")[0]
    assert message.source_event_seqs == [c.seq for c in chunks]
    assert message.to_json()["sourceEventSeqs"] == [c.seq for c in chunks]


async def test_c04_inject_while_idle(make_world):
    """C-4: inject(c) while idle logs only [splice{next-step, start 0, inserted [c]}], status
    stays idle, no model call, when_idle() resolves at once; a later followup(p) runs one
    turn whose first request contains c's text."""
    world = make_world([text("ok")])
    agent = await world.agent()
    c = ctx_msg("file changed: a.py", plugin="watcher")

    agent.inject(c)

    assert types(agent) == ["agent/inbox/spliced"]
    assert splices(agent)[0] == {"target": "next-step", "start": 0, "inserted": [c.to_json()]}
    assert agent.status == "idle"
    assert world.model.requests == []
    waiter = agent.when_idle()
    with pytest.raises(StopIteration):  # completes without suspending even once
        waiter.send(None)

    agent.followup(m("go"))
    await bounded(agent.when_idle())
    assert filtered(agent, "turn/start") == ["turn/start"]
    assert len(world.model.requests) == 1
    assert "file changed: a.py" in request_text(world.model.requests[0])


async def test_c05_claim_order_context_before_prompt(make_world):
    """C-5: after inject(c) while idle, followup(p): after turn/start come splice(-next-step 1)
    then splice(-next-turn 1); claimed [c, p]; the step's user/message order is c then p."""
    world = make_world([text("ok")])
    agent = await world.agent()
    rec = Recorder(world.ctx).inbox(agent)
    c, p = ctx_msg("context"), m("prompt")
    agent.inject(c)
    agent.followup(p)
    await bounded(agent.when_idle())

    t = types(agent)
    start = t.index("turn/start")
    assert t[start + 1:start + 4] == ["agent/inbox/spliced", "agent/inbox/spliced", "step/start"]
    events = agent.session.events
    assert events[start + 1].data == {"target": "next-step", "start": 0, "removedCount": 1,
                                      "inserted": []}
    assert events[start + 2].data == {"target": "next-turn", "start": 0, "removedCount": 1,
                                      "inserted": []}
    assert rec.of("claimed") == [(c, 1), (p, 1)]
    assert [e.data["id"] for e in events_of(agent, "user/message")] == [c.id, p.id]


async def test_c06_plugin_source_preserved(make_world):
    """C-6: inject with source {kind:'plugin', plugin:''} keeps plugin '' exactly in the
    stored inserted message (and in the recorded user/message)."""
    world = make_world([text("ok")])
    agent = await world.agent()
    c = m("ctx", kind="plugin", plugin="")
    agent.inject(c)
    assert splices(agent)[0]["inserted"][0]["source"] == {"kind": "plugin", "plugin": ""}
    agent.followup(m("go"))
    await bounded(agent.when_idle())
    assert events_of(agent, "user/message")[0].data["source"] == {"kind": "plugin",
                                                                  "plugin": ""}


async def test_rule_adjacent_microtask_sends_get_independent_turns(make_world):
    """§3.2/§6.2: a followup sent after the first waking send claimed its prompt waits for a
    turn of its own; each turn carries its own message and source."""
    world = make_world([text("first"), text("second")])
    agent = await world.agent()
    agent.followup(m("user message"))
    await asyncio.sleep(0)
    agent.followup(m("plugin message", kind="plugin", plugin="test"))
    await bounded(agent.when_idle())
    assert filtered(agent, "turn/start") == ["turn/start"] * 2
    assert [e.data["source"] for e in events_of(agent, "user/message")] == [
        {"kind": "user"}, {"kind": "plugin", "plugin": "test"}]
    assert [e.data["turn"] for e in events_of(agent, "turn/start")] == [1, 2]


async def test_rule_wake_opens_turn_even_if_message_removed_before_claim(make_world):
    """§3.2: a wake while idle always opens a turn boundary; a message removed before the claim
    (here the claim takes nothing) leaves a turn that ends completed with no step."""
    world = make_world([])
    agent = await world.agent()
    seen = []

    def on_running(payload):
        if payload["status"] == "running":
            seen.append(agent.inbox.remove(prompt.id))

    world.ctx.on("agent/status", on_running)
    prompt = m("gone")
    agent.followup(prompt)
    await bounded(agent.when_idle())
    assert seen == [True]
    assert filtered(agent, "turn/start", "step/start", "turn/end") == ["turn/start", "turn/end"]
    assert events_of(agent, "turn/end")[0].data == {"turn": 1, "reason": {"kind": "completed"}}
    assert world.model.requests == []


async def test_c08_sequential_followups(make_world):
    """C-8: each followup awaited to idle gives turns 1..N with one message each."""
    world = make_world([text("r1"), text("r2"), text("r3")])
    agent = await world.agent()
    for word in ("one", "two", "three"):
        agent.followup(m(word))
        await bounded(agent.when_idle())
    assert [e.data["turn"] for e in events_of(agent, "turn/start")] == [1, 2, 3]
    assert [e.data["turn"] for e in events_of(agent, "turn/end")] == [1, 2, 3]
    assert user_texts(agent) == ["one", "two", "three"]
    per_turn = []
    current = None
    for event in agent.session.events:
        if event.type == "turn/start":
            current = []
            per_turn.append(current)
        elif event.type == "user/message":
            current.append(block_text(event.data["content"]))
    assert per_turn == [["one"], ["two"], ["three"]]
    assert len(world.model.requests) == 3


async def test_c09_followup_queued_during_a_turn(make_world):
    """C-9: a followup(q) from a deferred callback after the first chunk of turn 1 runs as turn 2
    after turn/end 1; its request history contains both turns; status stays running between
    the turns (statuses [running, idle])."""
    world = make_world([text("first"), text("second")])
    agent = await world.agent()
    rec = Recorder(world.ctx).status(agent)
    queued = []

    def on_event(session, event):
        if session is agent.session and event.type == "assistant/chunk" and not queued:
            queued.append(True)
            asyncio.get_running_loop().call_soon(agent.followup, m("second message"))

    world.ctx.on("session/event", on_event)
    agent.followup(m("first message"))
    await bounded(agent.when_idle())

    assert [e.data["turn"] for e in events_of(agent, "turn/start")] == [1, 2]
    t = types(agent)
    first_end = t.index("turn/end")
    assert t.index("turn/start", first_end) > first_end
    assert len(world.model.requests) == 2
    history = request_text(world.model.requests[1])
    assert "first message" in history and "first" in history and "second message" in history
    assert [msg["role"] for msg in world.model.requests[1]["messages"]] == [
        "user", "assistant", "user"]
    assert rec.statuses() == ["running", "idle"]


async def test_rule_ordering_guarantees_hold_for_a_tool_turn(make_world):
    """§1.6: steps strictly nested in turns, request records/chunks/messages/tool records inside an
    open step, each tool/result after its tool/call and citing it, assistant/message before
    step/end, turn/end never written while a step is open."""
    world = make_world([tool_call("c1", "echo", {"x": 1}), text("done")],
                       tools=[tool("echo", lambda call: "echoed")])
    agent = await world.agent()
    agent.followup(m("go"))
    await bounded(agent.when_idle())
    open_turn = open_step = None
    call_seqs = {}
    inside_step = {"assistant/chunk", "assistant/message", "tool/call", "tool/result",
                   "request/header", "request/context", "user/message"}
    for event in agent.session.events:
        if event.type == "turn/start":
            assert open_turn is None
            open_turn = event.data["turn"]
        elif event.type == "turn/end":
            assert open_step is None and event.data["turn"] == open_turn
            open_turn = None
        elif event.type == "step/start":
            assert open_turn == event.data["turn"] and open_step is None
            open_step = event.data["step"]
        elif event.type == "step/end":
            assert open_step == event.data["step"]
            open_step = None
        elif event.type in inside_step:
            assert open_step is not None, event.type
        if event.type == "tool/call":
            call_seqs[event.data["callId"]] = event.seq
            assert event.data["arguments"] == '{"x":1}'
        if event.type == "tool/result":
            call_id = event.data["message"]["source"]["callId"]
            assert event.source_event_seqs == [call_seqs[call_id]]
            assert event.data["message"]["content"][0]["toolCallId"] == call_id
    assert [e.data["step"] for e in events_of(agent, "step/start")] == [1, 2]
    result = events_of(agent, "tool/result")[0].data["message"]
    assert set(result) == {"id", "role", "content", "source"}
    assert result["role"] == "user" and result["source"] == {"kind": "tool", "callId": "c1"}
    assert result["content"][0]["isError"] is False
    assert [msg["role"] for msg in agent.session.derive_messages()] == [
        "user", "assistant", "user", "assistant"]
