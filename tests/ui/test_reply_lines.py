"""A reply in the transcript is one widget that draws its Markdown line by line.

These run the app (`App.run_test`) and judge by what a reply draws: the text of its lines
(`render_line`, what the screen shows of it) and the styles of their segments.
"""

from __future__ import annotations

import asyncio
from typing import Any

from rich.style import Style as RichStyle
from textual.widget import Widget

from dsh_tui.llm.scripted import text
from dsh_tui.ui.widgets.blocks import AssistantBlock

from .conftest import add_agent, idle, make_app, msg, screen_text, settle, wait_until, world
from .test_repaints import GatedModel

SAMPLE = """# Plan of the cache

Some *leaning* and **heavy** words, `inline_code()`, ~~gone~~ and a [link](http://example.com/x) \
with [inject] and [bold]not markup[/bold] in a sentence long enough to wrap at eighty columns.

## Steps

- first point
- second point with **weight**
  - nested point
  - another nested
- third point

1. one
2. two
3. three

> A quoted line
> that continues.

```python
def area(r):
    return 3.14 * r * r  # circle
```

| Name | Count | Note |
|------|:-----:|-----:|
| alpha | 1 | first |
| beta | 22 | second |

---

### Done
The end.
"""


def lines_of(block: AssistantBlock) -> list[str]:
    """The text of every line the reply draws (its text, without the streaming reserve)."""
    return [block.render_line(y).text.rstrip() for y in range(block.text_height)]


def segments_of(block: AssistantBlock, needle: str) -> list[tuple[str, RichStyle]]:
    """The styled segments of the first line that contains `needle`."""
    for y in range(block.text_height):
        strip = block.render_line(y)
        if needle in strip.text:
            return [(segment.text, segment.style or RichStyle()) for segment in strip]
    raise AssertionError(f"{needle!r} is not drawn")


def style_of(block: AssistantBlock, word: str) -> RichStyle:
    for piece, style in segments_of(block, word):
        if word in piece:
            return style
    raise AssertionError(f"{word!r} is not one segment")


async def show(reply: str) -> tuple[Any, Any]:
    ctx, _ = world([text(reply)])
    agent = await add_agent(ctx, "planner", "planner")
    return agent, make_app(ctx)


async def test_every_markdown_kind_is_drawn_by_the_one_widget_at_80_and_wide() -> None:
    heights: dict[int, int] = {}
    for width in (80, 200):
        agent, app = await show(SAMPLE)
        async with app.run_test(size=(width, 60)) as pilot:
            agent.followup(msg("plan it", "m1"))
            await idle(pilot, agent)
            (block,) = app.main.transcript.query(AssistantBlock)
            assert list(block.children) == []  # no paragraph, list or fence widgets
            lines = lines_of(block)
            text_ = "\n".join(lines)
            assert lines[0] == "Plan of the cache"
            assert "Some leaning and heavy words, inline_code(), gone and a link" in \
                " ".join(lines)
            prose = "\n".join(lines[:lines.index("Steps")])
            assert "*" not in prose and "`" not in prose and "http://" not in text_
            assert "[inject] and [bold]not markup[/bold]" in " ".join(lines)  # never markup
            assert "• first point" in lines and "  ◦ nested point" in lines
            assert " 1. one" in lines and " 3. three" in lines
            assert any(line.startswith("▌ A quoted line that continues.") for line in lines)
            assert "      return 3.14 * r * r  # circle" in lines
            assert any(line.startswith("┌───") for line in lines)
            assert any(line.startswith("│ alpha │") and line.endswith("first │")
                       for line in lines)
            assert any(set(line) == {"─"} for line in lines)  # the rule
            assert lines[-3:] == ["Done", "", "The end."]
            assert all(len(line) <= block.size.width for line in lines)
            # styles: bold, italic, strike, inline code on its background, the link underlined
            assert style_of(block, "heavy").bold and style_of(block, "leaning").italic
            assert style_of(block, "gone").strike and style_of(block, "link").underline
            code = style_of(block, "inline_code()")
            plain = style_of(block, " words, ")
            assert code.bgcolor != plain.bgcolor and code.color != plain.color
            assert style_of(block, "Name").bold
            heights[width] = len(lines)
            await settle(pilot)
            shown = screen_text(app)
            assert "Plan of the cache" in shown or "The end." in shown
    assert heights[80] > heights[200]  # the long sentence wraps at 80 columns


