"""The status line (one notice at a time, gone on time even on an idle app), the edit
hold's words, the `hold_limit` setting, and the receipts the inbox lists (issue 29)."""

from __future__ import annotations

import time
from typing import Any

import pytest

from dsh_tui.harness import user_message
from dsh_tui.harness.holds import HoldBook
from dsh_tui.ui.state.config import ConfigError, parse_config
from dsh_tui.ui.state.hold_view import editor_line, item_badge, title_state, tree_badge
from dsh_tui.ui.state.inbox_rows import RECENT_RECEIPTS, Tombstone, inbox_rows
from dsh_tui.ui.state.notices import StatusNotes
from dsh_tui.ui.state.receipts import ANSWERED, DISCARDED, Receipt

from .conftest import SIZE, add_agent, make_app, world


def test_a_newer_notice_replaces_the_older_and_each_goes_at_its_time() -> None:
    notes = StatusNotes()
    notes.put("removed #a", "information", now=10.0, seconds=3)
    notes.put("undone: removed #a", "information", now=11.0, seconds=3)
    assert notes.current is not None and notes.current.text == "undone: removed #a"
    assert not notes.expire(13.5)  # the first one's time is up, not the shown one's
    assert notes.expire(14.0) and notes.current is None
    assert not notes.expire(20.0)


async def test_the_status_line_clears_on_time_with_nothing_else_happening() -> None:
    ctx, _ = world()
    await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        app.main.note("Removed #q1 (ctrl+z undoes).", seconds=0.3)
        await pilot.pause()
        assert "Removed #q1" in str(app.main.composer.border_subtitle)
        deadline = time.monotonic() + 5
        while app.main.composer.border_subtitle and time.monotonic() < deadline:
            await pilot.pause(0.05)
        assert not app.main.composer.border_subtitle
        assert not app._notifications  # no toast was raised for it


async def test_a_notice_is_never_markup_or_an_escape_sequence() -> None:
    ctx, _ = world()
    await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        app.main.note("[bold]#x[/] is now \x1b[31ma steer")
        await pilot.pause()
        shown = app.main.status_line.text
        assert "[bold]#x[/]" in shown and "\x1b" not in shown


def _holds(*ids: str) -> tuple[HoldBook, list[Any]]:
    now = [100.0]
    book = HoldBook(clock=lambda: now[0])
    holds = [book.place(message_id, 60) for message_id in ids]
    return book, holds


def test_hold_words_before_and_while_the_agent_waits() -> None:
    book, (hold,) = _holds("q1")
    assert item_badge(book.active, "q1", waiting=()) == "held · editing"
    assert item_badge(book.active, "q2", waiting=()) == ""
    assert tree_badge(book.active, ()) == "✎held"
    assert title_state(book.active, ()) == ""
    assert editor_line(hold, ()).startswith("Held: the agent will not claim this item")
    book.begin_wait([hold])  # the driver reached the boundary: the countdown starts
    assert item_badge(book.active, "q1", waiting=("q1",)) == "held · agent waits 60 s"
    assert tree_badge(book.active, ("q1",)) == "✎waits 60s"
    assert title_state(book.active, ("q1",)) == "waits for your edit · goes on in 60 s"
    assert "it goes ahead in 60 s" in editor_line(hold, ("q1",))
    hold.release()
    assert editor_line(hold, ("q1",)) == "" and tree_badge(book.active, ()) == ""


def test_hold_limit_is_a_setting_with_a_clear_error() -> None:
    assert parse_config("").hold_limit == 60
    assert parse_config("hold_limit = 5\n").hold_limit == 5
    assert parse_config("hold_limit = 0\n").hold_limit == 0
    for bad in ("-1", "nan", "inf", '"soon"', "1e999"):
        with pytest.raises(ConfigError, match="hold_limit"):
            parse_config(f"hold_limit = {bad}\n")


def test_the_inbox_lists_what_left_last_with_its_receipt_once() -> None:
    gone = user_message("gone", id="g1")
    taken = user_message("taken", id="t1")
    stones = [Tombstone(gone, "next-turn", 0, "follow-up", "discarded", 9e9),
              Tombstone(taken, "next-turn", 0, "follow-up", "claimed", 9e9)]
    answered = Receipt("t1", state=ANSWERED, turn=2, step=1)
    discarded = Receipt("g1", state=DISCARDED, detail="removed")
    older = [Receipt(f"o{n}", state=ANSWERED, turn=1, step=1) for n in range(5)]
    rows = inbox_rows((), (), stones, paused=False, recent=[answered, discarded, *older])
    kinds = [(row.kind, row.target) for row in rows]
    assert ("tombstone", "next-turn") in kinds  # the removal keeps its undo row
    assert not any(r.kind == "tombstone" and r.tombstone.kind == "claimed" for r in rows)
    receipts = [row.receipt.message_id for row in rows if row.kind == "receipt"]
    assert receipts == ["t1", "o0", "o1"][:RECENT_RECEIPTS]  # g1 is the tombstone above
    header = rows[-RECENT_RECEIPTS - 1]
    assert header.kind == "header" and header.target == "recent"
    assert answered.label() == "answered · turn 2 step 1"


