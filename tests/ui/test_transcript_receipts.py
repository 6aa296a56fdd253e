"""Receipts on the transcript's sent messages, and the links between a message in the
transcript and its history in the inbox timeline, both ways (issue 29).

A live agent driven through the public surface (a scripted model whose request waits on
a gate), and a stored log of thousands of turns in `view`: the header of each sent
message says how it reached the model, from the same reading as the inbox's receipts;
the timeline's enter lands on the message's own item by its event seq, however far back;
a click on a message's receipt (or enter on the marked one) opens its history.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from dsh_tui.compose import open_log
from dsh_tui.harness import new_world, user_message
from dsh_tui.harness.readonly import register_log_agent
from dsh_tui.harness.session import SessionEvent
from dsh_tui.llm.scripted import hang, text
from dsh_tui.ui.screens.timeline import TimelineScreen
from dsh_tui.ui.state.receipts import ReceiptBook
from dsh_tui.ui.state.text import short_id
from dsh_tui.ui.state.transcript import Stamp, TranscriptModel

from .conftest import (
    SIZE,
    add_agent,
    idle,
    long_log,
    make_app,
    region_text,
    screen_text,
    settle,
    wait_until,
    world,
)
from .steering_log import write_steering_log


def _header(app: Any, message_id: str) -> str:
    """The drawn header of the transcript item of `message_id` (its lines before the
    message's text, joined: a long receipt wraps), "" while there is no such item."""
    transcript = app.main.transcript
    items = transcript.lines.items
    index = next((i for i, item in enumerate(items) if item.message_id == message_id), None)
    if index is None:
        return ""
    lines = transcript.item_text(index)
    body = items[index].current_text().splitlines()[0][:20]
    end = next(n for n, line in enumerate(lines) if line.startswith(body))
    return " ".join(line.strip() for line in lines[:end])


# -- the model: a seq's place, and a receipt on one item ----------------------------------------

def test_each_event_that_made_items_maps_to_its_first_item() -> None:
    model = TranscriptModel()
    model.note("an app note, made by no event")
    model.apply_all(long_log(3))
    user = [i.index for i in model.items if i.kind == "user"]
    assert [model.item_at_seq(seq) for seq in (1, 5, 9)] == user  # the user/message seqs
    assert model.item_at_seq(0) == user[0] - 1  # turn 1's divider
    assert model.item_at_seq(3, exact=True) == user[1] - 2  # turn/end 1: its divider
    assert model.item_at_seq(12) is None  # after the last event that made an item
    assert model.item_at_seq(-5) == 1  # before the first: the first made by an event


def test_a_receipt_marks_only_its_item_changed() -> None:
    model = TranscriptModel()
    model.apply_all(long_log(5))
    model.drain()
    item = next(i for i in model.items if i.message_id == "u3")
    version = item.version
    stamp = Stamp("answered", "turn 3 → sent → answered", "u3", 9)
    assert model.set_receipt(9, stamp)
    assert model.drain() == {item.index} and item.version == version + 1
    assert not model.set_receipt(9, stamp)  # the same receipt again: nothing to draw
    assert not model.set_receipt(10, stamp)  # seq 10 made a reply, not a message
    assert model.drain() == set()


def test_the_trail_of_a_message_from_claim_to_answer() -> None:
    def event(type_: str, seq: int, data: dict[str, Any]) -> SessionEvent:
        return SessionEvent(type_, seq, 1_000 + seq, data)

    message = {"id": "m1", "role": "user", "content": [{"type": "text", "text": "hi"}],
               "source": {"kind": "user", "lane": "follow-up"}}
    book = ReceiptBook()
    steps = [
        (event("agent/inbox/spliced", 0, {"target": "next-turn", "start": 0,
                                           "removedCount": 0, "inserted": [message]}),
         "pending · next-turn 1"),
        (event("turn/start", 1, {"turn": 1}), "pending · next-turn 1"),
        (event("agent/inbox/spliced", 2, {"target": "next-turn", "start": 0,
                                           "removedCount": 1, "inserted": []}),
         "claimed turn 1 step 1"),
        (event("step/start", 3, {"turn": 1, "step": 1}), "claimed turn 1 step 1"),
        (event("user/message", 4, message),
         "claimed turn 1 step 1 → sent → awaiting the model"),
        (event("assistant/chunk", 5, {"turn": 1, "step": 1, "chunk": {
            "type": "text-delta", "index": 0, "text": "h"}}),
         "claimed turn 1 step 1 → sent in request 1 → answering"),
        (event("assistant/message", 6, {"turn": 1, "step": 1, "message": {
            "role": "assistant", "content": [{"type": "text", "text": "hello"}]}}),
         "claimed turn 1 step 1 → sent in request 1 → answered"),
    ]
    for one, expected in steps:
        book.apply(one)
        book.settle()
        found = book.get("m1")
        assert found is not None and found.trail() == expected, one.type
    assert book.drain_changed() == {"m1"}
    assert book.drain_changed() == set()


# -- live: the header follows the message -------------------------------------------------------

async def test_a_messages_receipt_in_the_transcript_follows_it_to_its_answer() -> None:
    gate = asyncio.Event()

    async def gated(_request: Any) -> Any:
        await gate.wait()
        return text("the answer")

    ctx, _ = world([text("first answer"), gated])
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        agent.followup(user_message("the first question", id="u1"))
        await idle(pilot, agent)
        transcript = app.main.transcript
        await wait_until(pilot, lambda: "answered" in _header(app, "u1"))
        assert "claimed turn 1 step 1 → sent in request 1 → answered" in _header(app, "u1")
        agent.followup(user_message("the second question", id="u2"))
        # Sent, the model not answering yet: claimed, sent, awaiting.
        await wait_until(pilot, lambda: any(i.message_id == "u2"
                                            for i in transcript.lines.items))
        await settle(pilot)
        await wait_until(pilot, lambda: "awaiting" in _header(app, "u2"))
        assert "→ claimed turn 2 step 1 → sent → awaiting the model" in _header(app, "u2")
        assert "✓ claimed turn 1 step 1" in _header(app, "u1")  # the other keeps its own
        assert "awaiting" in region_text(app, transcript)  # drawn, not only kept
        gate.set()
        await idle(pilot, agent)
        await wait_until(pilot, lambda: "answered" in _header(app, "u2"))
        assert "✓ claimed turn 2 step 1 → sent in request 1 → answered" in \
            _header(app, "u2")


async def test_a_message_the_model_never_answered_says_why() -> None:
    ctx, _ = world([hang("partial")])
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        agent.followup(user_message("will be cut", id="u1"))
        await wait_until(pilot, lambda: any(i.message_id == "u1" and i.receipt is not None
                                            and "answering" in i.receipt.text
                                            for i in app.main.transcript.lines.items))
        await settle(pilot)
        assert "sent in request 1 → answering" in _header(app, "u1")
        agent.cancel()
        await idle(pilot, agent)
        await wait_until(pilot, lambda: "no answer" in _header(app, "u1"))
        assert "→ sent in request 1 → no answer: turn 1 aborted" in _header(app, "u1")


async def test_a_receipt_change_draws_that_message_again_and_nothing_else() -> None:
    ctx = new_world(read_only=True)
    register_log_agent(ctx, {"id": "long", "version": 0, "createdAt": 0}, long_log(400))
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        view = app.main.selected_view
        await wait_until(pilot, lambda: view.reading_ready)
        await settle(pilot)
        transcript = app.main.transcript
        items = view.transcript.items
        last = max(i.index for i in items if i.kind == "user")
        await wait_until(pilot, lambda: items[last].receipt is not None)
        assert "sent → answered" in transcript.item_text(last)[0]
        exact = [i for i in range(len(items)) if transcript.lines.is_exact(i)]
        measured = transcript.lines.measured
        seq = items[last].receipt.seq
        view.transcript.set_receipt(seq, Stamp("sent", "turn 400 → sent → no answer: a "
                                               "test", items[last].receipt.message_id, seq))
        transcript.request_sync()
        await wait_until(pilot, lambda: "no answer: a test" in region_text(app, transcript))
        assert transcript.lines.measured == measured + 1  # that item alone, drawn again
        assert [i for i in exact if not transcript.lines.is_exact(i)] == []


# -- the links, both ways ----------------------------------------------------------------------

async def _open_on_entry(pilot: Any, needle: str) -> TimelineScreen:
    """f5, then the cursor walked from the top to the entry whose detail has `needle`."""
    await pilot.press("f5")
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, TimelineScreen))
    screen = pilot.app.screen
    assert isinstance(screen, TimelineScreen)
    await wait_until(pilot, lambda: "reading the log" not in screen_text(pilot.app))
    await pilot.press("home")
    await pilot.pause()
    for _ in range(80):
        if needle in str(screen.query_one("#timeline-detail").render()):
            return screen
        await pilot.press("down")
        await pilot.pause()
    raise AssertionError(f"no entry shows {needle!r}")


