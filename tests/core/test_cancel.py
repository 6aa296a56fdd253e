"""§8 Cancellation (C-47 … C-62, C-76) and the latch rules of §3.2/§3.3."""

from __future__ import annotations

import asyncio

import pytest

from dsh_tui.llm.scripted import hang, reply, text, tool_call
from dsh_tui.loop import ToolOutput

from .conftest import (
    Recorder,
    block_text,
    bounded,
    canceled_splices,
    ctx_msg,
    events_of,
    filtered,
    m,
    request_text,
    request_texts,
    settle,
    splices,
    text_deltas,
    tool,
    turn_reasons,
    types,
    until,
    user_texts,
)

USER = {"kind": "user"}
ABORTED_USER = {"kind": "aborted", "reason": USER}


async def in_flight(world, agent, n_requests=1):
    """Wait until the hanging request has streamed its whole 'partial' prefix."""
    await until(lambda: len(world.model.requests) == n_requests and
                len(text_deltas(agent)) >= 7 * n_requests, "hanging request in flight")


async def test_c47_idle_cancel_is_a_noop(make_world):
    """C-47: idle with nothing pending, cancel(user) changes nothing and arms nothing; a later
    followup(p) runs normally (one completed turn)."""
    world = make_world([text("reply")])
    agent = await world.agent()
    agent.cancel(USER)
    assert list(agent.session.events) == []
    agent.followup(m("real prompt"))
    await bounded(agent.when_idle())
    assert user_texts(agent) == ["real prompt"]
    assert turn_reasons(agent) == [{"kind": "completed"}]


async def test_c48_keep_inbox_right_after_a_waking_send(make_world):
    """C-48: followup(p) then immediately cancel(user, keep_inbox=True) → no canceled splice;
    next_turn empty (p was already claimed); 0 requests; turn/end{aborted,{user}}; a later
    followup runs normally."""
    world = make_world([text("wake reply")])
    agent = await world.agent()
    agent.followup(m("preserved"))
    agent.cancel(USER, keep_inbox=True)
    assert canceled_splices(agent) == []
    await bounded(agent.when_idle())
    assert agent.inbox.next_turn == ()
    assert user_texts(agent) == []
    assert world.model.requests == []
    assert turn_reasons(agent) == [ABORTED_USER]
    agent.followup(m("wake it"))
    await bounded(agent.when_idle())
    assert user_texts(agent) == ["wake it"]
    assert len(world.model.requests) == 1
    assert turn_reasons(agent)[-1] == {"kind": "completed"}


async def test_c49_default_cancel_right_after_waking_sends(make_world):
    """C-49: followup(a), followup(b), cancel(user) → one turn/start, no step/start,
    turn/end{aborted,{user}}, b discarded with a canceled splice, status idle, 0 user/message."""
    world = make_world([text("should not run")])
    agent = await world.agent()
    rec = Recorder(world.ctx).inbox(agent)
    a, b = m("drop me first"), m("drop me second")
    agent.followup(a)
    agent.followup(b)
    agent.cancel(USER)
    await bounded(agent.when_idle())
    assert filtered(agent, "turn/start", "step/start", "turn/end") == ["turn/start", "turn/end"]
    assert turn_reasons(agent) == [ABORTED_USER]
    assert canceled_splices(agent) == [{"target": "next-turn", "start": 0, "removedCount": 1,
                                        "inserted": [], "outcome": "canceled"}]
    assert rec.of("discarded") == [b]
    assert agent.status == "idle"
    assert user_texts(agent) == []
    assert world.model.requests == []


