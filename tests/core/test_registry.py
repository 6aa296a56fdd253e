"""§8 Registry, ownership, lifecycle (C-64 … C-79) and the rules of §4 and §5."""

from __future__ import annotations

import asyncio
import logging

import pytest

from dsh_tui.harness import (
    AgentOptions,
    CancelSignal,
    CreateAgentOptions,
    Session,
    agent_events,
    new_world,
)
from dsh_tui.llm.scripted import hang, text

from .conftest import (
    Recorder,
    bounded,
    events_of,
    filtered,
    m,
    settle,
    text_deltas,
    turn_reasons,
    until,
    user_texts,
)

USER = {"kind": "user"}
DISPOSED = {"kind": "aborted", "reason": {"kind": "disposed"}}


class StubAgent:
    """A minimal custom agent (registry tests only need id and session)."""

    def __init__(self, agent_id: str, session_id: str | None = None) -> None:
        self.id = agent_id
        self.session = Session(session_id or agent_id)
        self.options = AgentOptions()
        self.status = "idle"

    def __repr__(self) -> str:
        return f"StubAgent({self.id!r})"


def lifecycle(ctx):
    log = []
    ctx.on("agent/created", lambda p: log.append(f"created:{p['agent'].id}"))
    ctx.on("agent/disposed", lambda p: log.append(f"disposed:{p['agent'].id}"))
    return log


async def test_c64_register_and_unregister():
    """C-64: register(a1) → get, list() == [a1], roots() == [a1]; another agent with id a1 raises
    'already registered'; the disposer → get None; lifecycle ['created:a1', 'disposed:a1']."""
    ctx = new_world()
    log = lifecycle(ctx)
    agent = StubAgent("a1")
    dispose = ctx.agents.register(agent)
    assert ctx.agents.get("a1") is agent
    assert ctx.agents.list() == [agent]
    assert ctx.agents.roots() == [agent]
    with pytest.raises(Exception, match="already registered"):
        ctx.agents.register(StubAgent("a1"))
    assert ctx.agents.get("a1") is agent
    dispose()
    assert ctx.agents.get("a1") is None
    dispose()  # idempotent
    assert log == ["created:a1", "disposed:a1"]


async def test_c64_enter_rejects_mismatched_session_id():
    """C-64: enter with a mismatched session id raises
    'agent id "agent-id" does not match session id "session-id"' and stores nothing."""
    ctx = new_world()
    agent = StubAgent("agent-id", "session-id")
    with pytest.raises(Exception, match='agent id "agent-id" does not match session id '
                                        '"session-id"'):
        ctx.agents.enter(agent, None)
    assert ctx.agents.list() == []
    with pytest.raises(Exception, match="does not match"):
        ctx.agents.register(agent)
    assert ctx.agents.list() == []


async def test_c65_created_veto(caplog):
    """C-65: two agent/created listeners, the second raises → register raises 'creation veto';
    get None; lifecycle ['created:vetoed', 'disposed:vetoed']."""
    ctx = new_world()
    log = []
    ctx.on("agent/created", lambda p: log.append(f"created:{p['agent'].id}"))

    def veto(payload):
        raise RuntimeError("creation veto")

    ctx.on("agent/created", veto)
    ctx.on("agent/disposed", lambda p: log.append(f"disposed:{p['agent'].id}"))
    with pytest.raises(RuntimeError, match="creation veto"):
        ctx.agents.register(StubAgent("vetoed"))
    assert ctx.agents.get("vetoed") is None
    assert log == ["created:vetoed", "disposed:vetoed"]
    # the id is free again
    ctx.agents.enter(StubAgent("vetoed"), None)


