"""Writing a live world's sessions: round trip, durability, batching, failure handling."""

from __future__ import annotations

import asyncio
import errno
import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from dsh_tui.harness import Inbox, new_world, user_message
from dsh_tui.harness.jsonvalue import dumps_compact
from dsh_tui.harness.persistence import JsonlPersistence, SessionCollisionError, fileio
from dsh_tui.harness.persistence import writer as writer_module

from .conftest import World, assistant, chunk, complete_turn, tool_call, tool_result


async def test_round_trip_through_a_live_world(world: World, tmp_path: Path) -> None:
    session = world.session("round-trip", cwd="/home/a/proj", agentPreset="minimal")
    inbox = Inbox(session)
    first, second, third = (user_message(text) for text in ("one", "two", "three"))
    inbox.append("next-turn", first)
    inbox.prepend("next-turn", second)
    inbox.append("next-step", third)
    inbox.replace(third.id, third.with_text("three, edited"))
    inbox.remove(second.id)
    inbox.splice("next-turn", 0, 0, [user_message("zero")])
    complete_turn(session, 1)
    session.append("user/message", first, surface_op="append")
    session.append("ui/marker", {"note": "only this project writes this"}, ignorable=True)
    await world.ctx.sessions.flush(session)

    header, events = JsonlPersistence(world.root).load("round-trip")
    assert header == {**session.header, "delegationDepth": 0}  # always explicit on disk
    assert events == [event.to_json() for event in session.events]
    # The loaded log replays into the same inbox and the same model history.
    resumed = world.ctx.sessions.prepare("round-trip-copy", seed=events,
                                         header={**header, "id": "round-trip-copy"},
                                         restore=True)
    assert [m.id for m in Inbox(resumed).next_turn] == [m.id for m in inbox.next_turn]
    assert [m.text for m in Inbox(resumed).next_step] == ["three, edited"]
    assert resumed.derive_messages() == session.derive_messages()


async def test_lines_are_js_compact_json_with_upstream_key_order(world: World) -> None:
    session = world.session("format", cwd="/w")
    complete_turn(session, 1)
    session.append("ui/marker", {"text": "lone \udc00 surrogate, ünïcode, \n newline"},
                   ignorable=True)
    await world.ctx.sessions.flush(session)
    raw = world.persistence.path_for(session.header).read_bytes()
    raw.decode("utf-8")  # strictly valid UTF-8 (the surrogate is escaped)
    assert b"\\udc00" in raw
    lines = raw.decode().split("\n")
    assert lines[-1] == ""  # every line, the last included, ends in a newline
    assert lines[0] == ('{"type":"session","version":0,"id":"format","createdAt":'
                        f'{session.header["createdAt"]},"cwd":"/w","delegationDepth":0}}')
    assert lines[1:-1] == [dumps_compact(event.to_json()) for event in session.events]
    result = json.loads(lines[1 + 6])  # the first tool/result (seq 6)
    assert list(result) == ["type", "seq", "time", "data", "sourceEventSeqs", "surfaceOp"]
    assert list(json.loads(lines[-2])) == ["type", "seq", "time", "data", "ignorable"]


async def test_inbox_splice_is_in_the_file_when_the_call_returns(world: World) -> None:
    session = world.session("durable")
    inbox = Inbox(session)
    message = user_message("do not lose me")
    inbox.append("next-turn", message)
    # No flush, no await: the bytes are already in the file.
    lines = world.lines(session)
    assert json.loads(lines[1])["data"]["inserted"][0]["id"] == message.id
    session.append("turn/start", {"turn": 1})
    assert json.loads(world.lines(session)[-1])["type"] == "turn/start"


async def test_a_rename_is_in_the_file_when_the_call_returns(world: World) -> None:
    from dsh_tui.harness.names import rename

    session = world.session("renamed")
    rename(session, "only a name")  # a session holding only a name is not on disk yet
    assert world.lines(session) == []
    session.append("turn/start", {"turn": 1})
    rename(session, "writer")
    # No flush, no await: a kill -9 now still brings "writer" back.
    assert [json.loads(line)["data"].get("title") for line in world.lines(session)[1:]] == \
        ["only a name", None, "writer"]


async def test_chunks_wait_for_the_batching_window(world: World) -> None:
    session = world.session("batched")
    session.append("turn/start", {"turn": 1})
    session.append("step/start", {"turn": 1, "step": 1})
    for part in ("a", "b", "c"):
        session.append("assistant/chunk", chunk(1, 1, part))
    assert [json.loads(line)["type"] for line in world.lines(session)[1:]] == ["turn/start"]
    timer = world.persistence._live[session].timer
    loop = asyncio.get_running_loop()
    assert timer is not None and timer.when() - loop.time() <= 0.2
    await asyncio.sleep(0.25)  # the window's timer fires before this sleep ends
    assert len(world.lines(session)) == 1 + 5


