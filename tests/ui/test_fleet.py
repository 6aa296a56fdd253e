"""Issue 28 on screen: the tree's rows, folds, filter and hidden finished agents by
keyboard; the selection following the cursor once it rests; the needs-you count and its
jump key at 80x24 with the tree folded; marks and bulk actions, each said in one line;
side panes sharing the width."""

from __future__ import annotations

from typing import Any

import pytest
from textual import events

from dsh_tui.harness import user_message
from dsh_tui.llm.scripted import fail, hang, text
from dsh_tui.ui.controllers import selection as selection_module
from dsh_tui.ui.screens.broadcast import BroadcastScreen
from dsh_tui.ui.screens.choice import ChoiceScreen
from dsh_tui.ui.screens.confirm import ConfirmScreen
from dsh_tui.ui.state.config import UiConfig
from dsh_tui.ui.widgets.key_bar import KeyBar

from .conftest import SIZE, add_agent, idle, make_app, msg, screen_text, settle, wait_until, world


def from_owner(text: str, message_id: str) -> Any:
    """A message an owner's tool sends its sub-agent (not the person's)."""
    return user_message(text, id=message_id, source={"kind": "plugin", "plugin": "spawn_agent"})


def listed(app: Any) -> list[str]:
    return [line.agent_id for line in app.main.agent_tree.lines]


def said(app: Any) -> str:
    """The status line (the composer's lower border): what the last action said."""
    return str(app.main.status_line.text)


async def three_teams(ctx: Any) -> dict[str, Any]:
    """lead (researcher 0..2), scout (probe), solo."""
    agents = {"lead": await add_agent(ctx, "lead", "lead")}
    for n in range(3):
        agents[f"r{n}"] = await add_agent(ctx, f"r{n}", f"researcher {n}", owner=agents["lead"])
    agents["scout"] = await add_agent(ctx, "scout", "scout")
    agents["probe"] = await add_agent(ctx, "probe", "probe", owner=agents["scout"])
    agents["solo"] = await add_agent(ctx, "solo", "solo")
    return agents


async def test_left_and_right_fold_a_parent_whose_row_then_sums_its_sub_agents() -> None:
    ctx, _ = world()
    agents = await three_teams(ctx)
    for n in range(3):
        agents[f"r{n}"].inbox.append("next-turn", msg(f"later {n}", f"q{n}"))
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        app.main.select_agent("lead", focus_tree=True)
        await settle(pilot)
        tree = app.main.agent_tree
        assert listed(app) == ["lead", "r0", "r1", "r2", "scout", "probe", "solo"]
        assert tree.row_text("lead").startswith("▾○ lead")
        assert tree.row_text("r1").startswith("   ‖ researcher 1 kept ↵1")
        await pilot.press("left")  # folds the cursor's row
        assert listed(app) == ["lead", "scout", "probe", "solo"]
        assert tree.row_text("lead").startswith("▸○ lead +3")
        await pilot.press("right")  # unfolds it
        await pilot.press("right")  # on an open row: to its first sub-agent
        assert tree.cursor_agent_id == "r0"
        await pilot.press("left")  # on a leaf: to its owner
        assert tree.cursor_agent_id == "lead"
        await pilot.press("shift+left")  # every owner folds: the roots fit
        assert listed(app) == ["lead", "scout", "solo"]
        await pilot.press("shift+right")
        assert len(listed(app)) == 7
        # Typing is still safe: a letter goes to the composer, never folds or marks.
        await pilot.press("x")
        assert app.focused is app.main.composer and app.main.composer.text == "x"