async def test_c65_async_and_disposed_listener_failures_are_contained(caplog):
    """C-65: async rejections of created listeners and every disposed-listener failure are only
    logged; other disposed listeners still run."""
    ctx = new_world()
    heard = []

    async def created_async(payload):
        raise RuntimeError("created async")

    def disposed_sync(payload):
        raise RuntimeError("disposed sync")

    async def disposed_async(payload):
        raise RuntimeError("disposed async")

    ctx.on("agent/created", created_async)
    ctx.on("agent/disposed", disposed_sync)
    ctx.on("agent/disposed", disposed_async)
    ctx.on("agent/disposed", lambda p: heard.append(p["agent"].id))
    with caplog.at_level(logging.WARNING):
        dispose = ctx.agents.register(StubAgent("contained"))
        await settle(5)
        assert ctx.agents.get("contained") is not None
        dispose()
        await settle(5)
    assert heard == ["contained"]
    text_log = caplog.text
    assert "created async" in text_log
    assert "disposed sync" in text_log
    assert "disposed async" in text_log


async def test_rule_enter_announce_and_stale_detach():
    """§4.2 (held-back C-66): entry is separate from announcement (no event on enter); a second
    announce raises 'already announced'; detach is idempotent; a stale detach cannot remove a
    later same-id replacement, and announcing a stale object raises 'not live in this registry';
    an entry never announced produces no disposed event."""
    ctx = new_world()
    log = lifecycle(ctx)
    first = StubAgent("split")
    detach_first = ctx.agents.enter(first, None)
    assert log == [] and ctx.agents.get("split") is first
    ctx.agents.announce(first)
    with pytest.raises(Exception, match="already announced"):
        ctx.agents.announce(first)
    detach_first()
    detach_first()
    replacement = StubAgent("split")
    detach_replacement = ctx.agents.enter(replacement, None)
    detach_first()
    assert ctx.agents.get("split") is replacement
    with pytest.raises(Exception, match="not live in this registry"):
        ctx.agents.announce(first)
    detach_replacement()
    assert log == ["created:split", "disposed:split"]
    with pytest.raises(Exception, match="not live in this registry"):
        ctx.agents.announce(StubAgent("never-entered"))


async def test_rule_detach_during_created_dispatch_is_deferred():
    """§4.2 (held-back C-67): a detach requested while this entry's agent/created dispatch runs only
    marks the request; every created-listener sees the live entry; the removal (and
    agent/disposed) happens after the dispatch."""
    ctx = new_world()
    order = []
    agent = StubAgent("reentrant")
    holder = {}

    def first(payload):
        order.append(f"first:{ctx.agents.get(agent.id) is agent}")
        holder["detach"]()
        order.append(f"after-detach:{ctx.agents.get(agent.id) is agent}")

    ctx.on("agent/created", first)
    ctx.on("agent/created",
           lambda p: order.append(f"second:{ctx.agents.get(agent.id) is agent}"))
    ctx.on("agent/disposed", lambda p: order.append("disposed"))
    holder["detach"] = ctx.agents.enter(agent, None)
    ctx.agents.announce(agent)
    assert order == ["first:True", "after-detach:True", "second:True", "disposed"]
    assert ctx.agents.get("reentrant") is None


async def test_rule_factory_slot():
    """§4.4: create/resume without a factory reject 'no agent factory registered (load an
    agent-loop plugin)'; set_factory twice raises 'an agent factory is already registered'; the
    disposer clears the slot; create delegates with the calling context."""
    ctx = new_world()
    with pytest.raises(Exception, match=r"no agent factory registered \(load an agent-loop "
                                         r"plugin\)"):
        await ctx.agents.create(CreateAgentOptions(session_id="x"))
    calls = []

    class Factory:
        async def create(self, options, owner_ctx):
            calls.append(("create", options.session_id, owner_ctx))
            return "handle"

        async def resume(self, options, owner_ctx):
            calls.append(("resume", options.resume_session_id, owner_ctx))
            return "handle"

    off = ctx.agents.set_factory(Factory())
    with pytest.raises(Exception, match="an agent factory is already registered"):
        ctx.agents.set_factory(Factory())
    assert await ctx.agents.create(CreateAgentOptions(session_id="x")) == "handle"
    assert calls[0][:2] == ("create", "x") and calls[0][2] is ctx
    off()
    with pytest.raises(Exception, match="no agent factory registered"):
        await ctx.agents.create(CreateAgentOptions(session_id="y"))
    ctx.agents.set_factory(Factory())


