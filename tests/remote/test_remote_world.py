"""The attached world against the published runtime: discovery, status, refusals, secrecy."""

from __future__ import annotations

import logging

import pytest
from remote_runtime import ROUTE
from remote_support import Frames, attached, describe, events_of, new_agent, texts, wait_for

from dsh_tui.harness import user_message
from dsh_tui.harness.capabilities import capabilities_of
from dsh_tui.remote import (
    Endpoint,
    RemoteAgent,
    RemoteError,
    UnavailableError,
    attach,
    parse_endpoint,
)
from dsh_tui.remote.wire import RpcClient


async def test_every_session_shows_with_live_status_and_new_ones_appear(runtime) -> None:
    first = await attached(runtime)
    second = await attached(runtime)
    try:
        made_here = await new_agent(first, "seen")
        # A session another client makes is found through the runtime's control stream.
        await wait_for(lambda: second.ctx.agents.get(made_here.id), "the other client's session")
        there = second.ctx.agents.get(made_here.id)
        assert isinstance(there, RemoteAgent) and there.status == "idle"
        statuses: list[str] = []
        second.ctx.on("agent/status", lambda p: statuses.append(p["status"])
                      if p["agent"] is there else None)
        made_here.followup(user_message("status [words=8] [pause=0.1]"))
        await wait_for(lambda: statuses[:1] == ["running"], "running, seen by the other client")
        await wait_for(lambda: there.status == "idle", "idle again", state=lambda: describe(there))
        assert statuses == ["running", "idle"]
        # The listing has every session the runtime has, and each one's whole log.
        listed = await first.rpc.call("session/list", {"_request": {}})
        ids = {item["sessionId"] for item in listed["items"]}
        await wait_for(lambda: ids <= {a.id for a in second.ctx.agents.list()}, "every session")
        assert there.session.wire == made_here.session.wire
    finally:
        await first.close()
        await second.close()


async def test_a_refused_edit_or_removal_is_one_line_and_keeps_the_text(runtime) -> None:
    world = await attached(runtime)
    try:
        agent = await new_agent(world, "refused")
        agent.followup(user_message("only [words=2]"))
        await wait_for(lambda: events_of(agent, "turn/end"), "the turn")
        claimed = events_of(agent, "user/message")[0].data["id"]
        # Our view knows it was claimed: the edit is refused at once, as locally (C-19).
        assert agent.inbox.replace(claimed, user_message("late")) is False
        assert agent.inbox.remove(claimed) is False
        # The runtime refuses what it claimed before the request came (the race, forced).
        agent.edit_item(claimed, "my late edit", "next-turn")
        agent.remove_item(claimed)
        await wait_for(lambda: len(world.notices) >= 2, "two notices")
        lines = [n.text for n in world.notices]
        assert all("\n" not in line for line in lines)
        assert "was not edited" in lines[0] and "no longer pending" in lines[0]
        assert "was not removed" in lines[1]
        kept = agent.inbox.next_turn
        assert texts(kept) == ["my late edit"] and agent.inbox.outbox[0].state == "unsent"
    finally:
        await world.close()


async def test_a_send_that_fails_stays_in_the_outbox_and_goes_later(runtime) -> None:
    world = await attached(runtime)
    try:
        agent = await new_agent(world, "outbox")
        working = world.rpc
        dead = RpcClient(working.http, Endpoint("http://127.0.0.1:9", working.endpoint.token))
        world._rpc = dead  # the runtime's HTTP port unreachable, as when it goes away
        agent.followup(user_message("typed while the runtime was away"))
        await wait_for(lambda: world.notices, "the failure notice")
        assert "Could not send to" in world.notices[0].text
        assert "cannot reach 127.0.0.1:9" in world.notices[0].text
        assert texts(agent.inbox.next_turn) == ["typed while the runtime was away"]
        assert agent.inbox.outbox[0].state == "unsent"
        world._rpc = working
        assert agent.wake() is True  # enter on an empty composer sends it again
        await wait_for(lambda: events_of(agent, "turn/end"), "the resent prompt to run")
        assert not agent.inbox.outbox
        assert [e.data["content"][0]["text"] for e in events_of(agent, "user/message")
                if e.data["source"]["kind"] == "user"] == ["typed while the runtime was away"]
    finally:
        await world.close()


async def test_what_the_runtime_cannot_do_is_refused_with_its_reason(runtime) -> None:
    world = await attached(runtime)
    try:
        agent = await new_agent(world, "caps")
        caps = capabilities_of(agent)
        for gesture in ("inject", "breakpoint", "reorder_item", "spawn_child", "dispose"):
            assert caps.reason(gesture), gesture
        for gesture in ("followup", "steer", "cancel_keep_inbox", "edit_item", "remove_item",
                        "promote_to_steer"):
            assert caps.allows(gesture), gesture
        with pytest.raises(UnavailableError, match="without waking"):
            agent.inject(user_message("context"))
        agent.followup(user_message("idle one [words=2]"))
        await wait_for(lambda: events_of(agent, "turn/end"), "the turn")
        agent.followup(user_message("a [words=30] [pause=0.1]"))
        agent.followup(user_message("b"))
        agent.followup(user_message("c"))
        await wait_for(lambda: texts(agent.inbox.runtime_pending("next-turn")) == ["b", "c"],
                       "two queued")
        _b, c = agent.inbox.runtime_pending("next-turn")
        with pytest.raises(UnavailableError, match="reorder"):
            agent.inbox.move(c.id, "next-turn", 0)
        with pytest.raises(UnavailableError, match="put an item back"):
            agent.inbox.prepend("next-turn", user_message("x"))
        agent.cancel(None, keep_inbox=False)  # stop, then each queued item removed
        await wait_for(lambda: agent.status == "idle" and not agent.inbox.has_pending,
                       "stopped with an empty inbox", state=lambda: describe(agent))
        removed = [e for e in events_of(agent, "agent/inbox/spliced")
                   if e.data.get("outcome") == "canceled"]
        assert len(removed) == 2
    finally:
        await world.close()


async def test_the_token_never_reaches_a_log_a_notice_or_an_error(runtime, caplog) -> None:
    caplog.set_level(logging.DEBUG)
    endpoint = parse_endpoint(runtime.line)
    token = endpoint.token.reveal()
    assert token not in repr(endpoint) and token not in str(endpoint)
    wrong = parse_endpoint(runtime.line.split("token=")[0] + "token=" + "A" * 43)
    with pytest.raises(RemoteError) as refused:
        await attach(wrong)
    assert "refused the launch token" in str(refused.value)
    unreachable = parse_endpoint(f"dsh web: http://127.0.0.1:9/?token={token}")
    with pytest.raises(RemoteError) as down:
        await attach(unreachable)
    assert token not in str(down.value) and "cannot reach 127.0.0.1:9" in str(down.value)
    world = await attach(endpoint, cwd=str(runtime.process.work), route=ROUTE)
    frames = Frames(world)
    try:
        agent = await new_agent(world, "secret")
        agent.followup(user_message("hello [words=4]"))
        await wait_for(lambda: events_of(agent, "turn/end"), "the turn")
        await world.mux.drop()
        await wait_for(lambda: world.mux.reconnects >= 1 and world.mux.connected, "reconnect")
        world.notice(f"a server said: bad request for /connect?token={token}")
        assert frames.of(agent.id)
    finally:
        await world.close()
    everything = caplog.text + " ".join(n.text for n in world.notices) + repr(world.ctx.services)
    assert token not in everything
    assert "token=***" in world.notices[-1].text