async def test_a_streamed_reply_ends_exactly_as_the_whole_text_renders() -> None:
    gated = GatedModel()
    from dsh_tui.compose import build_context

    ctx = build_context(providers={"mock": gated}, tools=[], retry=False, system_prompt=None)
    agent = await add_agent(ctx, "planner", "planner")
    other, _ = world([text(SAMPLE)])
    async with make_app(ctx).run_test(size=(80, 90)) as pilot:  # no scrollbar: one width
        app = pilot.app
        agent.followup(msg("go", "m1"))
        step = 7
        for start in range(0, len(SAMPLE), step):
            await gated.parts.put(SAMPLE[start:start + step])
            if start % (step * 20) == 0:
                await settle(pilot, rounds=1)
        (block,) = app.main.transcript.query(AssistantBlock)
        await wait_until(pilot, lambda: block.source == SAMPLE)
        await settle(pilot)
        streamed, width = lines_of(block), block.size.width
        assert block.streaming
        await gated.parts.put(None)
        await asyncio.wait_for(agent.when_idle(), 10)
        await wait_until(pilot, lambda: not block.streaming)
        await settle(pilot)
        assert lines_of(block) == streamed
        block.release_lines()  # parsed whole once complete: the same lines again
        assert lines_of(block) == streamed

    fresh = await add_agent(other, "fresh", "fresh")
    async with make_app(other).run_test(size=(80, 90)) as pilot:
        fresh.followup(msg("go", "m1"))
        await idle(pilot, fresh)
        (whole,) = pilot.app.main.transcript.query(AssistantBlock)
        assert whole.size.width == width
        assert lines_of(whole) == streamed


async def test_an_open_fence_is_plain_and_highlighted_once_closed() -> None:
    gated = GatedModel()
    from dsh_tui.compose import build_context

    ctx = build_context(providers={"mock": gated}, tools=[], retry=False, system_prompt=None)
    agent = await add_agent(ctx, "planner", "planner")
    async with make_app(ctx).run_test(size=(100, 40)) as pilot:
        app = pilot.app
        agent.followup(msg("go", "m1"))
        await gated.parts.put("Code:\n\n```python\nvalue = 42\n")
        await wait_until(pilot, lambda: bool(app.main.transcript.query(AssistantBlock)))
        (block,) = app.main.transcript.query(AssistantBlock)
        await wait_until(pilot, lambda: "value = 42" in "\n".join(lines_of(block)))
        colours = {style.color for piece, style in segments_of(block, "value") if piece.strip()}
        assert len(colours) == 1  # open: one plain colour
        await gated.parts.put("```\n\nAfter the code.")
        await wait_until(pilot, lambda: "After the code." in "\n".join(lines_of(block)))
        assert block.streaming
        colours = {style.color for piece, style in segments_of(block, "value") if piece.strip()}
        assert len(colours) > 1  # closed (another block follows): highlighted
        await gated.parts.put(None)
        await asyncio.wait_for(agent.when_idle(), 10)
        await wait_until(pilot, lambda: not block.streaming)
        colours = {style.color for piece, style in segments_of(block, "value") if piece.strip()}
        assert len(colours) > 1


async def test_search_marks_matches_in_text_lists_tables_and_code() -> None:
    agent, app = await show(SAMPLE)
    async with app.run_test(size=(160, 60)) as pilot:
        agent.followup(msg("plan it", "m1"))
        await idle(pilot, agent)
        (block,) = app.main.transcript.query(AssistantBlock)
        lines = lines_of(block)
        await pilot.press("ctrl+f", *"point")
        await settle(pilot)
        assert block.search == "point"
        for needle in ("first point", "nested point"):
            marked = [piece for piece, style in segments_of(block, needle) if style.reverse]
            assert marked == ["point"]
        block.set_search("circle")
        marked = [piece for piece, style in segments_of(block, "# circle") if style.reverse]
        assert marked == ["circle"]
        block.set_search("ALPHA")  # a capital matches exactly: none here
        assert not [p for p, style in segments_of(block, "alpha") if style.reverse]
        block.set_search(None)
        assert not any(style.reverse for y in range(block.text_height)
                       for style in (s.style for s in block.render_line(y)) if style)
        assert lines_of(block) == lines  # marks change styles, never the text


