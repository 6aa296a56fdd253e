"""The agent tree and the agent-level keys: create, own, dispose, select, cancel."""

from __future__ import annotations

from typing import Any

from textual.widgets import Input

from dsh_tui.llm.scripted import hang, text
from dsh_tui.ui.screens.confirm import YES_KEY, ConfirmScreen
from dsh_tui.ui.screens.name import NameScreen

from .conftest import SIZE, add_agent, idle, make_app, msg, screen_text, settle, wait_until, world


def tree_paths(app: Any) -> list[str]:
    """`parent/child` paths of every listed row, in tree order."""
    out: list[str] = []
    trail: list[str] = []
    for line in app.main.agent_tree.lines:
        del trail[line.depth:]
        trail.append(line.agent_id)
        out.append("/".join(trail))
    return out


async def test_tree_follows_creation_ownership_and_disposal() -> None:
    ctx, _ = world([])
    planner = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert tree_paths(app) == ["planner"]
        second = await add_agent(ctx, "scratch", "scratch pad")
        child = await add_agent(ctx, "researcher", "researcher", owner=planner)
        grandchild = await add_agent(ctx, "reader", "reader", owner=child)
        await settle(pilot)
        assert tree_paths(app) == ["planner", "planner/researcher",
                                   "planner/researcher/reader", "scratch"]
        assert ctx.agents.is_owned_by("reader", child)
        shown = screen_text(app)
        assert "scratch pad" in shown and "researcher" in shown
        await ctx.agents.dispose("researcher")
        await settle(pilot)
        assert tree_paths(app) == ["planner", "scratch"]
        assert second.id in app.main.agent_tree.listed
        assert grandchild.id not in app.main.agent_tree.listed


async def test_row_shows_status_step_pending_and_time_in_state() -> None:
    ctx, _ = world([hang()])
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    app.animation_level = "none"
    async with app.run_test(size=SIZE) as pilot:
        agent.followup(msg("go", "m0"))
        await wait_until(pilot, lambda: agent.status == "running")
        agent.steer(msg("s", "s1", "steer"))
        agent.followup(msg("f", "f1"))
        await settle(pilot)
        row = app.main.agent_tree.row_text("planner")
        assert row.startswith(" ● planner step 1 ⚑1↵1 ") and row.endswith("s"), row
        agent.cancel(keep_inbox=True)
        await idle(pilot, agent)
        row = app.main.agent_tree.row_text("planner")
        assert row.startswith(" ‖ planner kept ⚑1↵1 ") and row.endswith(" <1m"), row


async def test_selecting_a_row_points_transcript_and_inbox_at_it() -> None:
    ctx, _ = world([text("from planner")])
    planner = await add_agent(ctx, "planner", "planner")
    other = await add_agent(ctx, "other", "other")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        planner.followup(msg("hello planner", "m1"))
        other.inbox.append("next-turn", msg("waiting for other", "o1"))
        await idle(pilot, planner)
        assert app.main.selected_id == "planner"
        tree = app.main.agent_tree
        tree.focus()
        await pilot.press("down")
        # The cursor moved at once; the panes follow once it rests (~0.1 s).
        assert tree.cursor_agent_id == "other"
        await wait_until(pilot, lambda: app.main.selected_id == "other")
        await settle(pilot)
        shown = screen_text(app)
        assert "Transcript · other" in shown and "waiting for other" in shown
        assert "hello planner" not in shown
        assert tree.selected_id == "other"
        await pilot.press("up")
        await wait_until(pilot, lambda: app.main.selected_id == "planner")
        await settle(pilot)
        assert "hello planner" in screen_text(app)
        await pilot.press("enter")  # choosing an agent puts the cursor where you type to it
        assert app.main.selected_id == "planner" and app.focused is app.main.composer


async def test_ctrl_n_creates_a_root_and_c_spawns_an_owned_child() -> None:
    ctx, _ = world([text("child answer")])
    planner = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+n")  # asks for a name, offering the next free default
        await wait_until(pilot, lambda: isinstance(app.screen, NameScreen))
        assert app.screen.query_one(Input).value == "agent 2"
        await pilot.press("enter")  # accepted as offered
        await wait_until(pilot, lambda: len(ctx.agents.roots()) == 2)
        await app.workers.wait_for_complete()
        await settle(pilot)
        new = next(a for a in ctx.agents.roots() if a is not planner)
        assert app.main.selected_id == new.id and new.options.provider == "mock"
        assert app.bridge.views[new.id].name == "agent 2"
        app.main.select_agent("planner")
        app.main.agent_tree.focus()
        await pilot.press("ctrl+k")
        await wait_until(pilot, lambda: isinstance(app.screen, NameScreen))
        assert app.screen.query_one(Input).value == "planner › child 1"
        await pilot.press(*"scout", "enter")  # typing replaces the offered name
        await wait_until(pilot, lambda: len(ctx.agents.children_of(planner)) == 1)
        await app.workers.wait_for_complete()
        await settle(pilot)
        child = ctx.agents.children_of(planner)[0]
        assert ctx.agents.is_owned_by(child.id, planner)
        assert child.session.header["origin"] == "subagent"
        assert child.session.header["parentSession"] == "planner"
        assert f"planner/{child.id}" in tree_paths(app)
        assert app.bridge.views[child.id].name == "scout"
        assert app.main.selected_id == child.id and app.focused is app.main.composer
        await pilot.press(*"do the sub-task")
        await pilot.press("enter")
        await idle(pilot, child)
        assert "child answer" in screen_text(app)


