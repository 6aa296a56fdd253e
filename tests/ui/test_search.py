"""Transcript search: the pure matcher, and ctrl+f in the app on a long session and a live one."""

from __future__ import annotations

from typing import Any

from dsh_tui.harness import new_world
from dsh_tui.harness.readonly import register_log_agent
from dsh_tui.harness.session import SessionEvent
from dsh_tui.llm.scripted import text
from dsh_tui.ui.state.search import SearchState, find_matches
from dsh_tui.ui.state.transcript import TranscriptModel
from dsh_tui.ui.widgets.search_bar import SearchBar

from .conftest import (
    SIZE,
    add_agent,
    idle,
    long_log,
    make_app,
    msg,
    screen_text,
    settle,
    world,
)


def test_matches_follow_smart_case_and_cover_tool_calls() -> None:
    model = TranscriptModel()
    model.apply_all(long_log(3, {2}))
    model.apply(SessionEvent("tool/call", 99, 2_000, {
        "callId": "c1", "name": "grep", "arguments": {"pattern": "needle"}}))
    texts = {i.index: i.current_text() for i in model.items}
    lower = find_matches(model.items, "needle")
    assert [texts.get(i) for i in lower[:1]] == ["answer 2 mentions the Needle here"]
    assert model.items[lower[-1]].kind == "tool"  # found in the tool's arguments
    assert find_matches(model.items, "Needle") == lower[:1]  # a capital: exact case
    assert find_matches(model.items, "NEEDLE") == []
    assert find_matches(model.items, "") == []


def test_searching_again_reads_only_the_items_added_or_changed_since() -> None:
    model = TranscriptModel()
    model.apply_all(long_log(50, {3, 40}))
    state = SearchState()
    read: list[int] = []
    import dsh_tui.ui.state.search as search

    original = search.matches_item

    def counted(item: Any, query: str) -> bool:
        read.append(item.index)
        return original(item, query)

    search.matches_item = counted  # type: ignore[assignment]
    try:
        state.refresh("a", model.items, "needle")
        assert len(read) == len(model.items) and len(state.matches) == 2
        read.clear()
        state.refresh("a", model.items, "needle")  # nothing changed: nothing read
        assert read == []
        grown = len(model.items)
        model.apply_all(ev for ev in long_log(51, {51})[-4:])
        model.items[state.matches[0]].version += 1  # an item changed (a stream, a toggle)
        state.refresh("a", model.items, "needle")
        assert sorted(read) == sorted([state.matches[0], *range(grown, len(model.items))])
        assert len(state.matches) == 3
        read.clear()
        state.refresh("a", model.items, "other")  # a new query reads everything
        assert len(read) == len(model.items)
    finally:
        search.matches_item = original  # type: ignore[assignment]


def test_stepping_starts_at_the_newest_match_and_wraps() -> None:
    model = TranscriptModel()
    model.apply_all(long_log(10, {2, 5, 9}))
    state = SearchState()
    state.refresh("a", model.items, "needle")
    assert state.status() == "3 matches"
    newest, wrapped = state.step(older=True)
    assert state.status() == "3 of 3" and not wrapped
    assert "answer 9" in model.items[newest].current_text()
    state.step(older=True)
    state.step(older=True)
    item, wrapped = state.step(older=True)
    assert wrapped and item == newest
    item, wrapped = state.step(older=False)
    assert wrapped and "answer 2" in model.items[item].current_text()
    # Searching again keeps the current match when it still matches.
    state.refresh("a", model.items, "needle")
    assert state.item == item
    state.refresh("a", model.items, "nothing like it")
    assert state.status() == "no match" and state.step(older=True) == (None, False)


def search_border(transcript: Any, index: int) -> bool:
    """Whether item `index` is drawn with the search match's border."""
    return transcript.item_rows(index)[0].lead[0].text == "█"