async def test_escape_sequences_stay_visible_text_in_every_kind() -> None:
    reply = ("Title \x1b]0;pwned\x07 here\n\n- item \x1b[31mred\x1b[0m\n\n"
             "```\ncode \x1b[2J [b]x[/b]\n```\n\n| a |\n|---|\n| \x1b[1mcell |\n")
    agent, app = await show(reply)
    async with app.run_test(size=(100, 40)) as pilot:
        agent.followup(msg("go", "m1"))
        await idle(pilot, agent)
        (block,) = app.main.transcript.query(AssistantBlock)
        drawn = "\n".join(lines_of(block))
        assert "\x1b" not in drawn and "\x07" not in drawn
        assert "␛]0;pwned" in drawn and "␛[31mred␛[0m" in drawn
        assert "code ␛[2J [b]x[/b]" in drawn and "␛[1mcell" in drawn
        assert "\x1b" not in screen_text(app)


async def test_a_reply_rewraps_on_resize_and_redraws_after_release() -> None:
    long = " ".join(f"word{n}" for n in range(120))
    agent, app = await show(long + "\n\n- " + long)
    async with app.run_test(size=(160, 50)) as pilot:
        agent.followup(msg("go", "m1"))
        await idle(pilot, agent)
        (block,) = app.main.transcript.query(AssistantBlock)
        wide, wide_width = lines_of(block), block.size.width
        await pilot.resize_terminal(220, 50)
        await settle(pilot)
        assert block.size.width > wide_width
        wider = lines_of(block)
        assert len(wider) < len(wide)
        await pilot.resize_terminal(100, 50)
        await settle(pilot)
        assert block.size.width < wide_width
        narrow = lines_of(block)
        assert len(narrow) > len(wide)
        assert block.size.height == len(narrow)
        assert all(len(line) <= block.size.width for line in narrow)
        assert " ".join(" ".join(narrow).split()) == " ".join(" ".join(wide).split())
        assert block.release_lines() > 0 and block.held_lines() == 0
        assert lines_of(block) == narrow


async def test_a_window_of_replies_mounts_one_widget_per_reply() -> None:
    replies = [text(SAMPLE) for _ in range(6)]
    ctx, _ = world(replies)
    agent = await add_agent(ctx, "planner", "planner")
    async with make_app(ctx).run_test(size=(100, 40)) as pilot:
        for n in range(6):
            agent.followup(msg(f"again {n}", f"m{n}"))
            await idle(pilot, agent)
        transcript = pilot.app.main.transcript
        blocks = list(transcript.blocks.values())
        replies_shown = [b for b in blocks if isinstance(b, AssistantBlock)]
        assert len(replies_shown) == 6
        widgets = list(transcript.walk_children(Widget))
        assert all(not list(reply.children) for reply in replies_shown)
        assert len(widgets) <= len(blocks) + 3  # blocks, plus markers and the empty hint


async def test_a_new_theme_draws_the_reply_in_its_colours() -> None:
    agent, app = await show(SAMPLE)
    async with app.run_test(size=(120, 60)) as pilot:
        agent.followup(msg("go", "m1"))
        await idle(pilot, agent)
        (block,) = app.main.transcript.query(AssistantBlock)
        lines = lines_of(block)
        dark_code, dark_text = style_of(block, "inline_code()"), style_of(block, " words, ")
        app.theme = "light"
        await settle(pilot)
        light_code, light_text = style_of(block, "inline_code()"), style_of(block, " words, ")
        assert light_text.bgcolor != dark_text.bgcolor and light_code.color != dark_code.color
        assert light_code.bgcolor != light_text.bgcolor
        assert lines_of(block) == lines
        shown = screen_text(app)
        assert "inline_code()" in shown or "The end." in shown