async def test_dispose_asks_first() -> None:
    ctx, _ = world([])
    await add_agent(ctx, "planner", "planner")
    doomed = await add_agent(ctx, "doomed", "doomed")
    await add_agent(ctx, "doomed-child", "kid", owner=doomed)
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.main.select_agent("doomed", focus_tree=True)
        await pilot.press("delete")
        assert isinstance(app.screen, ConfirmScreen)
        assert "Dispose doomed and its 1 sub-agent?" in screen_text(app)
        await pilot.press("n")
        assert ctx.agents.get("doomed") is not None
        await pilot.press("delete")
        await pilot.press(YES_KEY)
        await app.workers.wait_for_complete()
        await settle(pilot)
        assert ctx.agents.get("doomed") is None and ctx.agents.get("doomed-child") is None
        assert tree_paths(app) == ["planner"] and app.main.selected_id == "planner"


async def test_a_destructive_confirm_takes_a_deliberate_key_and_defaults_to_no() -> None:
    """A single `y` disposed an agent and stopped-and-cleared a running one: prose typed a
    beat too long after the dialog opened answered yes."""
    ctx, _ = world([hang()])
    agent = await add_agent(ctx, "planner", "planner")
    await add_agent(ctx, "doomed", "doomed")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        agent.followup(msg("long job", "m0"))
        await wait_until(pilot, lambda: agent.status == "running")
        agent.followup(msg("next one", "q1"))
        await settle(pilot)
        app.main.select_agent("planner")
        await pilot.press("ctrl+l")
        assert isinstance(app.screen, ConfirmScreen)
        shown = screen_text(app)
        assert f"Stop and clear ({YES_KEY})" in shown and "No (n)" in shown
        await pilot.press(*"yes")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmScreen)  # still asking; nothing was decided
        assert agent.status == "running" and agent.inbox.has_pending
        assert any(YES_KEY in n.message for n in app._notifications)  # it says which key
        await pilot.press("enter")  # the focus starts on No
        await settle(pilot)
        assert not isinstance(app.screen, ConfirmScreen)
        assert agent.status == "running" and agent.inbox.has_pending

        app.main.select_agent("doomed", focus_tree=True)
        await pilot.press("delete")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("y", "enter")
        await app.workers.wait_for_complete()
        await settle(pilot)
        assert ctx.agents.get("doomed") is not None
        await pilot.press("delete")
        await pilot.press(YES_KEY)
        await app.workers.wait_for_complete()
        await settle(pilot)
        assert ctx.agents.get("doomed") is None
        agent.cancel(None, keep_inbox=True)
        await idle(pilot, agent)


async def test_after_a_dispose_the_cursor_goes_to_the_row_above() -> None:
    """The neighbour, never a jump: the last row's cursor used to land on the first root
    (and a second child's on its owner, past its sibling)."""
    ctx, _ = world([])
    await add_agent(ctx, "first", "first")
    second = await add_agent(ctx, "second", "second")
    await add_agent(ctx, "kid-a", "kid a", owner=second)
    await add_agent(ctx, "kid-b", "kid b", owner=second)
    await add_agent(ctx, "third", "third")
    await add_agent(ctx, "fourth", "fourth")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        tree = app.main.agent_tree

        async def dispose(agent_id: str) -> str | None:
            app.main.select_agent(agent_id, focus_tree=True)
            await pilot.press("delete")
            assert isinstance(app.screen, ConfirmScreen)
            await pilot.press(YES_KEY)
            await app.workers.wait_for_complete()
            await settle(pilot)
            assert ctx.agents.get(agent_id) is None
            assert tree.cursor_agent_id == app.main.selected_id
            return app.main.selected_id

        assert await dispose("fourth") == "third"  # the last row: the one above
        assert await dispose("kid-b") == "kid-a"  # a second child: its sibling above
        assert await dispose("kid-a") == "second"  # a first child: its owner
        assert await dispose("first") == "second"  # the top row: the one taking its place
        assert tree_paths(app) == ["second", "third"]
        app.main.select_agent("third", focus_tree=True)
        await ctx.agents.dispose("third")  # gone another way (a tool, the CLI): same rule
        await settle(pilot)
        assert app.main.selected_id == "second" and tree.cursor_agent_id == "second"


