"""The inbox rules as plain functions over a real Inbox and Session: no screen, no Pilot.

The screen's inbox keys (shift+up/down, shift+right, ctrl+z, ctrl+u, enter on an empty
composer) call these; tests/ui/test_app.py drives the same rules through the keys."""

from __future__ import annotations

from dsh_tui.harness import Inbox, Session, user_message
from dsh_tui.ui.state.inbox_rows import Tombstone
from dsh_tui.ui.state.inbox_rules import (
    move_destination,
    next_lane,
    pending_count,
    put_back,
    refile,
    undo,
    undo_choice,
)
from dsh_tui.ui.state.lanes import lane_of, source_for
from dsh_tui.ui.state.unsent import Unsent


def inbox_with(**lists: list[str]) -> Inbox:
    inbox = Inbox(Session("rules"))
    for target, lane in (("next_turn", "follow-up"), ("next_step", "steer")):
        for text in lists.get(target, []):
            inbox.append(target.replace("_", "-"), user_message(text, source=source_for(lane)))
    return inbox


def texts(messages: tuple) -> list[str]:
    return [m.text for m in messages]


def test_a_move_stays_in_its_list_and_is_refused_at_either_end() -> None:
    inbox = inbox_with(next_turn=["a", "b", "c"])
    assert move_destination(inbox, "next-turn", 0, -1) is None
    assert move_destination(inbox, "next-turn", 2, 1) is None
    assert move_destination(inbox, "next-step", 0, 1) is None  # an empty list
    assert move_destination(inbox, "next-turn", 0, 1) == 1
    moved = inbox.next_turn[0]
    inbox.move(moved.id, "next-turn", 1)
    assert texts(inbox.next_turn) == ["b", "a", "c"] and inbox.next_turn[1].id == moved.id


def test_refiling_cycles_the_lanes_keeping_the_id_and_the_position() -> None:
    assert [next_lane(lane, "next-turn") for lane in ("follow-up", "steer", "inject")] == \
        ["steer", "inject", "follow-up"]
    assert next_lane("context", "next-step") == "inject"  # read as the steer its list implies
    inbox = inbox_with(next_turn=["f0", "first", "f2"], next_step=["s1", "s2", "s3"])
    message = inbox.next_turn[1]
    assert refile(inbox, message, "follow-up", "next-turn") == "steer"
    assert texts(inbox.next_step) == ["s1", "first", "s2", "s3"]  # index 1 in its new list
    assert texts(inbox.next_turn) == ["f0", "f2"]
    moved = inbox.next_step[1]
    assert moved.id == message.id and lane_of(moved.source, "next-step") == "steer"
    assert refile(inbox, moved, "steer", "next-step") == "inject"
    assert inbox.next_step[1].id == message.id  # same list: it keeps its place
    assert lane_of(inbox.next_step[1].source, "next-step") == "inject"
    assert refile(inbox, inbox.next_step[1], "inject", "next-step") == "follow-up"
    assert texts(inbox.next_turn) == ["f0", "first", "f2"]  # the cycle brings it back
    assert texts(inbox.next_step) == ["s1", "s2", "s3"]
    last = inbox_with(next_turn=["a", "b", "c", "d"], next_step=["s"])
    assert refile(last, last.next_turn[3], "follow-up", "next-turn") == "steer"
    assert texts(last.next_step) == ["s", "d"]  # past a shorter list's end: its end


def _tombstone(message, index: int, batch: int, kind: str = "discarded") -> Tombstone:
    return Tombstone(message, "next-turn", index, "follow-up", kind, 0.0, batch=batch)


def test_undo_restores_the_highlighted_item_else_the_last_batch_in_the_original_order() -> None:
    inbox = inbox_with(next_turn=["a", "b", "c"])
    cleared = list(inbox.next_turn)
    inbox.clear()  # one batch: each left from its index
    batch = [_tombstone(m, i, batch=2) for i, m in enumerate(cleared)]
    older = _tombstone(user_message("older"), 0, batch=1)
    claimed = _tombstone(user_message("taken"), 0, batch=3, kind="claimed")
    inbox.append("next-turn", user_message("x"))  # sent after the clear
    stones = [older, *batch, claimed]
    assert undo_choice(stones) == batch  # the last discarded batch; a claim is no discard
    assert undo_choice(stones, highlighted=older) == [older]
    assert undo_choice([claimed]) == [] and undo_choice([claimed], highlighted=claimed) == []
    done = undo(inbox, list(reversed(batch)))  # any order in: lowest index first
    assert done.count == 3 and not done.errors and done.restored == batch
    assert texts(inbox.next_turn) == ["a", "b", "c", "x"]
    assert [m.id for m in inbox.next_turn[:3]] == [m.id for m in cleared]


def test_putting_back_unsent_work_inserts_it_at_the_head_of_its_list_oldest_first() -> None:
    inbox = inbox_with(next_turn=["queued"], next_step=["waiting"])
    lost = [user_message(t, source=source_for(lane)) for t, lane in
            (("one", "follow-up"), ("two", "steer"), ("three", "follow-up"))]
    offered = [Unsent(m.to_json(), target, 4, "aborted") for m, target in
               zip(lost, ("next-turn", "next-step", "next-turn"), strict=True)]
    done = put_back(inbox, offered)
    assert done.count == 3 and not done.errors
    assert texts(inbox.next_turn) == ["one", "three", "queued"]
    assert texts(inbox.next_step) == ["two", "waiting"]
    assert inbox.next_turn[0].id == lost[0].id and pending_count(inbox) == 5