async def test_the_filter_lists_matches_with_their_owners_and_escape_clears_it() -> None:
    ctx, _ = world()
    await three_teams(ctx)
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        app.main.select_agent("solo", focus_tree=True)
        await settle(pilot)
        await pilot.press("ctrl+f")
        await wait_until(pilot, lambda: app.main.tree_filter.display)
        await pilot.press(*"CHER 1")
        await settle(pilot)
        # the match with its owner; the selected agent stays listed, so the cursor has a row
        assert listed(app) == ["lead", "r1", "solo"]
        assert "1 of 7" not in screen_text(app) and "3 of 7" in screen_text(app)
        await pilot.press("up")  # the tree's cursor moves from the filter line
        assert app.main.agent_tree.cursor_agent_id == "r1"
        await pilot.press("enter")  # keeps the filter, back in the tree
        await wait_until(pilot, lambda: app.focused is app.main.agent_tree)
        await wait_until(pilot, lambda: app.main.selected_id == "r1")
        assert "Agents · /CHER 1 2/7" in screen_text(app)
        assert listed(app) == ["lead", "r1"]
        await pilot.press("ctrl+f")
        await wait_until(pilot, lambda: app.focused is app.main.tree_filter.input)
        await pilot.press("escape")
        await wait_until(pilot, lambda: not app.main.tree_filter.display)
        assert len(listed(app)) == 7 and app.focused is app.main.agent_tree


async def test_hide_finished_hides_done_sub_agents_never_a_root_or_one_that_needs_you() -> None:
    ctx, _ = world([text("done 0"), text("done 1")])
    agents = await three_teams(ctx)
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for name in ("r0", "r1"):
            # a sub-agent's turn for its owner (not the person's): finished, nobody's call
            agents[name].followup(from_owner("work", f"w-{name}"))
            await idle(pilot, agents[name])
        app.main.select_agent("lead", focus_tree=True)
        await settle(pilot)
        assert "r0" not in app.main.fleet.needs
        await pilot.press("ctrl+d")
        await settle(pilot)
        assert listed(app) == ["lead", "r2", "scout", "probe", "solo"]
        assert "Agents · done hidden" in screen_text(app)
        await pilot.press("ctrl+d")
        await settle(pilot)
        assert len(listed(app)) == 7


async def test_an_arrow_burst_selects_once_when_the_cursor_rests(
        monkeypatch: pytest.MonkeyPatch) -> None:
    ctx, _ = world()
    for n in range(12):
        await add_agent(ctx, f"a{n:02d}", f"agent {n}")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        app.main.select_agent("a00", focus_tree=True)
        await settle(pilot)
        main, tree, transcript = app.main, app.main.agent_tree, app.main.transcript
        shows: list[Any] = []
        show = transcript.show
        transcript.show = lambda view: (shows.append(view.id if view else None),  # type: ignore[method-assign]
                                        show(view))[1]
        seen: list[tuple[str | None, str | None, str | None]] = []
        moved = main.tree_cursor_moved

        def noted(agent_id: str | None, waited: float = 0.0) -> None:
            seen.append((tree.cursor_agent_id, main.selected_id, tree.selected_id))
            moved(agent_id, waited)

        main.tree_cursor_moved = noted  # type: ignore[method-assign]
        records: list[str | None] = []
        record = selection_module.record_selected
        monkeypatch.setattr(selection_module, "record_selected",
                            lambda ctx, agent_id: (records.append(agent_id),
                                                   record(ctx, agent_id))[1])
        for _ in range(9):  # one burst, as key repeat delivers it
            app.post_message(events.Key("down", None))
        await wait_until(pilot, lambda: main.selected_id == "a09")
        await settle(pilot)
        # each move put the cursor there at once while the panes (and the tree's mark of
        # the selected row) still showed the agent selected before
        assert seen == [(f"a{n:02d}", "a00", "a00") for n in range(1, 10)]
        assert shows == ["a09"]  # one transcript load for nine rows passed over
        assert records == ["a09"]  # and one `selected` workspace record
        assert tree.selected_id == "a09"
        assert "Transcript · agent 9" in screen_text(app)
        assert "→ agent 9 ·" in app.main.composer.border_title
        # A key that acts on the selected agent acts on the row the person sees.
        await pilot.press("up", "f7")
        assert app.breakpoints is not None and app.breakpoints.is_armed("a08")
        assert shows == ["a09", "a08"]


