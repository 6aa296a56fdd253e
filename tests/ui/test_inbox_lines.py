"""The inbox pane repaints only what changed: an edited item's lines, not the pane's.

Each inbox change used to rebuild every option of the pane (Textual's OptionList clears
all it drew on `set_options`), so the next frame drew all of its lines again, often in
the same frame as the transcript's (benchmarks/bench_keys.py)."""

from __future__ import annotations

from typing import Any

from dsh_tui.llm.scripted import hang

from .conftest import SIZE, add_agent, make_app, msg, screen_text, settle, wait_until, world


async def running_with(pilot: Any, agent: Any, count: int) -> None:
    agent.followup(msg("start", "m0"))
    await wait_until(pilot, lambda: agent.status == "running")
    for n in range(count):
        agent.inbox.append("next-turn", msg(f"queued item {n}", f"q{n}"))
    await settle(pilot)


async def test_editing_one_item_repaints_only_its_lines() -> None:
    ctx, _ = world([hang()])
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        await running_with(pilot, agent, 6)
        inbox = app.main.inbox
        drawn, lines = inbox.drawn, inbox.lines_drawn
        agent.inbox.replace("q3", agent.inbox.get("q3").with_text("queued item 3, edited"))
        await wait_until(pilot, lambda: "queued item 3, edited" in screen_text(app))
        await settle(pilot)
        assert inbox.drawn - drawn == 1  # the edited row alone was rendered anew
        assert inbox.lines_drawn - lines == 2  # its two lines (head, text), no other line
        assert inbox.highlighted_id == "msg:q0"  # the cursor stayed where it was


async def test_a_new_item_renders_itself_and_the_header_and_reuses_the_rows_below() -> None:
    ctx, _ = world([hang()])
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        await running_with(pilot, agent, 3)
        inbox = app.main.inbox
        assert any(row.kind == "receipt" for row in inbox.rows)  # rows below the lists
        drawn = inbox.drawn
        agent.inbox.append("next-turn", msg("one more", "q9"))
        await wait_until(pilot, lambda: "one more" in screen_text(app))
        await settle(pilot)
        assert "NEXT TURN · 4" in screen_text(app)
        # The header (its count) and the new item are rendered; the items above are not
        # repainted, and the receipts below moved down with the lines they had.
        assert inbox.drawn - drawn == 2


async def test_keys_and_clicks_move_the_cursor_over_items_and_receipts_only() -> None:
    """What an OptionList did for the pane: up and down skip headers (round past either
    end), home, page down and page up, and a click on any line of a row highlights it (a
    click on a header does not)."""
    ctx, _ = world([hang()])
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        await running_with(pilot, agent, 30)
        inbox = app.main.inbox
        inbox.focus()
        await pilot.pause()
        assert inbox.highlighted_id == "msg:q0"
        await pilot.press("up")  # round to the last row the cursor rests on: a receipt
        row = inbox.highlighted_row()
        assert row is not None and row.kind == "receipt"
        await pilot.press("down", "down")  # round past the end, over two headers
        assert inbox.highlighted_id == "msg:q1"
        await pilot.press("home", "pagedown")
        await pilot.pause()
        paged = inbox.highlighted
        assert paged is not None and inbox.rows[paged].kind == "item"
        paged_at = inbox.scroll_y
        assert inbox.row_span(paged)[0] >= inbox.size.height - 2 and paged_at > 0
        await pilot.press("pageup")
        await pilot.pause()
        assert inbox.highlighted_id == "msg:q0" and inbox.scroll_y < paged_at
        inbox.scroll_home(animate=False, immediate=True)
        await pilot.pause()
        second = next(i for i, row in enumerate(inbox.rows)
                      if row.kind == "item" and row.message.id == "q2")
        first_line, height = inbox.row_span(second)
        assert height == 2
        await pilot.click("#inbox", offset=(4, 1 + first_line + 1))  # (the border's line)
        assert inbox.highlighted_id == "msg:q2"
        header = next(i for i, row in enumerate(inbox.rows) if row.kind == "header")
        await pilot.click("#inbox", offset=(4, 1 + inbox.row_span(header)[0]))
        assert inbox.highlighted_id == "msg:q2"
