"""Power edits from the keyboard (issue 29): marks (space, only with an empty composer),
merge marked follow-ups, split at the cursor, move or copy to another agent, and the
session-long undo/redo (ctrl+z / ctrl+y from any pane), each entry named on the status
line; an undo the agent raced is refused, nothing written."""

from __future__ import annotations

from typing import Any

from dsh_tui.llm.scripted import hang
from dsh_tui.ui.screens.edit import EditScreen
from dsh_tui.ui.screens.transfer import TransferScreen

from .conftest import SIZE, add_agent, idle, make_app, msg, screen_text, settle, wait_until, world


def ids(items: Any) -> list[str]:
    return [m.id for m in items]


def texts(items: Any) -> list[str]:
    return [m.text for m in items]


def status(app: Any) -> str:
    return app.main.status_line.text


async def queued(pilot: Any, agent: Any, *follow_ups: tuple[str, str]) -> None:
    """A hanging turn, then `follow_ups` queued behind it; the inbox focused on the first."""
    agent.followup(msg("start", "m0"))
    await wait_until(pilot, lambda: agent.status == "running")
    for text_, id_ in follow_ups:
        agent.inbox.append("next-turn", msg(text_, id_, "follow-up"))
    await settle(pilot)
    inbox = pilot.app.main.inbox
    inbox.focus()
    inbox.highlight_message(follow_ups[0][1])
    await pilot.pause()


async def test_space_marks_only_with_an_empty_composer() -> None:
    ctx, _ = world([hang()])
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        await queued(pilot, agent, ("one", "q1"), ("two", "q2"))
        await pilot.press("space")
        await settle(pilot)
        assert app.main.inbox_edits.marks.of("planner") == ["q1"]
        assert app.main.inbox.highlighted_id == "msg:q2"  # it went on to the next
        assert "● " in screen_text(app)
        app.main.composer.load_text("a draft")
        app.main.inbox.focus()
        await pilot.press("space")
        await settle(pilot)
        assert app.main.inbox_edits.marks.of("planner") == ["q1"]  # not marked: typed
        assert app.main.composer.text.replace(" ", "") == "adraft"
        assert len(app.main.composer.text) == len("a draft ")  # the space went in
        agent.cancel()
        await idle(pilot, agent)


async def test_merge_marked_follow_ups_then_undo_and_redo_from_any_pane() -> None:
    ctx, _ = world([hang()])
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        await queued(pilot, agent, ("one", "q1"), ("two", "q2"), ("three", "q3"))
        await pilot.press("space", "space", "space", "ctrl+j")
        await settle(pilot)
        assert ids(agent.inbox.next_turn) == ["q1"]
        assert agent.inbox.get("q1").text == "one\n\ntwo\n\nthree"  # in order, one turn
        assert list(agent.inbox.get("q1").source["mergedFrom"]) == ["q1", "q2", "q3"]
        assert "Merge 3 follow-ups into #q1 · ctrl+z undoes" in status(app)
        assert "✗ removed" not in screen_text(app)  # merged, not discarded
        app.main.transcript.focus()  # undo works from another pane
        await pilot.press("ctrl+z")
        await settle(pilot)
        assert ids(agent.inbox.next_turn) == ["q1", "q2", "q3"]
        assert texts(agent.inbox.next_turn) == ["one", "two", "three"]
        assert "Undone: merge 3 follow-ups into #q1 · ctrl+y redoes" in status(app)
        await pilot.press("ctrl+y")
        await settle(pilot)
        assert ids(agent.inbox.next_turn) == ["q1"]
        assert "Redone: merge 3 follow-ups" in status(app)
        agent.cancel()
        await idle(pilot, agent)


async def test_split_at_the_cursor_in_the_editor() -> None:
    ctx, _ = world([hang()])
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        await queued(pilot, agent, ("first part. second part", "q1"), ("after", "q2"))
        await pilot.press("enter")
        assert isinstance(app.screen, EditScreen)
        editor = app.screen.query_one("#edit-text")
        editor.move_cursor((0, len("first part.")))
        await pilot.press("ctrl+b")
        await settle(pilot)
        assert not isinstance(app.screen, EditScreen)
        assert texts(agent.inbox.next_turn) == ["first part.", "second part", "after"]
        assert agent.inbox.next_turn[1].source["splitFrom"] == "q1"
        assert not agent.holds  # the editor's hold ended with it
        assert "Split #q1 · ctrl+z undoes" in status(app)
        await pilot.press("ctrl+z")
        await settle(pilot)
        assert texts(agent.inbox.next_turn) == ["first part. second part", "after"]
        agent.cancel()
        await idle(pilot, agent)