async def test_an_agent_started_by_a_tool_is_disposed_through_the_registry() -> None:
    ctx, _ = world([])
    await add_agent(ctx, "first", "first")
    owner = await add_agent(ctx, "planner", "planner")
    await add_agent(ctx, "tool-child", "tool child", owner=owner)
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.main.select_agent("tool-child", focus_tree=True)
        await pilot.press("delete")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press(YES_KEY)
        await app.workers.wait_for_complete()
        await settle(pilot)
        assert ctx.agents.get("tool-child") is None
        assert tree_paths(app) == ["first", "planner"]
        assert app.main.selected_id == "planner"  # back to its owner


async def test_escape_cancels_and_keeps_the_inbox_then_enter_delivers_it() -> None:
    ctx, _ = world([hang(), text("resumed")])
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        agent.followup(msg("long job", "m0"))
        await wait_until(pilot, lambda: agent.status == "running")
        agent.followup(msg("next one", "q1"))
        agent.inject(msg("a note", "n1", "inject"))
        await settle(pilot)
        await pilot.press("escape")
        await idle(pilot, agent)
        ends = [e.data["reason"] for e in agent.session.events if e.type == "turn/end"]
        assert ends == [{"kind": "aborted", "reason": {"kind": "user"}}]
        assert [m.id for m in agent.inbox.next_turn] == ["q1"]
        assert [m.id for m in agent.inbox.next_step] == ["n1"]
        shown = screen_text(app)
        assert "paused" in shown and "aborted · cancelled by you" in shown
        await pilot.press("enter")  # empty composer: deliver what was kept, in order
        await idle(pilot, agent)
        users = [e.data["id"] for e in agent.session.events if e.type == "user/message"]
        assert users == ["m0", "n1", "q1"] and not agent.inbox.has_pending
        assert "resumed" in screen_text(app)


async def test_ctrl_l_cancels_and_clears_after_asking() -> None:
    ctx, _ = world([hang()])
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        agent.followup(msg("long job", "m0"))
        await wait_until(pilot, lambda: agent.status == "running")
        agent.followup(msg("next one", "q1"))
        await settle(pilot)
        await pilot.press("ctrl+l")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("escape")  # escape answers no
        assert agent.status == "running" and agent.inbox.has_pending
        await pilot.press("ctrl+l")
        await pilot.press(YES_KEY)
        await idle(pilot, agent)
        assert not agent.inbox.has_pending
        ends = [e.data["reason"]["kind"] for e in agent.session.events if e.type == "turn/end"]
        assert ends == ["aborted"]
        assert "✗ removed" in screen_text(app)


async def test_escape_on_an_idle_agent_only_says_so() -> None:
    ctx, _ = world([])
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        agent.inbox.append("next-turn", msg("kept", "q1"))
        await pilot.press("escape")
        await pilot.pause()
        assert any("not running" in n.message for n in app._notifications)
        assert [m.id for m in agent.inbox.next_turn] == ["q1"]


async def test_quitting_while_an_agent_streams_is_clean() -> None:
    ctx, _ = world([hang()])
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        agent.followup(msg("long job", "m0"))
        await wait_until(pilot, lambda: agent.status == "running")
        await pilot.pause(0.25)  # a few spinner ticks and flushes while it streams
        await pilot.press("ctrl+q")
    assert app.return_code in (0, None) and app._exception is None
    agent.cancel()
    await agent.when_idle()


async def test_with_no_agent_selected_the_keys_on_one_are_greyed_out_and_do_nothing() -> None:
    """`check_action` greys out what needs a selected agent (the footer still shows it,
    dimmed) instead of running it to say "no agent"; a greyed key is not passed on either
    (enter in the composer does not become a newline). With an agent they come alive."""
    ctx, _ = world([text("hello back")])
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        main = app.main
        assert main.selected_id is None and main.composer.has_focus
        active = app.screen.active_bindings
        for key in ("enter", "ctrl+s", "escape", "ctrl+l"):
            assert key in active and not active[key].enabled, key
        assert active["ctrl+n"].enabled  # what needs no agent stays live
        assert "no agent selected" in screen_text(app)
        await pilot.press(*"hi", "enter", "ctrl+s")
        await settle(pilot)
        assert main.composer.text == "hi"  # nothing sent, no newline typed
        assert await app.run_action("screen.followup") is False
        await add_agent(ctx, "planner", "planner")
        await wait_until(pilot, lambda: main.selected_id == "planner")
        active = app.screen.active_bindings
        assert all(active[key].enabled for key in ("enter", "ctrl+s", "escape", "ctrl+l"))
        await pilot.press("enter")
        agent = ctx.agents.get("planner")
        await wait_until(pilot, lambda: agent.status == "idle" and "hello back" in
                         screen_text(app))
        assert main.composer.text == ""