async def test_needs_you_is_counted_at_80x24_with_the_tree_folded_and_ctrl_g_visits_oldest_first(
) -> None:
    ctx, _ = world([fail("SERVER_ERROR", "upstream exploded"), text("the worker's reply"),
                    text("b1 goes on"), text("b2 goes on")])
    agents = {name: await add_agent(ctx, name, name) for name in ("worker", "b1", "b2", "bad")}
    app = make_app(ctx)
    async with app.run_test(size=(80, 24)) as pilot:
        app.main.select_agent("worker")
        await settle(pilot)
        assert not app.main.agent_tree.display
        bar = app.main.query_one(KeyBar)
        for name in ("b1", "b2"):
            assert app.breakpoints is not None
            app.breakpoints.toggle(name)
            agents[name].followup(msg(f"go {name}", f"m-{name}", "follow-up"))
            await wait_until(pilot, lambda n=name: n in app.breakpoints.paused)
            await settle(pilot)
        agents["bad"].followup(msg("go bad", "m-bad", "follow-up"))
        await idle(pilot, agents["bad"])
        await pilot.press(*"my own work", "enter")  # the person works with the worker
        await idle(pilot, agents["worker"])
        await settle(pilot)
        last = screen_text(app).splitlines()[-1]
        assert last.startswith(" ^g 3 need you · ◆2 ✗1 "), last
        assert bar.notice is not None
        visits = []
        for _ in range(4):
            await pilot.press("ctrl+g")
            await settle(pilot)
            visits.append(app.main.selected_id)
        assert visits == ["b1", "b2", "bad", "b1"]
        # looking at bad cleared its failure; the pauses wait for an answer
        assert screen_text(app).splitlines()[-1].startswith(" ^g 2 need you · ◆2 ")
        assert "╭─ b1 · ◆ paused at breakpoint" in screen_text(app)
        for name in ("b1", "b2"):
            app.breakpoints.disarm(name)
            app.breakpoints.paused[name].resolve("continue")
            await idle(pilot, agents[name])
        await settle(pilot)
        # b1 was looked at while it finished; b2's finished turn waits to be seen
        assert [n.agent_id for n in app.main.fleet.needs.ordered()] == ["b2"]
        await pilot.press("ctrl+g")
        await settle(pilot)
        assert app.main.selected_id == "b2" and bar.notice is None
        await pilot.press("ctrl+g")
        await settle(pilot)
        assert said(app) == "Nobody needs you right now."


@pytest.mark.parametrize(("notify", "rings"), [("off", 0), ("bell", 1)])
async def test_a_bell_rings_when_an_agent_starts_needing_you_only_when_asked(
        notify: str, rings: int) -> None:
    ctx, _ = world([fail("SERVER_ERROR", "no")])
    await add_agent(ctx, "main", "main")
    bad = await add_agent(ctx, "bad", "bad")
    app = make_app(ctx, UiConfig(notify=notify))
    bells: list[int] = []
    app.bell = lambda: bells.append(1)  # type: ignore[method-assign]
    async with app.run_test(size=SIZE) as pilot:
        app.main.select_agent("main")
        await settle(pilot)
        bad.followup(msg("go", "m1", "follow-up"))
        await idle(pilot, bad)
        await settle(pilot)
        assert "bad" in app.main.fleet.needs
        assert len(bells) == rings


async def test_space_marks_and_a_broadcast_steers_each_marked_agent_in_one_line() -> None:
    ctx, _ = world([hang(), hang(), hang()])
    agents = [await add_agent(ctx, f"w{n}", f"worker {n}") for n in range(4)]
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        for agent in agents[:3]:
            agent.followup(msg("work", f"go-{agent.id}", "follow-up"))
            await wait_until(pilot, lambda a=agent: a.status == "running")
        app.main.select_agent("w0", focus_tree=True)
        await settle(pilot)
        await pilot.press("space", "space", "space")  # marks a row and moves down
        tree = app.main.agent_tree
        assert app.main.fleet.marks.ids == ["w0", "w1", "w2"]
        assert "✓worker 1 step 1" in tree.row_text("w1")
        assert "✓worker" not in tree.row_text("w3")
        assert "Agents · 3 marked" in screen_text(app)
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: isinstance(app.screen, BroadcastScreen))
        assert "Broadcast to 3 agents: worker 0, worker 1, worker 2" in screen_text(app)
        await pilot.press(*"wrap up now", "ctrl+s")
        await wait_until(pilot, lambda: not isinstance(app.screen, BroadcastScreen))
        for agent in agents[:3]:
            (steer,) = agent.inbox.next_step
            assert steer.text == "wrap up now" and steer.source["lane"] == "steer"
        assert not agents[3].inbox.has_pending
        assert said(app) == "Sent the steer to 3 agents · ctrl+z undoes."
        sent = [agent.inbox.next_step[0].id for agent in agents[:3]]
        assert app.focused is tree
        await pilot.press("ctrl+z")  # the session's undo, not the tree's: copies unsent
        await settle(pilot)
        assert not any(agent.inbox.next_step for agent in agents[:3])
        assert said(app) == "Undone: broadcast to 3 agents · ctrl+y redoes."
        app.main.inbox.focus()
        await pilot.press("ctrl+y")  # from another pane: the same copies, same ids, again
        await settle(pilot)
        assert [agent.inbox.next_step[0].id for agent in agents[:3]] == sent
        assert said(app) == "Redone: broadcast to 3 agents · ctrl+z undoes."
        tree.focus()
        await pilot.press("ctrl+x")  # stop the marked, inboxes kept
        for agent in agents[:3]:
            await idle(pilot, agent)
        assert said(app) == "Stopped 3 agents, keeping their inboxes."
        await pilot.press("backspace")
        assert not app.main.fleet.marks