async def test_rule_resume_without_persistence_rejects(make_world):
    """§4.4: resume without a persistence backend rejects 'cannot resume: session persistence is
    not configured'."""
    from dsh_tui.harness import ResumeAgentOptions
    world = make_world([])
    with pytest.raises(Exception, match="cannot resume: session persistence is not configured"):
        await world.ctx.agents.resume(ResumeAgentOptions(resume_session_id="nope"))


async def test_c68_owned_children_listing(make_world):
    """C-68: root = agents.create(root-id); child = root.agent.ctx.agents.create(child-id) →
    list() == [root, child], roots() == [root], is_owned_by(child, root) True,
    is_owned_by(root, root) False, is_owned_by(missing, root) False; after the child is disposed
    is_owned_by(child, root) False."""
    world = make_world([])
    root = await world.create("root-id")
    child = await world.create("child-id", through=root.agent.ctx)
    agents = world.ctx.agents
    assert agents.list() == [root.agent, child.agent]
    assert agents.roots() == [root.agent]
    assert agents.is_owned_by("child-id", root.agent) is True
    assert agents.is_owned_by("root-id", root.agent) is False
    assert agents.is_owned_by("missing", root.agent) is False
    assert root.agent.ctx.agents.list() == agents.list()
    await bounded(child.dispose())
    assert agents.is_owned_by("child-id", root.agent) is False
    assert agents.list() == [root.agent]


async def test_rule_owner_disposal_disposes_owned_children(make_world):
    """§4.4/§4.5: an owned child is torn down with its owner (paired lifecycle events)."""
    world = make_world([])
    log = lifecycle(world.ctx)
    root = await world.create("root")
    child = await world.create("child", through=root.agent.ctx)
    await bounded(root.dispose())
    assert world.ctx.agents.get("child") is None and world.ctx.agents.get("root") is None
    assert world.ctx.sessions.get("child") is None
    # the owner's scope (holding the child) unwinds before the owner itself is detached
    assert log == ["created:root", "created:child", "disposed:child", "disposed:root"]
    await bounded(child.dispose())  # memoized; still fine


async def test_c69_creation_ordering_with_setup(make_world):
    """C-69: setup registers scoped session/created and agent/created listeners, awaits a gate and
    returns a commit; while gated both ids are unpublished; final order setup:start, setup:end,
    setup:commit, session/created, setup-listener:session/created, agent/created,
    setup-listener:agent/created, agent/session-start; the agent keeps the exact options object;
    status idle; the driver did not start."""
    world = make_world([])
    order = []
    gate = asyncio.Event()
    world.ctx.on("session/created", lambda s: order.append("session/created"))
    world.ctx.on("agent/created", lambda p: order.append("agent/created"))
    world.ctx.on("agent/session-start", lambda p: order.append("agent/session-start"))
    setup_ctx = {}

    async def setup(agent_ctx):
        order.append("setup:start")
        setup_ctx["ctx"] = agent_ctx
        agent_ctx.on("session/created", lambda s: order.append("setup-listener:session/created"))
        agent_ctx.on("agent/created", lambda p: order.append("setup-listener:agent/created"))
        await gate.wait()
        order.append("setup:end")
        return lambda: order.append("setup:commit")

    options = AgentOptions(provider="mock", model="mock")
    creating = asyncio.ensure_future(world.ctx.agents.create(CreateAgentOptions(
        session_id="ordered", agent_options=options, setup=setup)))
    await until(lambda: "setup:start" in order)
    await settle()
    assert world.ctx.agents.get("ordered") is None
    assert world.ctx.sessions.get("ordered") is None
    gate.set()
    handle = await bounded(creating)
    world.handles.append(handle)
    assert order == ["setup:start", "setup:end", "setup:commit", "session/created",
                     "setup-listener:session/created", "agent/created",
                     "setup-listener:agent/created", "agent/session-start"]
    assert handle.agent.options is options
    assert handle.agent.status == "idle"
    assert setup_ctx["ctx"].agent is handle.agent
    assert list(handle.agent.session.events) == []