def test_without_receipts_the_claimed_row_stays_as_before() -> None:
    taken = user_message("taken", id="t1")
    stone = Tombstone(taken, "next-turn", 0, "follow-up", "claimed", 9e9)
    rows = inbox_rows((), (), [stone], paused=False)
    assert [r.kind for r in rows][-1] == "tombstone"


def steer(inbox: Any, operations: int) -> None:
    """A person's steering: queue, edit, move, remove (a fixed pseudo-random mix)."""
    import random

    rng = random.Random(3)
    for index in range(operations):
        roll, items = rng.random(), inbox.next_turn
        if roll < 0.4 or len(items) < 5:
            inbox.append("next-turn", user_message(f"item {index}", id=f"m{index}"))
            continue
        item = items[rng.randrange(len(items))]
        if roll < 0.6:
            inbox.replace(item.id, item.with_text(item.text + " (edited)"))
        elif roll < 0.8:
            inbox.move(item.id, "next-turn", rng.randrange(len(items)))
        else:
            inbox.remove(item.id)


async def test_a_big_log_is_read_a_slice_per_flush_to_the_same_receipts(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from dsh_tui.harness import AgentOptions, CreateAgentOptions
    from dsh_tui.ui.state import bridge as bridge_module
    from dsh_tui.ui.state.bridge import Bridge
    from dsh_tui.ui.state.receipts import receipts_of
    from dsh_tui.ui.state.timeline import timeline_of

    monkeypatch.setattr(bridge_module, "READ_BUDGET", 0.0)  # one slice of events per flush
    ctx, _ = world()
    scheduled: list[Any] = []
    bridge = Bridge(ctx, lambda delay, callback: scheduled.append(callback))
    bridge.start()
    handle = await ctx.agents.create(CreateAgentOptions(
        session_id="a", agent_options=AgentOptions(provider="mock", model="mock")))
    steer(handle.agent.inbox, 3_000)
    bridge.flush()
    view = bridge.views["a"]
    assert not bridge.want_reading("a")  # nothing read yet: no fold on the spot
    flushes = 0
    while not view.reading_ready:
        bridge.flush()
        flushes += 1
        assert flushes < 100
    assert flushes > 5  # it took several flushes, each a slice
    events = handle.agent.session.events
    whole = receipts_of(events)
    assert [(r.message_id, r.state, r.target, r.index) for r in whole.all()] == \
        [(r.message_id, r.state, r.target, r.index) for r in view.receipts.all()]
    assert len(view.timeline.entries) == len(timeline_of(events).entries)
    handle.agent.inbox.append("next-turn", user_message("later", id="later"))
    bridge.flush()  # once read, each flush folds what came
    assert view.receipts.get("later") is not None
    bridge.stop()


async def test_an_offer_turned_down_shows_as_tombstoned() -> None:
    from dsh_tui.llm.scripted import text

    ctx, _ = world([text("never")])
    agent = await add_agent(ctx, "planner", "planner")
    ctx.on("agent/pre-step", lambda payload, downstream: {"kind": "reject"})
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        agent.steer(user_message("steer it", id="s1", source={"kind": "user",
                                                                "lane": "steer"}))
        await asyncio_idle(agent)
        for _ in range(4):
            app.bridge.flush()
            await pilot.pause()
        view = app.main.selected_view
        assert view.receipts.get("s1").state == "offered back"
        inbox = app.main.inbox
        inbox.focus()
        inbox.highlighted = next(i for i, row in enumerate(inbox.rows) if row.kind == "unsent")
        await pilot.press("delete")  # forget the offer
        for _ in range(3):
            app.bridge.flush()
            await pilot.pause()
        assert view.receipts.get("s1").state == "tombstoned"
        assert "tombstoned" in str(inbox.rows[-1].receipt.label())


async def asyncio_idle(agent: Any) -> None:
    import asyncio

    await asyncio.wait_for(agent.when_idle(), 5)