async def test_ctrl_f_finds_a_match_thousands_of_items_back_and_end_returns() -> None:
    ctx = new_world(read_only=True)
    register_log_agent(ctx, {"id": "long", "version": 0, "createdAt": 0},
                       long_log(2500, {3, 2400}))
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        transcript = app.main.transcript
        items = app.main.selected_view.transcript.items
        await pilot.press("ctrl+f")
        bar = app.query_one("#search", SearchBar)
        assert bar.is_open and bar.input.has_focus
        await pilot.press(*"needle")
        await settle(pilot)
        # The newest match (turn 2,400) is a few hundred items back: revealed and marked.
        assert "2 of 2" in str(bar.query_one("#search-status").render())
        hit = transcript.marked
        assert hit is not None and "answer 2400 mentions" in items[hit].current_text()
        assert search_border(transcript, hit)
        assert "answer 2400 mentions the Needle" in screen_text(app)
        # enter: the older match, at turn 3, ~10,000 items back: a scroll there, drawing
        # only what shows on the way (the items in between keep their estimated heights).
        await pilot.press("enter")
        await settle(pilot)
        hit = transcript.marked
        assert hit is not None and "answer 3 mentions" in items[hit].current_text()
        assert "answer 3 mentions the Needle" in screen_text(app)
        assert "1 of 2" in str(bar.query_one("#search-status").render())
        assert not transcript.following and transcript.lines.measured < 200
        first, _height = transcript.region_of(hit)
        assert transcript.scroll_y <= first < transcript.scroll_y + transcript.size.height
        # escape closes the bar (not the agent), end goes back to the live tail.
        await pilot.press("escape")
        await settle(pilot)
        assert not bar.is_open and transcript.has_focus and transcript.marked is None
        await pilot.press("end")
        await settle(pilot)
        assert transcript.following and "answer 2500" in screen_text(app)


async def test_search_in_a_live_agent_sees_new_output_and_reports_no_match() -> None:
    ctx, _ = world([text("the first reply"), text("a reply about [inject] markup")])
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        agent.followup(msg("hello", "m1"))
        await idle(pilot, agent)
        await pilot.press("ctrl+f", *"[inject]")
        await settle(pilot)
        bar = app.query_one("#search", SearchBar)
        assert "no match" in str(bar.query_one("#search-status").render())
        assert bar.has_class("-no-match")
        agent.followup(msg("again", "m2"))
        await idle(pilot, agent)
        await pilot.press("enter")  # searching again sees the reply that arrived since
        await settle(pilot)
        assert "1 of 1" in str(bar.query_one("#search-status").render())
        hit = app.main.transcript.marked
        assert hit is not None and search_border(app.main.transcript, hit)
        assert agent.status == "idle" and not agent.inbox.has_pending


async def test_new_output_waits_below_a_far_match_being_read() -> None:
    replies = [text("the needle is here"), *(text(f"reply {n}") for n in range(1, 14))]
    ctx, _ = world(replies)
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        transcript = app.main.transcript
        for n in range(13):
            agent.followup(msg(f"question {n}", f"m{n}"))
            await idle(pilot, agent)
        await pilot.press("ctrl+f", *"needle")
        await settle(pilot)
        assert not transcript.following and transcript.marked is not None
        top = transcript.scroll_y
        agent.followup(msg("one more", "m-last"))
        await idle(pilot, agent)
        await settle(pilot)
        assert transcript.scroll_y == top and "reply 13" not in screen_text(app)
        assert "new output below" in screen_text(app)
        await pilot.press("escape", "end")
        await settle(pilot)
        assert transcript.following and "reply 13" in screen_text(app)


async def test_search_highlights_the_match_not_the_whole_block() -> None:
    ctx, _model = world([text("fine")])
    agent = await add_agent(ctx, "a", "a")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        app.main.select_agent("a")
        agent.followup(msg("look for the needle in this haystack", "m1"))
        await idle(pilot, agent)
        await pilot.press("ctrl+f", *"needle")
        await settle(pilot)
        transcript = app.main.transcript
        (user,) = [item.index for item in transcript.lines.items if item.kind == "user"]
        assert transcript.marked == user and search_border(transcript, user)

        def reversed_text() -> list[str]:
            return [segment.text for row in transcript.item_rows(user) for segment in row.body
                    if segment.style is not None and segment.style.reverse]

        assert reversed_text() == ["needle"]
        await pilot.press("escape")
        await settle(pilot)
        assert reversed_text() == [] and not search_border(transcript, user)