@pytest.mark.parametrize("failure", ["setup", "commit"])
async def test_c70_setup_rollback(make_world, failure):
    """C-70: setup raises (or its commit raises) → nothing published (no created events), ids free,
    a retry with the same id succeeds."""
    world = make_world([])
    published = []
    world.ctx.on("session/created", lambda s: published.append("session"))
    world.ctx.on("agent/created", lambda p: published.append("agent"))
    world.ctx.on("agent/disposed", lambda p: published.append("agent-disposed"))
    world.ctx.on("session/disposed", lambda s: published.append("session-disposed"))

    async def setup(agent_ctx):
        if failure == "setup":
            raise RuntimeError("setup broke")

        def commit():
            raise RuntimeError("commit broke")
        return commit

    with pytest.raises(RuntimeError, match=f"{failure} broke"):
        await world.ctx.agents.create(CreateAgentOptions(
            session_id="rollback", agent_options=AgentOptions(provider="mock", model="mock"),
            setup=setup))
    assert published == []
    assert world.ctx.agents.get("rollback") is None
    assert world.ctx.sessions.get("rollback") is None
    handle = await world.create("rollback")
    assert handle.agent.id == "rollback"
    assert published == ["session", "agent"]


async def test_c70_owner_unload_during_setup(make_world):
    """C-70: the owner unloads during setup → creation rejects with a message containing 'owner
    disposed during setup'; nothing published; the id is free."""
    world = make_world([])
    owner = await world.create("owner")
    published = []
    world.ctx.on("agent/created", lambda p: published.append(p["agent"].id))
    entered = asyncio.Event()

    async def setup(agent_ctx):
        entered.set()
        await asyncio.Event().wait()

    creating = asyncio.ensure_future(owner.agent.ctx.agents.create(CreateAgentOptions(
        session_id="child", agent_options=AgentOptions(provider="mock", model="mock"),
        setup=setup)))
    await bounded(entered.wait())
    await bounded(owner.dispose())
    with pytest.raises(Exception, match="owner disposed during setup"):
        await bounded(creating)
    assert published == []
    assert world.ctx.agents.get("child") is None and world.ctx.sessions.get("child") is None
    await world.create("child")


async def test_c70_factory_unload_during_setup(make_world):
    """C-70: the factory unloads during setup → creation rejects 'agent loop is not active';
    nothing published; a later create through the unloaded factory is refused too."""
    world = make_world([])
    published = []
    world.ctx.on("agent/created", lambda p: published.append(p["agent"].id))
    entered = asyncio.Event()

    async def setup(agent_ctx):
        entered.set()
        await asyncio.Event().wait()

    creating = asyncio.ensure_future(world.ctx.agents.create(CreateAgentOptions(
        session_id="late", agent_options=AgentOptions(provider="mock", model="mock"),
        setup=setup)))
    await bounded(entered.wait())
    # unload only the factory (the loop runtime's ownership), not the owner context
    await bounded(world.ctx.services["loop"].ownership.dispose())
    with pytest.raises(Exception, match="agent loop is not active"):
        await bounded(creating)
    assert published == []
    assert world.ctx.agents.get("late") is None and world.ctx.sessions.get("late") is None
    with pytest.raises(Exception, match="agent loop is not active"):
        await world.create("later")


