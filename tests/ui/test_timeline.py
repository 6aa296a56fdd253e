"""The inbox timeline, checked against stored logs: upstream's fixtures and one of this
app's own (edits, moves, a re-file, a removal and its undo, a steer during a tool call,
a crash put-back), written through real session files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from shared_fixtures import FIXTURES, fixture

from dsh_tui.harness.persistence import read_session_log
from dsh_tui.ui.state.inbox_log import MODEL, PERSON, SYSTEM
from dsh_tui.ui.state.receipts import ANSWERED, PENDING, receipts_of
from dsh_tui.ui.state.timeline import (
    Timeline,
    TimelineFilter,
    change_counts,
    timeline_of,
    word_diff,
)

from .steering_log import SteeringLog, write_steering_log

UPSTREAM = sorted((FIXTURES / "upstream-logs").glob("*.jsonl")) + \
    sorted((FIXTURES / "runtime-logs").glob("*.zstd"))


@pytest.fixture(scope="module")
def steering(tmp_path_factory: pytest.TempPathFactory) -> SteeringLog:
    import asyncio

    return asyncio.run(write_steering_log(tmp_path_factory.mktemp("steering")))


def _stored(log: SteeringLog) -> Timeline:
    _header, events = read_session_log(log.path)
    return timeline_of(events)


def _story(timeline: Timeline, message: Any) -> list[tuple[str, str]]:
    return [(e.kind, e.actor) for e in timeline.entries if e.message_id == message.id]


def test_the_apps_log_tells_each_messages_story_with_its_actor(steering: SteeringLog) -> None:
    timeline = _stored(steering)
    assert _story(timeline, steering.start) == [
        ("insert", PERSON), ("claim", SYSTEM), ("sent", PERSON)]
    assert _story(timeline, steering.edited) == [
        ("insert", PERSON), ("edit", PERSON), ("claim", SYSTEM), ("sent", PERSON)]
    assert _story(timeline, steering.refiled) == [
        ("insert", PERSON), ("refile", PERSON), ("remove", PERSON), ("put-back", PERSON),
        ("claim", SYSTEM), ("sent", PERSON)]
    assert _story(timeline, steering.moved) == [
        ("insert", PERSON), ("move", PERSON), ("claim", SYSTEM), ("put-back", SYSTEM),
        ("claim", SYSTEM), ("sent", PERSON)]


def test_an_edit_carries_its_text_before_and_after_and_a_word_diff(
        steering: SteeringLog) -> None:
    timeline = _stored(steering)
    edit = next(e for e in timeline.entries if e.kind == "edit")
    assert (edit.before, edit.text) == ("then summarise", "then summarise it in three lines")
    assert word_diff(edit.before, edit.text) == [("=", "then summarise"),
                                                 ("+", " it in three lines")]
    assert change_counts(edit.before, edit.text) == (0, 4)
    row = timeline.visible.index(timeline.entries.index(edit))
    assert "edited" in timeline.line(row) and "−0 +4 words" in timeline.line(row)


def test_moves_and_re_files_say_from_where_to_where(steering: SteeringLog) -> None:
    timeline = _stored(steering)
    move = next(e for e in timeline.entries if e.kind == "move")
    assert (move.from_target, move.from_index, move.target, move.index) == (
        "next-turn", 2, "next-turn", 0)
    refile = next(e for e in timeline.entries if e.kind == "refile")
    # one entry for the move between lists and the lane change: the position is kept
    assert (refile.from_target, refile.from_index, refile.target, refile.index) == (
        "next-turn", 2, "next-step", 1)
    assert refile.detail == "follow-up → steer"


def test_the_claim_point_is_shown_against_the_steers_arrival(steering: SteeringLog) -> None:
    """Why did my steer land after the tool call: it arrived during it, and steering is
    taken at the step boundary that follows the tool's result."""
    timeline = _stored(steering)
    kinds = [(e.kind, e.message_id) for e in timeline.entries]
    steer = steering.steer.id
    arrived = kinds.index(("insert", steer))
    claimed = kinds.index(("claim", steer))
    between = [k for k, _ in kinds[arrived:claimed]]
    assert "tool-result" in between and "step-end" in between
    after = [k for k, _ in kinds[claimed:] if k != "claim"]
    assert after[0] == "step-start"  # the claim is the boundary's, before step 2 starts
    claim = timeline.entries[claimed]
    assert (claim.turn, claim.step) == (1, 2)
    assert "during step 1's tool call slow: steering waits for the step boundary" in \
        claim.detail


def test_the_crash_put_back_is_the_systems_and_says_why(steering: SteeringLog) -> None:
    timeline = _stored(steering)
    put_back = next(e for e in timeline.entries
                    if e.kind == "put-back" and e.message_id == steering.moved.id)
    assert put_back.actor == SYSTEM and "crash repair" in put_back.why
    ends = [e.detail for e in timeline.entries if e.kind == "turn-end"]
    assert ends[1].startswith("interrupted")
    undo = next(e for e in timeline.entries if e.kind == "put-back" and e.actor == PERSON)
    assert "undo" in undo.why