async def test_c50_cancel_mid_stream(make_world):
    """C-50: hang model; followup(go), request in flight; followup(tail); cancel(user) → reasons
    [aborted{user}], one turn/start, one request, user/message only go, tail discarded; the
    interrupted assistant/message{[text partial], interrupted:true} cites every chunk seq and
    precedes step/end, which precedes turn/end; a later request contains 'partial'."""
    world = make_world([hang(), text("after")])
    agent = await world.agent()
    rec = Recorder(world.ctx).inbox(agent)
    agent.followup(m("go"))
    await in_flight(world, agent)
    assert agent.status == "running"
    tail = m("queued tail")
    agent.followup(tail)
    agent.cancel(USER)
    await bounded(agent.when_idle())

    assert turn_reasons(agent) == [ABORTED_USER]
    assert filtered(agent, "turn/start") == ["turn/start"]
    assert len(world.model.requests) == 1
    assert user_texts(agent) == ["go"]
    assert rec.of("discarded") == [tail]
    [message] = events_of(agent, "assistant/message")
    assert message.data["message"]["content"] == [{"type": "text", "text": "partial"}]
    assert message.data["interrupted"] is True
    assert message.source_event_seqs == [e.seq for e in events_of(agent, "assistant/chunk")]
    t = types(agent)
    assert t.index("assistant/message") < t.index("step/end") < t.index("turn/end")
    assert world.model.requests[0]["signal"].aborted
    assert world.model.requests[0]["signal"].reason == USER

    agent.followup(m("continue"))
    await bounded(agent.when_idle())
    assistant = [block_text(msg["content"]) for msg in world.model.requests[1]["messages"]
                 if msg["role"] == "assistant"]
    assert "partial" in assistant


async def test_rule_cancel_before_visible_content_finalizes_nothing(make_world):
    """§6.4: an interrupted assistant/message is written only when the stream already delivered
    visible text/reasoning; a cancel during a prompt with nothing visible writes none."""
    world = make_world([hang("")])
    agent = await world.agent()
    agent.followup(m("go"))
    await until(lambda: len(events_of(agent, "assistant/chunk")) >= 1, "block-start logged")
    await settle(5)
    agent.cancel(USER)
    await bounded(agent.when_idle())
    assert filtered(agent, "assistant/message") == []
    assert turn_reasons(agent) == [ABORTED_USER]
    assert filtered(agent, "step/start", "step/end") == ["step/start", "step/end"]


async def test_rule_keep_inbox_parks_queued_work_after_abort(make_world):
    """§3.3: with keep_inbox, items still pending (queued before the cancel) stay pending and do
    NOT auto-run after convergence; they run on the next waking send."""
    world = make_world([hang(), text("preserved reply"), text("wake reply")])
    agent = await world.agent()
    agent.followup(m("active"))
    await in_flight(world, agent)
    agent.followup(m("preserved"))
    agent.cancel(USER, keep_inbox=True)
    await bounded(agent.when_idle())
    await settle()
    assert user_texts(agent) == ["active"]
    assert [x.text for x in agent.inbox.next_turn] == ["preserved"]
    assert len(world.model.requests) == 1
    assert canceled_splices(agent) == []
    agent.followup(m("wake it"))
    await bounded(agent.when_idle())
    assert user_texts(agent) == ["active", "preserved", "wake it"]
    assert len(world.model.requests) == 3


async def test_c52_keep_inbox_latches_a_wake_in_the_abort_window(make_world):
    """C-52 (§3.3): cancel(user, keep_inbox=True) on a running turn, then a waking send before
    convergence → the send is latched and replayed at convergence without another send:
    [active, B], 2 requests, next_turn empty, reasons [aborted{user}, completed]."""
    world = make_world([hang(), text("B reply")])
    agent = await world.agent()
    rec = Recorder(world.ctx).status(agent)
    agent.followup(m("active"))
    await in_flight(world, agent)
    agent.cancel(USER, keep_inbox=True)
    agent.followup(m("B"))
    assert agent.status == "running"
    await bounded(agent.when_idle())
    assert user_texts(agent) == ["active", "B"]
    assert len(world.model.requests) == 2
    assert agent.inbox.next_turn == ()
    assert turn_reasons(agent) == [ABORTED_USER, {"kind": "completed"}]
    # latch replay runs after the idle transition: a new running/idle pair
    assert rec.statuses() == ["running", "idle", "running", "idle"]


async def test_c52_latched_steer_is_rerouted_to_next_turn(make_world):
    """§3.2: a waking send while the activity is aborted but not converged is rerouted to
    next-turn, even a steer; it replays as its own turn."""
    world = make_world([hang(), text("steer reply")])
    agent = await world.agent()
    agent.followup(m("active"))
    await in_flight(world, agent)
    agent.cancel(USER, keep_inbox=True)
    s = m("steer after abort")
    agent.steer(s)
    assert splices(agent)[-1] == {"target": "next-turn", "start": 0, "inserted": [s.to_json()]}
    assert agent.inbox.next_turn == (s,) and agent.inbox.next_step == ()
    await bounded(agent.when_idle())
    assert user_texts(agent) == ["active", "steer after abort"]
    assert [e.data["turn"] for e in events_of(agent, "turn/start")] == [1, 2]


