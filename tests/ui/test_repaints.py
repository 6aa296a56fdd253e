"""What a streamed reply costs the screen: the lines that changed, not the whole transcript.

A key typed while a reply streams waits for the frame in progress (benchmarks/bench_keys.py),
so these check which lines a frame draws again: the transcript pane's own lines (its blank
background and border) are counted where Textual draws them (`StylesCache.render_line`).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from dsh_tui.compose import build_context
from dsh_tui.ui.screens.main import set_title
from dsh_tui.ui.widgets.blocks import TAIL_SLACK, AssistantBlock

from .conftest import SIZE, add_agent, make_app, msg, screen_text, settle, wait_until


class GatedModel:
    """Streams one text block, a delta each time the test puts one (None ends the reply)."""

    name = "gated"

    def __init__(self) -> None:
        self.parts: asyncio.Queue[str | None] = asyncio.Queue()

    def context_window(self, model: str) -> int | None:
        return None

    async def stream(self, request: Any) -> AsyncIterator[dict[str, Any]]:
        yield {"type": "block-start", "index": 0, "blockType": "text"}
        sent: list[str] = []
        while (part := await self.parts.get()) is not None:
            sent.append(part)
            yield {"type": "text-delta", "index": 0, "text": part}
        yield {"type": "block-end", "index": 0,
               "block": {"type": "text", "text": "".join(sent)}}
        yield {"type": "usage", "usage": {"inputTokens": 1, "outputTokens": len(sent)}}
        yield {"type": "finish", "reason": {"kind": "stop"}}


class CallCounter:
    """Counts the calls of one method of `owner`, which it wraps in place."""

    def __init__(self, owner: Any, name: str) -> None:
        self.count = 0
        method = getattr(owner, name)

        def counted(*args: Any) -> Any:
            self.count += 1
            return method(*args)

        setattr(owner, name, counted)


def line_counter(widget: Any) -> CallCounter:
    """The lines Textual draws again for one widget (its styles cache's misses)."""
    return CallCounter(widget._styles_cache, "render_line")


def reflow_counter(screen: Any) -> CallCounter:
    """The screen's full layouts (its compositor's `reflow`; a scroll that only moves the
    view is not one)."""
    return CallCounter(screen._compositor, "reflow")


async def test_a_streamed_reply_repaints_what_grew_not_the_transcript_pane() -> None:
    gated = GatedModel()
    ctx = build_context(providers={"mock": gated}, tools=[], retry=False, system_prompt=None)
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        agent.followup(msg("go", "m1"))
        await gated.parts.put("".join(f"Paragraph {n}.\n\n" for n in range(30)))
        await wait_until(pilot, lambda: "Paragraph 29." in screen_text(app))
        await settle(pilot)
        transcript = app.main.transcript
        (block,) = transcript.query(AssistantBlock)
        await wait_until(pilot, lambda: block.reserved is not None)
        await settle(pilot)
        reserved = block.reserved
        assert reserved is not None and block.size.height == reserved
        pane = line_counter(transcript)
        height = transcript.virtual_size.height

        # Within the reserve: nothing moves, the pane is not drawn again.
        await gated.parts.put("A second line.\n\n")
        await wait_until(pilot, lambda: "A second line." in screen_text(app))
        await settle(pilot)
        assert transcript.virtual_size.height == height
        assert block.reserved == reserved
        assert pane.count == 0

        # Past the reserve: the reply grows by TAIL_SLACK lines, the view follows it, and
        # the pane's own lines are still not drawn again (only the reply's and the
        # scrollbar's are).
        for n in range(TAIL_SLACK + 4):
            await gated.parts.put(f"Line {n} of the rest.\n\n")
        await wait_until(pilot, lambda: f"Line {TAIL_SLACK + 3} of the rest." in screen_text(app))
        await settle(pilot)
        assert block.reserved is not None and block.reserved > reserved
        assert transcript.virtual_size.height > height
        assert transcript.following
        assert pane.count == 0

        # Complete: the reserve is given back and the reply is as tall as its text.
        await gated.parts.put(None)
        await asyncio.wait_for(agent.when_idle(), 10)
        await wait_until(pilot, lambda: block.reserved is None and not block.streaming)
        await settle(pilot)
        assert block.size.height == block.text_height
        assert f"Line {TAIL_SLACK + 3} of the rest." in screen_text(app)
        assert pane.count <= 2  # the turn's end mounted below: a layout, a title row


async def test_a_new_title_repaints_its_row_of_the_border_only() -> None:
    gated = GatedModel()
    ctx = build_context(providers={"mock": gated}, tools=[], retry=False, system_prompt=None)
    await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        transcript = app.main.transcript
        pane = line_counter(transcript)
        set_title(transcript, "Transcript · a new title")
        await settle(pilot)
        assert pane.count == 1
        assert "Transcript · a new title" in screen_text(app)
        transcript.border_subtitle = "▼ below"
        await settle(pilot)
        assert pane.count == 2
        assert "▼ below" in screen_text(app)
        assert transcript.border_subtitle == "▼ below"


async def test_the_spinner_stands_still_while_the_person_types() -> None:
    gated = GatedModel()
    ctx = build_context(providers={"mock": gated}, tools=[], retry=False, system_prompt=None)
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        agent.followup(msg("go", "m1"))
        await wait_until(pilot, lambda: agent.status == "running")
        tree = app.main.agent_tree
        app.keys_first.typed()
        frame = tree.frame
        app._tick()
        assert tree.frame == frame
        app.keys_first._typed_at = float("-inf")  # typing paused
        app._tick()
        assert tree.frame == frame + 1
        await gated.parts.put(None)
        await asyncio.wait_for(agent.when_idle(), 10)


async def test_a_paragraph_growing_within_its_lines_is_drawn_without_a_layout() -> None:
    """Text appended to a reply's last paragraph that still fits the reply's height (its
    lines, plus the streaming reserve) is drawn again without laying out the screen
    (Textual's paragraph asked for a layout on every change: the frame a typed key waited
    behind); a line past the reserve is one layout, and the reply shows exactly what was
    streamed."""
    gated = GatedModel()
    ctx = build_context(providers={"mock": gated}, tools=[], retry=False, system_prompt=None)
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        agent.followup(msg("go", "m1"))
        parts = ["Short start."]
        await gated.parts.put(parts[0])
        await wait_until(pilot, lambda: "Short start." in screen_text(app))
        transcript = app.main.transcript
        (block,) = transcript.query(AssistantBlock)
        await wait_until(pilot, lambda: block.reserved is not None)
        view = app.bridge.views[agent.id]
        await wait_until(pilot, lambda: not view.tombstones)  # the inbox is still from now on
        await settle(pilot)
        layouts = reflow_counter(app.screen)

        for word in (" one", " two", " three"):  # the paragraph's line has room for these
            parts.append(word)
            await gated.parts.put(word)
            await wait_until(pilot, lambda w=word: w.strip() in screen_text(app))
            await settle(pilot)
        assert layouts.count == 0

        # Words that start new lines within the streaming reserve: drawn, not laid out.
        height = block.text_height
        reserved = block.reserved
        assert reserved is not None and reserved > height + 1
        n = 0
        while block.text_height == height:
            n += 1
            parts.append(f" w{n:02d}")
            await gated.parts.put(parts[-1])
            await wait_until(pilot, lambda n=n: block.source.endswith(f"w{n:02d}"))
            await settle(pilot)
        assert block.text_height == height + 1
        assert layouts.count == 0
        assert f"w{n:02d}" in screen_text(app)

        # A line that passes the reserve: one layout (the reserve grows), not a second one
        # for the size it measured (`OneLayout`).
        while block.reserved == reserved:
            n += 1
            parts.append(f"\n\nline {n}")
            await gated.parts.put(parts[-1])
            await wait_until(pilot, lambda n=n: block.source.endswith(f"line {n}"))
            await settle(pilot)
        assert block.reserved is not None and block.reserved > reserved
        assert layouts.count == 1
        assert f"line {n}" in screen_text(app)

        width = transcript.scrollable_content_region.width
        parts.append(" and on" * width)  # wraps onto new lines
        await gated.parts.put(parts[-1])
        await wait_until(pilot, lambda: len(block.source) == len("".join(parts)))
        await settle(pilot)
        assert block.source == "".join(parts)
        await gated.parts.put(None)
        await asyncio.wait_for(agent.when_idle(), 10)