async def test_the_timeline_jumps_to_a_message_thousands_of_items_back() -> None:
    ctx = new_world(read_only=True)
    register_log_agent(ctx, {"id": "long", "version": 0, "createdAt": 0}, long_log(2500))
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        transcript = app.main.transcript
        assert transcript.following and "answer 2500" in region_text(app, transcript)
        await _open_on_entry(pilot, "#u3 sent")
        await pilot.press("enter")
        await wait_until(pilot, lambda: not isinstance(app.screen, TimelineScreen))
        await wait_until(pilot, lambda: transcript.marked is not None)
        await settle(pilot)
        items = app.main.selected_view.transcript.items
        hit = transcript.marked
        assert items[hit].message_id == "u3" and items[hit].kind == "user"
        assert not transcript.following  # scrolled thousands of lines up, and staying
        first, _lines = transcript.region_of(hit)
        assert transcript.scroll_y <= first < transcript.scroll_y + transcript.size.height
        shown = region_text(app, transcript)
        assert "question 3" in shown and "answer 2500" not in shown
        assert "#u3: where it entered the model's context (answered · turn 3" in \
            app.main.status_line.text
        assert transcript.has_focus
        # And back: enter on the marked message opens its history, filtered to it, the
        # cursor on the entry where it was sent.
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, TimelineScreen))
        screen = app.screen
        assert isinstance(screen, TimelineScreen)
        await wait_until(pilot, lambda: "message #u3" in screen_text(app))
        entry = screen.cursor_entry()
        assert entry is not None and (entry.kind, entry.message_id) == ("sent", "u3")


