"""A person drags the mouse over a reply to select its text, and ctrl+c copies it.

A reply draws its own lines (`AssistantBlock.render_line`), so Textual's selection,
which reads offsets from the drawn segments and asks the widget for its text, reached
nothing in it until `widgets/line_selection.py`. These drag with the pilot's mouse over
the reply as drawn on screen, and judge by what is highlighted and what is copied.
"""

from __future__ import annotations

from typing import Any

from dsh_tui.llm.scripted import text
from dsh_tui.ui.widgets.blocks import AssistantBlock

from .conftest import add_agent, idle, make_app, msg, world

REPLY = "alpha beta gamma\n\n- first [inject] point\n- second point\n\nlast words here"


async def reply_world() -> tuple[Any, Any]:
    """An agent whose one turn answers REPLY, and the app over it."""
    ctx, _ = world([text(REPLY)])
    agent = await add_agent(ctx, "planner", "planner")
    return agent, make_app(ctx)


async def shown_reply(pilot: Any, agent: Any) -> AssistantBlock:
    agent.followup(msg("go", "m1"))
    await idle(pilot, agent)
    (block,) = pilot.app.main.transcript.query(AssistantBlock)
    return block


def row_of(block: AssistantBlock, needle: str) -> tuple[int, int]:
    """(row, column) where `needle` is drawn in the reply."""
    for y in range(block.text_height):
        line = block.render_line(y).text
        if needle in line:
            return y, line.index(needle)
    raise AssertionError(f"{needle!r} is not drawn")


async def drag(pilot: Any, block: AssistantBlock, start: tuple[int, int],
               end: tuple[int, int]) -> None:
    """Press at `start` (row, column of the drawn text), move to `end`, release: a
    person's drag (the pilot's offsets count the block's border and padding too)."""
    left, top = block.gutter.left, block.gutter.top
    (y1, x1), (y2, x2) = (start[0] + top, start[1] + left), (end[0] + top, end[1] + left)
    await pilot.mouse_down(block, offset=(x1, y1))
    await pilot.hover(block, offset=(x2, y2))
    await pilot.mouse_up(block, offset=(x2, y2))
    await pilot.pause()


def selection_background(pilot: Any) -> Any:
    return pilot.app.screen.get_component_rich_style("screen--selection").bgcolor


async def test_a_drag_over_a_reply_highlights_and_ctrl_c_copies_what_was_dragged() -> None:
    agent, app = await reply_world()
    async with app.run_test(size=(100, 30)) as pilot:
        block = await shown_reply(pilot, agent)
        start = row_of(block, "beta")
        y2, x2 = row_of(block, "second point")
        await drag(pilot, block, start, (y2, x2 + len("second") - 1))  # inclusive

        dragged = "beta gamma\n\n• first [inject] point\n• second"
        assert app.screen.get_selected_text() == dragged
        highlight = selection_background(pilot)
        drawn = block.render_line(start[0])
        picked = [segment for segment in drawn if segment.style
                  and segment.style.bgcolor == highlight]
        assert "".join(segment.text for segment in picked).startswith("beta gamma")
        assert not any("alpha" in segment.text for segment in picked)
        last_row = row_of(block, "last words")[0]
        assert all(segment.style is None or segment.style.bgcolor != highlight
                   for segment in block.render_line(last_row))

        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.clipboard == dragged
        assert app.screen.get_selected_text() is None  # cleared: the next ctrl+c is a stop
        assert any(f"Copied {len(dragged)} characters" in str(note.message) for note in app._notifications)
        assert app.is_running
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.is_running  # an idle agent: the first plain ctrl+c only says how to quit
        assert any("Press ctrl+c again to quit" in str(note.message)
                   for note in app._notifications)


async def test_a_double_click_selects_the_whole_reply_as_drawn() -> None:
    agent, app = await reply_world()
    async with app.run_test(size=(100, 30)) as pilot:
        block = await shown_reply(pilot, agent)
        await pilot.click(block, offset=(block.gutter.left + 2, block.gutter.top), times=2)
        await pilot.pause()
        assert app.screen.get_selected_text() == (
            "alpha beta gamma\n\n• first [inject] point\n• second point\n\nlast words here")