async def test_rule_creation_signal(make_world):
    """§4.4 (held-back C-71): a pre-aborted caller signal rejects with its reason (a non-exception
    reason is wrapped as 'agent "<id>" creation aborted'); aborting during setup rejects and
    publishes nothing; aborting after the handle was returned does nothing."""
    world = make_world([])
    pre = CancelSignal()
    reason = ValueError("caller gave up")
    pre.abort(reason)
    with pytest.raises(ValueError, match="caller gave up"):
        await world.create("sig", signal=pre)
    wrapped = CancelSignal()
    wrapped.abort({"kind": "user"})
    with pytest.raises(Exception, match='agent "sig" creation aborted'):
        await world.create("sig", signal=wrapped)
    assert world.ctx.agents.get("sig") is None and world.ctx.sessions.get("sig") is None

    during = CancelSignal()
    entered = asyncio.Event()

    async def setup(agent_ctx):
        entered.set()
        await asyncio.Event().wait()

    creating = asyncio.ensure_future(world.create("sig", signal=during, setup=setup))
    await bounded(entered.wait())
    during.abort(RuntimeError("stop creating"))
    with pytest.raises(RuntimeError, match="stop creating"):
        await bounded(creating)
    assert world.ctx.agents.get("sig") is None and world.ctx.sessions.get("sig") is None

    after = CancelSignal()
    handle = await world.create("sig", signal=after)
    after.abort(RuntimeError("too late"))
    await settle()
    assert world.ctx.agents.get("sig") is handle.agent
    assert handle.agent.status == "idle"


async def test_c72_concurrent_same_id_create(make_world):
    """C-72: two creates with the same id and gated setups → exactly one fulfills, the other
    rejects matching 'already exists'; registry and store hold only the winner."""
    world = make_world([])
    gate = asyncio.Event()
    entered = []

    async def setup(agent_ctx):
        entered.append(agent_ctx)
        await gate.wait()

    first = asyncio.ensure_future(world.create("same", setup=setup))
    second = asyncio.ensure_future(world.create("same", setup=setup))
    await until(lambda: len(entered) == 2, "both setups entered")
    gate.set()
    results = await bounded(asyncio.gather(first, second, return_exceptions=True))
    winners = [r for r in results if not isinstance(r, BaseException)]
    losers = [r for r in results if isinstance(r, BaseException)]
    assert len(winners) == 1 and len(losers) == 1
    assert "already exists" in str(losers[0])
    assert world.ctx.agents.list() == [winners[0].agent]
    assert world.ctx.sessions.list() == [winners[0].agent.session]
    assert world.ctx.sessions.get("same") is winners[0].agent.session


async def test_c73_dispose_while_running(make_world):
    """C-73: hang model; followup(go), then followup(tail), then dispose → statuses
    [running, idle]; reasons [aborted{disposed}]; one turn/start; user messages [go]; 1 request;
    get(id) None; no error turn end."""
    world = make_world([hang(), text("never")])
    handle = await world.create("running")
    agent = handle.agent
    rec = Recorder(world.ctx).status(agent)
    agent.followup(m("go"))
    await until(lambda: len(text_deltas(agent)) >= 7)
    agent.followup(m("tail"))
    await bounded(handle.dispose())
    assert rec.statuses() == ["running", "idle"]
    assert turn_reasons(agent) == [DISPOSED]
    assert filtered(agent, "turn/start") == ["turn/start"]
    assert user_texts(agent) == ["go"]
    assert len(world.model.requests) == 1
    assert world.ctx.agents.get("running") is None


async def test_c74_dispose_ordering(make_world):
    """C-74: an owner-owned agent with an open turn is disposed: turn/end, then scope cleanup, then
    agent/disposed (get(id) already None, sessions.get(id) still present), then session/disposed;
    a listener through agent.ctx does not hear its own agent/disposed; registering through the
    disposed agent.ctx raises."""
    world = make_world([hang()])
    owner = await world.create("owner")
    child = await world.create("child", through=owner.agent.ctx)
    agent = child.agent
    order = []
    world.ctx.on("session/event", lambda s, e: order.append("turn/end")
                 if s is agent.session and e.type == "turn/end" else None)

    def on_disposed(payload):
        if payload["agent"] is agent:
            order.append(("agent-disposed", world.ctx.agents.get("child"),
                          world.ctx.sessions.get("child") is agent.session))

    world.ctx.on("agent/disposed", on_disposed)
    world.ctx.on("session/disposed",
                 lambda s: order.append("session-disposed") if s is agent.session else None)
    agent.ctx.on("agent/disposed", lambda p: order.append("scoped-heard-disposed"))
    agent.ctx.effect(lambda: order.append("scope-disposed"))
    agent.followup(m("go"))
    await until(lambda: len(text_deltas(agent)) >= 7)
    await bounded(owner.dispose())
    assert order == ["turn/end", "scope-disposed", ("agent-disposed", None, True),
                     "session-disposed"]
    assert world.ctx.sessions.get("child") is None
    assert [e.type for e in agent.session.events][-1] == "turn/end"  # still readable
    with pytest.raises(Exception):  # noqa: B017 - any "inactive context" error
        agent.ctx.on("agent/status", lambda p: None)


