"""What a crash claimed or half moved but never recorded is pending again after a load.

And nothing else: a batch claimed by a turn that ended normally (cancel, pre-step
reject, breakpoint skip) stays owned by that turn, as the core contract says.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from dsh_tui.harness import Inbox, Session, user_message
from dsh_tui.harness.persistence import JsonlPersistence

from .conftest import World


def _pending(root: Path, session_id: str = "s") -> tuple[list[str], list[str], list[dict]]:
    persistence = JsonlPersistence(root)
    try:
        header, events = persistence.load(session_id)
    finally:
        persistence.release()
    inbox = Inbox(Session(session_id, seed=events, header=header, restore=True))
    return [m.text for m in inbox.next_turn], [m.text for m in inbox.next_step], events


def test_a_claim_in_a_crashed_turn_is_put_back_once(world: World) -> None:
    session = world.session("s", cwd="/p")
    inbox = Inbox(session)
    for text in ("first", "second"):
        inbox.append("next-turn", user_message(text))
    inbox.append("next-step", user_message("steer"))
    session.append("turn/start", {"turn": 1})
    inbox.claim("next-turn", 1)  # takes "steer" and "first"; the crash comes before step/start
    world.detach()
    turn, step, events = _pending(world.root)
    assert (turn, step) == (["first", "second"], ["steer"])
    back = [e for e in events if e["type"] == "agent/inbox/spliced"][-2:]
    assert [(b["data"]["target"], b["data"]["start"], "outcome" in b["data"]) for b in back] == [
        ("next-step", 0, False), ("next-turn", 0, False)]
    assert events[-3]["data"] == {"turn": 1, "reason": {"kind": "interrupted"}}
    size = JsonlPersistence(world.root).path_for("s").stat().st_size
    assert _pending(world.root)[:2] == (turn, step)  # a second load adds nothing
    assert JsonlPersistence(world.root).path_for("s").stat().st_size == size


def test_recorded_messages_and_normally_ended_turns_are_left_alone(world: World) -> None:
    session = world.session("s", cwd="/p")
    inbox = Inbox(session)
    sent, skipped = user_message("sent"), user_message("skipped")
    inbox.append("next-turn", sent)
    session.append("turn/start", {"turn": 1})
    inbox.claim("next-turn", 1)
    session.append("step/start", {"turn": 1, "step": 1})
    session.append("user/message", sent, surface_op="append")
    session.append("step/end", {"turn": 1, "step": 1})
    session.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    inbox.append("next-turn", skipped)
    session.append("turn/start", {"turn": 2})
    inbox.claim("next-turn", 2)
    # a breakpoint skip: the turn ends blocked; its batch belongs to it (the app offers it)
    session.append("turn/end", {"turn": 2, "reason": {"kind": "blocked"}})
    world.detach()
    path = JsonlPersistence(world.root).path_for("s")
    before = path.read_bytes()
    turn, step, _ = _pending(world.root)
    assert (turn, step) == ([], [])
    assert path.read_bytes() == before


def test_a_repair_cut_short_is_completed_by_the_next_load(world: World) -> None:
    session = world.session("s", cwd="/p")
    inbox = Inbox(session)
    inbox.append("next-turn", user_message("claimed"))
    session.append("turn/start", {"turn": 1})
    inbox.claim("next-turn", 1)
    world.detach()
    path = JsonlPersistence(world.root).path_for("s")
    original = path.read_bytes()
    _pending(world.root)
    repaired = path.read_bytes()
    # the repair's closers made it to disk, its re-queue splice was torn by a second crash
    lines = repaired.split(b"\n")
    path.write_bytes(b"\n".join(lines[:-2]) + b"\n" + lines[-2][:20])
    assert path.read_bytes().startswith(original)
    turn, _, events = _pending(world.root)
    assert turn == ["claimed"]
    assert events[-2]["data"]["reason"] == {"kind": "interrupted"}


def _moving_log(root: Path) -> tuple[Path, bytes, int]:
    world = World(root)
    session = world.session("s", cwd="/p")
    inbox = Inbox(session)
    items = [user_message(text) for text in ("a", "b", "c")]
    for item in items:
        inbox.append("next-turn", item)
    inbox.append("next-step", user_message("x"))
    path = world.persistence.path_for(session.header)
    before = path.stat().st_size
    assert inbox.move(items[1].id, "next-step", 0)
    assert [m.text for m in inbox.next_step] == ["b", "x"]
    world.detach()
    return path, path.read_bytes(), before


def test_a_move_between_lanes_survives_every_cut(tmp_path: Path) -> None:
    path, data, before = _moving_log(tmp_path / "source")
    records = [json.loads(line) for line in data[before:].splitlines()]
    assert [("outcome" in r["data"], r["data"].get("removedCount")) for r in records] == [
        (False, 1), (False, None)]  # nothing is logged as canceled
    for cut in range(before, len(data) + 1):
        work = tmp_path / "work"
        if work.exists():
            shutil.rmtree(work)
        target = work / path.relative_to(tmp_path / "source")
        target.parent.mkdir(parents=True)
        target.write_bytes(data[:cut])
        turn, step, _ = _pending(work)
        assert sorted(turn + step) == ["a", "b", "c", "x"], cut  # "b" is never lost
        assert turn[0] == "a" and turn[-1] == "c"


async def test_a_move_within_a_lane_is_one_record(world: World) -> None:
    session = world.session("s", cwd="/p")
    inbox = Inbox(session)
    items = [user_message(text) for text in "abcd"]
    for item in items:
        inbox.append("next-turn", item)
    count = len(session.events)
    assert inbox.move(items[3].id, "next-turn", 1)
    assert inbox.move(items[0].id, "next-turn", 99)
    assert inbox.move(items[2].id, "next-turn", 2)  # already there: nothing logged
    moves = [e.data for e in session.events[count:]]
    assert [(d["start"], d["removedCount"], "outcome" in d) for d in moves] == [
        (1, 3, False), (0, 4, False)]
    assert [m.text for m in inbox.next_turn] == ["d", "b", "c", "a"]
    await world.ctx.sessions.flush(session)
    world.detach()
    assert _pending(world.root)[0] == ["d", "b", "c", "a"]
