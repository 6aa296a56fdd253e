"""Rules of §1–§6 the numbered examples do not show: chunk-level interrupts, absent optional
fields, scope isolation across owners, send classification, tool pools, disposal waits."""

from __future__ import annotations

import asyncio

import pytest

from dsh_tui.llm.scripted import fail, hang, reply, text, tool_call
from dsh_tui.loop import ToolOutput

from .conftest import (
    ChunkModel,
    Recorder,
    bounded,
    canceled_splices,
    ctx_msg,
    events_of,
    filtered,
    find_nones,
    m,
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


# -- chunk-level behaviour of §6.4 -------------------------------------------------------------


async def test_rule_reasoning_only_interrupt_keeps_prefix_and_usage(make_world):
    """§6.4: a cancel during reasoning-only streaming finalizes the reasoning prefix as an
    interrupted assistant/message carrying the usage chunk delivered before the cancel."""
    model = ChunkModel([([
        {"type": "block-start", "index": 0, "blockType": "reasoning"},
        {"type": "reasoning-delta", "index": 0, "text": "thinking about it"},
        {"type": "usage", "usage": {"inputTokens": 7, "outputTokens": 4}},
    ], True)])
    world = make_world(model=model)
    agent = await world.agent()
    agent.followup(m("go"))
    await until(lambda: len(events_of(agent, "assistant/chunk")) == 3)
    agent.cancel(USER)
    await bounded(agent.when_idle())
    [message] = events_of(agent, "assistant/message")
    assert message.data["message"]["content"] == [{"type": "reasoning",
                                                   "text": "thinking about it"}]
    assert message.data["usage"] == {"inputTokens": 7, "outputTokens": 4}
    assert message.data["interrupted"] is True


async def test_rule_interrupt_drops_half_streamed_tool_call(make_world):
    """§6.4: an interrupted assistant/message keeps the visible text blocks only; a partial tool
    call is dropped whole and no tool/call is written."""
    model = ChunkModel([([
        {"type": "block-start", "index": 0, "blockType": "text"},
        {"type": "text-delta", "index": 0, "text": "reading the file"},
        {"type": "block-end", "index": 0, "block": {"type": "text", "text": "reading the file"}},
        {"type": "block-start", "index": 1, "blockType": "tool-call"},
        {"type": "tool-call-delta", "index": 1, "id": "c1", "name": "read",
         "argumentsDelta": '{"pa'},
    ], True)])
    world = make_world(model=model)
    agent = await world.agent()
    agent.followup(m("go"))
    await until(lambda: len(events_of(agent, "assistant/chunk")) == 5)
    agent.cancel(USER)
    await bounded(agent.when_idle())
    [message] = events_of(agent, "assistant/message")
    assert message.data["message"]["content"] == [{"type": "text", "text": "reading the file"}]
    assert "usage" not in message.data
    assert filtered(agent, "tool/call") == []


async def test_rule_interrupt_with_only_a_partial_tool_call_finalizes_nothing(make_world):
    """§6.4: with no visible text/reasoning, a cancel writes no assistant/message."""
    model = ChunkModel([([
        {"type": "block-start", "index": 0, "blockType": "tool-call"},
        {"type": "tool-call-delta", "index": 0, "id": "c1", "name": "read",
         "argumentsDelta": '{"pa'},
    ], True)])
    world = make_world(model=model)
    agent = await world.agent()
    agent.followup(m("go"))
    await until(lambda: len(events_of(agent, "assistant/chunk")) == 2)
    agent.cancel(USER)
    await bounded(agent.when_idle())
    assert filtered(agent, "assistant/message") == []
    assert turn_reasons(agent) == [ABORTED_USER]


async def test_rule_success_without_usage_omits_the_usage_key(make_world):
    """§1.5/'absent never null': a successful call that delivered no usage chunk records an
    assistant/message without a `usage` key (and without `interrupted`)."""
    model = ChunkModel([([
        {"type": "block-start", "index": 0, "blockType": "text"},
        {"type": "text-delta", "index": 0, "text": "hi"},
        {"type": "block-end", "index": 0, "block": {"type": "text", "text": "hi"}},
        {"type": "finish", "reason": {"kind": "stop"}},
    ], False)])
    world = make_world(model=model)
    agent = await world.agent()
    agent.followup(m("go"))
    await bounded(agent.when_idle())
    [message] = events_of(agent, "assistant/message")
    assert set(message.data) == {"turn", "step", "message"}
    assert message.source_event_seqs == [e.seq for e in events_of(agent, "assistant/chunk")]


async def test_rule_no_null_anywhere_in_a_rich_log(make_world):
    """§1.1/conventions: optional JSON fields are absent, never null, across a log with tools,
    contexts, retries, a failure, an interrupt and cancellations."""
    world = make_world([
        tool_call("c1", "t", {"a": 1}),
        fail("RATE_LIMIT", after=text("oops")), text("after retry"),
        fail("SERVER"),
        hang(),
    ], tools=[tool("t", lambda call: ToolOutput.text(
        "r", additional_contexts=[ctx_msg("extra")]))])
    agent = await world.agent()
    retried = []

    async def retry_once(payload, next_):
        if not retried:
            retried.append(1)
            return {"kind": "retry"}
        return await next_()

    world.ctx.on("agent/request-error", retry_once)
    agent.inject(ctx_msg("pre"))
    agent.followup(m("one"))
    await bounded(agent.when_idle())
    agent.followup(m("two"))
    await bounded(agent.when_idle())
    agent.followup(m("three"))
    await until(lambda: len(world.model.requests) == 5 and len(text_deltas(agent)) >= 20)
    agent.followup(m("dropped"))
    agent.cancel(USER)
    await bounded(agent.when_idle())
    for event in agent.session.events:
        assert find_nones(event.data) == [], (event.type, find_nones(event.data))
        record = event.to_json()
        assert None not in record.values()
    assert [r["kind"] for r in turn_reasons(agent)] == ["completed", "error", "aborted"]


# -- send classification (§3.2) ----------------------------------------------------------------


async def test_rule_reentrant_cancel_from_inserted_listener_does_not_reclassify(make_world):
    """§3.2.1: waking_after_abort is computed before inserting: a keep_inbox cancel issued by an
    agent/inbox/inserted observer of the message itself does not reroute or latch it; it stays
    parked in next_step and no replay turn runs."""
    world = make_world([hang()])
    agent = await world.agent()
    agent.followup(m("active"))
    await until(lambda: len(text_deltas(agent)) >= 7)
    q = m("steer q")

    def on_inserted(payload):
        if payload["message"].id == q.id:
            agent.cancel(USER, keep_inbox=True)

    world.ctx.on("agent/inbox/inserted", on_inserted)
    agent.steer(q)
    assert agent.inbox.next_step == (q,)
    assert splices(agent)[-1]["target"] == "next-step"
    await bounded(agent.when_idle())
    await settle()
    assert filtered(agent, "turn/start") == ["turn/start"]
    assert agent.inbox.next_step == (q,)
    assert turn_reasons(agent) == [ABORTED_USER]


async def test_rule_duplicate_send_raises_without_side_effects(make_world):
    """§3.2.3: a send whose durable insert fails (duplicate pending id) raises, changes nothing and
    wakes nothing."""
    world = make_world([])
    agent = await world.agent()
    c = ctx_msg("ctx")
    agent.inject(c)
    before = agent.session.seq
    rec = Recorder(world.ctx).status(agent)
    with pytest.raises(Exception, match="already pending"):
        agent.followup(c)
    with pytest.raises(Exception, match="already pending"):
        agent.steer(c)
    assert agent.session.seq == before
    assert rec.statuses() == [] and agent.status == "idle"


async def test_rule_cancel_with_pending_from_sync_observer_raises_before_abort(make_world):
    """§3.3: cancel() without keep_inbox from a synchronous session/event listener while something
    is pending hits the reentrancy guard and raises before the abort: the turn is not aborted and
    the queued prompt still runs."""
    world = make_world([text("first"), text("second")])
    agent = await world.agent()
    attempts = []

    def observer(session, event):
        if session is agent.session and event.type == "assistant/chunk" and not attempts:
            try:
                agent.cancel(USER)
            except Exception as error:
                attempts.append(str(error))

    world.ctx.on("session/event", observer)
    agent.followup(m("one"))
    agent.followup(m("two"))
    await bounded(agent.when_idle())
    assert attempts and "cannot reenter" in attempts[0]
    assert turn_reasons(agent) == [{"kind": "completed"}] * 2
    assert user_texts(agent) == ["one", "two"]


async def test_rule_keep_inbox_cancel_from_sync_observer_works(make_world):
    """§3.3: with keep_inbox=True (no append) the same synchronous cancel works and aborts."""
    world = make_world([text("first"), text("second")])
    agent = await world.agent()

    def observer(session, event):
        if session is agent.session and event.type == "assistant/chunk":
            agent.cancel(USER, keep_inbox=True)

    world.ctx.on("session/event", observer)
    agent.followup(m("one"))
    agent.followup(m("two"))
    await bounded(agent.when_idle())
    assert turn_reasons(agent) == [ABORTED_USER]
    assert [x.text for x in agent.inbox.next_turn] == ["two"]
    assert canceled_splices(agent) == []


async def test_rule_when_idle_follows_a_driver_started_by_an_idle_listener(make_world):
    """§3.4: when_idle() follows replacement drivers started by listeners reacting to the idle
    transition."""
    world = make_world([text("one"), text("two")])
    agent = await world.agent()
    sent = []

    def on_idle(payload):
        if payload["status"] == "idle" and not sent:
            sent.append(1)
            agent.followup(m("follow-on"))

    agent.ctx.on("agent/status", on_idle)
    agent.followup(m("first"))
    await bounded(agent.when_idle())
    assert user_texts(agent) == ["first", "follow-on"]
    assert agent.status == "idle"


async def test_rule_status_events_alternate(make_world):
    """§3.1/§3.6: agent/status is emitted only on real transitions, never twice the same value in a
    row, across cancels, latch replays and errors."""
    world = make_world([hang(), text("b"), fail("SERVER"), text("d")])
    agent = await world.agent()
    rec = Recorder(world.ctx).status(agent)
    agent.followup(m("a"))
    await until(lambda: len(text_deltas(agent)) >= 7)
    agent.cancel(USER, keep_inbox=True)
    agent.followup(m("b"))
    await bounded(agent.when_idle())
    agent.followup(m("c"))
    await bounded(agent.when_idle())
    agent.followup(m("d"))
    await bounded(agent.when_idle())
    statuses = rec.statuses()
    assert statuses == ["running", "idle"] * (len(statuses) // 2)
    assert len(statuses) >= 6


# -- scope isolation across owners (§5.3) ------------------------------------------------------


async def test_rule_parent_scoped_listeners_do_not_hear_loop_children(make_world):
    """§5.3: agents created by the loop have no scope-parent link, so a listener or waterfall
    registered through parent.ctx hears only the parent, never its owned child; events flow up
    the chain only, never down."""
    world = make_world([text("child reply"), text("parent reply")])
    parent = await world.agent("parent")
    child = await world.agent("child", through=parent.ctx)
    heard = []
    parent.ctx.on("agent/status", lambda p: heard.append(p["agent"].id))
    parent.ctx.on("session/event", lambda s, e: heard.append(s.id))

    async def reject(payload, next_):
        return {"kind": "reject"}

    parent.ctx.on("agent/pre-step", reject)
    child_heard = []
    child.ctx.on("agent/status", lambda p: child_heard.append(p["agent"].id))
    child.followup(m("child work"))
    await bounded(child.when_idle())
    assert heard == []
    assert turn_reasons(child) == [{"kind": "completed"}]
    parent.followup(m("parent work"))
    await bounded(parent.when_idle())
    assert set(heard) == {"parent"}
    assert turn_reasons(parent) == [{"kind": "blocked"}]
    assert child_heard == ["child", "child"]


async def test_rule_payloads_are_read_only(make_world):
    """§5.1 (and harness/surface.py): emit payloads are read-only mappings holding `agent`."""
    world = make_world([text("ok")])
    agent = await world.agent()
    errors = []

    def mutate(payload):
        try:
            payload["status"] = "hijacked"
        except TypeError as error:
            errors.append(error)

    world.ctx.on("agent/status", mutate)
    rec = Recorder(world.ctx).status(agent)
    agent.followup(m("go"))
    await bounded(agent.when_idle())
    assert len(errors) == 2
    assert rec.statuses() == ["running", "idle"]


async def test_rule_register_through_agent_ctx_is_owned_and_torn_down(make_world):
    """§4.3: register() through a.ctx makes the custom agent owned by a; it is detached (with a
    paired agent/disposed) when a's scope unwinds."""
    from .test_registry import StubAgent, lifecycle
    world = make_world([])
    handle = await world.create("owner")
    log = lifecycle(world.ctx)
    stub = StubAgent("custom")
    handle.agent.ctx.agents.register(stub)
    assert world.ctx.agents.is_owned_by("custom", handle.agent) is True
    assert world.ctx.agents.roots() == [handle.agent]
    await bounded(handle.dispose())
    assert world.ctx.agents.get("custom") is None
    assert log == ["created:custom", "disposed:custom", "disposed:owner"]


# -- tools (§6.5) ------------------------------------------------------------------------------


async def test_rule_parallel_pool_is_bounded(make_world):
    """§6.5: parallel-safe calls run in pools bounded by max_parallel_tool_calls; results are
    committed in model order."""
    active, peak = [0], [0]
    release = asyncio.Event()

    async def body(call):
        active[0] += 1
        peak[0] = max(peak[0], active[0])
        await release.wait()
        active[0] -= 1
        return call.call_id

    calls = [tool_call(f"c{i}", "p", {}) for i in range(5)]
    world = make_world([reply(*calls), text("done")],
                       tools=[tool("p", body, concurrency_safe=True)],
                       max_parallel_tool_calls=2)
    agent = await world.agent()
    agent.followup(m("go"))
    await until(lambda: active[0] == 2)
    await settle(20)
    assert peak[0] == 2
    release.set()
    await bounded(agent.when_idle())
    assert peak[0] == 2
    results = events_of(agent, "tool/result")
    assert [r.data["message"]["source"]["callId"] for r in results] == [
        f"c{i}" for i in range(5)]


async def test_rule_exclusive_calls_are_barriers(make_world):
    """§6.5: a call whose tool is not parallel-safe runs alone (an exclusive barrier)."""
    log = []

    async def exclusive(call):
        log.append(("start", call.call_id))
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        log.append(("end", call.call_id))
        return "x"

    world = make_world([reply(tool_call("c1", "x", {}), tool_call("c2", "x", {})),
                        text("done")], tools=[tool("x", exclusive)])
    agent = await world.agent()
    agent.followup(m("go"))
    await bounded(agent.when_idle())
    assert log == [("start", "c1"), ("end", "c1"), ("start", "c2"), ("end", "c2")]
    t = types(agent)
    first_result = t.index("tool/result")
    assert t.index("tool/call", first_result) > first_result  # c2's call starts after c1's result


async def test_rule_tool_result_meta_and_error_fields(make_world):
    """§1.5: tool/result carries `meta` and `error{name, code}` only when the tool supplied them."""
    world = make_world([reply(tool_call("c1", "meta", {}), tool_call("c2", "plain", {})),
                        text("done")],
                       tools=[tool("meta", lambda call: ToolOutput.text(
                           "m", meta={"rows": [1, 2]}, is_error=True,
                           error={"name": "ToolError", "code": "E_META"})),
                              tool("plain", lambda call: "p")])
    agent = await world.agent()
    agent.followup(m("go"))
    await bounded(agent.when_idle())
    first, second = events_of(agent, "tool/result")
    assert first.data["meta"] == {"rows": [1, 2]}
    assert first.data["error"] == {"name": "ToolError", "code": "E_META"}
    assert first.data["message"]["content"][0]["isError"] is True
    assert "meta" not in second.data and "error" not in second.data


async def test_rule_abort_in_parallel_pool(make_world):
    """§6.5: an abort during a parallel pool stops starting calls; started calls finish and commit in
    order; unstarted calls get synthetic aborted results; the turn ends aborted."""
    release = asyncio.Event()
    started = []

    async def body(call):
        started.append(call.call_id)
        await release.wait()
        return f"done {call.call_id}"

    world = make_world([reply(*(tool_call(f"c{i}", "p", {}) for i in range(4)))],
                       tools=[tool("p", body, concurrency_safe=True)],
                       max_parallel_tool_calls=2)
    agent = await world.agent()
    agent.followup(m("go"))
    await until(lambda: len(started) == 2)
    agent.cancel(USER)
    release.set()
    await bounded(agent.when_idle())
    results = events_of(agent, "tool/result")
    assert [r.data["message"]["source"]["callId"] for r in results] == ["c0", "c1", "c2", "c3"]
    assert [r.data.get("error", {}).get("code") for r in results] == [
        None, None, "ABORTED_BEFORE_DISPATCH", "ABORTED_BEFORE_DISPATCH"]
    assert started == ["c0", "c1"]
    assert [c.data["callId"] for c in events_of(agent, "tool/call")] == ["c0", "c1", "c2", "c3"]
    assert turn_reasons(agent) == [ABORTED_USER]


# -- disposal (§4.5) ---------------------------------------------------------------------------


async def test_rule_disposal_awaits_uncooperative_work(make_world):
    """§4.5.3: disposal awaits uncooperative work instead of abandoning it: the agent stays
    registered until the tool returns; then the turn closes aborted{disposed}."""
    release, entered = asyncio.Event(), asyncio.Event()

    async def stubborn(call):
        entered.set()
        await release.wait()
        return "finished"

    world = make_world([tool_call("c1", "stubborn", {})], tools=[tool("stubborn", stubborn)])
    handle = await world.create("stubborn")
    agent = handle.agent
    agent.followup(m("go"))
    await bounded(entered.wait())
    disposal = asyncio.ensure_future(handle.dispose())
    await settle(30)
    assert not disposal.done()
    assert world.ctx.agents.get("stubborn") is agent
    release.set()
    await bounded(disposal)
    assert world.ctx.agents.get("stubborn") is None
    assert turn_reasons(agent) == [{"kind": "aborted", "reason": {"kind": "disposed"}}]
    assert events_of(agent, "tool/result")[0].data["message"]["content"][0]["isError"] is False


async def test_rule_disposal_is_memoized(make_world):
    """§4.5: every caller (handle holder, owner unload) awaits the same disposal; events fire once."""
    world = make_world([hang()])
    owner = await world.create("owner")
    child = await world.create("child", through=owner.agent.ctx)
    disposed = []
    world.ctx.on("agent/disposed", lambda p: disposed.append(p["agent"].id))
    child.agent.followup(m("go"))
    await until(lambda: len(text_deltas(child.agent)) >= 7)
    await bounded(asyncio.gather(child.dispose(), owner.dispose(), child.dispose()))
    assert sorted(disposed) == ["child", "owner"]
    assert turn_reasons(child.agent) == [{"kind": "aborted", "reason": {"kind": "disposed"}}]


# -- creation transaction rechecks (§4.4.5) ----------------------------------------------------


@pytest.mark.parametrize("where, expected", [
    ("session/created", ["session/created", "session/disposed"]),
    ("agent/created", ["session/created", "agent/created", "agent/disposed",
                       "session/disposed"]),
    ("agent/session-start", ["session/created", "agent/created", "agent/session-start",
                             "agent/disposed", "session/disposed"]),
])
async def test_rule_owner_disposed_from_a_creation_listener_rolls_back(make_world, where,
                                                                      expected):
    """§4.4.5/§4.4.6: unloading the owner's context from a session/created, agent/created or
    agent/session-start listener of its child's creation fails that creation at the liveness
    recheck with 'owner disposed during setup': every announcement is paired, the child never
    runs, and the child id is free."""
    from dsh_tui.harness import AgentOptions, CreateAgentOptions
    world = make_world([])
    owner = await world.create("owner")
    log = []
    holder = {}

    def record(name, subject_id):
        if subject_id != "child":
            return
        log.append(name)
        if name == where and "disposal" not in holder:
            # Unloading the owner's context runs the child's owner-unload effect on the
            # same stack (upstream's disposeCurrentLifecycle), not after an await.
            holder["disposal"] = owner.agent.ctx.dispose()

    world.ctx.on("session/created", lambda s: record("session/created", s.id))
    world.ctx.on("agent/created", lambda p: record("agent/created", p["agent"].id))
    world.ctx.on("agent/session-start",
                 lambda p: record("agent/session-start", p["agent"].id))
    world.ctx.on("agent/disposed", lambda p: record("agent/disposed", p["agent"].id))
    world.ctx.on("session/disposed", lambda s: record("session/disposed", s.id))
    outcome = None
    try:
        await owner.agent.ctx.agents.create(CreateAgentOptions(
            session_id="child", agent_options=AgentOptions(provider="mock", model="mock")))
    except Exception as error:
        outcome = str(error)
    await bounded(holder["disposal"])
    assert outcome is not None and "owner disposed during setup" in outcome
    assert log == expected
    assert world.ctx.agents.get("child") is None and world.ctx.sessions.get("child") is None


async def test_rule_caller_abort_during_session_start_rolls_back(make_world):
    """§4.4.5: the creation signal is live until the handle is returned; aborting it from an
    agent/session-start listener fails the creation at the recheck and pairs every announcement."""
    from dsh_tui.harness import CancelSignal
    world = make_world([])
    signal = CancelSignal()
    log = []
    world.ctx.on("agent/session-start", lambda p: signal.abort(RuntimeError("caller left")))
    world.ctx.on("agent/created", lambda p: log.append("agent/created"))
    world.ctx.on("agent/disposed", lambda p: log.append("agent/disposed"))
    world.ctx.on("session/disposed", lambda s: log.append("session/disposed"))
    with pytest.raises(RuntimeError, match="caller left"):
        await world.create("aborted-late", signal=signal)
    assert log == ["agent/created", "agent/disposed", "session/disposed"]
    assert world.ctx.agents.get("aborted-late") is None


async def test_rule_create_through_a_disposed_owner_rejects(make_world):
    """§4.4.1: the owner must be alive: creating through a disposed agent's ctx rejects and
    publishes nothing."""
    world = make_world([])
    owner = await world.create("owner")
    await bounded(owner.dispose())
    published = []
    world.ctx.on("session/created", lambda s: published.append(s.id))
    with pytest.raises(Exception):  # noqa: B017 - an inactive-owner error
        await world.create("orphan", through=owner.agent.ctx)
    assert published == [] and world.ctx.agents.get("orphan") is None
    assert world.ctx.sessions.get("orphan") is None


async def test_rule_registry_lists_are_fresh(make_world):
    """§4.1: list() and roots() return fresh lists in insertion order."""
    world = make_world([])
    a = await world.agent("a")
    b = await world.agent("b")
    listed = world.ctx.agents.list()
    listed.clear()
    assert world.ctx.agents.list() == [a, b]
    roots = world.ctx.agents.roots()
    roots.append("junk")
    assert world.ctx.agents.roots() == [a, b]


# -- request seeds (§6.4) ----------------------------------------------------------------------


async def test_rule_later_requests_start_from_the_logged_header(make_world):
    """§6.4: the first request of a loop instance is seeded from the options; later requests start
    from the last logged header config, so a one-off agent/request switch persists (no 'change'
    header when nothing else changes)."""
    world = make_world([text("one"), text("two")])
    agent = await world.agent()
    seeds = []

    async def switch_once(payload, next_):
        config = await next_()
        seeds.append(dict(config))
        return {**config, "model": "other-model"} if len(seeds) == 1 else config

    world.ctx.on("agent/request", switch_once)
    agent.followup(m("a"))
    await bounded(agent.when_idle())
    agent.followup(m("b"))
    await bounded(agent.when_idle())
    assert seeds[0]["model"] == "mock" and seeds[1]["model"] == "other-model"
    assert [r["model"] for r in world.model.requests] == ["other-model", "other-model"]
    assert [e.data["reason"] for e in events_of(agent, "request/header")] == ["initial"]


async def test_rule_request_context_records_the_context_window(make_world):
    """§1.5: request/context carries contextWindow when the provider reports one."""
    from dsh_tui.llm.scripted import ScriptedModel
    world = make_world(model=ScriptedModel([text("ok")], context_window=64000))
    agent = await world.agent()
    agent.followup(m("go"))
    await bounded(agent.when_idle())
    assert [e.data for e in events_of(agent, "request/context")] == [
        {"provider": "mock", "model": "mock", "contextWindow": 64000}]


async def test_rule_when_idle_from_the_running_listener_waits_for_that_driver(make_world):
    """§3.2: activity_done is replaced before agent/status{running} is emitted, so a when_idle()
    issued from the status listener already waits for this driver."""
    world = make_world([text("reply")])
    agent = await world.agent()
    waiters = []

    def on_running(payload):
        if payload["status"] == "running" and not waiters:
            waiters.append(asyncio.ensure_future(agent.when_idle()))

    agent.ctx.on("agent/status", on_running)
    agent.followup(m("go"))
    await settle(3)
    assert not waiters[0].done()
    await bounded(waiters[0])
    assert turn_reasons(agent) == [{"kind": "completed"}]
    assert agent.status == "idle"


async def test_rule_system_prompt_and_tools_reach_header_and_request(make_world):
    """§1.5/§6.4: assembled system text and tool schemas are recorded in request/header and sent
    with the request; a change of the assembly between steps logs a 'change' header."""
    raw = []

    def entry(reply_):
        def build(request):
            raw.append(dict(request))
            return reply_
        return build

    world = make_world([entry(tool_call("c1", "echo", {})), entry(text("done"))],
                       tools=[tool("echo", lambda call: "echoed")])
    prompt = world.ctx.services["prompt"]
    prompt.section("persona", "You are terse.")
    agent = await world.agent()

    def add_section(call):
        prompt.section("later", "A later section.")
        return "echoed"

    world.ctx.services["tools"].add(tool("echo", add_section), agent=agent)
    agent.followup(m("go"))
    await bounded(agent.when_idle())
    headers = events_of(agent, "request/header")
    assert [h.data["reason"] for h in headers] == ["initial", "change"]
    assert headers[0].data["header"]["system"] == "You are terse."
    assert [t["name"] for t in headers[0].data["header"]["tools"]] == ["echo"]
    assert raw[0]["system"] == "You are terse."
    assert [t["name"] for t in raw[0]["tools"]] == ["echo"]
    assert raw[1]["system"] == "You are terse.\n\nA later section."


async def test_rule_scoped_listeners_unwind_with_the_agent(make_world):
    """§4.5.4: registrations through agent.ctx unwind on disposal: a later dispatch for that agent
    is not heard by them, and their own disposer is idempotent afterwards."""
    from dsh_tui.harness import agent_events
    world = make_world([])
    handle = await world.create("scoped")
    heard = []
    off = handle.agent.ctx.on("custom/ping", lambda p: heard.append(p["agent"].id))
    agent_events(world.ctx, handle.agent).emit("custom/ping")
    await bounded(handle.dispose())
    agent_events(world.ctx, handle.agent).emit("custom/ping")
    off()
    assert heard == ["scoped"]


async def test_rule_disposal_from_a_step_start_observer(make_world):
    """§9.7: disposal started from a synchronous step/start session-event listener stops before
    adapter dispatch; by the code a balanced turn/end{aborted,{disposed}} is written."""
    world = make_world([text("should not stream")])
    handle = await world.create("step-dispose")
    agent = handle.agent
    holder = {}

    def observer(session, event):
        if session is agent.session and event.type == "step/start" and not holder:
            holder["disposal"] = handle.dispose()

    world.ctx.on("session/event", observer)
    agent.followup(m("go"))
    await until(lambda: "disposal" in holder)
    await bounded(holder["disposal"])
    assert world.model.requests == []
    assert filtered(agent, "assistant/chunk") == []
    assert turn_reasons(agent) == [{"kind": "aborted", "reason": {"kind": "disposed"}}]
    assert filtered(agent, "step/start", "step/end") == ["step/start", "step/end"]


async def test_rule_tool_cancel_then_followup_is_latched(make_world):
    """§3.2/§3.3: a tool that cancels its own turn and then sends a followup: the followup lands
    after the abort, is rerouted/latched and replays after convergence."""
    def body(call):
        call.agent.cancel(USER)
        call.agent.followup(m("after self-cancel"))
        return "cancelled myself"

    world = make_world([tool_call("c1", "t", {}), text("replayed")], tools=[tool("t", body)])
    agent = await world.agent()
    agent.followup(m("go"))
    await bounded(agent.when_idle())
    assert user_texts(agent) == ["go", "after self-cancel"]
    assert turn_reasons(agent) == [ABORTED_USER, {"kind": "completed"}]
    assert len(world.model.requests) == 2


async def test_rule_middleware_error_on_a_later_step(make_world):
    """§6.2/§6.4: an agent/request failure on the tool follow-up request ends the turn error at
    that step (agent/error reports step 2), after the first step's records."""
    world = make_world([tool_call("c1", "t", {}), text("never")],
                       tools=[tool("t", lambda call: "ok")])
    agent = await world.agent()
    errors = []

    async def middleware(payload, next_):
        if payload["step"] == 2:
            raise RuntimeError("second request refused")
        return await next_()

    world.ctx.on("agent/request", middleware)
    world.ctx.on("agent/error", lambda p: errors.append((p["turn"], p["step"])))
    agent.followup(m("go"))
    await bounded(agent.when_idle())
    assert errors == [(1, 2)]
    assert turn_reasons(agent) == [{"kind": "error", "error": {
        "message": "second request refused", "code": "UNKNOWN"}}]
    assert len(world.model.requests) == 1
    assert filtered(agent, "step/start", "step/end") == ["step/start", "step/end"] * 2
