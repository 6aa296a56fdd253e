"""The composer: typing and sending in each lane, newlines, paste, history."""

from __future__ import annotations

import asyncio
from typing import Any

from textual import events

from dsh_tui.llm.scripted import hang, text

from .conftest import SIZE, add_agent, idle, make_app, screen_text, settle, wait_until, world


def user_messages(agent: Any) -> list[Any]:
    return [e.data for e in agent.session.events if e.type == "user/message"]


async def test_enter_sends_a_follow_up_that_the_agent_answers() -> None:
    ctx, _ = world([text("hello back")])
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.main.selected_id == "planner"  # the first root is selected at start
        await pilot.press(*"hello there")
        await pilot.press("enter")
        await idle(pilot, agent)
        sent = user_messages(agent)
        assert [m["content"][0]["text"] for m in sent] == ["hello there"]
        assert sent[0]["source"] == {"kind": "user", "lane": "follow-up"}
        assert app.main.composer.text == ""
        shown = screen_text(app)
        assert "↵ follow-up" in shown and "hello back" in shown
        assert "turn 1 · completed" in shown


async def test_steer_and_inject_land_in_next_step_while_running() -> None:
    ctx, _ = world([hang()])
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"start")
        await pilot.press("enter")
        await wait_until(pilot, lambda: agent.status == "running")
        await pilot.press(*"go faster")
        await pilot.press("ctrl+s")
        await pilot.press(*"notes.md says hi")
        await pilot.press("ctrl+t")
        await pilot.press(*"then summarise")
        await pilot.press("enter")
        await settle(pilot)
        step, turn = agent.inbox.next_step, agent.inbox.next_turn
        assert [(m.text, m.source["lane"]) for m in step] == [("go faster", "steer"),
                                                              ("notes.md says hi", "inject")]
        assert step[1].source["kind"] == "plugin"  # injected context, not a prompt
        assert [(m.text, m.source["lane"]) for m in turn] == [("then summarise", "follow-up")]
        shown = screen_text(app)
        for badge in ("⚑ steer", "✚ inject", "↵ follow-up", "NEXT STEP · 2", "NEXT TURN · 1"):
            assert badge in shown
        agent.cancel()
        await idle(pilot, agent)


async def test_steer_wakes_an_idle_agent_and_inject_does_not() -> None:
    ctx, _ = world([text("steered")])
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"context only")
        await pilot.press("ctrl+t")
        await settle(pilot)
        assert agent.status == "idle" and [m.text for m in agent.inbox.next_step] == [
            "context only"]
        await pilot.press(*"do it now")
        await pilot.press("ctrl+s")
        await idle(pilot, agent)
        texts = [m["content"][0]["text"] for m in user_messages(agent)]
        assert texts == ["context only", "do it now"]  # one step, the inject rides along


async def test_ctrl_j_and_paste_keep_newlines() -> None:
    ctx, _ = world([text("ok")])
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"line one")
        await pilot.press("ctrl+j")
        await pilot.press(*"line two")
        app.post_message(events.Paste("\npasted\nlines"))
        await pilot.pause()
        assert app.main.composer.text == "line one\nline two\npasted\nlines"
        await pilot.press("enter")
        await idle(pilot, agent)
        assert user_messages(agent)[0]["content"][0]["text"] == \
            "line one\nline two\npasted\nlines"


async def test_history_walks_back_through_sent_messages() -> None:
    ctx, _ = world([text("a"), text("b")])
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        for word in ("first", "second"):
            await pilot.press(*word)
            await pilot.press("enter")
            await idle(pilot, agent)
        await pilot.press(*"draft")
        await pilot.press("up")
        assert app.main.composer.text == "second"
        await pilot.press("up")
        assert app.main.composer.text == "first"
        await pilot.press("down")
        await pilot.press("down")
        assert app.main.composer.text == "draft"


async def test_empty_enter_says_so() -> None:
    ctx, _ = world([])
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await pilot.pause()
        assert any("Nothing to send" in n.message for n in app._notifications)
        assert not agent.inbox.has_pending


async def test_a_large_paste_is_sent_whole() -> None:
    ctx, _ = world([text("got it")])
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    big = ("0123456789abcdef" * 64 + "\n") * 1000  # ~1 MB
    async with app.run_test(size=SIZE) as pilot:
        app.post_message(events.Paste(big))
        await pilot.pause()
        await pilot.press("enter")
        await asyncio.wait_for(agent.when_idle(), 30)
        await settle(pilot)
        assert user_messages(agent)[0]["content"][0]["text"] == big