async def test_c74_id_reusable_only_after_async_scope_cleanup(make_world):
    """C-74: while an async scope cleanup is pending, the agent and session are still registered
    and the id cannot be reused; only after disposal completes can it be."""
    world = make_world([])
    handle = await world.create("reuse")
    release = asyncio.Event()
    entered = asyncio.Event()

    async def cleanup():
        entered.set()
        await release.wait()

    handle.agent.ctx.effect(cleanup)
    disposal = asyncio.ensure_future(handle.dispose())
    await bounded(entered.wait())
    assert world.ctx.agents.get("reuse") is handle.agent
    assert world.ctx.sessions.get("reuse") is handle.agent.session
    with pytest.raises(Exception, match="already"):
        await world.create("reuse")
    release.set()
    await bounded(disposal)
    assert world.ctx.agents.get("reuse") is None
    again = await world.create("reuse")
    assert again.agent is not handle.agent


@pytest.mark.parametrize("where", ["pre-step", "assembly"])
@pytest.mark.parametrize("how", ["dispose", "cancel"])
async def test_c75_disposal_or_cancel_during_pre_step_or_assembly(make_world, where, how):
    """C-75: pre-step or prompt assembly blocked; dispose (or cancel(user)) and then release →
    filtered log turn/start, turn/end{aborted,{disposed|user}}, no step, no chunk, 0 requests."""
    world = make_world([text("never")])
    handle = await world.create("blocked")
    agent = handle.agent
    entered, release = asyncio.Event(), asyncio.Event()

    async def wait_release():
        entered.set()
        await release.wait()

    if where == "pre-step":
        async def pre(payload, next_):
            await wait_release()
            return await next_()
        world.ctx.on("agent/pre-step", pre)
    else:
        async def section(subject):
            await wait_release()
            return "section"
        world.ctx.services["prompt"].section("blocking", section, agent=agent)

    agent.followup(m("go"))
    await bounded(entered.wait())
    if how == "dispose":
        disposal = asyncio.ensure_future(handle.dispose())
        await settle(5)
        release.set()
        await bounded(disposal)
        expected = DISPOSED
    else:
        agent.cancel(USER)
        release.set()
        await bounded(agent.when_idle())
        expected = {"kind": "aborted", "reason": USER}
    assert filtered(agent, "turn/start", "turn/end", "step/start", "assistant/chunk") == [
        "turn/start", "turn/end"]
    assert turn_reasons(agent) == [expected]
    assert world.model.requests == []


async def test_c75_pre_step_that_disposes_then_raises(make_world):
    """C-75: a pre-step listener that starts disposal and then raises → aborted{disposed}, no
    agent/error (the raise while aborted is a cancellation, not a failure)."""
    world = make_world([text("never")])
    handle = await world.create("throws")
    agent = handle.agent
    errors = []
    world.ctx.on("agent/error", lambda p: errors.append(p))
    disposal = {}

    async def pre(payload, next_):
        disposal["task"] = asyncio.ensure_future(handle.dispose())
        await asyncio.sleep(0)
        raise RuntimeError("listener broke after disposal began")

    world.ctx.on("agent/pre-step", pre)
    agent.followup(m("go"))
    await until(lambda: "task" in disposal)
    await bounded(disposal["task"])
    assert turn_reasons(agent) == [DISPOSED]
    assert errors == []
    assert filtered(agent, "step/start") == []


