"""A log cut at any byte loads, and keeps every event whose line was complete."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dsh_tui.harness import Inbox, Session, new_world, user_message
from dsh_tui.harness.persistence import JsonlPersistence, SessionLogCorruptError

from .conftest import assistant, chunk, tool_call

CLOSER_TYPES = {"tool/result", "step/end", "turn/end"}


def write_log(root: Path, texts: list[str], open_turn: bool) -> tuple[Path, bytes]:
    """A small log written through a live world (no loop: every event written at once)."""
    ctx = new_world()
    persistence = JsonlPersistence(root)
    detach = persistence.attach(ctx)
    try:
        session = ctx.sessions.create("cut", meta={"cwd": "/p"})
        inbox = Inbox(session)
        for turn, text in enumerate(texts, start=1):
            inbox.append("next-turn", user_message(text))
            session.append("turn/start", {"turn": turn})
            session.append("step/start", {"turn": turn, "step": 1})
            seqs = [session.append("assistant/chunk", chunk(turn, 1, part)).seq
                    for part in (text[:3], text[3:])]
            calls = ("c",) if open_turn and turn == len(texts) else ()
            session.append("assistant/message", assistant(turn, 1, text, calls),
                           surface_op="append", source_event_seqs=seqs)
            if calls:
                session.append("tool/call", tool_call(turn, 1, "c"))
                break
            session.append("step/end", {"turn": turn, "step": 1})
            session.append("turn/end", {"turn": turn, "reason": {"kind": "completed"}})
        path = persistence.path_for(session.header)
    finally:
        detach()
    return path, path.read_bytes()


def check_cut(data: bytes, cut: int, work: Path) -> None:
    """Load `data[:cut]` in a fresh root and check nothing complete was lost."""
    if work.exists():
        shutil.rmtree(work)
    path = work / "--p--" / "cut" / "session.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(data[:cut])
    header_end = data.index(b"\n") + 1
    if cut < header_end:
        with pytest.raises(SessionLogCorruptError, match="header-less"):
            JsonlPersistence(work).load("cut")
        return
    complete = [json.loads(line) for line in data[header_end:cut].split(b"\n")[:-1]]
    header, events = JsonlPersistence(work).load("cut")
    assert events[:len(complete)] == complete
    closers = events[len(complete):]
    assert {event["type"] for event in closers} <= CLOSER_TYPES
    assert [event["seq"] for event in events] == list(range(len(events)))
    Session("cut", seed=events, header=header, restore=True)  # a valid resume seed
    # The repaired file now holds exactly what was returned.
    assert [json.loads(line) for line in path.read_bytes().split(b"\n")[1:-1]] == events


def test_every_byte_offset_of_a_small_log(tmp_path: Path) -> None:
    _, data = write_log(tmp_path / "source", ["héllo wörld", "second 🚀 turn"], open_turn=True)
    assert len(data) < 6000
    for cut in range(len(data) + 1):
        check_cut(data, cut, tmp_path / "work")


texts = st.lists(st.text(st.characters(blacklist_categories=()), min_size=1, max_size=12),
                 min_size=1, max_size=3)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=texts, open_turn=st.booleans(), cut_fraction=st.floats(0, 1))
def test_any_log_cut_anywhere_keeps_its_complete_lines(tmp_path: Path, texts: list[str],
                                                       open_turn: bool,
                                                       cut_fraction: float) -> None:
    source = tmp_path / "source"
    if source.exists():
        shutil.rmtree(source)
    _, data = write_log(source, texts, open_turn)
    check_cut(data, round(cut_fraction * len(data)), tmp_path / "work")


