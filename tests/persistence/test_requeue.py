"""What a crash claimed or half moved but never recorded is pending again after a load.

And nothing else: a batch claimed by a turn that ended normally (cancel, pre-step
reject, breakpoint skip) stays owned by that turn, as the core contract says.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

from dsh_tui.harness import Inbox, Session, user_message
from dsh_tui.harness.persistence import JsonlPersistence

from .conftest import World

MOVE_CHILD = Path(__file__).with_name("move_child.py")
REPO = Path(__file__).resolve().parents[2]


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


async def test_a_move_within_a_lane_is_a_removal_and_an_insertion(world: World) -> None:
    """Issue 25 §5: one splice rewrote every item between the old and the new place (12 ms
    a move in a 10,000-item inbox); now two records whatever the distance."""
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
    assert [(d["start"], d.get("removedCount"), [m["id"] for m in d["inserted"]],
             "outcome" in d) for d in moves] == [
        (3, 1, [], False), (1, None, [items[3].id], False),
        (0, 1, [], False), (3, None, [items[0].id], False)]
    assert [m.text for m in inbox.next_turn] == ["d", "b", "c", "a"]
    await world.ctx.sessions.flush(session)
    world.detach()
    assert _pending(world.root)[0] == ["d", "b", "c", "a"]


def test_a_move_within_a_lane_survives_every_cut(tmp_path: Path) -> None:
    world = World(tmp_path / "source")
    session = world.session("s", cwd="/p")
    inbox = Inbox(session)
    items = [user_message(text) for text in "abcde"]
    for item in items:
        inbox.append("next-turn", item)
    path = world.persistence.path_for(session.header)
    before = path.stat().st_size
    assert inbox.move(items[4].id, "next-turn", 0)
    world.detach()
    data = path.read_bytes()
    for cut in range(before, len(data) + 1):
        work = tmp_path / "work"
        if work.exists():
            shutil.rmtree(work)
        target = work / path.relative_to(tmp_path / "source")
        target.parent.mkdir(parents=True)
        target.write_bytes(data[:cut])
        turn, step, _ = _pending(work)
        # Before the move, half-way (put back where it was) or after it: never lost.
        assert turn in (list("abcde"), list("eabcd")), (cut, turn)
        assert step == []


def test_kill_9_between_the_two_records_of_a_move_loses_nothing(tmp_path: Path) -> None:
    """A real `kill -9` of a process stopped right after the move's removal was written:
    the item comes back where it was, every other item where it was."""
    child = subprocess.Popen([sys.executable, str(MOVE_CHILD), str(tmp_path)],
                             stdout=subprocess.PIPE, text=True,
                             env={**os.environ, "PYTHONPATH": str(REPO)})
    accepted: list[str] = []
    try:
        assert child.stdout is not None
        for line in child.stdout:
            word, *rest = line.split()
            if word == "ACCEPTED":
                accepted.append(rest[0])
            if word == "BETWEEN":
                assert rest == ["17"]
                break
        else:
            raise AssertionError("the child never reached the move")
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=10)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == -signal.SIGKILL
    persistence = JsonlPersistence(tmp_path)
    try:
        header, events = persistence.load("moving")
    finally:
        persistence.release()
    inbox = Inbox(Session("moving", seed=events, header=header, restore=True))
    assert [m.id for m in inbox.next_turn] == accepted  # m17 back at 17, nothing lost
    assert events[-1]["type"] == "agent/inbox/spliced"
    assert events[-1]["data"]["start"] == 17  # the repair's own, ordinary splice
