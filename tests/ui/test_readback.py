"""Reading back a long transcript (issue 14): scrolling up keeps a bounded window mounted.

`load older` mounts a page before the first block; once the window holds more than
HIGH_WATER blocks, the newest ones are dropped and the window is detached from the
tail (as after a search), so a person paging through 10,000 items never has more
than HIGH_WATER widgets alive, and the way back down mounts them again."""

from __future__ import annotations

from pathlib import Path

from dsh_tui.compose import open_log
from dsh_tui.harness import dumps_compact, new_world
from dsh_tui.harness.persistence.header import header_line
from dsh_tui.harness.persistence.pages import MAX_PAGES
from dsh_tui.harness.readonly import register_log_agent
from dsh_tui.ui.widgets.blocks import NewerMarker

from .conftest import SIZE, long_log, make_app, screen_text, settle


async def test_scrolling_up_a_long_transcript_keeps_a_bounded_window() -> None:
    ctx = new_world(read_only=True)
    register_log_agent(ctx, {"id": "long", "version": 0, "createdAt": 0}, long_log(25))
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        transcript = app.main.transcript
        # A window smaller than the 50 items, so the read prunes it more than once.
        transcript.HIGH_WATER, transcript.LOW_WATER = 35, 25
        items = len(app.main.selected_view.transcript.items)
        most, pruned = 0, 0
        while transcript.first > 0:
            await transcript.action_load_older()
            await settle(pilot)
            most = max(most, len(transcript.blocks))
            pruned += transcript.end < items
            mounted = [b for b in transcript.children if hasattr(b, "item_index")]
            assert len(mounted) == len(transcript.blocks)  # pruned widgets are unmounted
        assert most <= transcript.HIGH_WATER and pruned
        assert transcript.first == 0 and transcript.detached
        transcript.scroll_home(animate=False, immediate=True)
        await settle(pilot)
        assert "question 1 " in screen_text(app).replace("\n", " ")
        newer = transcript.query_one(NewerMarker)
        assert f"{items - transcript.end:,} later items" in str(newer.render())
        assert sorted(transcript.blocks) == list(range(transcript.first, transcript.end))
        # Back down page by page: the window stays bounded and reaches the tail again.
        while transcript.detached:
            await transcript.load_newer()
            await settle(pilot)
            assert len(transcript.blocks) <= transcript.HIGH_WATER
        assert transcript.end == items
        assert sorted(transcript.blocks) == list(range(transcript.first, transcript.end))
        transcript.focus()
        await pilot.press("end")
        await settle(pilot)
        assert "answer 25" in screen_text(app) and transcript.following


TURNS, PARTS = 20, 10
"""The huge log's turns, and how many pages of `view`'s tail size it spans: far more than
MAX_PAGES, so reading it through drops pages on the way up and reads them again on the way down."""


async def test_view_of_a_huge_log_scrolls_through_all_of_it_a_page_at_a_time(
        tmp_path: Path) -> None:
    """`dsh-tui view` of a log far bigger than a page: scrolling up past the loaded part reads
    the page before it, all the way to the first turn, holding at most MAX_PAGES pages of
    events; scrolling down reads the later pages again, back to the last turn."""
    path = tmp_path / "session.jsonl"
    lines = [dumps_compact(header_line({"id": "huge", "version": 0, "createdAt": 0}))]
    lines += [dumps_compact(event.to_json()) for event in long_log(TURNS)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    page = path.stat().st_size // PARTS
    ctx = open_log(path, tail_bytes=page)
    session = ctx.agents.list()[0].session
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        transcript = app.main.transcript
        assert f"answer {TURNS}" in screen_text(app)
        most, rounds = 0, 0
        while session.skipped_bytes or transcript.first > 0:
            await transcript.action_load_older()
            await settle(pilot)
            most = max(most, len(session.events))
            rounds += 1
            assert rounds < 200
        assert session.events[0].seq == 0 and len(session.pages.pages) <= MAX_PAGES
        events = 4 * TURNS
        assert most <= events * (MAX_PAGES + 1) / PARTS  # never the whole log: a page of slack
        transcript.scroll_home(animate=False, immediate=True)
        await settle(pilot)
        assert "question 1 " in screen_text(app).replace("\n", " ")
        while session.later_bytes or transcript.detached:
            await transcript.load_newer()
            await settle(pilot)
            rounds += 1
            assert rounds < 400
        assert session.events[-1].seq == events - 1
        transcript.scroll_end(animate=False, immediate=True)
        await settle(pilot)
        assert f"answer {TURNS}" in screen_text(app)