async def test_c52_inject_after_abort_is_not_rerouted_nor_latched(make_world):
    """§3.2: inject (non-waking) is never rerouted: after an abort it lands in next_step and no
    replay turn runs."""
    world = make_world([hang()])
    agent = await world.agent()
    agent.followup(m("active"))
    await in_flight(world, agent)
    agent.cancel(USER, keep_inbox=True)
    c = ctx_msg("note")
    agent.inject(c)
    assert splices(agent)[-1]["target"] == "next-step"
    await bounded(agent.when_idle())
    await settle()
    assert filtered(agent, "turn/start") == ["turn/start"]
    assert agent.inbox.next_step == (c,)


async def test_c53_default_cancel_clears_the_latch(make_world):
    """C-53: as C-52 but followed by cancel(user) → the inbox and the latch are dropped: only
    'active' ran (1 request); a later followup(C) runs C."""
    world = make_world([hang(), text("C reply")])
    agent = await world.agent()
    agent.followup(m("active"))
    await in_flight(world, agent)
    agent.cancel(USER, keep_inbox=True)
    agent.followup(m("B"))
    agent.cancel(USER)
    await bounded(agent.when_idle())
    await settle()
    assert user_texts(agent) == ["active"]
    assert agent.inbox.next_turn == ()
    assert len(world.model.requests) == 1
    agent.followup(m("C"))
    await bounded(agent.when_idle())
    assert user_texts(agent) == ["active", "C"]
    assert len(world.model.requests) == 2


async def test_rule_removed_latched_wake_suppresses_replay(make_world):
    """§3.3: a latched message removed from the inbox before convergence produces no replay turn
    (replay requires has_pending)."""
    world = make_world([hang()])
    agent = await world.agent()
    agent.followup(m("active"))
    await in_flight(world, agent)
    agent.cancel(USER, keep_inbox=True)
    steer = m("steer me")
    agent.steer(steer)
    assert agent.inbox.remove(steer.id) is True
    await bounded(agent.when_idle())
    await settle()
    assert user_texts(agent) == ["active"]
    assert len(world.model.requests) == 1
    assert agent.status == "idle"
    assert filtered(agent, "turn/start") == ["turn/start"]


async def test_rule_latch_survives_a_slow_convergence(make_world):
    """§3.3: the latch covers the whole abort-to-idle window, not only the same tick: an
    uncooperative tool keeps the aborted turn open; a waking send many ticks later still
    replays at convergence."""
    release, entered = asyncio.Event(), asyncio.Event()

    async def uncooperative(call):
        entered.set()
        await release.wait()  # ignores the signal on purpose
        return "finished anyway"

    world = make_world([tool_call("c1", "slow", {}), text("B reply")],
                       tools=[tool("slow", uncooperative)])
    agent = await world.agent()
    agent.followup(m("A"))
    await bounded(entered.wait())
    agent.cancel(USER, keep_inbox=True)
    await settle(30)
    assert world.model.requests[0]["signal"].aborted and agent.status == "running"
    agent.followup(m("B"))
    release.set()
    await bounded(agent.when_idle())
    assert user_texts(agent) == ["A", "B"]
    assert len(world.model.requests) == 2
    assert events_of(agent, "tool/result")[0].data["message"]["content"][0]["isError"] is False
    assert turn_reasons(agent) == [ABORTED_USER, {"kind": "completed"}]


async def test_c55_cancel_in_the_running_notification(make_world):
    """C-55: an agent/status(running) listener cancels → no turn/start, no chunks, the prompt is
    discarded; status returns idle; later prompts run."""
    world = make_world([text("later reply")])
    agent = await world.agent()
    rec = Recorder(world.ctx).status(agent).inbox(agent)
    armed = [True]

    def on_status(payload):
        if payload["agent"] is agent and payload["status"] == "running" and armed:
            armed.clear()
            agent.cancel(USER)

    off = world.ctx.on("agent/status", on_status)
    p = m("go")
    agent.followup(p)
    await bounded(agent.when_idle())
    off()
    assert filtered(agent, "turn/start", "assistant/chunk") == []
    assert rec.of("discarded") == [p]
    assert agent.inbox.has_pending is False
    assert rec.statuses() == ["running", "idle"]
    assert agent.status == "idle"
    agent.followup(m("later"))
    await bounded(agent.when_idle())
    assert user_texts(agent) == ["later"]
    assert [e.data["turn"] for e in events_of(agent, "turn/start")] == [1]


