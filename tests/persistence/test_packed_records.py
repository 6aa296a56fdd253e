"""Packed bookkeeping on real files (issue 14): a live session packs its finished splices,
step and turn ends in memory, yet writes the same lines, loads back equal and resumes."""

from __future__ import annotations

from pathlib import Path

from dsh_tui.harness import Inbox, user_message
from dsh_tui.harness.jsonvalue import dumps_compact
from dsh_tui.harness.persistence import JsonlPersistence

from .conftest import World, complete_turn


async def test_a_log_with_packed_bookkeeping_is_written_loaded_and_resumed_unchanged(
        world: World, tmp_path: Path) -> None:
    session = world.session("packed-records", cwd="/w")
    inbox = Inbox(session)
    for turn in range(1, 7):
        inbox.append("next-turn", user_message(f"turn {turn} ✓ \u2028 \udc00"))
        complete_turn(session, turn)
        session.append("ui/marker", {"turn": turn, "x": [0.5, None, True]}, ignorable=True)
    inbox.append("next-step", user_message("still pending"))
    complete_turn(session, 7)
    log = session._log
    assert log.packed_records > 20  # splices, step and turn ends, markers: packed
    await world.ctx.sessions.flush(session)

    raw = world.persistence.path_for(session.header).read_bytes()
    lines = raw.decode("utf-8").split("\n")  # (not splitlines: a text holds U+2028)
    assert lines[1:-1] == [dumps_compact(event.to_json()) for event in session.events]
    header, events = JsonlPersistence(world.root).load("packed-records")
    assert events == [event.to_json() for event in session.events]
    assert sum(1 for e in events if e.get("ignorable")) == 6

    resumed = world.ctx.sessions.prepare("packed-copy", seed=events,
                                         header={**header, "id": "packed-copy"}, restore=True)
    assert resumed.pack() > 0
    assert [event.to_json() for event in resumed.events][:len(events)] == events
    assert resumed.derive_messages() == session.derive_messages()
    assert resumed.last_turn() == session.last_turn() == 7
    assert resumed.request_header() == session.request_header()
    assert [m.text for m in Inbox(resumed).next_step] == ["still pending"]
    assert [m.id for m in Inbox(resumed).next_turn] == [m.id for m in inbox.next_turn]