async def test_c76_no_latch_after_disposal(make_world):
    """C-76: a followup landing in disposal's abort window is not latched: exactly one request."""
    world = make_world([hang(), text("late reply")])
    handle = await world.create("dispose-window-wake")
    agent = handle.agent
    agent.followup(m("active"))
    await until(lambda: len(text_deltas(agent)) >= 7)
    signal = world.model.requests[0]["signal"]
    disposal = asyncio.ensure_future(handle.dispose())
    await until(lambda: signal.aborted, "disposal aborted the turn")
    assert agent.status == "running", "the wake must land before convergence"
    agent.followup(m("late wake"))
    await bounded(disposal)
    await settle()
    assert len(world.model.requests) == 1
    assert user_texts(agent) == ["active"]
    assert turn_reasons(agent) == [DISPOSED]


async def test_c77_dispose_in_the_running_notification(make_world):
    """C-77: a status(running) listener disposes → no turn/start, 0 requests, status idle."""
    world = make_world([text("should not run")])
    handle = await world.create("dispose-running")
    agent = handle.agent
    disposal = {}

    def on_status(payload):
        if payload["agent"] is agent and payload["status"] == "running" and not disposal:
            disposal["task"] = asyncio.ensure_future(handle.dispose())

    world.ctx.on("agent/status", on_status)
    agent.followup(m("drop before claim"))
    await bounded(disposal["task"])
    assert agent.status == "idle"
    assert filtered(agent, "turn/start") == []
    assert user_texts(agent) == []
    assert world.model.requests == []


async def test_c78_scoped_listener_isolation(make_world):
    """C-78: a.ctx.on('agent/status') and a.ctx.on('session/event'): running b produces nothing
    for them; running a produces 'running' and a's user/message; agent_events(ctx, other)
    .emit('agent/error', …) is not heard by a.ctx listeners, the same emit for a is."""
    world = make_world([text("b reply"), text("a reply")])
    a = await world.agent("a")
    b = await world.agent("b")
    statuses, session_types, errors = [], [], []
    a.ctx.on("agent/status", lambda p: statuses.append((p["agent"].id, p["status"])))
    a.ctx.on("session/event", lambda s, e: session_types.append((s.id, e.type)))
    a.ctx.on("agent/error", lambda p: errors.append(p["agent"].id))
    b.followup(m("for b"))
    await bounded(b.when_idle())
    assert statuses == [] and session_types == []
    a.followup(m("for a"))
    await bounded(a.when_idle())
    assert ("a", "running") in statuses and all(who == "a" for who, _ in statuses)
    assert ("a", "user/message") in session_types
    assert all(sid == "a" for sid, _ in session_types)
    agent_events(world.ctx, b).emit("agent/error", {"turn": 1, "step": 1, "error": "x"})
    assert errors == []
    agent_events(world.ctx, a).emit("agent/error", {"turn": 1, "step": 1, "error": "x"})
    assert errors == ["a"]


async def test_rule_tagged_listener_never_hears_unrouted_dispatch(make_world):
    """§5.3: a tagged (agent-scoped) listener never receives a dispatch whose key is None; an
    unscoped listener sees every agent's events."""
    world = make_world([])
    a = await world.agent("a")
    heard_scoped, heard_root = [], []
    a.ctx.on("custom/event", lambda *args: heard_scoped.append(args))
    world.ctx.on("custom/event", lambda *args: heard_root.append(args))
    world.ctx.emit("custom/event", 1)
    assert heard_scoped == [] and heard_root == [(1,)]
    agent_events(world.ctx, a).emit("custom/event", {"n": 2})
    assert len(heard_scoped) == 1 and len(heard_root) == 2