async def test_move_and_copy_to_a_child_with_the_chooser() -> None:
    ctx, _ = world([hang()])
    agent = await add_agent(ctx, "planner", "planner")
    child = await add_agent(ctx, "planner.child", "child", owner=agent)
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        app.main.select_agent("planner")
        await queued(pilot, agent, ("for the child", "q1"), ("stays", "q2"))
        await pilot.press("shift+left")
        await wait_until(pilot, lambda: isinstance(app.screen, TransferScreen))
        await pilot.pause()
        shown = screen_text(app)
        assert "Move to child" in shown and "Copy to child" in shown
        await pilot.press("enter")  # the first row: move to the child
        await settle(pilot)
        assert ids(agent.inbox.next_turn) == ["q2"]
        assert ids(child.inbox.next_turn) == ["q1"]
        assert child.inbox.get("q1").source["movedFrom"] == {"agent": "planner", "id": "q1"}
        assert "Move #q1 to child · ctrl+z undoes" in status(app)
        app.main.inbox.focus()
        app.main.inbox.highlight_message("q2")
        await pilot.pause()
        await pilot.press("shift+left")
        await wait_until(pilot, lambda: isinstance(app.screen, TransferScreen))
        await pilot.press("down", "enter")  # copy
        await settle(pilot)
        assert ids(agent.inbox.next_turn) == ["q2"]
        assert texts(child.inbox.next_turn) == ["for the child", "stays"]
        await pilot.press("ctrl+z", "ctrl+z")
        await settle(pilot)
        assert ids(agent.inbox.next_turn) == ["q1", "q2"] and not child.inbox.next_turn
        agent.cancel()
        await idle(pilot, agent)


async def test_an_agent_marked_in_the_tree_is_offered_as_a_destination() -> None:
    ctx, _ = world([hang()])
    agent = await add_agent(ctx, "planner", "planner")
    await add_agent(ctx, "planner.child", "child", owner=agent)
    reviewer = await add_agent(ctx, "reviewer", "reviewer")  # no kin of the planner
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        app.main.fleet.marks.toggle("reviewer")
        app.main.select_agent("planner")
        await queued(pilot, agent, ("for the reviewer", "q1"))
        await pilot.press("shift+left")
        await wait_until(pilot, lambda: isinstance(app.screen, TransferScreen))
        await pilot.pause()
        shown = screen_text(app)
        assert "Move to child" in shown and "Move to reviewer" in shown
        await pilot.press("down", "down", "enter")  # child move, child copy, reviewer move
        await settle(pilot)
        assert not agent.inbox.next_turn and ids(reviewer.inbox.next_turn) == ["q1"]
        agent.cancel()
        await idle(pilot, agent)


async def test_an_undo_the_agent_raced_is_refused_and_writes_nothing() -> None:
    ctx, _ = world([hang()])
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        await queued(pilot, agent, ("one", "q1"), ("two", "q2"))
        await pilot.press("shift+down")  # move q1 below q2
        await settle(pilot)
        assert ids(agent.inbox.next_turn) == ["q2", "q1"]
        agent.inbox.remove("q1")  # gone (as a claim takes it) before the undo
        await settle(pilot)
        before = len(agent.session.events)
        await pilot.press("ctrl+z")
        await settle(pilot)
        assert len(agent.session.events) == before  # nothing written
        assert "Could not undo move #q1 down: #q1 is no longer pending" in status(app)
        assert "dropped from the history" in status(app)
        agent.cancel()
        await idle(pilot, agent)


async def test_a_stop_that_cleared_the_inbox_is_undone_by_ctrl_z() -> None:
    ctx, _ = world([hang()])
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        await queued(pilot, agent, ("one", "q1"), ("two", "q2"))
        app.main.composer.focus()
        await pilot.press("ctrl+l")
        await pilot.press("ctrl+y")  # (destructive questions take ctrl+y)
        await idle(pilot, agent)
        assert not agent.inbox.has_pending
        app.main.agent_tree.focus()
        await pilot.press("ctrl+z")
        await settle(pilot)
        assert ids(agent.inbox.next_turn) == ["q1", "q2"]
        assert "Undone: stop and clear 2 items" in status(app)