async def test_c55_cancel_then_followup_in_the_running_notification(make_world):
    """C-55: a running listener that cancels and then followup(B) → B runs automatically (latched):
    user messages [B], 1 request; a later C gives 2 turn/end in total."""
    world = make_world([text("B reply"), text("C reply")])
    agent = await world.agent()
    replaced = []

    def on_status(payload):
        if payload["agent"] is agent and payload["status"] == "running" and not replaced:
            replaced.append(True)
            agent.cancel(USER)
            agent.followup(m("B"))

    world.ctx.on("agent/status", on_status)
    agent.followup(m("A"))
    await bounded(agent.when_idle())
    assert user_texts(agent) == ["B"]
    assert agent.inbox.next_turn == ()
    assert len(world.model.requests) == 1
    agent.followup(m("C"))
    await bounded(agent.when_idle())
    assert user_texts(agent) == ["B", "C"]
    assert len(world.model.requests) == 2
    assert len(events_of(agent, "turn/end")) == 2


async def test_rule_prompt_queued_during_pre_step_cancellation_replays(make_world):
    """§3.3: followup(A); cancel(user); followup(B) before convergence → B is latched and runs:
    user messages [B], 1 request; the aborted turn 1 has no step."""
    world = make_world([text("B reply"), text("C reply")])
    agent = await world.agent()
    agent.followup(m("A"))
    idle = asyncio.ensure_future(agent.when_idle())
    agent.cancel(USER)
    agent.followup(m("B"))
    await bounded(idle)
    assert user_texts(agent) == ["B"]
    assert agent.inbox.next_turn == ()
    assert len(world.model.requests) == 1
    assert turn_reasons(agent) == [ABORTED_USER, {"kind": "completed"}]
    agent.followup(m("C"))
    await bounded(agent.when_idle())
    assert len(events_of(agent, "turn/end")) == 3


async def test_rule_when_idle_waiter_before_pre_step_cancel_resolves(make_world):
    """§3.4: a when_idle() issued before a cancel that drops the turn before any step resolves."""
    world = make_world([text("x")])
    agent = await world.agent()
    agent.followup(m("q"))
    idle = asyncio.ensure_future(agent.when_idle())
    agent.cancel(USER)
    await bounded(idle, "when_idle after pre-step cancel")
    assert agent.status == "idle"


async def test_rule_idle_listener_cancellation_settles_its_waiter(make_world):
    """§3.4/§3.6: a listener reacting to the idle transition sends, registers when_idle() and
    cancels; the waiter resolves (idle, 1 request, 2 turns) and later work still runs."""
    world = make_world([text("first reply"), text("later reply")])
    agent = await world.agent()
    observation = {}

    def on_idle(payload):
        if payload["agent"] is not agent or payload["status"] != "idle" or observation:
            return
        agent.followup(m("cancelled replacement"))

        async def observe():
            await agent.when_idle()
            return (agent.status, len(world.model.requests),
                    len(events_of(agent, "turn/start")))

        observation["task"] = asyncio.ensure_future(observe())
        agent.cancel(USER)

    world.ctx.on("agent/status", on_idle)
    agent.followup(m("first"))
    await until(lambda: "task" in observation, "idle listener ran")
    assert await bounded(observation["task"]) == ("idle", 1, 2)
    agent.followup(m("later"))
    await bounded(agent.when_idle())
    assert len(world.model.requests) == 2
    assert user_texts(agent) == ["first", "later"]


