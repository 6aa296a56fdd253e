"""describe(): the title and first prompt that let a person pick a session to resume."""

from __future__ import annotations

from pathlib import Path

from dsh_tui.harness import Inbox, new_world, user_message
from dsh_tui.harness.persistence import JsonlPersistence
from dsh_tui.harness.persistence.summary import SLICE_BYTES


async def _session(root: Path, *, filler: int = 0, title: str | None = "Cache study") -> str:
    ctx = new_world()
    persistence = JsonlPersistence(root)
    persistence.attach(ctx)
    session = ctx.sessions.create("s1", meta={"cwd": "/work"})
    Inbox(session).append("next-turn", user_message("compare   two\ncache designs"))
    for index in range(filler):
        session.append("tool/progress", {"n": index, "pad": "x" * 200}, ignorable=True)
    if title is not None:
        session.append("session/title", {"title": "Old name", "messageSeqs": [],
                                          "source": {"kind": "user"}})
        session.append("session/title", {"title": title, "messageSeqs": [],
                                          "source": {"kind": "user"}})
    await ctx.sessions.flush(session)
    return session.id


async def test_title_and_preview_of_a_short_log(tmp_path: Path) -> None:
    session_id = await _session(tmp_path)
    summary = JsonlPersistence(tmp_path).describe(session_id)
    assert summary["title"] == "Cache study"
    assert summary["preview"] == "compare two cache designs"
    assert summary["bytes"] > 0


async def test_a_long_log_is_read_at_both_ends_only(tmp_path: Path) -> None:
    session_id = await _session(tmp_path, filler=2 * SLICE_BYTES // 200)
    persistence = JsonlPersistence(tmp_path)
    assert persistence.path_for(session_id).stat().st_size > 2 * SLICE_BYTES
    summary = persistence.describe(session_id)
    assert summary["title"] == "Cache study" and summary["preview"].startswith("compare")


async def test_unknown_pieces_are_absent_never_errors(tmp_path: Path) -> None:
    session_id = await _session(tmp_path, title=None)
    summary = JsonlPersistence(tmp_path).describe(session_id)
    assert "title" not in summary and summary["preview"]
    assert JsonlPersistence(tmp_path).describe("no-such-session") == {}
    for header in JsonlPersistence(tmp_path).list_sessions():
        assert "title" not in header  # list_sessions() stays headers only