async def test_an_entry_that_is_no_message_steps_to_its_moment() -> None:
    ctx = new_world(read_only=True)
    register_log_agent(ctx, {"id": "long", "version": 0, "createdAt": 0}, long_log(300))
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await _open_on_entry(pilot, "turn-end")  # turn 1 ends: its divider
        await pilot.press("enter")
        await wait_until(pilot, lambda: not isinstance(app.screen, TimelineScreen))
        transcript = app.main.transcript
        await wait_until(pilot, lambda: transcript.marked is not None)
        item = app.main.selected_view.transcript.items[transcript.marked]
        assert (item.kind, item.turn) == ("turn-end", 1)
        assert "seq 3: the transcript at this moment" in app.main.status_line.text


async def test_a_click_on_a_messages_receipt_opens_its_history() -> None:
    ctx, _ = world([text("first answer"), text("second answer")])
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        agent.followup(user_message("the first question", id="u1"))
        await idle(pilot, agent)
        agent.followup(user_message("the second question", id="u2"))
        await idle(pilot, agent)
        transcript = app.main.transcript
        await wait_until(pilot, lambda: "answered" in _header(app, "u1"))
        items = transcript.lines.items
        index = next(i for i, item in enumerate(items) if item.message_id == "u1")
        first, _lines = transcript.region_of(index)
        region = transcript.content_region
        row = region.y + first - round(transcript.scroll_y)
        text_row = next(n for n, line in enumerate(transcript.item_text(index))
                        if line.startswith("the first question"))
        await pilot.click(offset=(region.x + 4, row + text_row))  # its text: nothing
        await pilot.pause()
        assert not isinstance(app.screen, TimelineScreen)
        await pilot.click(offset=(region.x + 4, row))  # its header, with the receipt
        await wait_until(pilot, lambda: isinstance(app.screen, TimelineScreen))
        screen = app.screen
        assert isinstance(screen, TimelineScreen)
        await wait_until(pilot, lambda: "message #u1" in screen_text(app))
        shown = screen_text(app)
        assert "#u2" not in shown and "claimed    #u1" in shown
        entry = screen.cursor_entry()
        assert entry is not None and (entry.kind, entry.message_id) == ("sent", "u1")
        # Nothing marked: enter in the transcript means the last message on screen.
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, TimelineScreen))
        transcript.focus()
        await pilot.pause()
        assert transcript.marked is None
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, TimelineScreen))
        await wait_until(pilot, lambda: "message #u2" in screen_text(app))
        assert "#u1" not in screen_text(app)


