"""Reading back in slices (issue 14): what a person sees stays whole while the work is cut up.

A page of older items is mounted hidden, a few blocks per tick, and shown in one
frame; a search far back builds its window the same way; the event log formats the
newest lines of a reload at once and the older ones a slice per tick. These tests
check what must not change for that: every item in order with no gap or duplicate at
a page seam, each older match landed on in turn, exactly the matching log lines.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from dsh_tui.harness import new_world
from dsh_tui.harness.readonly import register_log_agent
from dsh_tui.harness.session import SessionEvent
from dsh_tui.ui.widgets.event_log import FIRST_LINES, format_entry, matches
from dsh_tui.ui.widgets.search_bar import SearchBar

from .conftest import SIZE, long_log, make_app, screen_text, settle, wait_until


@asynccontextmanager
async def reading(*logs: tuple[str, list[Any]]) -> AsyncIterator[tuple[Any, Any]]:
    """The read-only app over saved logs (an agent per `(id, events)`), settled."""
    ctx = new_world(read_only=True)
    for agent_id, events in logs:
        register_log_agent(ctx, {"id": agent_id, "version": 0, "createdAt": 0}, events)
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        yield app, pilot


def _mounted_items(transcript: object) -> list[int]:
    """The item indexes of the blocks mounted in the pane, in screen order."""
    return [child.item_index for child in transcript.children  # type: ignore[attr-defined]
            if hasattr(child, "item_index")]


async def test_every_page_of_older_items_joins_the_window_in_order_and_is_shown() -> None:
    async with reading(("long", long_log(20))) as (app, pilot):
        transcript = app.main.transcript
        items = app.main.selected_view.transcript.items
        pages = 0
        while transcript.first > 0:
            first = transcript.first
            await transcript.action_load_older()  # `home`: the page before the first
            await settle(pilot)
            pages += 1
            assert transcript.first == max(0, first - transcript.PAGE)
            # No gap, no duplicate, no block left hidden at the seam.
            assert _mounted_items(transcript) == list(range(transcript.first, transcript.end))
            assert sorted(transcript.blocks) == list(range(transcript.first, transcript.end))
            assert not transcript.query(".-pending")
            # The new page is what the pane shows: its first item at the top.
            top = transcript.blocks[transcript.first]
            # (below the marker line of the items still before it, and its own top margin)
            assert transcript.scroll_y == 0 and top.region.y <= transcript.content_region.y + 2
        assert pages >= 4 and len(transcript.blocks) <= transcript.HIGH_WATER < len(items)
        assert "question 1" in screen_text(app)


async def test_scrolling_past_the_top_keeps_the_item_read_in_place() -> None:
    async with reading(("long", long_log(20))) as (app, pilot):
        transcript = app.main.transcript
        transcript.scroll_home(animate=False, immediate=True)
        await settle(pilot)
        first = transcript.first
        anchor = transcript.blocks[first]
        await transcript.load_older()  # what scrolling up past the top does
        await settle(pilot)
        assert transcript.first == first - transcript.PAGE
        assert _mounted_items(transcript) == list(range(transcript.first, transcript.end))
        # The page went in above: the item being read is still at the top.
        assert transcript.scroll_y > 0
        assert abs(anchor.region.y - transcript.content_region.y) <= 1


async def test_search_lands_on_each_older_match_in_turn_far_back() -> None:
    needles = (2, 40, 90, 140)
    async with reading(("long", long_log(150, needles))) as (app, pilot):
        transcript = app.main.transcript
        items = app.main.selected_view.transcript.items
        await pilot.press("ctrl+f", *"needle")
        await settle(pilot)
        bar = app.query_one("#search", SearchBar)
        for turn in reversed(needles):  # newest first, then older and older
            hit = transcript.marked
            assert hit is not None and f"answer {turn} mentions" in items[hit].current_text()
            assert transcript.first <= hit < transcript.end
            assert transcript.blocks[hit].has_class("-search-hit")
            assert not transcript.query(".-pending")
            assert _mounted_items(transcript) == list(range(transcript.first, transcript.end))
            assert f"answer {turn} mentions the Needle" in screen_text(app)
            await pilot.press("enter")
            await settle(pilot)
        assert "wrapped" in str(bar.query_one("#search-status").render())
        await pilot.press("escape")
        await settle(pilot)
        assert transcript.has_focus and transcript.marked is None


async def test_the_event_log_shows_exactly_the_matching_lines_after_a_reload() -> None:
    async with reading(("long", long_log(150))) as (app, pilot):
        await pilot.press("f2")
        await settle(pilot)
        log = app.main.event_log
        bridge = app.bridge

        def expected(word: str) -> list[str]:
            entries = [e for e in bridge.entries_newest_first()
                       if e.agent_id == "long" and word in e.type]
            return [format_entry(e, with_agent=False) for e in reversed(entries)]

        for word in ("turn", "message", "turn/end"):
            log.set_filter(word)
            wanted = expected(word)
            assert len(wanted) > FIRST_LINES or word == "turn/end"
            shown = list(log.log_widget.lines)
            assert shown == wanted[-len(shown):]  # the newest first, at once
            await wait_until(pilot, lambda w=wanted: list(log.log_widget.lines) == w)
            # Still showing its end, where the newest lines are.
            await wait_until(pilot, lambda: 0 < log.log_widget.scroll_y
                             == log.log_widget.max_scroll_y)


@pytest.mark.parametrize("first", ["page", "search"])
async def test_a_search_far_back_while_a_page_is_mounted_leaves_one_whole_window(
        first: str) -> None:
    # `home` mounts its page a slice per tick; a search step (enter) far back builds its
    # window hidden, then swaps it in. Whichever starts first, the page gives way: no
    # error, no block of it left behind.
    async with reading(("long", long_log(60, (3,)))) as (app, pilot):
        transcript = app.main.transcript
        items = app.main.selected_view.transcript.items
        needle = next(i.index for i in items if "Needle" in i.current_text())
        async def pending() -> None:
            for _ in range(400):  # (not the pilot's pause: it waits for the pane's queue)
                if transcript.query(".-pending"):
                    return
                await asyncio.sleep(0.002)

        if first == "search":
            transcript.reveal(needle)
            await pending()  # the search's window is being built (its bounds are set)
            transcript.PAGE = 40  # a page still mounting when that window is swapped in
        page = asyncio.ensure_future(transcript.action_load_older())
        await pending()
        if first == "page":
            transcript.reveal(needle)
        await page
        await wait_until(pilot, lambda: transcript.marked == needle)
        await settle(pilot)
        assert transcript.first <= needle < transcript.end < len(items)
        assert _mounted_items(transcript) == list(range(transcript.first, transcript.end))
        assert sorted(transcript.blocks) == list(range(transcript.first, transcript.end))
        assert not transcript.query(".-pending")
        assert "answer 3 mentions the Needle" in screen_text(app)


async def test_focus_on_the_transcript_restyles_neither_its_blocks_nor_other_panes() -> None:
    # A rule naming a pane with :focus-within marks the pane so; Textual then restyles the
    # pane's whole subtree on every focus change (main.tcss keeps that rule apart).
    async with reading(("long", long_log(20))) as (app, pilot):
        transcript = app.main.transcript
        assert not transcript._has_focus_within and not app.main.inbox._has_focus_within
        restyled: list[object] = []
        update_nodes = app.stylesheet.update_nodes

        def counting(nodes, animate=False):  # type: ignore[no-untyped-def]
            nodes = list(nodes)
            restyled.extend(nodes)
            return update_nodes(nodes, animate=animate)

        app.stylesheet.update_nodes = counting  # type: ignore[method-assign]
        for _ in range(2):
            transcript.focus()
            await settle(pilot)
            app.main.composer.focus()
            await settle(pilot)
        assert restyled and not any(n in transcript.blocks.values() for n in restyled)


async def test_the_search_bar_and_the_event_log_open_over_the_panes_without_resizing_them(
) -> None:
    # Opening either took rows from the panes: a layout of the whole screen that drew the
    # agent tree, the inbox and the transcript (and arranged every mounted block) again,
    # twice per search and twice per f2 (soak read-back). The search bar is drawn over the
    # composer, the event log over the bottom of the panes: the tree and the inbox keep
    # their size and their lines; the centre column leaves the log's rows to it, so the
    # transcript still ends, with its newest item, just above the log.
    async with reading(("long", long_log(20))) as (app, pilot):
        main = app.main
        tree, inbox, transcript = main.agent_tree, main.inbox, main.transcript
        log, bar, composer = main.event_log, main.search_bar, main.composer
        dropped: list[str] = []
        tree_invalidate, inbox_clear = tree._invalidate, inbox._clear_caches
        tree._invalidate = lambda: (dropped.append("tree"), tree_invalidate())[1]
        inbox._clear_caches = lambda: (dropped.append("inbox"), inbox_clear())[1]
        regions = (tree.region, inbox.region, transcript.region)
        sized: list[object] = []
        for widget in (tree, inbox, transcript):
            original = widget._size_updated

            def counting(*args: Any, _w: Any = widget, _o: Any = original, **kw: Any) -> Any:
                changed = _o(*args, **kw)
                if changed:
                    sized.append(_w)
                return changed

            widget._size_updated = counting  # type: ignore[method-assign]
        for _ in range(2):
            await pilot.press("ctrl+f", *"question 2")
            await settle(pilot)
            assert bar.region == composer.region  # over the composer, the panes as they were
            assert (tree.region, inbox.region, transcript.region) == regions
            assert "question 2" in screen_text(app) and main.focused is bar.input
            await pilot.press("escape")
            await settle(pilot)
            assert not bar.display and not bar.region
            await pilot.press("end")
            await pilot.press("f2")
            await settle(pilot)
            assert (tree.region, inbox.region) == regions[:2]
            assert log.region.y > tree.region.y and log.region.bottom == tree.region.bottom
            # The centre column gives the log its rows: the transcript ends above it, its
            # newest item shown there.
            assert transcript.region.bottom == log.region.y
            last = transcript.blocks[transcript.end - 1]
            assert transcript.scroll_y == transcript.max_scroll_y > 0
            assert last.region.bottom <= transcript.content_region.bottom
            assert "answer 20" in screen_text(app)
            await pilot.press("f2")
            await settle(pilot)
            assert (tree.region, inbox.region, transcript.region) == regions
        assert sized.count(tree) == sized.count(inbox) == 0 and not dropped


async def test_end_after_reading_back_builds_the_tail_behind_the_part_read() -> None:
    # `end` far back: the part read stays on screen while the tail is built hidden, then
    # the tail replaces it in one go, followed, with every item in order.
    async with reading(("long", long_log(60, (3,)))) as (app, pilot):
        transcript = app.main.transcript
        items = app.main.selected_view.transcript.items
        needle = next(i.index for i in items if "Needle" in i.current_text())
        transcript.reveal(needle)
        await wait_until(pilot, lambda: transcript.marked == needle)
        await settle(pilot)
        assert transcript.detached
        transcript.action_follow()
        for _ in range(400):  # (not the pilot's pause: it waits for the pane's queue)
            if transcript.query(".-pending"):
                break
            await asyncio.sleep(0.005)
        assert transcript.query(".-pending")
        assert "answer 3 mentions the Needle" in screen_text(app)  # still what was read
        await wait_until(pilot, lambda: not transcript.detached
                         and not transcript.query(".-pending"))
        await settle(pilot)
        assert transcript.end == len(items) and transcript.following
        assert _mounted_items(transcript) == list(range(transcript.first, transcript.end))
        assert transcript.scroll_y == transcript.max_scroll_y > 0
        assert "answer 60" in screen_text(app) and "Needle" not in screen_text(app)


def _log_with_chunks(turns: int) -> list[Any]:
    """`long_log` with each answer streamed first: three `assistant/chunk` events a turn."""
    events: list[Any] = []
    for event in long_log(turns):
        if event.type == "assistant/message":
            for part in range(3):
                events.append(SessionEvent("assistant/chunk", 0, 0, {
                    "turn": event.data["turn"], "step": 1,
                    "chunk": {"type": "text", "text": f"part {part} "}}))
        events.append(event)
    return [SessionEvent(e.type, seq, 1_000 + seq, e.data) for seq, e in enumerate(events)]


async def test_an_event_log_reload_makes_entries_only_for_the_lines_it_shows() -> None:
    # The rings keep lines as numbers; a reload used to make an entry of every line of
    # both rings (10,000) to test it. Now lines of other types and agents are skipped by
    # their numbers, and the chunk ring (only `assistant/chunk` lines) is skipped whole
    # when the filter hides chunks (the default, `-chunk`). The lines shown are exactly
    # the matching lines of both rings, in order.
    async with reading(("long", _log_with_chunks(60)),
                       ("other", _log_with_chunks(9))) as (app, pilot):
        app.main.select_agent("long")
        bridge = app.bridge
        assert len(bridge.chunk_log) >= 180
        made: dict[str, int] = {"log": 0, "chunk_log": 0}
        for name in made:
            ring = getattr(bridge, name)
            make = ring._make

            def counting(*args: Any, _make: Any = make, _name: str = name) -> Any:
                made[_name] += 1
                return _make(*args)

            ring._make = counting
        await pilot.press("f2")
        await settle(pilot)
        log = app.main.event_log

        def expected(words: str) -> list[str]:
            entries = sorted((e for e in (*bridge.log, *bridge.chunk_log)
                              if e.agent_id == "long" and matches(e.type, words.split())),
                             key=lambda e: e.serial)
            return [format_entry(e, with_agent=False) for e in entries]

        for words in ("-chunk", "turn", "chunk", "assistant", "assistant -message"):
            wanted = expected(words)
            made.update(log=0, chunk_log=0)
            log.set_filter(words)
            assert made["log"] + made["chunk_log"] == len(wanted), (words, made)
            assert made["chunk_log"] == 0 or matches("assistant/chunk", words.split())
            await wait_until(pilot, lambda w=wanted: list(log.log_widget.lines) == w)


async def test_home_loads_one_page_and_shows_it_at_the_top() -> None:
    # `home` scrolls to the top and loads the page before the first; reaching the top that
    # way also looked like a scroll past it, which queued a second page kept out of view.
    async with reading(("long", long_log(60))) as (app, pilot):
        transcript = app.main.transcript
        transcript.focus()
        await settle(pilot)
        pages: list[int] = []
        load_older = transcript.load_older

        async def counting(keep_view: bool = True) -> None:
            pages.append(transcript.first)
            await load_older(keep_view)

        transcript.load_older = counting  # type: ignore[method-assign]
        for turn in range(3):
            first = transcript.first
            transcript.scroll_end(animate=False, immediate=True)  # away from the top
            await settle(pilot)
            assert transcript.scroll_y > 0 and transcript.first == first
            await pilot.press("home")
            await wait_until(pilot, lambda f=first: transcript.first < f
                             and not transcript.query(".-pending"))
            await settle(pilot)
            await pilot.pause(0.1)
            await settle(pilot)
            assert pages == [*pages[:turn], first]  # one page, not two
            assert transcript.first == first - transcript.PAGE
            assert transcript.scroll_y == 0
            assert _mounted_items(transcript) == list(range(transcript.first, transcript.end))


async def test_a_page_shown_restyles_each_block_once_as_it_mounts_and_nothing_inside_them(
) -> None:
    # A page is mounted hidden (styled as it mounts, not also before) and shown without
    # a restyle: it is hidden by its own `display` style, not by a rule on a class.
    async with reading(("long", long_log(60))) as (app, pilot):
        transcript = app.main.transcript
        restyled: list[Any] = []
        on_show: list[Any] = []
        shown = [False]
        update_nodes = app.stylesheet.update_nodes
        show = transcript._show

        def counting(nodes, animate=False):  # type: ignore[no-untyped-def]
            nodes = list(nodes)
            (on_show if shown[0] else restyled).extend(nodes)
            return update_nodes(nodes, animate=animate)

        def showing(widgets):  # type: ignore[no-untyped-def]
            shown[0] = True  # from the page's showing on
            return show(widgets)

        app.stylesheet.update_nodes = counting  # type: ignore[method-assign]
        transcript._show = showing  # type: ignore[method-assign]
        for _ in range(2):
            restyled.clear()
            on_show.clear()
            shown[0] = False
            first = transcript.first
            await transcript.action_load_older()
            await settle(pilot)
            page = [transcript.blocks[i] for i in range(transcript.first, first)]
            assert len(page) == transcript.PAGE and all(b.display for b in page)
            assert all(b.region.height for b in page)  # (shown and laid out)
            assert shown[0] and not [n for n in on_show if n in page]
            for block in page:  # at most as it mounted (hidden)
                assert restyled.count(block) <= 1
            inside = [n for n in restyled + on_show if any(b in n.ancestors for b in page)]
            assert inside == []


async def test_a_page_read_back_is_one_layout_of_the_screen() -> None:
    # Textual's mount asks for a layout twice: when awaited, and again from the pane's
    # queue, after `home`'s handler, once the page is shown. Showing the page lays it out;
    # the late request was a second layout of the screen (every mounted block) per page.
    async with reading(("long", long_log(60))) as (app, pilot):
        transcript = app.main.transcript
        transcript.focus()
        screen = app.screen
        layouts: list[int] = []
        refresh_layout = screen._refresh_layout

        def counting(*args: Any, **kwargs: Any) -> Any:
            layouts.append(transcript.first)
            return refresh_layout(*args, **kwargs)

        screen._refresh_layout = counting  # type: ignore[method-assign]
        for turn in range(3):  # (the first from the tail: scrolling to the top is a frame)
            layouts.clear()
            first = transcript.first
            await pilot.press("home")
            await wait_until(pilot, lambda f=first: transcript.first < f
                             and not transcript.query(".-pending"))
            await settle(pilot)
            await pilot.pause(0.1)
            await settle(pilot)
            assert transcript.first == first - transcript.PAGE
            assert all(b.region.height for b in transcript.blocks.values()
                       if b.item_index < first)  # (shown, laid out)
            if turn:  # (no more than 3: then the window is trimmed, a layout too)
                assert layouts == [transcript.first]


async def test_lines_written_to_the_open_event_log_lay_out_nothing_else() -> None:
    # Textual's Log asks for a layout of the whole screen whenever its lines change (a
    # reload, every flush while it is open): every pane and transcript block arranged
    # again. Its size never depends on its lines; it repaints, and its scrollbar follows.
    async with reading(("long", long_log(150))) as (app, pilot):
        await pilot.press("f2")
        log = app.main.event_log
        lines = log.log_widget
        await wait_until(pilot, lambda: lines.line_count > FIRST_LINES)  # (older ones too)
        await settle(pilot)
        screen = app.screen
        layouts: list[int] = []
        refresh_layout = screen._refresh_layout

        def counting(*args: Any, **kwargs: Any) -> Any:
            layouts.append(lines.line_count)
            return refresh_layout(*args, **kwargs)

        screen._refresh_layout = counting  # type: ignore[method-assign]
        for words in ("turn/end", "message", "-chunk"):
            log.set_filter(words)
            await settle(pilot)
            await pilot.pause(0.1)
            await settle(pilot)
            text = screen_text(app)
            assert lines.lines[-1].strip() and lines.lines[-1][:60].rstrip() in text
            assert lines.scroll_y == lines.max_scroll_y  # at its end, where the newest are
            assert lines.vertical_scrollbar.window_virtual_size == lines.line_count
        assert layouts == []
        assert lines.show_vertical_scrollbar and lines.line_count > lines.size.height


async def test_a_page_read_back_draws_its_replies_before_the_frame_that_shows_it() -> None:
    # Each reply of a page is drawn (its Markdown rendered into lines) while it is mounted
    # hidden, at the width a shown reply has: the frame that shows the page only places
    # its blocks. Drawing them in that frame made it longer by every reply of the page.
    async with reading(("long", long_log(60))) as (app, pilot):
        transcript = app.main.transcript
        transcript.focus()
        screen = app.screen
        in_frame: list[int] = []
        drawn: list[int] = []
        refresh_layout = screen._refresh_layout
        from dsh_tui.ui.widgets import blocks

        render_part = blocks.render_part
        framing = [False]

        def counting_layout(*args: Any, **kwargs: Any) -> Any:
            framing[0] = True
            try:
                return refresh_layout(*args, **kwargs)
            finally:
                framing[0] = False

        def counting_part(*args: Any, **kwargs: Any) -> Any:
            (in_frame if framing[0] else drawn).append(1)
            return render_part(*args, **kwargs)

        screen._refresh_layout = counting_layout  # type: ignore[method-assign]
        blocks.render_part = counting_part  # type: ignore[assignment]
        try:
            for _ in range(3):
                in_frame.clear()
                drawn.clear()
                first = transcript.first
                await pilot.press("home")
                await wait_until(pilot, lambda f=first: transcript.first < f
                                 and not transcript.query(".-pending"))
                await settle(pilot)
                page = [transcript.blocks[i] for i in range(transcript.first, first)]
                replies = [b for b in page if isinstance(b, blocks.AssistantBlock)]
                assert replies and all(b.region.height and b.display for b in page)
                assert drawn and in_frame == []
                assert "answer" in screen_text(app)
        finally:
            blocks.render_part = render_part  # type: ignore[assignment]


async def test_home_from_mid_window_draws_no_frame_before_the_page_at_the_top() -> None:
    # `home` went to the top of the window at once; called from outside the pane's own
    # queue (the command palette, the soak's driver), that was a frame drawing the old
    # window's top before the page was mounted and drawn over it. The view now goes to the
    # top in the step that shows the page; with nothing older, at once.
    async with reading(("long", long_log(60))) as (app, pilot):
        transcript = app.main.transcript
        screen = app.screen
        frames: list[tuple[float, bool]] = []
        refresh_layout = screen._refresh_layout
        first = transcript.first

        def counting(*args: Any, **kwargs: Any) -> Any:
            shown = transcript.first < first and not transcript.query(".-pending")
            frames.append((transcript.scroll_y, shown))
            return refresh_layout(*args, **kwargs)

        screen._refresh_layout = counting  # type: ignore[method-assign]
        for _ in range(2):
            transcript.scroll_to(y=transcript.max_scroll_y // 2, animate=False, immediate=True)
            await settle(pilot)
            await pilot.pause(0.1)
            assert transcript.scroll_y > 0
            frames.clear()
            first = transcript.first
            await transcript.action_load_older()  # (as the palette or the soak's driver)
            await settle(pilot)
            await pilot.pause(0.1)
            await settle(pilot)
            assert frames and all(shown for _, shown in frames)  # no frame before the page
            top = transcript.blocks[transcript.first]
            assert transcript.scroll_y == 0 and top.region.y <= transcript.content_region.y + 2
            assert _mounted_items(transcript) == list(range(transcript.first, transcript.end))
        while transcript.first:  # (to the first item)
            await transcript.action_load_older()
            await settle(pilot)
        transcript.focus()
        transcript.scroll_to(y=transcript.max_scroll_y // 2, animate=False, immediate=True)
        await settle(pilot)
        await pilot.press("home")  # nothing older: straight to the top
        await settle(pilot)
        assert transcript.scroll_y == 0 and "question 1" in screen_text(app)
