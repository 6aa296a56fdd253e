"""A session reaches disk with its first real event, not when it is only named.

The app names every agent it creates (a `session/title` record); an app opened and closed,
or a browser tab reloaded, without a message must not leave an empty session behind.
"""

from __future__ import annotations

import json

from dsh_tui.harness import Inbox, user_message

from .conftest import World


async def test_a_session_that_is_only_named_never_reaches_disk(world: World) -> None:
    session = world.ctx.sessions.prepare("named", meta={"cwd": "/p"})
    detach = world.ctx.sessions.enter(session)
    world.ctx.sessions.announce(session)
    session.append("session/title", {"title": "demo", "messageSeqs": [],
                                     "source": {"kind": "user"}})
    await world.ctx.sessions.flush(session)
    assert not world.persistence.path_for(session.header).exists()
    assert world.persistence.list_sessions() == []
    detach()  # disposed (as a quit disposes it) and the persistence drained
    world.detach()
    assert not world.persistence.path_for(session.header).exists()
    assert not any(world.root.rglob("*.jsonl"))


async def test_the_first_message_creates_the_file_with_the_name_before_it(
        world: World) -> None:
    session = world.session("named")
    session.append("session/title", {"title": "demo", "messageSeqs": [],
                                     "source": {"kind": "user"}})
    message = user_message("the first message")
    Inbox(session).append("next-turn", message)
    # The splice is durable: in the file when the call returns, after the title it follows.
    lines = [json.loads(line) for line in world.lines(session)]
    assert [line["type"] for line in lines] == ["session", "session/title",
                                                "agent/inbox/spliced"]
    assert lines[2]["data"]["inserted"][0]["id"] == message.id
    assert [h["id"] for h in world.persistence.list_sessions()] == ["named"]