def test_receipts_on_the_stored_log_end_where_the_story_ends(steering: SteeringLog) -> None:
    _header, events = read_session_log(steering.path)
    book = receipts_of(events)
    for message in (steering.start, steering.steer, steering.edited, steering.refiled,
                    steering.moved):
        receipt = book.receipt(message.id)
        assert receipt is not None and receipt.state == ANSWERED, message.text
    assert book.receipt(steering.moved.id).turn == 3  # type: ignore[union-attr]


def test_filters_by_message_lane_and_actor(steering: SteeringLog) -> None:
    timeline = _stored(steering)
    everything = len(timeline)
    timeline.set_filter(TimelineFilter(message=steering.moved.id, boundaries=False))
    assert [timeline.entry(r).kind for r in range(len(timeline))] == [
        "insert", "move", "claim", "put-back", "claim", "sent"]
    timeline.set_filter(TimelineFilter(message=steering.moved.id))
    assert len(timeline) > 6 and any(timeline.entry(r).kind == "turn-start"
                                     for r in range(len(timeline)))
    timeline.set_filter(TimelineFilter(actors=frozenset({SYSTEM}), boundaries=False))
    assert {timeline.entry(r).kind for r in range(len(timeline))} == {"claim", "put-back"}
    timeline.set_filter(TimelineFilter(lanes=frozenset({"steer"}), boundaries=False))
    ids = {timeline.entry(r).message_id for r in range(len(timeline))}
    assert ids == {steering.steer.id, steering.refiled.id}
    assert timeline.filter.describe() == "lanes steer · inbox only"
    timeline.set_filter(TimelineFilter())
    assert len(timeline) == everything


def test_a_live_timeline_reads_like_the_same_log_read_back(steering: SteeringLog) -> None:
    """Folded event by event as the agent wrote them, the timeline has the lines the
    stored file gives for the same events."""
    _header, events = read_session_log(steering.path)
    stored = timeline_of(events[:steering.live_count])
    assert steering.live_lines == [stored.line(i) for i in range(len(stored))]


def test_live_notes_sit_on_the_axis_with_the_durable_entries() -> None:
    timeline = Timeline()
    timeline.note("hold", 1_000, "m1")
    timeline.note("release", 4_500, "m1", SYSTEM, "lapsed")
    assert [timeline.clock(timeline.entry(r)) for r in range(2)] == ["+0:00.000",
                                                                   "+0:03.500"]
    assert "editor closed" in timeline.line(1) and "lapsed" in timeline.line(1)
    timeline.set_filter(TimelineFilter(message="m1", boundaries=False))
    assert len(timeline) == 2


@pytest.mark.parametrize("path", UPSTREAM, ids=lambda p: p.name)
def test_every_stored_upstream_log_reads_as_a_timeline(path: Path) -> None:
    _header, events = read_session_log(path)
    timeline = timeline_of(events)
    sent = [e for e in timeline.entries if e.kind == "sent"]
    assert len(sent) == sum(1 for e in events if e.type == "user/message")
    assert all((e.actor == PERSON) == ((e.source or {}).get("kind") == "user") for e in sent)
    book = receipts_of(events)
    assert all(book.receipt(e.message_id).state == ANSWERED  # type: ignore[union-attr]
               for e in sent if e.turn is not None and (e.source or {}).get("kind") == "user"
               and any(r.kind == "reply" and r.turn == e.turn for r in timeline.entries))
    for row in range(len(timeline)):
        assert timeline.line(row, 80)  # every row draws, at any width
        assert len(timeline.line(row, 80)) <= 80


def test_an_upstream_tool_round_shows_its_turns_steps_and_tools() -> None:
    _header, events = read_session_log(fixture("upstream-logs", "cordis-tool-round.jsonl"))
    timeline = timeline_of(events)
    turn_one = [(e.kind, e.step, e.detail) for e in timeline.entries
                if e.turn == 1 and e.kind in ("step-start", "tool-call")]
    assert turn_one == [
        ("step-start", 1, ""), ("tool-call", 1, "cordis_inspect"),
        ("step-start", 2, ""), ("tool-call", 2, "cordis_mount"),
        ("step-start", 3, ""), ("tool-call", 3, "cordis_unmount"), ("step-start", 4, "")]
    # turns 2 and 3 were recorded only as stream chunks: their requests still show
    requests = {(e.turn, e.step) for e in timeline.entries if e.kind == "request"}
    assert {(2, 1), (3, 1), (3, 2)} <= requests
    assert {e.actor for e in timeline.entries if e.kind in ("request", "reply")} == {MODEL}


def test_pending_items_of_a_stored_log_keep_their_place() -> None:
    from dsh_tui.harness import user_message
    from dsh_tui.harness.session import SessionEvent

    a, b = user_message("a"), user_message("b")
    events = [SessionEvent("agent/inbox/spliced", 0, 10, {
        "target": "next-turn", "start": 0, "inserted": [a.to_json(), b.to_json()]})]
    book = receipts_of(events)
    receipt = book.receipt(b.id)
    assert receipt is not None and receipt.state == PENDING
    assert receipt.label() == "pending · next-turn 2"