async def test_rule_replacement_after_idle_listener_cancel_replays(make_world):
    """§3.3: in an idle listener: send, cancel, send again → the post-cancel send is latched and
    runs at convergence without a further send."""
    world = make_world([text("first reply"), text("replacement reply"), text("wake reply")])
    agent = await world.agent()
    waiter = {}

    def on_idle(payload):
        if payload["agent"] is not agent or payload["status"] != "idle" or waiter:
            return
        agent.followup(m("cancelled replacement"))
        agent.cancel(USER)
        agent.followup(m("surviving replacement"))
        waiter["idle"] = asyncio.ensure_future(agent.when_idle())

    world.ctx.on("agent/status", on_idle)
    agent.followup(m("first"))
    await until(lambda: "idle" in waiter, "idle listener ran")
    await bounded(waiter["idle"])
    assert len(world.model.requests) == 2
    assert user_texts(agent) == ["first", "surviving replacement"]
    assert agent.inbox.next_turn == ()
    agent.followup(m("wake it"))
    await bounded(agent.when_idle())
    assert user_texts(agent) == ["first", "surviving replacement", "wake it"]


async def test_rule_abort_observer_replacement_replays(make_world):
    """§3.2.1/§3.3: a waking send issued synchronously by an abort observer of the request signal
    (i.e. after the abort) is latched and replays: reasons [aborted{user}, completed]."""
    world = make_world([hang(), text("replacement reply"), text("wake reply")])
    agent = await world.agent()
    agent.followup(m("original"))
    await in_flight(world, agent)
    signal = world.model.requests[0]["signal"]
    signal.add_listener(lambda reason: agent.followup(m("replacement")))
    idle = asyncio.ensure_future(agent.when_idle())
    agent.cancel(USER)
    await bounded(idle)
    assert len(world.model.requests) == 2
    assert user_texts(agent) == ["original", "replacement"]
    assert turn_reasons(agent) == [ABORTED_USER, {"kind": "completed"}]
    agent.followup(m("wake it"))
    await bounded(agent.when_idle())
    assert len(world.model.requests) == 3


async def test_c57_cancel_clears_steering(make_world):
    """C-57: while hanging, steer(s) then cancel(user) → exactly one turn/start, s never logged as
    user/message, no follow-up turn."""
    world = make_world([hang()])
    agent = await world.agent()
    agent.followup(m("go"))
    await in_flight(world, agent)
    s = m("steer text")
    agent.steer(s)
    assert agent.inbox.next_step == (s,)  # running, not aborted: joins next_step, no latch
    agent.cancel(USER)
    await bounded(agent.when_idle())
    await settle()
    assert agent.status == "idle"
    assert filtered(agent, "turn/start") == ["turn/start"]
    assert "steer text" not in user_texts(agent)
    assert canceled_splices(agent)[0]["target"] == "next-step"


async def test_c58_cancel_from_sync_assistant_message_observer(make_world):
    """C-58: model [tool('c1','danger'), text]; a session/event listener cancels on
    assistant/message (inbox empty, so no append needed) → the tool never executes;
    turn/end{aborted,{user}}; tool/call c1 plus a synthetic isError tool/result with
    error{AbortError, ABORTED_BEFORE_DISPATCH}; the next turn's request contains it."""
    executions = []
    world = make_world([tool_call("c1", "danger", {}), text("recovered")],
                       tools=[tool("danger", lambda call: executions.append(1) or "ran")])
    agent = await world.agent()

    def observer(session, event):
        if session is agent.session and event.type == "assistant/message":
            agent.cancel(USER)

    off = world.ctx.on("session/event", observer)
    agent.followup(m("go"))
    await bounded(agent.when_idle())
    off()
    assert executions == []
    assert turn_reasons(agent) == [ABORTED_USER]
    [call] = events_of(agent, "tool/call")
    assert call.data["callId"] == "c1"
    [result] = events_of(agent, "tool/result")
    assert result.source_event_seqs == [call.seq]
    assert result.data["error"] == {"name": "AbortError", "code": "ABORTED_BEFORE_DISPATCH"}
    message = result.data["message"]
    assert message["source"] == {"kind": "tool", "callId": "c1"}
    block = message["content"][0]
    assert block["toolCallId"] == "c1" and block["isError"] is True
    assert block_text(block["content"]) == "Error: tool call aborted before dispatch"
    t = types(agent)
    assert t.index("tool/result") < t.index("step/end") < t.index("turn/end")

    agent.followup(m("continue safely"))
    await bounded(agent.when_idle())
    replayed = [b for msg in world.model.requests[1]["messages"] for b in msg["content"]
                if b.get("type") == "tool-result"]
    assert replayed and replayed[0]["toolCallId"] == "c1" and replayed[0]["isError"] is True
    assert turn_reasons(agent) == [ABORTED_USER, {"kind": "completed"}]