async def test_a_broadcast_is_one_step_of_the_sessions_undo_history_among_inbox_edits() -> None:
    ctx, _ = world([hang(), hang()])
    agents = [await add_agent(ctx, f"w{n}", f"worker {n}") for n in range(2)]
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        for agent in agents:
            agent.followup(msg("work", f"go-{agent.id}", "follow-up"))
            await wait_until(pilot, lambda a=agent: a.status == "running")
        agents[0].inbox.append("next-turn", msg("queued", "q0"))
        app.main.select_agent("w0", focus_tree=True)
        await settle(pilot)
        await pilot.press("space", "space", "ctrl+r")
        await wait_until(pilot, lambda: isinstance(app.screen, BroadcastScreen))
        await pilot.press(*"check in", "ctrl+s")
        await wait_until(pilot, lambda: all(a.inbox.next_step for a in agents))
        await pilot.press("up")  # back to worker 0 (space moved the cursor down)
        await settle(pilot)
        inbox = app.main.inbox
        inbox.focus()
        inbox.highlight_message("q0")
        await pilot.pause()
        await pilot.press("delete")  # an inbox edit after the broadcast
        await settle(pilot)
        assert agents[0].inbox.get("q0") is None
        await pilot.press("ctrl+z")  # the newest first: the removal
        await settle(pilot)
        assert agents[0].inbox.get("q0") is not None
        assert all(a.inbox.next_step for a in agents)
        app.main.transcript.focus()
        await pilot.press("ctrl+z")  # then the broadcast, from the transcript
        await settle(pilot)
        assert not any(a.inbox.next_step for a in agents)
        assert said(app) == "Undone: broadcast to 2 agents · ctrl+y redoes."
        for agent in agents:
            agent.cancel()
            await idle(pilot, agent)


async def test_space_in_the_tree_types_into_a_draft_instead_of_marking() -> None:
    ctx, _ = world()
    for n in range(2):
        await add_agent(ctx, f"w{n}", f"worker {n}")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        app.main.select_agent("w0", focus_tree=True)
        await settle(pilot)
        await pilot.press(*"wrap")  # typed in the tree: it went to the composer
        app.main.agent_tree.focus()
        await pilot.press("space")
        assert not app.main.fleet.marks
        assert app.focused is app.main.composer and app.main.composer.text == "wrap "


