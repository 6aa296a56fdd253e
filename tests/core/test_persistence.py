"""§8 Persistence, resume (C-80, C-81) and the resume rules of §1.3/§2.6/§4.4.

Runs against `dsh_tui.harness.persistence.JsonlPersistence` wired through
`build_context(persistence=...)`.
"""

from __future__ import annotations

import asyncio

import pytest

from dsh_tui.harness import AgentOptions, ResumeAgentOptions, Session
from dsh_tui.llm.scripted import text

from .conftest import bounded, ctx_msg, events_of, m, request_text, user_texts

try:
    from dsh_tui.harness.persistence import JsonlPersistence
except ImportError:  # pragma: no cover - only while persistence is being written
    JsonlPersistence = None

pytestmark = pytest.mark.skipif(JsonlPersistence is None,
                                reason="dsh_tui.harness.persistence.JsonlPersistence missing")


def persistent_world(make_world, root, script):
    return make_world(script, persistence=JsonlPersistence(root))


async def resume(world, session_id, **kwargs):
    handle = await world.ctx.agents.resume(ResumeAgentOptions(resume_session_id=session_id,
                                                              **kwargs))
    world.handles.append(handle)
    return handle.agent


async def test_c80_resume_rebuilds_the_inbox(make_world, tmp_path):
    """C-80: lifecycle 1 runs one completed turn, then inject(job done) while idle, flush;
    lifecycle 2 resumes: next_step holds the injected context, no turn is synthesized,
    session-start source is 'resume'; followup(continue) → the next request contains it."""
    world1 = persistent_world(make_world, tmp_path, [text("answer")])
    a1 = await world1.agent("inject-sess", options=AgentOptions(provider="mock", model="mock"))
    a1.followup(m("q"))
    await bounded(a1.when_idle())
    a1.inject(ctx_msg("background job 42 finished", plugin="tool-bash"))
    await bounded(a1.when_idle())
    await bounded(world1.ctx.sessions.flush(a1.session))

    world2 = persistent_world(make_world, tmp_path, [text("next")])
    sources = []
    world2.ctx.on("agent/session-start", lambda p: sources.append(p["source"]))
    a2 = await resume(world2, "inject-sess")
    assert sources == ["resume"]
    assert [x.text for x in a2.inbox.next_step] == ["background job 42 finished"]
    assert a2.inbox.next_step[0].source == {"kind": "plugin", "plugin": "tool-bash"}
    assert a2.status == "idle"
    assert [e.data["turn"] for e in events_of(a2, "turn/start")] == [1]
    a2.followup(m("continue"))
    await bounded(a2.when_idle())
    sent = request_text(world2.model.requests[0])
    assert "background job 42 finished" in sent and "continue" in sent
    assert user_texts(a2) == ["q", "background job 42 finished", "continue"]


async def test_c80_queued_prompt_and_parked_context_survive_resume(make_world, tmp_path):
    """§2.6: queued prompts (next_turn) and parked context both survive persist + resume in order,
    and nothing runs until a waking send."""
    world1 = persistent_world(make_world, tmp_path, [])
    a1 = await world1.agent("parked")
    a1.inbox.append("next-turn", m("queued prompt"))
    a1.inject(ctx_msg("parked context"))
    await bounded(world1.ctx.sessions.flush(a1.session))

    world2 = persistent_world(make_world, tmp_path, [text("one"), text("two")])
    a2 = await resume(world2, "parked", agent_options=AgentOptions(provider="mock",
                                                                   model="mock"))
    assert [x.text for x in a2.inbox.next_turn] == ["queued prompt"]
    assert [x.text for x in a2.inbox.next_step] == ["parked context"]
    await asyncio.sleep(0)
    assert events_of(a2, "turn/start") == []
    a2.followup(m("wake"))
    await bounded(a2.when_idle())
    assert user_texts(a2) == ["parked context", "queued prompt", "wake"]