async def test_a_durable_event_writes_the_buffered_chunks_before_it(world: World) -> None:
    session = world.session("ordered")
    session.append("turn/start", {"turn": 1})
    session.append("step/start", {"turn": 1, "step": 1})
    session.append("assistant/chunk", chunk(1, 1, "x"))
    Inbox(session).append("next-step", user_message("steer"))
    assert [json.loads(line)["seq"] for line in world.lines(session)[1:]] == [0, 1, 2, 3]


async def test_flush_writes_and_syncs_everything(world: World) -> None:
    session = world.session("flushed")
    session.append("step/start", {"turn": 1, "step": 1})
    session.append("assistant/chunk", chunk(1, 1, "x"))
    assert world.lines(session) == []
    await world.ctx.sessions.flush(session)
    assert len(world.lines(session)) == 3
    writer = world.persistence._live[session]
    assert not writer.pending and not writer.unsynced and writer.timer is None


async def test_fsync_is_batched_off_the_hot_path(world: World,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (calls.append(fd), real_fsync(fd))[1])
    session = world.session("fsync")
    inbox = Inbox(session)
    for index in range(50):
        inbox.append("next-turn", user_message(f"m{index}"))
    assert len(world.lines(session)) == 51 and calls == []  # written, not yet synced
    await asyncio.sleep(0.25)
    await asyncio.sleep(0.05)  # let the worker-thread fsync report back
    writer = world.persistence._live[session]
    assert not writer.unsynced
    # the file once, plus once each directory that gained an entry (4 were created)
    assert 1 <= len(calls) <= 5


async def test_a_session_with_no_events_never_reaches_disk(world: World) -> None:
    session = world.session("empty")
    await world.ctx.sessions.flush(session)
    assert not world.persistence.path_for(session.header).exists()
    assert world.persistence.list_sessions() == []


async def test_new_directories_and_files_are_private(world: World) -> None:
    session = world.session("private", cwd="/p")
    Inbox(session).append("next-turn", user_message("x"))
    path = world.persistence.path_for(session.header)
    for directory in (world.root, path.parent.parent, path.parent):
        assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    lock = path.with_name("session.lock")  # the one-writer lock, held while the session is live
    assert stat.S_IMODE(lock.stat().st_mode) == 0o600
    # the temp file is removed
    assert sorted(p.name for p in path.parent.iterdir()) == ["session.jsonl", "session.lock"]


async def test_creating_an_id_that_is_already_stored_is_refused(world: World) -> None:
    session = world.session("taken", cwd="/p")
    complete_turn(session, 1)
    await world.ctx.sessions.flush(session)
    before = world.persistence.path_for(session.header).read_bytes()
    other = World(world.root)
    try:
        with pytest.raises(SessionCollisionError, match="taken"):
            other.session("taken", cwd="/p")
        with pytest.raises(SessionCollisionError, match="another cwd"):
            other.session("taken", cwd="/elsewhere")
        assert other.ctx.sessions.get("taken") is None  # the creation was rolled back
    finally:
        other.detach()
    assert world.persistence.path_for(session.header).read_bytes() == before