async def test_rule_abort_during_tools_finishes_started_calls_then_synthesizes(make_world):
    """§6.5: abort during tools: started calls finish and commit their results and contexts
    (contexts accepted after the cancel's clear() stay parked in next_step); every unstarted call
    gets a synthetic tool/call + aborted tool/result; the turn ends aborted."""
    async def first(call):
        call.agent.cancel(USER)
        await asyncio.sleep(0)
        return ToolOutput.text("first done", additional_contexts=[ctx_msg("parked context")])

    world = make_world([reply(tool_call("c1", "first", {}), tool_call("c2", "second", {})),
                        text("never")],
                       tools=[tool("first", first), tool("second", lambda call: "never")])
    agent = await world.agent()
    agent.followup(m("go"))
    await bounded(agent.when_idle())
    await settle()
    results = events_of(agent, "tool/result")
    assert [r.data["message"]["source"]["callId"] for r in results] == ["c1", "c2"]
    assert "error" not in results[0].data
    assert results[1].data["error"]["code"] == "ABORTED_BEFORE_DISPATCH"
    assert [c.data["callId"] for c in events_of(agent, "tool/call")] == ["c1", "c2"]
    assert turn_reasons(agent) == [ABORTED_USER]
    assert [x.text for x in agent.inbox.next_step] == ["parked context"]
    assert len(world.model.requests) == 1
    assert filtered(agent, "turn/start") == ["turn/start"]


async def test_c59_cancel_in_turn_stopping(make_world):
    """C-59: cancel(user) from agent/turn-stopping → exactly 1 step, reason aborted{user}."""
    world = make_world([text("one"), text("two")])
    agent = await world.agent()
    cancelled = []

    def on_stopping(payload):
        if not cancelled:
            cancelled.append(1)
            payload["agent"].cancel(USER)

    world.ctx.on("agent/turn-stopping", on_stopping)
    agent.followup(m("go"))
    await bounded(agent.when_idle())
    assert filtered(agent, "step/start") == ["step/start"]
    assert turn_reasons(agent) == [ABORTED_USER]


async def test_c60_first_cause_wins(make_world):
    """C-60: cancel({kind:'parent'}) then cancel({kind:'user'}) → the request signal reason is the
    very parent object; turn/end{aborted, {parent}}."""
    world = make_world([hang()])
    agent = await world.agent()
    agent.followup(m("go"))
    await in_flight(world, agent)
    supplied = {"kind": "parent"}
    agent.cancel(supplied)
    agent.cancel(USER)
    await bounded(agent.when_idle())
    assert world.model.requests[0]["signal"].reason is supplied
    assert turn_reasons(agent) == [{"kind": "aborted", "reason": {"kind": "parent"}}]


async def test_c60_user_cause_survives_disposal(make_world):
    """C-60: cancel(user) then handle disposal → turn/end still {aborted, {user}}."""
    world = make_world([hang()])
    handle = await world.create("cancel-dispose-race")
    agent = handle.agent
    agent.followup(m("go"))
    await in_flight(world, agent)
    agent.cancel(USER)
    await bounded(handle.dispose())
    assert turn_reasons(agent) == [ABORTED_USER]


async def test_rule_hook_cause_is_recorded_typed(make_world):
    """§3.3: the winning typed cause (e.g. {kind:'hook', reason}) is recorded in turn/end."""
    world = make_world([hang()])
    agent = await world.agent()
    agent.followup(m("go"))
    await in_flight(world, agent)
    agent.cancel({"kind": "hook", "reason": "policy"})
    await bounded(agent.when_idle())
    assert turn_reasons(agent) == [{"kind": "aborted",
                                    "reason": {"kind": "hook", "reason": "policy"}}]


