"""A person drags the mouse over a reply to select its text, and ctrl+c copies it.

The transcript draws its own lines (`Transcript.render_line`) and answers Textual's
selection API from its line model: offsets in the drawn segments, the selected text from
the rows. These drag with the pilot's mouse over the reply as drawn on screen, and judge
by what is highlighted and what is copied (the frame's border is never copied).
"""

from __future__ import annotations

from typing import Any

from dsh_tui.llm.scripted import text
from dsh_tui.ui.widgets.transcript import Transcript

from .conftest import add_agent, idle, make_app, msg, world

REPLY = "alpha beta gamma\n\n- first [inject] point\n- second point\n\nlast words here"


async def reply_world() -> tuple[Any, Any]:
    """An agent whose one turn answers REPLY, and the app over it."""
    ctx, _ = world([text(REPLY)])
    agent = await add_agent(ctx, "planner", "planner")
    return agent, make_app(ctx)


async def shown_reply(pilot: Any, agent: Any) -> tuple[Transcript, int]:
    agent.followup(msg("go", "m1"))
    await idle(pilot, agent)
    transcript = pilot.app.main.transcript
    (index,) = [item.index for item in transcript.lines.items if item.kind == "text"]
    return transcript, index


def row_of(reply: tuple[Transcript, int], needle: str) -> tuple[int, int]:
    """(screen row, column of the drawn text) where `needle` is shown, and the row's line
    of the whole transcript is `scroll_y` + that row."""
    transcript, index = reply
    first, _ = transcript.region_of(index)
    for y, row in enumerate(transcript.item_rows(index)):
        if needle in row.body.text:
            return first + y - round(transcript.scroll_y), row.body.text.index(needle)
    raise AssertionError(f"{needle!r} is not drawn")


def drawn(reply: tuple[Transcript, int], screen_row: int) -> Any:
    transcript, _ = reply
    return transcript.render_line(screen_row)


async def drag(pilot: Any, reply: tuple[Transcript, int], start: tuple[int, int],
               end: tuple[int, int]) -> None:
    """Press at `start` (screen row, column of the drawn text), move to `end`, release: a
    person's drag (the pilot's offsets count the pane's border, padding and the reply's
    frame too)."""
    transcript, index = reply
    lead = sum(len(segment.text) for segment in transcript.item_rows(index)[0].lead)
    left, top = transcript.gutter.left + lead, transcript.gutter.top
    (y1, x1), (y2, x2) = (start[0] + top, start[1] + left), (end[0] + top, end[1] + left)
    await pilot.mouse_down(transcript, offset=(x1, y1))
    await pilot.hover(transcript, offset=(x2, y2))
    await pilot.mouse_up(transcript, offset=(x2, y2))
    await pilot.pause()


def selection_background(pilot: Any) -> Any:
    return pilot.app.screen.get_component_rich_style("screen--selection").bgcolor


async def test_a_drag_over_a_reply_highlights_and_ctrl_c_copies_what_was_dragged() -> None:
    agent, app = await reply_world()
    async with app.run_test(size=(100, 30)) as pilot:
        reply = await shown_reply(pilot, agent)
        start = row_of(reply, "beta")
        y2, x2 = row_of(reply, "second point")
        await drag(pilot, reply, start, (y2, x2 + len("second") - 1))  # inclusive

        dragged = "beta gamma\n\n• first [inject] point\n• second"
        assert app.screen.get_selected_text() == dragged
        highlight = selection_background(pilot)
        line = drawn(reply, start[0])
        picked = [segment for segment in line if segment.style
                  and segment.style.bgcolor == highlight]
        assert "".join(segment.text for segment in picked).startswith("beta gamma")
        assert not any("alpha" in segment.text for segment in picked)
        last_row = row_of(reply, "last words")[0]
        assert all(segment.style is None or segment.style.bgcolor != highlight
                   for segment in drawn(reply, last_row))

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
        reply = await shown_reply(pilot, agent)
        transcript = reply[0]
        row, _ = row_of(reply, "alpha")
        await pilot.click(transcript, offset=(transcript.gutter.left + 4,
                                              transcript.gutter.top + row), times=2)
        await pilot.pause()
        assert app.screen.get_selected_text() == (
            "alpha beta gamma\n\n• first [inject] point\n• second point\n\nlast words here")
