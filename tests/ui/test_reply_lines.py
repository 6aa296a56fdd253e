"""A reply's Markdown is drawn line by line by the one transcript view.

These run the app (`App.run_test`) and judge by what a reply draws: the text of its lines
(the rows the transcript's `render_line` shows) and the styles of their segments.
"""

from __future__ import annotations

import asyncio
from typing import Any

from rich.style import Style as RichStyle

from dsh_tui.llm.scripted import text
from dsh_tui.ui.widgets.transcript import Transcript

from .conftest import add_agent, idle, make_app, msg, screen_text, settle, wait_until, world
from .test_transcript_view import GatedModel

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


def reply_of(app: Any) -> tuple[Transcript, int]:
    """The transcript and the index of its one reply."""
    transcript = app.main.transcript
    (index,) = [item.index for item in transcript.lines.items if item.kind == "text"]
    return transcript, index


def lines_of(app: Any) -> list[str]:
    """The text of every line the reply draws."""
    transcript, index = reply_of(app)
    return transcript.item_text(index)


def segments_of(app: Any, needle: str) -> list[tuple[str, RichStyle]]:
    """The styled segments of the first line that contains `needle`."""
    transcript, index = reply_of(app)
    for row in transcript.item_rows(index):
        if needle in row.body.text:
            return [(segment.text, segment.style or RichStyle()) for segment in row.body]
    raise AssertionError(f"{needle!r} is not drawn")


def style_of(app: Any, word: str) -> RichStyle:
    for piece, style in segments_of(app, word):
        if word in piece:
            return style
    raise AssertionError(f"{word!r} is not one segment")


def reply_item(app: Any) -> Any:
    transcript, index = reply_of(app)
    return transcript.lines.items[index]


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
            transcript = app.main.transcript
            assert list(transcript.children) == []  # no widget per item, paragraph or fence
            lines = lines_of(app)
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
            assert all(len(line) <= transcript.text_width for line in lines)
            # styles: bold, italic, strike, inline code on its background, the link underlined
            assert style_of(app, "heavy").bold and style_of(app, "leaning").italic
            assert style_of(app, "gone").strike and style_of(app, "link").underline
            code = style_of(app, "inline_code()")
            plain = style_of(app, " words, ")
            assert code.bgcolor != plain.bgcolor and code.color != plain.color
            assert style_of(app, "Name").bold
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
        await wait_until(pilot, lambda: bool(app.main.transcript.lines.items) and any(
            item.kind == "text" and item.current_text() == SAMPLE
            for item in app.main.transcript.lines.items))
        await settle(pilot)
        streamed, width = lines_of(app), app.main.transcript.text_width
        assert reply_item(app).streaming
        await gated.parts.put(None)
        await asyncio.wait_for(agent.when_idle(), 10)
        await wait_until(pilot, lambda: not reply_item(app).streaming)
        await settle(pilot)
        assert lines_of(app) == streamed
        app.main.transcript.lines.cache.clear()  # parsed whole once complete: the same lines
        assert lines_of(app) == streamed

    fresh = await add_agent(other, "fresh", "fresh")
    async with make_app(other).run_test(size=(80, 90)) as pilot:
        fresh.followup(msg("go", "m1"))
        await idle(pilot, fresh)
        assert pilot.app.main.transcript.text_width == width
        assert lines_of(pilot.app) == streamed


async def test_an_open_fence_is_plain_and_highlighted_once_closed() -> None:
    gated = GatedModel()
    from dsh_tui.compose import build_context

    ctx = build_context(providers={"mock": gated}, tools=[], retry=False, system_prompt=None)
    agent = await add_agent(ctx, "planner", "planner")
    async with make_app(ctx).run_test(size=(100, 40)) as pilot:
        app = pilot.app
        agent.followup(msg("go", "m1"))
        await gated.parts.put("Code:\n\n```python\nvalue = 42\n")
        await wait_until(pilot, lambda: any(
            item.kind == "text" for item in app.main.transcript.lines.items))
        await wait_until(pilot, lambda: "value = 42" in "\n".join(lines_of(app)))
        colours = {style.color for piece, style in segments_of(app, "value") if piece.strip()}
        assert len(colours) == 1  # open: one plain colour
        await gated.parts.put("```\n\nAfter the code.")
        await wait_until(pilot, lambda: "After the code." in "\n".join(lines_of(app)))
        assert reply_item(app).streaming
        colours = {style.color for piece, style in segments_of(app, "value") if piece.strip()}
        assert len(colours) > 1  # closed (another block follows): highlighted
        await gated.parts.put(None)
        await asyncio.wait_for(agent.when_idle(), 10)
        await wait_until(pilot, lambda: not reply_item(app).streaming)
        colours = {style.color for piece, style in segments_of(app, "value") if piece.strip()}
        assert len(colours) > 1