async def test_a_failed_write_keeps_the_events_and_retries(
        world: World, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    session = world.session("disk-full")
    inbox = Inbox(session)
    inbox.append("next-turn", user_message("before"))

    def full(fd: int, data: bytes, size_before: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(writer_module, "append_all", full)
    inbox.append("next-turn", user_message("during"))
    session.append("turn/start", {"turn": 1})
    assert "No space left" in caplog.text and "stay in memory" in caplog.text
    assert len(world.lines(session)) == 2
    with pytest.raises(OSError, match="No space"):
        await world.ctx.sessions.flush(session)

    monkeypatch.undo()
    await world.ctx.sessions.flush(session)
    assert [json.loads(line)["seq"] for line in world.lines(session)[1:]] == [0, 1, 2]


async def test_a_torn_write_is_cut_back_before_the_retry(
        world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    session = world.session("torn-write")
    inbox = Inbox(session)
    inbox.append("next-turn", user_message("first"))
    path = world.persistence.path_for(session.header)
    good = path.read_bytes()
    real_write_all = fileio.write_all

    def half_then_fail(fd: int, data: bytes) -> None:
        os.write(fd, data[: len(data) // 2])
        raise OSError(errno.EIO, "device went away")

    monkeypatch.setattr(fileio, "write_all", half_then_fail)
    inbox.append("next-turn", user_message("second"))
    assert path.read_bytes() == good  # the half line was rolled back
    monkeypatch.setattr(fileio, "write_all", real_write_all)
    await world.ctx.sessions.flush(session)
    _, events = JsonlPersistence(world.root).load("torn-write")
    assert [event["seq"] for event in events] == [0, 1]


async def test_disposing_a_session_writes_what_is_pending(world: World) -> None:
    session = world.ctx.sessions.prepare("disposed", meta={"cwd": "/p"})
    detach = world.ctx.sessions.enter(session)
    world.ctx.sessions.announce(session)
    session.append("step/start", {"turn": 1, "step": 1})
    session.append("assistant/chunk", chunk(1, 1, "tail"))
    assert world.lines(session) == []
    detach()  # what an agent handle's dispose ends with: session/disposed
    assert len(world.lines(session)) == 3
    assert session not in world.persistence._live


def test_without_a_loop_every_event_is_written_at_once(tmp_path: Path) -> None:
    world = World(tmp_path)
    try:
        session = world.session("sync")
        session.append("assistant/chunk", chunk(1, 1, "x"))
        assert len(world.lines(session)) == 2
    finally:
        world.detach()


async def test_detach_drains_and_releases_the_registry(tmp_path: Path) -> None:
    world = World(tmp_path)
    assert world.ctx.registry.persistence is world.persistence
    session = world.session("drained")
    session.append("assistant/chunk", chunk(1, 1, "x"))
    world.detach()
    assert world.ctx.registry.persistence is None
    assert len(world.lines(session)) == 2
    session.append("assistant/chunk", chunk(1, 1, "after detach"))
    assert len(world.lines(session)) == 2  # no longer listening


async def test_sessions_live_before_attach_are_persisted(tmp_path: Path) -> None:
    ctx = new_world()
    session = ctx.sessions.create("early", meta={"cwd": "/p"})
    Inbox(session).append("next-turn", user_message("before attach"))
    persistence = JsonlPersistence(tmp_path)
    detach = persistence.attach(ctx)
    try:
        session.append("turn/start", {"turn": 1})
        lines = persistence.path_for(session.header).read_text().splitlines()
        assert [json.loads(line)["seq"] for line in lines[1:]] == [0, 1]
    finally:
        detach()


async def test_a_fork_seed_is_persisted_once(world: World) -> None:
    source = world.session("source", cwd="/p")
    complete_turn(source, 1)
    child = world.ctx.sessions.fork(source, child_id="child")
    await world.ctx.sessions.flush(child)
    header, events = JsonlPersistence(world.root).load("child")
    assert header["parentSession"] == "source" and header["seedLength"] == len(source.events)
    assert events == [event.to_json() for event in child.events]


async def test_a_resumed_session_continues_its_file(world: World) -> None:
    session = world.session("resumed", cwd="/p")
    Inbox(session).append("next-turn", user_message("queued"))
    session.append("turn/start", {"turn": 1})
    session.append("step/start", {"turn": 1, "step": 1})
    session.append("assistant/message", assistant(1, 1, "", ("c1",)), surface_op="append",
                   source_event_seqs=[])
    session.append("tool/call", tool_call(1, 1, "c1"))
    await world.ctx.sessions.flush(session)
    world.detach()

    again = World(world.root)
    try:
        header, events = again.persistence.load("resumed")
        assert [e["type"] for e in events[-3:]] == ["tool/result", "step/end", "turn/end"]
        resumed = again.ctx.sessions.prepare("resumed", seed=events, header=header,
                                             restore=True)
        again.ctx.sessions.enter(resumed)
        again.ctx.sessions.announce(resumed)
        assert Inbox(resumed).next_turn[0].text == "queued"  # the queued prompt survived
        complete_turn(resumed, 2)
        await again.ctx.sessions.flush(resumed)
        _, reloaded = JsonlPersistence(world.root).load("resumed")
        assert reloaded == [event.to_json() for event in resumed.events]
        assert [e["type"] for e in reloaded].count("session/end-seed") == 1
    finally:
        again.detach()


async def test_tool_results_in_the_resumed_history_pair_every_call(world: World) -> None:
    session = world.session("pairs", cwd="/p")
    session.append("turn/start", {"turn": 1})
    session.append("step/start", {"turn": 1, "step": 1})
    session.append("assistant/message", assistant(1, 1, "two calls", ("c1", "c2")),
                   surface_op="append", source_event_seqs=[])
    call = session.append("tool/call", tool_call(1, 1, "c1"))
    session.append("tool/result", tool_result(1, 1, "c1"), surface_op="append",
                   source_event_seqs=[call.seq])
    await world.ctx.sessions.flush(session)
    header, events = JsonlPersistence(world.root).load("pairs")
    messages: list[dict[str, Any]] = world.ctx.sessions.prepare(
        "pairs-copy", seed=events, header={**header, "id": "pairs-copy"},
        restore=True).derive_messages()
    assert [m["role"] for m in messages] == ["assistant", "user", "user"]
    assert messages[2]["source"] == {"kind": "tool", "callId": "c2"}


async def test_a_seed_of_read_only_views_is_stored_as_plain_json(world: World) -> None:
    from dsh_tui.harness import SessionEvent
    from dsh_tui.harness.jsonvalue import freeze_json

    frozen = SessionEvent("session/title", 0, 1, freeze_json({"title": "t", "tags": ["a"]}))
    session = world.ctx.sessions.prepare("frozen", seed=[frozen], meta={"cwd": "/p"},
                                         restore=True)
    world.ctx.sessions.enter(session)
    world.ctx.sessions.announce(session)
    await world.ctx.sessions.flush(session)
    _, events = JsonlPersistence(world.root).load("frozen")
    assert events[0]["data"] == {"title": "t", "tags": ["a"]}
