"""Issue 11: a reply too long to render as Markdown shows its start and a note, and a click
opens all of it in a viewer (the time it costs is measured in benchmarks/bench_huge.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from dsh_tui.compose import build_context
from dsh_tui.llm.scripted import text
from dsh_tui.ui.screens.full_text import FullTextScreen
from dsh_tui.ui.transcript_items import (
    MARKDOWN_LIMIT,
    PARAGRAPH_LIMIT,
    is_cut,
    markdown_cut,
    reply_source,
)

from .conftest import SIZE, add_agent, idle, make_app, msg, settle, wait_until, world

HUGE = ("line of a huge reply \x1b]0;PWN\x07\n" * 20_000) + "THE-END"


class OneDelta:
    """A provider whose reply is one text delta of `text` (as a server may send it)."""

    name = "one-delta"

    def __init__(self, text: str) -> None:
        self.text = text

    def context_window(self, model: str) -> int | None:
        return None

    async def stream(self, request: Any) -> AsyncIterator[dict[str, Any]]:
        yield {"type": "block-start", "index": 0, "blockType": "text"}
        yield {"type": "text-delta", "index": 0, "text": self.text}
        yield {"type": "block-end", "index": 0, "block": {"type": "text", "text": self.text}}
        yield {"type": "finish", "reason": {"kind": "stop"}}


async def test_a_huge_reply_is_cut_with_a_note_and_a_click_shows_all() -> None:
    ctx = build_context(providers={"mock": OneDelta(HUGE)}, tools=[], retry=False,
                        system_prompt=None)
    agent = await add_agent(ctx, "big", "big")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        app.main.select_agent(agent.id)
        agent.followup(msg("a lot, please", "m1"))
        await idle(pilot, agent)
        await settle(pilot)
        transcript = app.main.transcript
        (reply,) = [item for item in transcript.lines.items if item.kind == "text"]
        assert is_cut(reply)
        # one paragraph (no blank line): cut where it passes the paragraph limit
        source = reply_source(reply)
        assert markdown_cut(reply.current_text()) == PARAGRAPH_LIMIT
        assert len(source) < PARAGRAPH_LIMIT + 200
        assert f"{len(HUGE) - PARAGRAPH_LIMIT:,} more characters not shown" in source
        assert "THE-END" not in source and "\x1b" not in source
        drawn = "\n".join(transcript.item_text(reply.index))
        assert "more characters not shown here: click this reply" in drawn
        # the note at the reply's end is on screen (the tail is followed): click it
        first, height = transcript.region_of(reply.index)
        row = first + height - 1 - round(transcript.scroll_y)
        assert 0 <= row < transcript.scrollable_content_region.height
        await pilot.click(transcript, offset=(4, row + transcript.gutter.top))
        await wait_until(pilot, lambda: isinstance(app.screen, FullTextScreen))
        shown = app.screen.query_one("#full-text").text
        assert shown.endswith("THE-END") and len(shown) == len(HUGE)
        assert "\x1b" not in shown and "␛]0;PWN␇" in shown
        await pilot.press("escape")
        await settle(pilot)
        assert not isinstance(app.screen, FullTextScreen)


async def test_a_reply_under_the_limit_is_rendered_whole() -> None:
    reply_text = "short **answer**\n\n" + "x" * 1000
    ctx, _ = world([text(reply_text)])
    agent = await add_agent(ctx, "small", "small")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        app.main.select_agent(agent.id)
        agent.followup(msg("a little", "m1"))
        await idle(pilot, agent)
        await settle(pilot)
        (reply,) = [item for item in app.main.transcript.lines.items if item.kind == "text"]
        assert not is_cut(reply) and reply_source(reply) == reply_text


def test_the_markdown_cut_takes_the_first_paragraph_too_long_or_the_overall_limit() -> None:
    short = "a short paragraph of prose.\n\n" * 2_000  # 58,000 characters, none too long
    assert markdown_cut(short) == MARKDOWN_LIMIT
    assert markdown_cut("tiny") == 4
    long_one = "x" * (PARAGRAPH_LIMIT + 1)
    assert markdown_cut(long_one) == PARAGRAPH_LIMIT
    assert markdown_cut(long_one[:-1]) == PARAGRAPH_LIMIT  # exactly the limit is whole
    head = "intro\n\n"
    assert markdown_cut(head + long_one + "\n\nafter") == len(head) + PARAGRAPH_LIMIT
    assert markdown_cut("x" * 10 + "\n \t\n" + "y" * PARAGRAPH_LIMIT) == 10 + 4 + PARAGRAPH_LIMIT


def test_a_streamed_reply_never_moves_a_cut_already_made() -> None:
    """A streamed reply appends what the stream adds to what it shows: a prefix's cut must stay
    where it is as the reply grows."""
    reply = ("word " * 300 + "\n\n") * 3 + "z" * (PARAGRAPH_LIMIT * 2) + "\n\nend " * 4000
    previous = 0
    for end in range(0, len(reply), 97):
        cut = markdown_cut(reply[:end])
        assert cut >= previous
        if cut < end:  # once cut, growing the text keeps that cut
            assert markdown_cut(reply) == cut
        previous = cut
