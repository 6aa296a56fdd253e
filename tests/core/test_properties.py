"""Agent-level property: random interleavings of sends, cancels, removals and maintenance keep
the log and the live state inside the invariants of §1.6, §2 and §3."""

from __future__ import annotations

import asyncio
import itertools

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dsh_tui.harness import Inbox, fold_consumed_work, user_message
from dsh_tui.llm.scripted import fail, hang, text, tool_call

from .conftest import compose, find_nones, tool

replies = st.sampled_from(["text", "tool", "hang", "fail"])
operations = st.lists(st.one_of(
    st.tuples(st.sampled_from(["followup", "steer", "inject"])),
    st.tuples(st.just("cancel"), st.booleans()),
    st.tuples(st.just("remove"), st.integers(0, 5)),
    st.tuples(st.just("tick"), st.integers(1, 12)),
    st.tuples(st.just("idle")),
    st.tuples(st.just("maintenance")),
    st.tuples(st.just("finish_maintenance")),
), max_size=18)

INSIDE_STEP = {"assistant/chunk", "assistant/message", "tool/call", "tool/result",
               "request/header", "request/context", "user/message"}


def build_script(kinds):
    out = []
    for i, kind in enumerate(kinds):
        if kind == "text":
            out.append(text(f"r{i}"))
        elif kind == "tool":
            out.append(tool_call(f"c{i}", "work", {}))
        elif kind == "hang":
            out.append(hang())
        else:
            out.append(fail("SERVER"))
    return out


async def scenario(kinds, ops):
    async def work(call):
        await asyncio.sleep(0)
        return "worked"

    world = compose(build_script(kinds), tools=[tool("work", work)])
    agent = await world.agent("prop")
    statuses, inserted, claimed, discarded = [], [], [], []
    world.ctx.on("agent/status", lambda p: statuses.append(p["status"]))
    world.ctx.on("agent/inbox/inserted", lambda p: inserted.append(p["message"].id))
    world.ctx.on("agent/inbox/claimed", lambda p: claimed.append(p["message"].id))
    world.ctx.on("agent/inbox/discarded", lambda p: discarded.append(p["message"].id))
    counter = itertools.count()
    maintenance = {"gate": None, "future": None}

    async def guarded(awaitable):
        return await asyncio.wait_for(awaitable, 5)

    for op in ops:
        kind = op[0]
        if kind in ("followup", "steer", "inject"):
            getattr(agent, kind)(user_message(f"{kind}-{next(counter)}"))
        elif kind == "cancel":
            agent.cancel({"kind": "user"}, keep_inbox=op[1])
        elif kind == "remove":
            pending = [*agent.inbox.next_turn, *agent.inbox.next_step]
            if pending:
                assert agent.inbox.remove(pending[op[1] % len(pending)].id) is True
        elif kind == "tick":
            for _ in range(op[1]):
                await asyncio.sleep(0)
        elif kind == "idle":
            if any(k == "hang" for k in kinds) or maintenance["future"] is not None:
                continue  # could legitimately wait forever; convergence happens at the end
            await guarded(agent.when_idle())
        elif kind == "maintenance":
            if agent.status == "idle" and maintenance["future"] is None:
                gate = asyncio.Event()

                def task(signal, gate=gate):
                    async def body():
                        waiter = asyncio.ensure_future(signal.wait())
                        opened = asyncio.ensure_future(gate.wait())
                        await asyncio.wait({waiter, opened}, return_when=asyncio.FIRST_COMPLETED)
                        waiter.cancel()
                        opened.cancel()
                    return body()

                try:
                    maintenance["future"] = agent.run_maintenance(task)
                except RuntimeError as error:  # idle status but a latch replay is starting
                    assert "already has active work" in str(error)
                    continue
                maintenance["gate"] = gate
        elif kind == "finish_maintenance" and maintenance["gate"] is not None:
            maintenance["gate"].set()
            await guarded(maintenance["future"])
            maintenance["gate"] = maintenance["future"] = None

    # converge: finish maintenance, cancel whatever is running, drain
    if maintenance["gate"] is not None:
        maintenance["gate"].set()
        await guarded(maintenance["future"])
    for _ in range(10):
        agent.cancel({"kind": "user"})
        await guarded(agent.when_idle())
        if agent.status == "idle":
            break
    for _ in range(20):
        await asyncio.sleep(0)
    assert agent.status == "idle"
    events = list(agent.session.events)
    check_log(events)
    # status transitions alternate, start with running and end idle
    assert statuses == ["running", "idle"] * (len(statuses) // 2)
    # the inbox projection equals a replay of the log
    replayed = Inbox(agent.session)
    assert replayed.next_turn == agent.inbox.next_turn
    assert replayed.next_step == agent.inbox.next_step
    # every inserted message ended exactly one way: pending, claimed or discarded
    pending = {x.id for x in (*agent.inbox.next_turn, *agent.inbox.next_step)}
    assert len(set(inserted)) == len(inserted)
    for message_id in inserted:
        fates = [message_id in pending, message_id in claimed, message_id in discarded]
        assert fates.count(True) == 1, (message_id, fates)
    # every recorded user/message from the inbox was claimed first, and recorded once at most
    recorded = [e.data["id"] for e in events if e.type == "user/message"]
    assert len(set(recorded)) == len(recorded)
    assert set(recorded) <= set(claimed)
    fold_consumed_work(events)
    await agent_dispose(world)


async def agent_dispose(world):
    for handle in world.handles:
        await asyncio.wait_for(handle.dispose(), 5)


def check_log(events):
    assert [e.seq for e in events] == list(range(len(events)))
    open_turn = open_step = None
    last_turn = 0
    last_step = 0
    for event in events:
        assert find_nones(event.data) == [], event.type
        data = event.data
        if event.type == "turn/start":
            assert open_turn is None
            assert data["turn"] == last_turn + 1
            open_turn = last_turn = data["turn"]
            last_step = 0
        elif event.type == "turn/end":
            assert open_turn == data["turn"] and open_step is None
            assert data["reason"]["kind"] in ("completed", "max-tokens", "blocked", "aborted",
                                              "error")
            open_turn = None
        elif event.type == "step/start":
            assert open_turn == data["turn"] and open_step is None
            assert data["step"] == last_step + 1
            open_step = last_step = data["step"]
        elif event.type == "step/end":
            assert open_step == data["step"] and open_turn == data["turn"]
            open_step = None
        elif event.type in INSIDE_STEP:
            assert open_step is not None, event.type
        elif event.type == "agent/inbox/spliced" and "removedCount" in data and \
                "outcome" not in data:
            assert open_turn is not None and open_step is None  # claims sit at boundaries
    assert open_turn is None and open_step is None


@settings(max_examples=80, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.lists(replies, min_size=1, max_size=8), operations)
def test_property_random_interleavings_keep_the_invariants(kinds, ops):
    """§1.6/§2/§3 property: for random interleavings of followup/steer/inject, cancel (with and
    without keep_inbox), inbox removals, maintenance tasks and loop ticks against a model that
    answers with text, tool calls, hangs and failures: seqs stay contiguous, turns are numbered
    1..N and never overlap, steps nest inside turns, in-step records only appear inside steps,
    claims sit at boundaries, no field is null, statuses alternate running/idle and end idle,
    the live inbox equals its replay, each inserted message is exactly one of pending, claimed
    or discarded, and no message is recorded twice."""
    asyncio.run(scenario(kinds, ops))
