"""The inbox timeline screen (f5) on a live agent and in `view` on stored logs (ours and
upstream's): what it lists, its filters, the entry in full with its raw event, the step
into the transcript, and that it draws only the rows on screen (issue 29)."""

from __future__ import annotations

from typing import Any

import pytest
from shared_fixtures import fixture

from dsh_tui.compose import open_log
from dsh_tui.harness import user_message
from dsh_tui.llm.scripted import hang, text
from dsh_tui.ui.screens.timeline import TimelineScreen
from dsh_tui.ui.state.inbox_rules import refile

from .conftest import SIZE, add_agent, idle, make_app, msg, screen_text, settle, wait_until, world
from .steering_log import SteeringLog, write_steering_log


@pytest.fixture(scope="module")
def steering(tmp_path_factory: pytest.TempPathFactory) -> SteeringLog:
    import asyncio

    return asyncio.run(write_steering_log(tmp_path_factory.mktemp("steering")))


async def _open(pilot: Any) -> TimelineScreen:
    await pilot.press("f5")
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, TimelineScreen))
    screen = pilot.app.screen
    assert isinstance(screen, TimelineScreen)
    await wait_until(pilot, lambda: "reading the log" not in screen_text(pilot.app))
    await pilot.pause()
    return screen


def _detail(screen: TimelineScreen) -> str:
    return str(screen.query_one("#timeline-detail").render())


async def _cursor_to(pilot: Any, screen: TimelineScreen, needle: str) -> None:
    """Walk the cursor from the first entry down to the one whose detail has `needle`."""
    await pilot.press("home")
    await pilot.pause()
    for _ in range(len(screen.timeline)):
        if needle in _detail(screen):
            return
        await pilot.press("down")
        await pilot.pause()
    raise AssertionError(f"no entry shows {needle!r}")


async def test_a_live_agents_inbox_operations_with_who_made_them() -> None:
    ctx, _ = world([hang()])
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        agent.followup(msg("start", "m0"))
        await wait_until(pilot, lambda: agent.status == "running")
        for text_, id_ in (("alpha", "q1"), ("beta", "q2"), ("gamma", "q3")):
            agent.followup(msg(text_, id_, "follow-up"))
        agent.inbox.replace("q1", agent.inbox.get("q1").with_text("alpha, edited"))
        agent.inbox.move("q3", "next-turn", 0)
        refile(agent.inbox, agent.inbox.get("q2"), "follow-up", "next-turn")
        agent.inbox.remove("q1")
        await settle(pilot)
        screen = await _open(pilot)
        shown = screen_text(app)
        assert "Inbox timeline · planner · all entries" in shown
        for line in ("queued     #q1", "edited     #q1", "moved      #q3", "re-filed   #q2",
                     "removed    #q1", "claimed    #m0", "turn 1 starts"):
            assert line in shown, line
        assert "person" in shown and "system" in shown
        await _cursor_to(pilot, screen, "#q1 remove")  # in full, with its raw event
        detail = _detail(screen)
        assert "raw · seq" in detail and "agent/inbox/spliced" in detail
        await pilot.press("m")  # this message only
        await pilot.pause()
        shown = screen_text(app)
        assert "message #q1" in shown and "#q2" not in shown and "turn 1 starts" in shown
        await pilot.press("b")  # and without the turn and step lines
        await pilot.pause()
        assert "turn 1 starts" not in screen_text(app)
        await _cursor_to(pilot, screen, "#q1 edit")  # the edit: its word diff
        assert "change:" in _detail(screen) and "edited" in _detail(screen)
        await pilot.press("m", "b", "a")  # everything, then the person's entries only
        await pilot.pause()
        shown = screen_text(app)
        assert "by person" in shown and "claimed    #m0" not in shown
        agent.followup(msg("delta", "q4"))  # live: a new entry shows up
        await settle(pilot)
        await wait_until(pilot, lambda: "#q4" in screen_text(app))
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, TimelineScreen)
        agent.cancel()
        await idle(pilot, agent)


async def test_enter_goes_to_where_the_message_entered_the_models_context() -> None:
    ctx, _ = world([text("first answer"), text("second answer")])
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        agent.followup(user_message("the first question", id="u1"))
        await idle(pilot, agent)
        agent.followup(user_message("the second question", id="u2"))
        await idle(pilot, agent)
        screen = await _open(pilot)
        await _cursor_to(pilot, screen, "#u1 sent")
        await pilot.press("enter")
        await wait_until(pilot, lambda: not isinstance(app.screen, TimelineScreen))
        await settle(pilot)
        assert app.main.transcript.marked is not None
        items = app.main.selected_view.transcript.items
        assert items[app.main.transcript.marked].message_id == "u1"
        assert "#u1: where it entered the model's context (answered · turn 1 step 1)" in \
            app.main.status_line.text


async def test_a_receipt_in_the_inbox_opens_its_history() -> None:
    ctx, _ = world([text("answer")])
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        agent.followup(user_message("the question", id="u1"))
        await idle(pilot, agent)
        inbox = app.main.inbox
        inbox.focus()
        inbox.highlighted = next(i for i, row in enumerate(inbox.rows) if row.kind == "receipt")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, TimelineScreen))
        await pilot.pause()
        shown = screen_text(app)
        assert "message #u1" in shown and "claimed    #u1" in shown


async def test_in_view_an_upstream_log(tmp_path: Any) -> None:
    ctx = open_log(fixture("upstream-logs", "fresh-round-trip.jsonl"))
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await _open(pilot)
        shown = screen_text(app)
        assert "sent" in shown and "turn 1 starts" in shown and "tool call" in shown
        assert "request" in shown and "reply" in shown


async def test_in_view_one_of_this_apps_logs(steering: SteeringLog) -> None:
    ctx = open_log(steering.path)
    app = make_app(ctx)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        await _open(pilot)
        shown = screen_text(app)
        assert "arrived" in shown  # a claim says when its item arrived
        assert "put back" in shown and "crash repair" not in shown.splitlines()[0]
        assert f"#{steering.refiled.id[:6]}" in shown


async def test_ten_thousand_operations_open_drawing_only_the_rows_on_screen() -> None:
    ctx, _ = world([hang()])
    agent = await add_agent(ctx, "planner", "planner")
    for index in range(5_000):
        agent.inbox.append("next-turn", user_message(f"item {index}", id=f"i{index}"))
        agent.inbox.remove(f"i{index}")
    app = make_app(ctx)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        screen = await _open(pilot)
        lines = screen.lines
        assert len(lines.timeline) == 10_000
        assert lines.lines_drawn <= 10 * lines.size.height  # a few frames, not 10,000 rows
        assert "removed    #i4999" in screen_text(app)
        await pilot.press("home")
        await pilot.pause()
        assert "queued     #i0" in screen_text(app)
