"""Step breakpoints: `b` on an agent stops it before each step, in that agent's own panel.

The pause is shown under the paused agent's transcript only, never over another
agent's screen; the batch can be edited before continuing; escape stops the agent
(never continues); a skipped or stopped batch is offered back in the inbox.
"""

from __future__ import annotations

import pytest

from dsh_tui.llm.scripted import text, tool_call
from dsh_tui.loop import Tool

from .conftest import SIZE, add_agent, idle, make_app, msg, screen_text, settle, wait_until, world


async def _arm(pilot, app, agent_id: str) -> None:
    app.main.select_agent(agent_id, focus_tree=True)
    await settle(pilot)
    await pilot.press("f7")
    await settle(pilot)
    assert app.breakpoints is not None and app.breakpoints.is_armed(agent_id)
    app.main.composer.focus()


async def _paused(pilot, app, agent_id: str = "planner", step: int = 1) -> None:
    """Wait until `agent_id` waits at the breakpoint of `step`, then let the screen settle."""
    await wait_until(pilot, lambda: (p := app.breakpoints.paused.get(agent_id)) is not None
                     and p.step == step)
    await settle(pilot)


def _types(agent) -> list[str]:
    return [e.type for e in agent.session.events]


def _users(agent) -> list[tuple[str, str]]:
    return [(e.data["id"], e.data["content"][0]["text"]) for e in agent.session.events
            if e.type == "user/message"]


async def test_continue_sends_the_batch_it_showed() -> None:
    ctx, model = world([text("done")])
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        await _arm(pilot, app, "planner")
        assert "◆" in screen_text(app)  # the tree row shows the breakpoint
        # Context first (it does not wake the agent), then the prompt: one batch of two.
        agent.inject(msg("focus on [inject] writes", "s1", "inject"))
        agent.followup(msg("compare the designs", "m1"))
        await _paused(pilot, app)
        shown = screen_text(app)
        assert "paused at breakpoint" in shown
        assert "Turn 1, before step 1: this step will send 2 new messages" in shown
        assert "focus on [inject] writes" in shown and "compare the designs" in shown
        assert app.screen is app.screen_stack[0]  # a panel, not a modal over everything
        # Nothing was requested or logged as a step yet: the agent waits at the boundary.
        assert model.requests == [] and "step/start" not in _types(agent)
        assert agent.status == "running"
        await pilot.press("f8")
        await idle(pilot, agent)
        assert len(model.requests) == 1
        assert [i for i, _ in _users(agent)] == ["s1", "m1"]
        assert agent.session.events[-1].data["reason"] == {"kind": "completed"}
        assert not app.main.breakpoint_panel.display


async def test_the_batch_is_edited_in_the_panel_before_it_is_sent() -> None:
    ctx, model = world([text("done")])
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        await _arm(pilot, app, "planner")
        agent.followup(msg("compare teh designs", "m1"))
        await _paused(pilot, app)
        app.query_one("#bp-batch").focus()
        await pilot.press("enter")  # edit the highlighted message
        await wait_until(pilot, lambda: type(app.screen).__name__ == "EditScreen")
        editor = app.screen.query_one("#edit-text")
        editor.text = "compare the designs, briefly"
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert "compare the designs, briefly" in screen_text(app) and "edited" in screen_text(app)
        await pilot.press("f8")
        await idle(pilot, agent)
        assert _users(agent) == [("m1", "compare the designs, briefly")]
        sent = model.requests[0]["messages"][-1]
        assert "compare the designs, briefly" in str(sent) and "teh" not in str(sent)


async def test_skip_ends_the_turn_and_the_batch_is_offered_back() -> None:
    ctx, model = world([text("later")])
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        await _arm(pilot, app, "planner")
        agent.steer(msg("look at the writes", "s1", "steer"))
        await _paused(pilot, app)
        agent.followup(msg("and then summarise", "m2"))
        await pilot.click("#skip")
        await idle(pilot, agent)
        assert model.requests == []
        assert agent.session.events[-1].data["reason"] == {"kind": "blocked"}
        assert "user/message" not in _types(agent)
        shown = screen_text(app)
        assert "CLAIMED, NEVER SENT · 1" in shown and "look at the writes" in shown
        app.main.inbox.focus()
        await pilot.press("ctrl+u")
        await settle(pilot)
        # Back at the head of its own lane, same id, same text, same lane.
        assert [(m.id, m.text) for m in agent.inbox.next_step] == [("s1", "look at the writes")]
        assert agent.inbox.next_step[0].source.get("lane") == "steer"
        assert [m.id for m in agent.inbox.next_turn] == ["m2"]
        assert "CLAIMED, NEVER SENT" not in screen_text(app)


async def test_every_step_stops_until_the_breakpoint_is_removed() -> None:
    looked = Tool("look", "looks", {"type": "object", "properties": {}}, lambda _a: "seen")
    ctx, model = world([tool_call("c1", "look", {}), text("after the tool"), text("second")],
                       tools=[looked])
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        await _arm(pilot, app, "planner")
        agent.followup(msg("use the tool", "m1"))
        await _paused(pilot, app)
        await pilot.press("f8")
        # Step 2 follows the tool result: no new inbox messages, and it stops again.
        await _paused(pilot, app, step=2)
        assert "no new messages from the inbox" in screen_text(app)
        await pilot.click("#disarm")  # continue, and remove the breakpoint
        await idle(pilot, agent)
        assert not app.breakpoints.is_armed("planner")
        agent.followup(msg("again", "m2"))
        await idle(pilot, agent)  # no stop this time
        assert len(model.requests) == 3
        assert not app.main.breakpoint_panel.display