async def test_a_discarded_message_steps_to_the_moment_it_was_removed() -> None:
    gate = asyncio.Event()

    async def gated(_request: Any) -> Any:
        await gate.wait()
        return text("first answer")

    ctx, _ = world([gated])
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        agent.followup(user_message("the first question", id="u1"))
        await wait_until(pilot, lambda: "awaiting" in _header(app, "u1"))
        agent.inbox.append("next-turn", user_message("never mind", id="u2"))
        agent.inbox.remove("u2")
        gate.set()
        await idle(pilot, agent)
        await wait_until(pilot, lambda: "answered" in _header(app, "u1"))
        assert _header(app, "u2") == ""  # never sent: no item of its own
        await _open_on_entry(pilot, "#u2 remove")
        await pilot.press("enter")
        await wait_until(pilot, lambda: not isinstance(app.screen, TimelineScreen))
        transcript = app.main.transcript
        await wait_until(pilot, lambda: transcript.marked is not None)
        item = app.main.selected_view.transcript.items[transcript.marked]
        assert (item.kind, item.text) == ("text", "first answer")  # what came next
        status = app.main.status_line.text
        assert "#u2 never entered the model's context (discarded" in status
        assert "the transcript when this happened" in status


async def test_a_message_offered_back_by_a_crash_lands_where_it_was_sent_again(
        tmp_path: Path) -> None:
    log = await write_steering_log(tmp_path)
    moved = short_id(log.moved.id)
    ctx = open_log(log.path)
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        view = app.main.selected_view
        await wait_until(pilot, lambda: view.reading_ready)
        # Its first claim (turn 2, cut by the crash) steps to where it did enter the
        # model's context: its one user message, sent again after the put-back.
        await _open_on_entry(pilot, f"#{moved} claim")
        await pilot.press("enter")
        await wait_until(pilot, lambda: not isinstance(app.screen, TimelineScreen))
        transcript = app.main.transcript
        await wait_until(pilot, lambda: transcript.marked is not None)
        items = view.transcript.items
        assert items[transcript.marked].message_id == log.moved.id
        assert [i.index for i in items if i.message_id == log.moved.id] == \
            [transcript.marked]
        assert "where it entered the model's context (answered" in \
            app.main.status_line.text
        header = _header(app, log.moved.id)
        assert "✓ claimed turn 3 step 1 → sent in request 1 → answered" in header, header


async def test_the_palette_opens_the_history_of_the_last_message_on_screen() -> None:
    ctx, _ = world([text("an answer")])
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        agent.followup(user_message("the question", id="u1"))
        await idle(pilot, agent)
        await wait_until(pilot, lambda: "answered" in _header(app, "u1"))
        app.run_palette_action("message_history")  # where the palette's enter goes
        await wait_until(pilot, lambda: isinstance(app.screen, TimelineScreen))
        await wait_until(pilot, lambda: "message #u1" in screen_text(app))
