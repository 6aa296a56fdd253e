"""Step breakpoints: `b` on an agent stops it before each step, showing the batch it will send."""

from __future__ import annotations

from dsh_tui.llm.scripted import text, tool_call
from dsh_tui.loop import Tool
from dsh_tui.ui.screens.breakpoint import BreakpointScreen

from .conftest import SIZE, add_agent, idle, make_app, msg, screen_text, settle, wait_until, world


async def _arm(pilot, app, agent_id: str) -> None:
    app.select_agent(agent_id, focus_tree=True)
    await settle(pilot)
    await pilot.press("b")
    await settle(pilot)
    assert app.breakpoints is not None and app.breakpoints.is_armed(agent_id)


async def _paused(pilot, app, step: int = 1) -> None:
    """Wait for the breakpoint dialog of `step`, then let it lay out."""
    await wait_until(pilot, lambda: isinstance(app.screen, BreakpointScreen)
                     and app.screen.pause.step == step)
    await settle(pilot)


def _types(agent) -> list[str]:
    return [e.type for e in agent.session.events]


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
        assert "turn 1, before step 1" in shown
        assert "This step will send 2 new messages" in shown
        assert "focus on [inject] writes" in shown and "compare the designs" in shown
        # Nothing was requested or logged as a step yet: the agent waits at the boundary.
        assert model.requests == [] and "step/start" not in _types(agent)
        assert agent.status == "running"
        await pilot.press("c")
        await idle(pilot, agent)
        assert len(model.requests) == 1
        users = [e.data["id"] for e in agent.session.events if e.type == "user/message"]
        assert users == ["s1", "m1"]
        assert agent.session.events[-1].data["reason"] == {"kind": "completed"}


async def test_skip_rejects_the_step_and_the_turn_ends_blocked() -> None:
    ctx, model = world([text("never")])
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        await _arm(pilot, app, "planner")
        agent.followup(msg("do it", "m1"))
        await _paused(pilot, app)
        await pilot.press("s")
        await idle(pilot, agent)
        assert model.requests == []
        assert agent.session.events[-1].data["reason"] == {"kind": "blocked"}
        assert "user/message" not in _types(agent) and not agent.inbox.has_pending


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
        await pilot.press("enter")
        # Step 2 follows the tool result: no new inbox messages, and it stops again.
        await _paused(pilot, app, step=2)
        assert "No new messages from the inbox" in screen_text(app)
        await pilot.press("r")  # continue, and remove the breakpoint
        await idle(pilot, agent)
        assert not app.breakpoints.is_armed("planner")
        agent.followup(msg("again", "m2"))
        await idle(pilot, agent)  # no stop this time
        assert len(model.requests) == 3
        assert not isinstance(app.screen, BreakpointScreen)


async def test_cancel_while_paused_closes_the_dialog_and_keeps_the_inbox() -> None:
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
        assert not isinstance(app.screen, BreakpointScreen)
        assert model.requests == []
        assert agent.session.events[-1].data["reason"]["kind"] == "aborted"
        assert [m.id for m in agent.inbox.next_turn] == ["m2"]
        assert agent.status == "idle"