@pytest.mark.parametrize("choice", ["keep", "discard"])
async def test_stopping_a_subtree_keeps_or_discards_every_inbox_as_chosen(choice: str) -> None:
    ctx, _ = world([hang(), hang(), hang()])
    agents = await three_teams(ctx)
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        team = [agents[name] for name in ("lead", "r0", "r1")]
        for agent in team:
            agent.followup(msg("work", f"go-{agent.id}", "follow-up"))
            await wait_until(pilot, lambda a=agent: a.status == "running")
            agent.followup(msg("then this", f"then-{agent.id}", "follow-up"))
        agents["r2"].inbox.append("next-turn", msg("queued", "q-r2"))
        app.main.select_agent("lead", focus_tree=True)
        await settle(pilot)
        await pilot.press("ctrl+delete")
        await wait_until(pilot, lambda: isinstance(app.screen, ChoiceScreen))
        assert "Stop lead and its 3 sub-agents?" in screen_text(app)
        await pilot.press("ctrl+y" if choice == "keep" else "ctrl+d")
        for agent in team:
            await idle(pilot, agent)
        kept = choice == "keep"
        for agent in [*team, agents["r2"]]:
            assert agent.inbox.has_pending == kept, agent.id
        assert agents["scout"].status == "idle"
        tail = "keeping every inbox." if kept else "discarding their inboxes · ctrl+z undoes."
        assert said(app) == f"Stopped 4 agents, {tail}"
        if not kept:
            await pilot.press("ctrl+z")
            await settle(pilot)
            assert all(agent.inbox.has_pending for agent in [*team, agents["r2"]])
            assert said(app) == "Undone: clear 4 items of 4 stopped agents · ctrl+y redoes."


async def test_finished_sub_agents_go_in_one_dispose_after_one_confirm() -> None:
    ctx, _ = world([text("a"), text("b")])
    agents = await three_teams(ctx)
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        for name in ("r0", "r2"):
            agents[name].followup(from_owner("work", f"w-{name}"))
            await idle(pilot, agents[name])
        app.main.select_agent("lead", focus_tree=True)
        await settle(pilot)
        await pilot.press("shift+delete")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert "Dispose 2 finished sub-agents of lead?" in screen_text(app)
        await pilot.press("ctrl+y")
        await wait_until(pilot, lambda: said(app) == "Disposed 2 agents.")
        await settle(pilot)
        assert listed(app) == ["lead", "r1", "scout", "probe", "solo"]


@pytest.mark.parametrize(("size", "tree", "inbox"), [
    ((80, 24), 0, 0), ((100, 30), 24, 0), ((120, 40), 26, 31), ((160, 50), 35, 42),
    ((60, 20), 0, 0)])
async def test_side_panes_share_the_width_and_fold_before_the_transcript_gets_narrow(
        size: tuple[int, int], tree: int, inbox: int) -> None:
    ctx, _ = world()
    agent = await add_agent(ctx, "planner", "planner")
    agent.inbox.append("next-turn", msg("queued", "q1"))  # a non-empty inbox
    app = make_app(ctx)
    async with app.run_test(size=size) as pilot:
        app.main.select_agent("planner")
        await settle(pilot)
        main = app.main
        assert (main.agent_tree.outer_size.width if main.agent_tree.display else 0) == tree
        assert (main.inbox.outer_size.width if main.inbox.display else 0) == inbox
        assert main.transcript.outer_size.width == size[0] - tree - inbox
        assert main.transcript.outer_size.width >= min(60, size[0])


def test_notify_is_off_unless_the_config_says_bell_or_desktop() -> None:
    from pathlib import Path

    from dsh_tui.ui.state.config import ConfigError, parse_config

    assert parse_config("", Path("c.toml")).notify == "off"
    assert parse_config('notify = "desktop"\n', Path("c.toml")).notify == "desktop"
    with pytest.raises(ConfigError, match=r'c.toml, line 2: notify must be one of off, bell, '
                                          r'desktop, not "loud"'):
        parse_config('theme = "dark"\nnotify = "loud"\n', Path("c.toml"))


async def test_an_empty_inbox_takes_less_and_grows_when_work_arrives() -> None:
    ctx, _ = world()
    agent = await add_agent(ctx, "planner", "planner")
    await add_agent(ctx, "other", "other")
    app = make_app(ctx)
    async with app.run_test(size=(160, 50)) as pilot:
        app.main.select_agent("planner")
        await settle(pilot)
        inbox = app.main.inbox
        assert inbox.outer_size.width == 26
        agent.inbox.append("next-turn", msg("queued", "q1"))
        await settle(pilot)
        assert inbox.outer_size.width == 42
        agent.inbox.remove("q1")  # gone again: no reflow back and forth while it works
        await settle(pilot)
        assert inbox.outer_size.width == 42
        app.main.select_agent("other")
        await settle(pilot)
        assert inbox.outer_size.width == 26
