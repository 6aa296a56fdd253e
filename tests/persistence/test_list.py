"""list_sessions(): headers only, newest first, broken files skipped with a warning."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
import zstandard

from dsh_tui.harness import Inbox, user_message
from dsh_tui.harness.jsonvalue import dumps_compact
from dsh_tui.harness.persistence import JsonlPersistence

from .conftest import World


def test_sessions_are_listed_newest_first(tmp_path: Path) -> None:
    world = World(tmp_path)
    try:
        for session_id, created, cwd in (("old", 100, "/a"), ("new", 300, "/b"),
                                         ("mid", 200, None)):
            meta = {"createdAt": created, **({"cwd": cwd} if cwd else {})}
            session = world.ctx.sessions.create(session_id, meta=meta)
            Inbox(session).append("next-turn", user_message(session_id))
        world.ctx.sessions.create("never-written", meta={"createdAt": 999})
    finally:
        world.detach()
    listed = JsonlPersistence(tmp_path).list_sessions()
    assert [header["id"] for header in listed] == ["new", "mid", "old"]
    assert listed[1] == {"version": 0, "id": "mid", "createdAt": 200, "delegationDepth": 0}


def test_listing_reads_only_the_header(tmp_path: Path) -> None:
    persistence = JsonlPersistence(tmp_path)
    header = {"type": "session", "version": 0, "id": "big", "createdAt": 1, "delegationDepth": 0}
    path = persistence.path_for(header)
    path.parent.mkdir(parents=True)
    # A huge body that is not even JSON: a full parse would fail, the listing does not care.
    path.write_bytes((dumps_compact(header) + "\n").encode() + b"\x00garbage" * 200_000)
    assert [h["id"] for h in persistence.list_sessions()] == ["big"]


def test_zstd_headers_are_listed(tmp_path: Path) -> None:
    persistence = JsonlPersistence(tmp_path)
    header = {"type": "session", "version": 0, "id": "z", "createdAt": 7, "cwd": "/z",
              "delegationDepth": 0}
    path = persistence.path_for(header).with_name("session.jsonl.zstd")
    path.parent.mkdir(parents=True)
    compress = zstandard.ZstdCompressor(write_checksum=True).compress
    path.write_bytes(compress((dumps_compact(header) + "\n").encode()) + compress(b"x" * 10))
    listed = persistence.list_sessions()
    assert listed == [{k: v for k, v in header.items() if k != "type"}]
    assert persistence.path_for(listed[0]) == path == persistence.path_for("z")


def test_broken_and_misplaced_files_are_skipped(tmp_path: Path,
                                                caplog: pytest.LogCaptureFixture) -> None:
    persistence = JsonlPersistence(tmp_path)
    good = {"type": "session", "version": 0, "id": "good", "createdAt": 1, "delegationDepth": 0}
    for session_id, content in (
            ("good", dumps_compact(good) + "\n"),
            ("torn-header", '{"type":"session","version":0,"id":"torn-header"'),
            ("not-a-header", '{"type":"turn/start","seq":0}\n'),
            ("empty", ""),
            ("bad-zstd", None)):
        path = persistence.path_for({"id": session_id})
        path.parent.mkdir(parents=True)
        if content is None:
            path.with_name("session.jsonl.zstd").write_bytes(b"\x28\xb5\x2f\xfd\xff\xff\xff")
        else:
            path.write_text(content)
    moved = tmp_path / "_no-cwd" / "elsewhere" / "session.jsonl"
    moved.parent.mkdir()
    moved.write_text(dumps_compact({**good, "id": "other"}) + "\n")
    (tmp_path / "stray-file").write_text("not a directory")
    with caplog.at_level(logging.WARNING):
        listed = persistence.list_sessions()
    assert [header["id"] for header in listed] == ["good"]
    for name in ("torn-header", "not-a-header", "empty", "bad-zstd", "elsewhere"):
        assert name in caplog.text


def test_a_missing_root_lists_nothing(tmp_path: Path) -> None:
    assert JsonlPersistence(tmp_path / "absent").list_sessions() == []