async def test_search_marks_matches_in_text_lists_tables_and_code() -> None:
    agent, app = await show(SAMPLE)
    async with app.run_test(size=(160, 60)) as pilot:
        agent.followup(msg("plan it", "m1"))
        await idle(pilot, agent)
        transcript, index = reply_of(app)
        lines = lines_of(app)
        await pilot.press("ctrl+f", *"point")
        await settle(pilot)
        assert transcript.marked == index and transcript.search_query == "point"
        for needle in ("first point", "nested point"):
            marked = [piece for piece, style in segments_of(app, needle) if style.reverse]
            assert marked == ["point"]
        transcript.mark(index, "circle")
        marked = [piece for piece, style in segments_of(app, "# circle") if style.reverse]
        assert marked == ["circle"]
        transcript.mark(index, "ALPHA")  # a capital matches exactly: none here
        assert not [p for p, style in segments_of(app, "alpha") if style.reverse]
        transcript.mark(None)
        assert not any(segment.style.reverse for row in transcript.item_rows(index)
                       for segment in row.body if segment.style)
        assert lines_of(app) == lines  # marks change styles, never the text


async def test_escape_sequences_stay_visible_text_in_every_kind() -> None:
    reply = ("Title \x1b]0;pwned\x07 here\n\n- item \x1b[31mred\x1b[0m\n\n"
             "```\ncode \x1b[2J [b]x[/b]\n```\n\n| a |\n|---|\n| \x1b[1mcell |\n")
    agent, app = await show(reply)
    async with app.run_test(size=(100, 40)) as pilot:
        agent.followup(msg("go", "m1"))
        await idle(pilot, agent)
        drawn = "\n".join(lines_of(app))
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
        transcript, index = reply_of(app)
        wide, wide_width = lines_of(app), transcript.text_width
        await pilot.resize_terminal(220, 50)
        await settle(pilot)
        assert transcript.text_width > wide_width
        wider = lines_of(app)
        assert len(wider) < len(wide)
        await pilot.resize_terminal(100, 50)
        await settle(pilot)
        assert transcript.text_width < wide_width
        narrow = lines_of(app)
        assert len(narrow) > len(wide)
        assert transcript.region_of(index)[1] == len(narrow)
        assert all(len(line) <= transcript.text_width for line in narrow)
        assert " ".join(" ".join(narrow).split()) == " ".join(" ".join(wide).split())
        transcript.lines.cache.clear()
        assert transcript.lines.cache.held == 0 and lines_of(app) == narrow


async def test_many_replies_are_drawn_by_one_widget_from_a_bounded_cache() -> None:
    replies = [text(SAMPLE) for _ in range(6)]
    ctx, _ = world(replies)
    agent = await add_agent(ctx, "planner", "planner")
    async with make_app(ctx).run_test(size=(100, 40)) as pilot:
        for n in range(6):
            agent.followup(msg(f"again {n}", f"m{n}"))
            await idle(pilot, agent)
        transcript = pilot.app.main.transcript
        shown = [item.index for item in transcript.lines.items if item.kind == "text"]
        assert len(shown) == 6 and not list(transcript.children)
        transcript.lines.cache.max_lines = 120
        transcript.lines.cache.clear()
        for index in shown:
            assert transcript.item_text(index)[-1] == "The end."
        assert transcript.lines.cache.held <= 120 + len(transcript.item_rows(shown[-1]))


async def test_a_new_theme_draws_the_reply_in_its_colours() -> None:
    agent, app = await show(SAMPLE)
    async with app.run_test(size=(120, 60)) as pilot:
        agent.followup(msg("go", "m1"))
        await idle(pilot, agent)
        lines = lines_of(app)
        dark_code, dark_text = style_of(app, "inline_code()"), style_of(app, " words, ")
        app.theme = "light"
        await settle(pilot)
        light_code, light_text = style_of(app, "inline_code()"), style_of(app, " words, ")
        assert light_text.bgcolor != dark_text.bgcolor and light_code.color != dark_code.color
        assert light_code.bgcolor != light_text.bgcolor
        assert lines_of(app) == lines
        shown = screen_text(app)
        assert "inline_code()" in shown or "The end." in shown