@pytest.mark.parametrize("stage", ["pre-step", "request", "stopping", "tool"])
async def test_c62_cooperative_cancellation_everywhere(make_world, stage):
    """C-62: a listener (or tool body) blocking on the turn signal in pre-step, agent/request,
    turn-stopping or a tool: cancel(user) ends the wait, turn/end{aborted,{user}}, when_idle()
    resolves."""
    started = asyncio.Event()

    async def block_until_abort(signal):
        started.set()
        await signal.wait()

    script = [tool_call("blocked-tool", "blocked", {})] if stage == "tool" else [text("done")]

    async def blocked(call):
        await block_until_abort(call.signal)
        return "cancelled"

    world = make_world(script, tools=[tool("blocked", blocked)])
    agent = await world.agent()
    if stage == "pre-step":
        async def pre(payload, next_):
            await block_until_abort(payload["signal"])
            return await next_()
        agent.ctx.on("agent/pre-step", pre)
    elif stage == "request":
        async def req(payload, next_):
            await block_until_abort(payload["signal"])
            return await next_()
        agent.ctx.on("agent/request", req)
    elif stage == "stopping":
        async def stop(payload):
            await block_until_abort(payload["signal"])
        agent.ctx.on("agent/turn-stopping", stop)

    agent.followup(m("go"))
    await bounded(started.wait())
    idle = asyncio.ensure_future(agent.when_idle())
    agent.cancel(USER)
    await bounded(idle)
    assert turn_reasons(agent) == [ABORTED_USER]
    assert agent.status == "idle"
    assert filtered(agent, "step/start").__len__() == filtered(agent, "step/end").__len__()


async def test_c62_cooperative_cancellation_in_prompt_assembly(make_world):
    """C-62/C-75: prompt assembly blocked; cancel(user) and release → no step, no chunk, 0 requests,
    turn/end{aborted,{user}}."""
    world = make_world([text("never")])
    agent = await world.agent()
    entered, release = asyncio.Event(), asyncio.Event()

    async def section(subject):
        entered.set()
        await release.wait()
        return "late section"

    world.ctx.services["prompt"].section("blocking", section, agent=agent)
    agent.followup(m("go"))
    await bounded(entered.wait())
    agent.cancel(USER)
    release.set()
    await bounded(agent.when_idle())
    assert filtered(agent, "turn/start", "step/start", "assistant/chunk", "turn/end") == [
        "turn/start", "turn/end"]
    assert turn_reasons(agent) == [ABORTED_USER]
    assert world.model.requests == []


async def test_rule_cancel_from_step_start_observer_balances_the_step(make_world):
    """§6.2/§1.6.3: a cancel from a synchronous step/start session-event listener drops the step
    before the model streams; the open step is closed (balanced) and the turn ends aborted."""
    world = make_world([text("should not stream")])
    agent = await world.agent()

    def observer(session, event):
        if session is agent.session and event.type == "step/start":
            agent.cancel(USER)

    world.ctx.on("session/event", observer)
    agent.followup(m("go"))
    await bounded(agent.when_idle())
    assert filtered(agent, "assistant/chunk") == []
    assert turn_reasons(agent) == [ABORTED_USER]
    assert filtered(agent, "step/start", "step/end") == ["step/start", "step/end"]


async def test_rule_fresh_signal_per_turn_of_one_drain(make_world):
    """§6.2: consecutive turns of one drain each get a fresh signal; status stays running."""
    world = make_world([text("one"), text("two")])
    agent = await world.agent()
    rec = Recorder(world.ctx).status(agent)
    agent.followup(m("a"))
    agent.followup(m("b"))
    await bounded(agent.when_idle())
    s1, s2 = (r["signal"] for r in world.model.requests)
    assert s1 is not s2 and not s1.aborted and not s2.aborted
    assert rec.statuses() == ["running", "idle"]
    assert "a" in request_texts(world.model.requests[1])
    assert request_text(world.model.requests[1])


async def test_rule_parked_items_run_before_a_latched_wake(make_world):
    """§3.3/§6.2: items parked by a keep_inbox cancel stay in next_turn; a wake latched in the same
    abort window replays at convergence and the drain then runs the parked prompt first, then the
    latched one, each in its own turn."""
    world = make_world([hang(), text("P reply"), text("B reply")])
    agent = await world.agent()
    agent.followup(m("active"))
    await in_flight(world, agent)
    agent.followup(m("P"))
    agent.cancel(USER, keep_inbox=True)
    agent.followup(m("B"))
    await bounded(agent.when_idle())
    assert user_texts(agent) == ["active", "P", "B"]
    assert turn_reasons(agent) == [ABORTED_USER, {"kind": "completed"}, {"kind": "completed"}]


