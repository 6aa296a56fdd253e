"""Issue 27 §4 against the published runtime: every gesture, then the runtime's own log.

One session goes through the whole scenario in order: a follow-up that streams slowly;
two prompts queued while it streams, one edited and one removed; a steer mid-stream; a
queued prompt promoted to steer; a cancel that keeps the queue; a sub-agent the model
starts; the socket killed mid-reply and reconnected. After each step the client's view
is checked, and at the end the runtime's stored log of the session and of its child
must be deep-equal to the events the client admitted live, and every reply the client
streamed must be chunk for chunk what the runtime stored for it.
"""

from __future__ import annotations

from remote_support import (
    Frames,
    attached,
    describe,
    events_of,
    new_agent,
    stored_chunks,
    texts,
    wait_for,
)

from dsh_tui.harness import user_message
from dsh_tui.remote import RemoteAgent


def user_texts(agent: RemoteAgent) -> list[str]:
    return [e.data["content"][0]["text"] for e in events_of(agent, "user/message")
            if e.data.get("source", {}).get("kind") == "user"]


async def test_the_issue_scenario_against_the_runtime(runtime) -> None:
    world = await attached(runtime)
    frames = Frames(world)
    states: list[str] = []
    world.ctx.on("world/connection", lambda connection: states.append(connection.state))
    try:
        agent = await new_agent(world, "scenario")
        inbox = agent.inbox

        # 1. A follow-up: the reply streams (live frames), the agent is running.
        agent.followup(user_message("first [words=16] [pause=0.2]"))
        await wait_for(lambda: frames.streaming(agent, 1), "the first reply to stream")
        assert agent.status == "running"

        # 2. Two more queued while it streams; edit one, remove the other.
        agent.followup(user_message("queued A"))
        agent.followup(user_message("queued B"))
        await wait_for(lambda: texts(inbox.runtime_pending("next-turn")) == ["queued A",
                                                                            "queued B"],
                       "both prompts queued in the runtime")
        assert not inbox.outbox
        queued_a, queued_b = inbox.runtime_pending("next-turn")
        assert inbox.replace(queued_a.id, queued_a.with_text("queued A edited"))
        assert inbox.remove(queued_b.id)
        await wait_for(lambda: texts(inbox.runtime_pending("next-turn")) == ["queued A edited"],
                       "the edit and the removal")
        assert inbox.runtime_pending("next-turn")[0].id == queued_a.id  # an edit keeps the id
        assert frames.streaming(agent, 1), "edited while the reply still streamed"

        # 3. Steer mid-stream: taken at the next step of the same turn.
        agent.steer(user_message("steer now [words=16] [pause=0.2]"))
        await wait_for(lambda: "steer now [words=16] [pause=0.2]" in user_texts(agent),
                       "the steer to be claimed")
        steer = next(e for e in events_of(agent, "user/message")
                 if "steer now" in str(e.data["content"]))
        step_start = agent.session.events[steer.seq - 1]
        assert step_start.type == "step/start"
        assert step_start.data == {"turn": 1, "step": 2}

        # 4. Promote a queued prompt to steer while the agent runs.
        await wait_for(lambda: frames.streaming(agent, 2), "the steered step to stream")
        agent.followup(user_message("queued C [words=30] [pause=0.2]"))
        await wait_for(lambda: "queued C [words=30] [pause=0.2]" in texts(
            inbox.runtime_pending("next-turn")), "C queued")
        queued_c = inbox.runtime_pending("next-turn")[-1]
        assert inbox.move(queued_c.id, "next-step", 0)
        await wait_for(lambda: queued_c.id in {m.id for m in inbox.runtime_pending("next-step")}
                       or queued_c.id in [e.data.get("id") for e in
                                          events_of(agent, "user/message")],
                       "C promoted to steer")
        assert texts(inbox.runtime_pending("next-turn")) == ["queued A edited"]

        # 5. Cancel, keeping the queue.
        await wait_for(lambda: frames.streaming(agent, 3), "the promoted step to stream")
        agent.cancel(None, keep_inbox=True)
        await wait_for(lambda: agent.status == "idle", "the cancel to end the turn")
        ended = events_of(agent, "turn/end")[-1]
        assert ended.data["reason"]["kind"] == "aborted"
        assert texts(inbox.runtime_pending("next-turn")) == ["queued A edited"]

        # 6. A sub-agent appears under its parent.
        agent.followup(user_message("SPAWN a helper"))
        children = await wait_for(lambda: world.ctx.agents.children_of(agent),
                                  "the sub-agent to appear under its parent")
        child = children[0]
        assert isinstance(child, RemoteAgent)
        assert world.ctx.agents.owner_of(child.id) is agent
        assert child.session.header.get("parentSession") == agent.id
        await wait_for(lambda: events_of(child, "turn/end"), "the sub-agent's turn")
        child.followup(user_message("more for the child [words=3]"))  # through its parent
        await wait_for(lambda: len(events_of(child, "turn/end")) >= 2 and child.status == "idle",
                       "the sub-agent's second turn", state=lambda: describe(child))
        assert "more for the child [words=3]" in user_texts(child)
        # The child's end reaches the parent as a message (a new turn, or steering of the
        # running one, depending on timing); then the parent settles.
        await wait_for(lambda: agent.status == "idle" and not inbox.has_pending
                       and any(e.data.get("source", {}).get("kind") == "subagent-settled"
                               for e in events_of(agent, "user/message")),
                       "the parent to settle", timeout=40, state=lambda: describe(agent))

        # 7. Kill the socket mid-reply; the client reconnects and misses nothing.
        agent.followup(user_message("last [words=16] [pause=0.15]"))
        await wait_for(lambda: frames.streaming(agent), "the last reply to stream")
        await world.mux.drop()
        await wait_for(lambda: "reconnecting" in states and world.connection.state ==
                       "connected", "the reconnection")
        await wait_for(lambda: agent.status == "idle", "the last reply to finish", timeout=40)
        follower = world.followers[agent.id]
        assert follower.stats.gaps == 0 and follower.stats.mismatches == 0
        assert follower.stats.snapshots >= 2
        assert not world.notices, [n.text for n in world.notices]

        # 8. The runtime's own log is exactly what the client admitted, for both sessions.
        for who in (agent, child):
            await wait_for(lambda who=who: runtime.process.stored_log(who.id)[1] ==
                           who.session.wire, f"the stored log of {who.id} to match")
            header, stored = runtime.process.stored_log(who.id)
            assert header["id"] == who.id and header["type"] == "session"
            # The wire header is the stored one (the file adds `delegationDepth: 0` on a root).
            assert {k: header[k] for k in who.session.header} == dict(who.session.header)
            assert set(header) - set(who.session.header) <= {"type", "delegationDepth"}
            # Every committed reply streamed exactly the chunks the runtime stored for it.
            streamed = frames.chunks_by_attempt(who.id)
            checked = 0
            for seq, attempt in frames.committed(who.id).items():
                if isinstance(stored[seq].get("data", {}).get("stream"), list):
                    assert streamed.get(attempt, []) == stored_chunks(stored[seq]), seq
                    checked += 1
            assert checked >= (5 if who is agent else 1)
    finally:
        await world.close()