async def test_a_pause_belongs_to_its_agent_and_escape_never_continues() -> None:
    ctx, model = world([text("never")])
    planner = await add_agent(ctx, "planner", "planner")
    await add_agent(ctx, "scribe", "scribe")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        await _arm(pilot, app, "planner")
        app.main.select_agent("scribe")
        app.main.composer.focus()
        planner.followup(msg("do it", "m1"))
        await _paused(pilot, app)
        # The scribe's screen is untouched: no panel, and typed keys land in its composer.
        assert not app.main.breakpoint_panel.display
        await pilot.press(*"yes csr")
        assert app.main.composer.text == "yes csr"
        assert planner.status == "running" and app.breakpoints.paused.get("planner")
        assert "◆ planner paused" in screen_text(app)  # the tree row says where it is
        await pilot.press("f8")  # continues the *selected* agent only: the scribe is not paused
        await settle(pilot)
        assert app.breakpoints.paused.get("planner") is not None and model.requests == []
        # On its own screen the panel shows; escape there stops the agent, it never continues.
        app.main.select_agent("planner")
        await settle(pilot)
        assert app.main.breakpoint_panel.display
        app.query_one("#continue").focus()
        await pilot.press("escape")
        await idle(pilot, planner)
        assert model.requests == []
        assert planner.session.events[-1].data["reason"]["kind"] == "aborted"
        assert "CLAIMED, NEVER SENT · 1" in screen_text(app)


async def test_cancel_while_paused_closes_the_panel_and_keeps_the_inbox() -> None:
    ctx, model = world([text("never")])
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        await _arm(pilot, app, "planner")
        agent.followup(msg("do it", "m1"))
        await _paused(pilot, app)
        agent.followup(msg("later", "m2"))
        agent.cancel(keep_inbox=True)
        await idle(pilot, agent)
        await settle(pilot)
        assert not app.main.breakpoint_panel.display
        assert model.requests == []
        assert agent.session.events[-1].data["reason"]["kind"] == "aborted"
        assert [m.id for m in agent.inbox.next_turn] == ["m2"]
        assert agent.status == "idle"


async def test_search_leaves_breakpoints_alone() -> None:
    """Regression: one ctrl+f used to reset the breakpoints (b did nothing, ◆ vanished)."""
    ctx, model = world([text("found a needle"), text("done")])
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        app.main.select_agent("planner")
        agent.followup(msg("look for it", "m0"))
        await idle(pilot, agent)
        await _arm(pilot, app, "planner")
        await pilot.press("ctrl+f", *"needle", "enter", "escape")
        await settle(pilot)
        assert app.breakpoints is not None and app.breakpoints.is_armed("planner")
        assert "◆" in screen_text(app)
        agent.followup(msg("again", "m1"))
        await _paused(pilot, app)
        await pilot.press("f8")
        await idle(pilot, agent)
        assert len(model.requests) == 2
        app.main.select_agent("planner", focus_tree=True)
        await pilot.press("f7")  # f7 still removes it
        assert not app.breakpoints.is_armed("planner")


async def _walk(pilot, app, key: str, presses: int) -> list[str]:
    """The id of what has the focus after each of `presses` presses of `key`."""
    seen = []
    for _ in range(presses):
        await pilot.press(key)
        await pilot.pause()
        seen.append(app.focused.id if app.focused is not None else "")
    return seen


@pytest.mark.parametrize("size", [SIZE, (80, 24)])  # wide, and narrow (side panes folded)
async def test_tab_never_lands_on_skip_whose_enter_ends_the_turn(size: tuple[int, int]) -> None:
    """shift+tab from the composer went inbox, "Continue, remove", "Skip step": one more
    enter, meant for the composer, ended the turn. The button row is one stop (Continue);
    the other buttons are reached with the arrows, and Skip says what enter would do."""
    ctx, _ = world([text("done")])
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=size) as pilot:
        app.main.select_agent("planner")
        await app.run_action("screen.toggle_breakpoint")  # (f7 is the tree's, folded if narrow)
        assert app.breakpoints.is_armed("planner")
        agent.followup(msg("compare the designs", "m1"))
        await _paused(pilot, app)
        panel = app.main.breakpoint_panel
        for key in ("shift+tab", "tab"):
            app.main.composer.focus()
            await pilot.pause()
            seen = await _walk(pilot, app, key, 12)
            assert "continue" in seen, (key, seen)
            assert "skip" not in seen and "disarm" not in seen, (key, seen)
        app.query_one("#continue").focus()
        assert await _walk(pilot, app, "right", 3) == ["disarm", "skip", "skip"]
        assert "enter on Skip step ends this turn" in str(panel.border_subtitle)
        assert await _walk(pilot, app, "left", 1) == ["disarm"]
        assert "enter on Skip step" not in str(panel.border_subtitle)
        await _walk(pilot, app, "right", 1)
        assert await _walk(pilot, app, "shift+tab", 1) == ["continue"]
        assert app.breakpoints.paused.get("planner") is not None  # nothing was decided
        await pilot.press("f8")
        await idle(pilot, agent)
