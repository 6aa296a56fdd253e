"""Reading back a long transcript: paging up through it shows every item, in order, and
draws only what comes into view; `dsh-tui view` of a huge log reads its pages in turn."""

from __future__ import annotations

import re
from pathlib import Path

from dsh_tui.compose import open_log
from dsh_tui.harness import dumps_compact, new_world
from dsh_tui.harness.persistence.header import header_line
from dsh_tui.harness.persistence.pages import MAX_PAGES
from dsh_tui.harness.readonly import register_log_agent

from .conftest import SIZE, long_log, make_app, region_text, screen_text, settle


async def test_paging_up_a_long_transcript_shows_every_item_in_order() -> None:
    ctx = new_world(read_only=True)
    register_log_agent(ctx, {"id": "long", "version": 0, "createdAt": 0}, long_log(80))
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        transcript = app.main.transcript
        transcript.focus()
        seen: set[int] = set()
        for _ in range(400):
            shown = region_text(app, transcript)
            numbers = [int(n) for n in re.findall(r"(?:question|answer) (\d+)", shown)]
            assert numbers == sorted(numbers)  # estimates refined as drawn: never out of order
            seen.update(numbers)
            if transcript.scroll_y == 0:
                break
            await pilot.press("pageup")
            await settle(pilot, rounds=1)
        assert seen == set(range(1, 81))  # not one item skipped on the way up
        assert transcript.lines.measured <= 2 * len(transcript.lines.items)
        assert not list(transcript.children)


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
        while session.skipped_bytes or transcript.scroll_y > 0:
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
        while session.later_bytes:
            await transcript.load_newer()
            await settle(pilot)
            rounds += 1
            assert rounds < 400
        assert session.events[-1].seq == events - 1
        transcript.scroll_end(animate=False, immediate=True)
        await settle(pilot)
        assert f"answer {TURNS}" in screen_text(app)
