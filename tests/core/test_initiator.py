"""§8 Initiator scope (C-83 … C-85) and §4.6."""

from __future__ import annotations

import asyncio

import pytest

from dsh_tui.harness import AgentOptions, CreateAgentOptions, new_world
from dsh_tui.llm.scripted import text, tool_call

from .conftest import bounded, m, settle, tool


class Tag:
    def __init__(self, name: str) -> None:
        self.id = name

    def __repr__(self) -> str:
        return f"Tag({self.id})"


async def test_c83_basics():
    """C-83: with no boundary current_initiator() is None and require_initiator() raises 'no
    initiating agent is active'; nesting parent → inner child → parent again; without_initiator
    hides the value inside; the outer value is restored after a sync raise and after an async
    failure."""
    agents = new_world().agents
    parent, child = Tag("parent"), Tag("child")
    assert agents.current_initiator() is None
    with pytest.raises(Exception, match="no initiating agent is active"):
        agents.require_initiator()
    seen = []

    def outer():
        seen.append(agents.require_initiator())
        agents.with_initiator(child, lambda: seen.append(agents.current_initiator()))
        seen.append(agents.current_initiator())
        agents.without_initiator(lambda: seen.append(agents.current_initiator()))
        seen.append(agents.current_initiator())

        def raising():
            seen.append(agents.current_initiator())
            raise ValueError("inner sync failure")

        with pytest.raises(ValueError):
            agents.with_initiator(child, raising)
        seen.append(agents.current_initiator())
        return "sync result"

    assert agents.with_initiator(parent, outer) == "sync result"
    assert seen == [parent, child, parent, None, parent, child, parent]
    assert agents.current_initiator() is None

    async def failing():
        await asyncio.sleep(0)
        assert agents.current_initiator() is child
        raise ValueError("inner async failure")

    async def outer_async():
        with pytest.raises(ValueError, match="inner async failure"):
            await agents.with_initiator(child, failing)
        return agents.current_initiator()

    assert await agents.with_initiator(parent, outer_async) is parent
    assert agents.current_initiator() is None


async def test_c84_isolation_of_overlapping_boundaries():
    """C-84: two overlapping async boundaries for A and B each see their own agent after awaits;
    outside both the value is None (the caller sees its own value right after with_initiator)."""
    agents = new_world().agents
    a, b = Tag("A"), Tag("B")
    gate_a, gate_b = asyncio.Event(), asyncio.Event()

    async def run(me, gate):
        first = agents.current_initiator()
        await gate.wait()
        await asyncio.sleep(0)
        return first, agents.current_initiator(), me

    task_a = agents.with_initiator(a, lambda: run(a, gate_a))
    assert agents.current_initiator() is None
    task_b = agents.with_initiator(b, lambda: run(b, gate_b))
    assert agents.current_initiator() is None
    gate_b.set()
    gate_a.set()
    ra, rb = await bounded(asyncio.gather(task_a, task_b))
    assert ra == (a, a, a) and rb == (b, b, b)
    assert agents.current_initiator() is None


async def test_c84_concurrent_drivers_see_their_own_agent(make_world):
    """C-84 / §4.6: two agents' drivers running concurrently: each model call observes its own
    agent before and after awaiting; a tool body and listeners see it too."""
    observed = []

    def entry(request):
        async def produce():
            before = world.ctx.agents.require_initiator()
            await asyncio.sleep(0)
            await asyncio.sleep(0)
            after = world.ctx.agents.require_initiator()
            observed.append((request["sessionId"], before.id, after.id))
            return text("ok")
        return produce()

    world = make_world([entry, entry])
    a = await world.agent("a")
    b = await world.agent("b")
    hooks = []

    async def pre(payload, next_):
        hooks.append((payload["agent"].id, world.ctx.agents.require_initiator().id))
        return await next_()

    world.ctx.on("agent/pre-step", pre)
    a.followup(m("for a"))
    b.followup(m("for b"))
    assert world.ctx.agents.current_initiator() is None
    await bounded(asyncio.gather(a.when_idle(), b.when_idle()))
    assert sorted(observed) == [("a", "a", "a"), ("b", "b", "b")]
    assert sorted(hooks) == [("a", "a"), ("b", "b")]


