"""Blocks far out of sight hold no rendered lines, and are drawn again when scrolled back.

Textual keeps every line it drew of a mounted widget; a transcript block that scrolled
up out of a followed tail kept all of them (issue 14, the soak's heap per event).
`Transcript.release_offscreen` drops them (ui/offscreen.py); these check that it does,
that what is on screen keeps its lines, and that a released block reads the same when
the person scrolls back to it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from dsh_tui.harness import new_world
from dsh_tui.harness.readonly import register_log_agent
from dsh_tui.llm.scripted import text
from dsh_tui.ui import offscreen
from dsh_tui.ui.widgets.blocks import AssistantBlock

from .conftest import add_agent, idle, long_log, make_app, msg, screen_text, settle, world

SMALL = (100, 24)
SHORT = (100, 16)


def held(block: Any) -> int:
    """Rendered lines a block and everything inside it hold."""
    return sum(offscreen.cached_lines(node) for node in block.walk_children(with_self=True))


def shown(transcript: Any) -> str:
    return screen_text(transcript.app)


@asynccontextmanager
async def followed_replies(count: int) -> AsyncIterator[tuple[Any, Any, list[Any]]]:
    """`count` six-paragraph replies streamed into a followed tail at SMALL, settled:
    the app, its pilot and the reply blocks mounted, oldest first."""
    replies = [text("\n\n".join(f"Reply {n}, paragraph {p}." for p in range(6)))
               for n in range(count)]
    ctx, _ = world(replies)
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=SMALL) as pilot:
        for n in range(count):
            agent.followup(msg(f"go {n}", f"m{n}"))
            await idle(pilot, agent)
        await settle(pilot)
        yield app, pilot, [b for b in app.main.transcript.blocks.values()
                           if isinstance(b, AssistantBlock)]


async def test_blocks_far_above_the_tail_drop_their_lines_and_read_the_same_when_scrolled_back(
        ) -> None:
    assert offscreen.supported()  # the Textual pyproject.toml pins
    ctx = new_world(read_only=True)
    register_log_agent(ctx, {"id": "long", "version": 0, "createdAt": 0}, long_log(7))
    app = make_app(ctx)
    async with app.run_test(size=SHORT) as pilot:
        await settle(pilot)
        transcript = app.main.transcript
        assert transcript.first == 0  # all of it mounted: scrolling up loads nothing
        height = transcript.scrollable_content_region.height
        assert transcript.virtual_size.height > 4 * height  # some blocks are far out of sight
        transcript.scroll_home(animate=False, immediate=True)
        await settle(pilot)
        top = shown(transcript)
        first = transcript.blocks[transcript.first]
        assert held(first) > 0  # drawn at the top: its lines are cached
        transcript.scroll_end(animate=False, immediate=True)
        await settle(pilot)
        bottom = shown(transcript)

        assert transcript.release_offscreen() > 0
        far = [b for b in transcript.blocks.values()
               if b.virtual_region.bottom < transcript.scroll_y - height]
        near = [b for b in transcript.blocks.values()
                if b.virtual_region.y >= transcript.scroll_y]
        assert far and near
        assert all(held(block) == 0 for block in far)
        assert all(held(block) > 0 for block in near)  # what is shown keeps its lines
        await settle(pilot)
        assert shown(transcript) == bottom  # nothing on screen changed

        transcript.scroll_home(animate=False, immediate=True)
        await settle(pilot)
        assert shown(transcript) == top  # drawn again, the same
        assert held(first) > 0


async def test_a_followed_stream_releases_the_blocks_it_pushed_far_up() -> None:
    async with followed_replies(8) as (app, pilot, replies_mounted):
        transcript = app.main.transcript
        height = transcript.scrollable_content_region.height
        far = [b for b in replies_mounted
               if b.virtual_region.bottom < transcript.scroll_y - height]
        assert far, "the replies should reach far above the shown tail"
        assert all(held(block) == 0 for block in far)
        assert "Reply 7, paragraph 5." in shown(transcript)
        transcript.scroll_to_widget(far[0], top=True, animate=False, immediate=True)
        await settle(pilot)
        assert held(far[0]) > 0
        assert f"Reply {replies_mounted.index(far[0])}, paragraph 0." in shown(transcript)


async def test_a_layout_does_not_draw_the_released_replies_again() -> None:
    """A layout measures every reply in the pane (here: the terminal got shorter, so the
    pane did). A reply far out of sight is counted from its kept line count, not drawn
    again just to be measured: before, every released reply held all its lines again
    until the next block arrived."""
    async with followed_replies(6) as (app, pilot, replies_mounted):
        transcript = app.main.transcript
        released = [b for b in replies_mounted if held(b) == 0]
        assert released, "the replies should reach far above the shown tail"
        heights = [b.size.height for b in released]
        await pilot.resize_terminal(SMALL[0], SMALL[1] - 3)
        await settle(pilot)
        height = transcript.scrollable_content_region.height
        still_far = [b for b in released if b.virtual_region.bottom < transcript.scroll_y - height]
        assert still_far
        assert [held(block) for block in still_far] == [0] * len(still_far)
        assert [b.size.height for b in released] == heights  # measured all the same
        assert "Reply 5, paragraph 5." in shown(transcript)
        transcript.scroll_to_widget(still_far[0], top=True, animate=False, immediate=True)
        await settle(pilot)
        assert held(still_far[0]) > 0
        assert f"Reply {replies_mounted.index(still_far[0])}, paragraph 0." in shown(transcript)