async def test_c81_resume_continues_numbering(make_world, tmp_path):
    """C-81: after resume the log holds the stored events plus one session/end-seed
    (first_live_seq == stored length); the derived history equals a replay of the stored events;
    the next turn is turn/start{2}; all seqs are 0..N contiguous; the first request after resume
    logs request/header with reason 'resume'."""
    world1 = persistent_world(make_world, tmp_path, [text("first answer")])
    handle = await world1.create("sess-resume", meta={"cwd": "/w"})
    a1 = handle.agent
    a1.followup(m("first question"))
    await bounded(a1.when_idle())
    stored = list(a1.session.events)
    await bounded(world1.ctx.sessions.flush(a1.session))
    await bounded(handle.dispose())

    world2 = persistent_world(make_world, tmp_path, [text("second answer")])
    a2 = await resume(world2, "sess-resume")
    assert a2.session.id == "sess-resume"
    assert len(a2.session.events) == len(stored) + 1
    assert a2.session.first_live_seq == len(stored)
    assert a2.session.events[-1].type == "session/end-seed"
    assert [e.to_json() for e in a2.session.events[:len(stored)]] == [
        e.to_json() for e in stored]
    assert a2.session.derive_messages() == Session("replay", stored).derive_messages()
    assert a2.session.header["cwd"] == "/w"
    assert "seedLength" not in a2.session.header
    a2.followup(m("second question"))
    await bounded(a2.when_idle())
    assert [e.seq for e in a2.session.events] == list(range(a2.session.seq))
    assert [e.data["turn"] for e in events_of(a2, "turn/start")] == [1, 2]
    assert [e.data["reason"] for e in events_of(a2, "request/header")] == ["initial", "resume"]
    history = world2.model.requests[0]["messages"]
    assert [msg["role"] for msg in history] == ["user", "assistant", "user"]


async def test_rule_resume_of_a_forked_session_keeps_lineage_and_seed_boundary(make_world,
                                                                            tmp_path):
    """§1.3: on resume the whole stored log becomes the seed but header.seedLength keeps the fork
    value, so the parent's pending items (before seedLength) are still not inherited while the
    child's own pending items are."""
    world1 = persistent_world(make_world, tmp_path, [text("parent")])
    parent = await world1.agent("parent")
    parent.followup(m("parent prompt"))
    await bounded(parent.when_idle())
    parent.inject(ctx_msg("parent pending"))
    seed = list(parent.session.events)
    child = await world1.agent("child", seed=seed, meta={
        "parentSession": "parent", "seedLength": len(seed), "origin": "subagent",
        "delegationDepth": 1})
    child.inject(ctx_msg("child pending"))
    await bounded(world1.ctx.sessions.flush(child.session))

    world2 = persistent_world(make_world, tmp_path, [])
    resumed = await resume(world2, "child")
    header = resumed.session.header
    assert header["parentSession"] == "parent" and header["seedLength"] == len(seed)
    assert header["origin"] == "subagent" and header["delegationDepth"] == 1
    assert [x.text for x in resumed.inbox.next_step] == ["child pending"]


async def test_rule_resume_setup_publishes_in_order(make_world, tmp_path):
    """§4.4: resume runs setup while unpublished, then publishes session/created, agent/created,
    agent/session-start{resume}; the driver does not start."""
    world1 = persistent_world(make_world, tmp_path, [text("a")])
    a1 = await world1.agent("ordered")
    a1.followup(m("q"))
    await bounded(a1.when_idle())
    await bounded(world1.ctx.sessions.flush(a1.session))

    world2 = persistent_world(make_world, tmp_path, [])
    order = []
    world2.ctx.on("session/created", lambda s: order.append("session/created"))
    world2.ctx.on("agent/created", lambda p: order.append("agent/created"))
    world2.ctx.on("agent/session-start",
                  lambda p: order.append(f"session-start:{p['source']}"))

    async def setup(agent_ctx):
        order.append(("setup", world2.ctx.agents.get("ordered"),
                      world2.ctx.sessions.get("ordered")))

    a2 = await resume(world2, "ordered", setup=setup)
    assert order == [("setup", None, None), "session/created", "agent/created",
                     "session-start:resume"]
    assert a2.status == "idle"


async def test_rule_resume_failures(make_world, tmp_path):
    """§4.4: resuming an unknown id rejects and publishes nothing; resuming an id that is live in
    the same world rejects."""
    world = persistent_world(make_world, tmp_path, [])
    with pytest.raises(Exception):  # noqa: B017 - a not-found error of the backend
        await resume(world, "missing")
    assert world.ctx.agents.list() == [] and world.ctx.sessions.list() == []
    live = await world.agent("live")
    live.inject(ctx_msg("x"))
    await bounded(world.ctx.sessions.flush(live.session))
    with pytest.raises(Exception):  # noqa: B017 - live collision
        await resume(world, "live")
    assert world.ctx.agents.list() == [live]