async def test_rule_tool_body_and_turn_stopping_see_the_initiator(make_world):
    """§4.6: every hook invoked by the driver (tools, turn-stopping) observes the agent."""
    seen = []

    async def probe(call):
        await asyncio.sleep(0)
        seen.append(("tool", world.ctx.agents.require_initiator()))
        return "ok"

    world = make_world([tool_call("c1", "probe", {}), text("done")],
                       tools=[tool("probe", probe)])
    agent = await world.agent()

    async def stopping(payload):
        await asyncio.sleep(0)
        seen.append(("stopping", world.ctx.agents.require_initiator()))

    world.ctx.on("agent/turn-stopping", stopping)
    agent.followup(m("go"))
    await bounded(agent.when_idle())
    assert seen == [("tool", agent), ("stopping", agent)]


async def test_rule_setup_runs_outside_the_child_boundary(make_world):
    """§4.6: creation and setup run outside the child's boundary: setup invoked from a parent
    boundary sees the parent as initiator while agent_ctx.agent is the child."""
    world = make_world([])
    parent = await world.agent("parent")
    seen = {}

    async def setup(agent_ctx):
        seen["initiator"] = world.ctx.agents.current_initiator()
        seen["agent"] = agent_ctx.agent

    async def create_child():
        return await parent.ctx.agents.create(CreateAgentOptions(
            session_id="child", agent_options=AgentOptions(provider="mock", model="mock"),
            setup=setup))

    handle = await bounded(world.ctx.agents.with_initiator(parent, create_child))
    world.handles.append(handle)
    assert seen["initiator"] is parent
    assert seen["agent"] is handle.agent


async def test_c85_teardown_drain():
    """C-85: with one pending async boundary, teardown starts; new with_initiator and
    without_initiator raise 'agent initiator scope is disposed'; teardown completes only after the
    pending boundary settles; afterwards current_initiator() raises the same message."""
    agents = new_world().agents
    a = Tag("A")
    release = asyncio.Event()

    async def pending():
        await release.wait()
        return agents.current_initiator()

    boundary = agents.with_initiator(a, pending)
    teardown = asyncio.ensure_future(agents.dispose_initiator_scope())
    await settle(10)
    assert not teardown.done()
    with pytest.raises(Exception, match="agent initiator scope is disposed"):
        agents.with_initiator(a, lambda: None)
    with pytest.raises(Exception, match="agent initiator scope is disposed"):
        agents.without_initiator(lambda: None)
    release.set()
    assert await bounded(boundary) is a
    await bounded(teardown)
    with pytest.raises(Exception, match="agent initiator scope is disposed"):
        agents.current_initiator()
    with pytest.raises(Exception, match="agent initiator scope is disposed"):
        agents.require_initiator()


async def test_c85_boundary_that_triggers_teardown_does_not_deadlock():
    """C-85: a boundary whose operation itself triggers teardown does not deadlock (its own chain is
    excluded from the drain), including through nested boundaries."""
    agents = new_world().agents
    a, b = Tag("A"), Tag("B")

    async def tear_down():
        await agents.dispose_initiator_scope()
        return "torn down"

    assert await bounded(agents.with_initiator(a, tear_down)) == "torn down"

    agents2 = new_world().agents

    async def nested_teardown():
        return await agents2.with_initiator(b, lambda: agents2.dispose_initiator_scope())

    await bounded(agents2.with_initiator(a, nested_teardown))
    with pytest.raises(Exception, match="agent initiator scope is disposed"):
        agents2.current_initiator()


async def test_a_finished_boundary_task_is_freed_without_the_cycle_collector():
    """The task of an async boundary runs in a context that holds the boundary: once done,
    nothing may keep the task from reference counting (the UI freezes the collector's view
    while agents run, so a cycle there stayed until everything was idle)."""
    import gc
    import weakref

    agents = new_world().agents

    async def work():
        await asyncio.sleep(0)
        return agents.require_initiator().id

    enabled = gc.isenabled()
    gc.disable()
    try:
        task = agents.with_initiator(Tag("worker"), work)
        assert await task == "worker"
        await asyncio.sleep(0)  # the done callbacks run
        ref = weakref.ref(task)
        del task
        assert ref() is None
    finally:
        if enabled:
            gc.enable()