async def test_rule_keep_inbox_cancel_at_turn_start_leaves_the_prompt_unclaimed(make_world):
    """§6.2: a cancel observed at the first boundary check (here from a synchronous turn/start
    observer, keep_inbox so no append is needed) aborts the turn before the claim: turn/start and
    turn/end{aborted} only, no claim splice, the prompt stays pending and is not replayed."""
    world = make_world([text("later"), text("latest")])
    agent = await world.agent()
    armed = [True]

    def observer(session, event):
        if session is agent.session and event.type == "turn/start" and armed:
            armed.clear()
            agent.cancel(USER, keep_inbox=True)

    world.ctx.on("session/event", observer)
    p = m("p")
    agent.followup(p)
    await bounded(agent.when_idle())
    await settle()
    assert types(agent) == ["agent/inbox/spliced", "turn/start", "turn/end"]
    assert turn_reasons(agent) == [ABORTED_USER]
    assert agent.inbox.next_turn == (p,)
    agent.followup(m("q"))
    await bounded(agent.when_idle())
    assert user_texts(agent) == ["p", "q"]
    assert turn_reasons(agent)[1:] == [{"kind": "completed"}] * 2


async def test_rule_default_cancel_at_turn_start_with_pending_is_lost(make_world):
    """§3.3: the same observer without keep_inbox must clear a pending prompt, which needs an
    append during publication: the cancel raises before aborting, is contained, and the turn runs
    normally."""
    world = make_world([text("ran anyway")])
    agent = await world.agent()
    errors = []

    def observer(session, event):
        if session is agent.session and event.type == "turn/start" and not errors:
            try:
                agent.cancel(USER)
            except Exception as error:
                errors.append(str(error))

    world.ctx.on("session/event", observer)
    agent.followup(m("p"))
    await bounded(agent.when_idle())
    assert errors and "cannot reenter" in errors[0]
    assert turn_reasons(agent) == [{"kind": "completed"}]
    assert user_texts(agent) == ["p"]


async def test_rule_followup_from_turn_stopping_runs_as_the_next_turn(make_world):
    """§6.2: a followup queued from agent/turn-stopping does not keep the turn open (only next_step
    does); the drain continues with it as the next turn without a status change."""
    world = make_world([text("one"), text("two")])
    agent = await world.agent()
    rec = Recorder(world.ctx).status(agent)
    queued = []

    def stopping(payload):
        if not queued:
            queued.append(1)
            payload["agent"].followup(m("from stopping"))

    world.ctx.on("agent/turn-stopping", stopping)
    agent.followup(m("go"))
    await bounded(agent.when_idle())
    assert [e.data["turn"] for e in events_of(agent, "turn/start")] == [1, 2]
    assert filtered(agent, "step/start") == ["step/start"] * 2
    assert user_texts(agent) == ["go", "from stopping"]
    assert rec.statuses() == ["running", "idle"]


async def test_wake_runs_work_kept_by_a_keep_inbox_cancel(make_world):
    """agent.wake() (an addition to the contract): items kept by cancel(keep_inbox=True) do
    not auto-run; wake() starts them in order without a durable remove/re-insert, and with
    nothing pending it is a no-op that returns False."""
    from dsh_tui.llm.scripted import hang, text
    world = make_world([hang(), text("one"), text("two")])
    agent = await world.agent()
    assert agent.wake() is False and agent.status == "idle"
    agent.followup(m("go"))
    await until(lambda: len(world.model.requests) == 1, "request in flight")
    agent.followup(m("first"))
    agent.followup(m("second"))
    agent.cancel(keep_inbox=True)
    await bounded(agent.when_idle())
    assert [x.text for x in agent.inbox.next_turn] == ["first", "second"]
    before = len(splices(agent))
    assert agent.wake() is True
    await bounded(agent.when_idle())
    assert user_texts(agent)[-2:] == ["first", "second"]
    claims = splices(agent)[before:]
    assert all("outcome" not in s and not s["inserted"] for s in claims)