async def test_c79_fused_subject_and_emit_containment(make_world, caplog):
    """C-79: emitting agent/status through X's dispatcher with a payload also holding agent: Y
    delivers agent == X; a raising and a rejecting listener are logged ('listener threw' /
    'listener rejected') and the third listener still receives the event."""
    world = make_world([])
    x = await world.agent("x")
    y = await world.agent("y")
    heard = []

    def raising(payload):
        raise RuntimeError("sync listener")

    async def rejecting(payload):
        raise RuntimeError("async listener")

    world.ctx.on("agent/status", raising)
    world.ctx.on("agent/status", rejecting)
    world.ctx.on("agent/status", lambda p: heard.append((p["agent"], p["status"])))
    with caplog.at_level(logging.WARNING):
        agent_events(world.ctx, x).emit("agent/status", {"status": "running", "agent": y})
        await settle(5)
    assert heard == [(x, "running")]
    assert 'agent event "agent/status" listener threw' in caplog.text
    assert 'agent event "agent/status" listener rejected' in caplog.text
    assert "sync listener" in caplog.text and "async listener" in caplog.text


async def test_rule_prepend_listener_runs_first(make_world):
    """§5.1: emit calls listeners in registration order; a prepend listener goes first."""
    world = make_world([])
    a = await world.agent("a")
    order = []
    world.ctx.on("agent/status", lambda p: order.append("first"))
    world.ctx.on("agent/status", lambda p: order.append("prepended"), prepend=True)
    off = world.ctx.on("agent/status", lambda p: order.append("removed"))
    off()
    agent_events(world.ctx, a).emit("agent/status", {"status": "idle"})
    assert order == ["prepended", "first"]


async def test_rule_status_listener_exceptions_never_strand_status(make_world):
    """§3.6: agent/status listener exceptions are contained and never strand the status;
    agent/status is emitted only on real transitions."""
    world = make_world([text("one"), text("two")])
    agent = await world.agent()

    def boom(payload):
        raise RuntimeError("status listener broke")

    world.ctx.on("agent/status", boom)
    rec = Recorder(world.ctx).status(agent)
    agent.followup(m("a"))
    agent.followup(m("b"))
    await bounded(agent.when_idle())
    assert agent.status == "idle"
    assert rec.statuses() == ["running", "idle"]
    assert turn_reasons(agent) == [{"kind": "completed"}] * 2


async def test_rule_session_lifecycle_events_and_scope(make_world):
    """§4.4.5/§5.2: session/created precedes agent/created; disposal emits agent/disposed then
    session/disposed, once each; the store lists live sessions only."""
    world = make_world([])
    order = []
    world.ctx.on("session/created", lambda s: order.append(("session/created", s.id)))
    world.ctx.on("agent/created", lambda p: order.append(("agent/created", p["agent"].id)))
    world.ctx.on("agent/disposed", lambda p: order.append(("agent/disposed", p["agent"].id)))
    world.ctx.on("session/disposed", lambda s: order.append(("session/disposed", s.id)))
    handle = await world.create("life")
    assert world.ctx.sessions.list() == [handle.agent.session]
    await bounded(handle.dispose())
    await bounded(handle.dispose())
    assert order == [("session/created", "life"), ("agent/created", "life"),
                     ("agent/disposed", "life"), ("session/disposed", "life")]
    assert world.ctx.sessions.list() == []
    assert events_of(handle.agent, "turn/start") == []


async def test_dispose_by_id_matches_the_handle(make_world):
    """ctx.agents.dispose(id) disposes a published agent exactly as its handle would, from any
    context; an unknown or already-gone id gives None."""
    world = make_world([])
    owner = await world.create("owner")
    child = await owner.agent.ctx.agents.create(CreateAgentOptions(
        session_id="kid", agent_options=AgentOptions(provider="mock", model="mock")))
    disposed = []
    world.ctx.on("agent/disposed", lambda p: disposed.append(p["agent"].id))
    assert world.ctx.agents.dispose("nobody") is None
    await world.ctx.agents.dispose("kid")
    assert disposed == ["kid"] and world.ctx.agents.get("kid") is None
    assert world.ctx.agents.dispose("kid") is None
    await child.dispose()  # the handle still works and is the same completion
    await world.ctx.agents.dispose("owner")
    assert disposed == ["kid", "owner"]
