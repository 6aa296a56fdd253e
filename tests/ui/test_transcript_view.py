"""The transcript as one line view: what streaming costs, following the tail, toggles,
dividers, clicks and the empty hint, judged by what the view draws and what it rendered
(`ui/widgets/transcript.py`, `ui/state/transcript_lines.py`)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from dsh_tui.compose import build_context
from dsh_tui.llm.scripted import ScriptedModel, reasoning, reply, text, tool_call
from dsh_tui.loop import Tool

from .conftest import SIZE, add_agent, idle, make_app, msg, screen_text, settle, wait_until, world


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


def kinds(transcript: Any) -> list[str]:
    return [item.kind for item in transcript.lines.items]


async def test_streaming_renders_only_the_open_item_and_never_re_measures_the_rest() -> None:
    gated = GatedModel()
    ctx = build_context(providers={"mock": gated}, tools=[], retry=False, system_prompt=None)
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        agent.followup(msg("first", "m1"))
        await gated.parts.put("\n\n".join(f"earlier {n}" for n in range(40)))
        await gated.parts.put(None)
        await idle(pilot, agent)
        transcript = app.main.transcript
        before = len(transcript.lines.items)
        exact = [i for i in range(before) if transcript.lines.is_exact(i)]
        assert exact and transcript.lines.measured >= len(exact)
        agent.followup(msg("second", "m2"))
        await gated.parts.put("Start.")
        await wait_until(pilot, lambda: "Start." in screen_text(app))
        (open_item,) = [item.index for item in transcript.lines.items if item.streaming]
        measured = transcript.lines.measured
        for n in range(12):
            await gated.parts.put(f"\n\nline {n} of the stream")
            await wait_until(pilot, lambda n=n: f"line {n} of the stream" in screen_text(app))
        rendered = transcript.lines.measured - measured
        # each flush renders the open item again; nothing else (the rest keep their lines)
        assert 1 <= rendered <= 12 + 2
        assert all(transcript.lines.is_exact(i) for i in exact)
        assert transcript.following and transcript.scroll_y == transcript.max_scroll_y
        await gated.parts.put(None)
        await asyncio.wait_for(agent.when_idle(), 10)
        await settle(pilot)
        assert "line 11 of the stream" in screen_text(app)
        assert transcript.item_text(open_item)[-1] == "line 11 of the stream"


async def test_the_view_follows_the_tail_until_scrolled_up_and_end_follows_again() -> None:
    gated = GatedModel()
    ctx = build_context(providers={"mock": gated}, tools=[], retry=False, system_prompt=None)
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        agent.followup(msg("go", "m1"))
        await gated.parts.put("".join(f"Paragraph {n}.\n\n" for n in range(60)))
        await wait_until(pilot, lambda: "Paragraph 59." in screen_text(app))
        transcript = app.main.transcript
        assert transcript.following and transcript.max_scroll_y > 0
        transcript.focus()
        await pilot.press("pageup")
        await settle(pilot)
        assert not transcript.following
        assert "new output below" in screen_text(app)
        top = transcript.scroll_y
        await gated.parts.put("Paragraph 60.\n\n")
        await wait_until(pilot, lambda: any("Paragraph 60." in item.current_text()
                                            for item in transcript.lines.items))
        await settle(pilot)
        assert transcript.scroll_y == top and "Paragraph 60." not in screen_text(app)
        await pilot.press("end")
        await settle(pilot)
        assert transcript.following and "Paragraph 60." in screen_text(app)
        await gated.parts.put("Paragraph 61.\n\n")
        await wait_until(pilot, lambda: "Paragraph 61." in screen_text(app))
        await gated.parts.put(None)
        await asyncio.wait_for(agent.when_idle(), 10)


async def test_toggles_and_clicks_open_reasoning_and_tool_calls() -> None:
    script = [reply(reasoning("first thought\nsecond"),
                    tool_call("c1", "read_file", {"path": "notes.txt"})),
              reply(reasoning("why\nbecause"), text("done reading"))]
    ctx, _ = world(script, tools=[_echo_tool()])
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        agent.followup(msg("go", "m1"))
        await idle(pilot, agent)
        transcript = app.main.transcript
        thoughts = [i.index for i in transcript.lines.items if i.kind == "reasoning"]
        (tool,) = [i.index for i in transcript.lines.items if i.kind == "tool"]
        assert len(thoughts) == 2
        assert transcript.item_text(thoughts[0]) == ["▸ reasoning · 2 lines first thought"]
        collapsed_tool = transcript.item_text(tool)
        assert collapsed_tool[0].startswith("λ read_file ✓")
        transcript.focus()
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert transcript.item_text(thoughts[0]) == ["▾ reasoning", "first thought", "second"]
        assert transcript.item_text(thoughts[1])[1:] == ["why", "because"]
        await pilot.press("ctrl+e")
        await settle(pilot)
        opened = transcript.item_text(tool)
        assert "arguments" in opened and '  "path": "notes.txt"' in opened
        await pilot.press("ctrl+e", "ctrl+r")
        await settle(pilot)
        assert transcript.item_text(tool) == collapsed_tool
        assert len(transcript.item_text(thoughts[0])) == 1
        # a click opens one item alone
        first, _height = transcript.region_of(thoughts[1])
        transcript.scroll_to(y=max(0, first - 2), animate=False, immediate=True)
        await settle(pilot)
        row = first - round(transcript.scroll_y)
        await pilot.click(transcript, offset=(4, row + transcript.gutter.top))
        await settle(pilot)
        assert transcript.item_text(thoughts[1])[1:] == ["why", "because"]
        assert len(transcript.item_text(thoughts[0])) == 1


def _echo_tool() -> Tool:
    return Tool("read_file", "reads a file", {"type": "object", "properties": {}},
                lambda _args: "line one\nline two")


async def test_turn_and_step_dividers_show_their_end_reasons() -> None:
    ctx, _ = world([tool_call("c1", "read_file", {"path": "x"}), text("answer")],
                   tools=[_echo_tool()])
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=(80, 24)) as pilot:
        agent.followup(msg("go", "m1"))
        await idle(pilot, agent)
        transcript = app.main.transcript
        assert kinds(transcript)[0] == "turn" and "step" in kinds(transcript)
        assert kinds(transcript)[-1] == "turn-end"
        (turn,) = transcript.item_text(0)
        assert turn.startswith("── turn 1 ─") and turn.endswith("─")
        (step,) = [transcript.item_text(i.index)[0] for i in transcript.lines.items
                   if i.kind == "step"]
        assert step == "· step 2"
        (end,) = transcript.item_text(len(transcript.lines.items) - 1)
        assert end.startswith("── turn 1 · completed · ") and end.endswith("─")
        assert len(end) == transcript.text_width
        assert "turn 1 · completed" in screen_text(app)


async def test_an_empty_transcript_shows_its_hint_and_the_first_item_replaces_it() -> None:
    ctx, _ = world([text("hello there")])
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=(60, 20)) as pilot:
        await settle(pilot)
        assert "No messages yet" in screen_text(app)
        agent.followup(msg("hi", "m1"))
        await idle(pilot, agent)
        shown = screen_text(app)
        assert "No messages yet" not in shown and "hello there" in shown


async def test_a_model_with_no_script_left_is_a_visible_notice() -> None:
    ctx = build_context(providers={"mock": ScriptedModel([])}, retry=False, system_prompt=None)
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        agent.followup(msg("hi", "m1"))
        await idle(pilot, agent)
        transcript = app.main.transcript
        assert kinds(transcript)[-1] == "turn-end"
        assert "turn 1 ·" in screen_text(app)
