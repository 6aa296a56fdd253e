"""Inbox operations from the keyboard: edit, the edit-while-claimed race (with the edit
hold off, and on: the agent waits for the edit), remove and undo, move, re-file between
lanes, clear with confirmation."""

from __future__ import annotations

import asyncio
from typing import Any

from dsh_tui.llm.scripted import hang, text, tool_call
from dsh_tui.loop import Tool, ToolOutput
from dsh_tui.ui.screens.confirm import YES_KEY, ConfirmScreen
from dsh_tui.ui.screens.edit import EditScreen
from dsh_tui.ui.state.config import UiConfig

from .conftest import SIZE, add_agent, idle, make_app, msg, screen_text, settle, wait_until, world


async def running_with_queue(pilot: Any, agent: Any, *queued: Any) -> None:
    """Start a hanging turn, then queue `queued` (appended to their lists)."""
    agent.followup(msg("start", "m0"))
    await wait_until(pilot, lambda: agent.status == "running")
    for message, target in queued:
        agent.inbox.append(target, message)
    await settle(pilot)


def ids(items: Any) -> list[str]:
    return [m.id for m in items]


async def focus_item(pilot: Any, message_id: str) -> None:
    app = pilot.app
    app.main.inbox.focus()
    app.main.inbox.highlight_message(message_id)
    await pilot.pause()
    assert app.main.inbox.highlighted_id == f"msg:{message_id}"


async def test_edit_dialog_saves_with_the_same_id() -> None:
    ctx, _ = world([hang()])
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        await running_with_queue(pilot, agent, (msg("draft text", "q1"), "next-turn"),
                                 (msg("other", "q2"), "next-turn"))
        await focus_item(pilot, "q1")
        await pilot.press("enter")
        assert isinstance(app.screen, EditScreen)
        await pilot.press(*" v2")
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert not isinstance(app.screen, EditScreen)
        assert ids(agent.inbox.next_turn) == ["q1", "q2"]  # same id, same place
        assert agent.inbox.get("q1").text == "draft text v2"
        splices = [e.data for e in agent.session.events if e.type == "agent/inbox/spliced"]
        assert splices[-1]["inserted"][0]["id"] == "q1" and splices[-1]["removedCount"] == 1
        assert "draft text v2" in screen_text(app)
        await pilot.press("enter")  # enter edits too; escape cancels without a change
        assert isinstance(app.screen, EditScreen)
        await pilot.press(*"zzz")
        await pilot.press("escape")
        assert agent.inbox.get("q1").text == "draft text v2"
        agent.cancel()
        await idle(pilot, agent)


NO_HOLD = UiConfig(hold_limit=0)
"""An agent never waits for an open editor: the claim races the edit (the hold lapses at
once), as before holds existed."""


def status_line(app: Any) -> str:
    return app.main.status_line.text


async def test_editing_an_item_the_agent_claims_loses_nothing() -> None:
    gate = asyncio.Event()

    async def slow(request: Any) -> Any:
        await gate.wait()
        return text("first answer")

    ctx, model = world([slow, text("answer to the queued one"), text("answer to my edit")])
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx, NO_HOLD)
    async with app.run_test(size=SIZE) as pilot:
        agent.followup(msg("first", "m0"))
        await wait_until(pilot, lambda: agent.status == "running")
        agent.followup(msg("queued", "q1"))
        await settle(pilot)
        await focus_item(pilot, "q1")
        await pilot.press("enter")
        screen = app.screen
        assert isinstance(screen, EditScreen)
        await pilot.press(*" and more")
        gate.set()  # turn 1 finishes; turn 2 claims q1 while the dialog is open
        await wait_until(pilot, lambda: agent.inbox.get("q1") is None)
        await settle(pilot)
        assert app.screen is screen and screen.claimed
        notice = str(screen.query_one("#claimed").render())
        assert "already claimed this message in turn 2" in notice
        assert screen.text == "queued and more"  # the edit stays on screen
        await pilot.press("ctrl+s")  # now: send it as a new follow-up
        await wait_until(pilot, lambda: len(model.requests) == 3)
        await idle(pilot, agent)
        assert not isinstance(app.screen, EditScreen)
        users = [e.data for e in agent.session.events if e.type == "user/message"]
        assert [u["content"][0]["text"] for u in users] == ["first", "queued",
                                                           "queued and more"]
        assert users[1]["id"] == "q1" and users[2]["id"] != "q1"
        assert "as a follow-up" in status_line(app)
        waits = [e.data for e in agent.session.events if e.type == "inbox/hold-end"]
        assert [w["reason"] for w in waits] == ["lapsed"]  # a limit of 0: no wait at all


async def test_an_open_editor_holds_the_claim_until_saved() -> None:
    gate = asyncio.Event()

    async def slow(request: Any) -> Any:
        await gate.wait()
        return text("first answer")

    ctx, model = world([slow, text("answer to my edit")])
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        agent.followup(msg("first", "m0"))
        await wait_until(pilot, lambda: agent.status == "running")
        agent.followup(msg("queued", "q1"))
        await settle(pilot)
        await focus_item(pilot, "q1")
        await pilot.press("enter")
        screen = app.screen
        assert isinstance(screen, EditScreen)
        assert [h.message_id for h in agent.holds] == ["q1"]
        await pilot.press(*" and more")
        gate.set()  # turn 1 finishes; turn 2 reaches q1 and waits for the edit
        view = app.main.bridge.views["planner"]
        await wait_until(pilot, lambda: (app.main.bridge.flush(), "q1" in
                                         view.receipts.waiting_on)[1])
        await settle(pilot)
        assert agent.inbox.get("q1") is not None and not screen.claimed
        shown = screen_text(app)
        assert "The agent is waiting for this edit: it goes ahead in" in shown
        assert "waits for your edit" in app.main.transcript.border_title
        assert "✎waits" in app.main.agent_tree.row_text("planner")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: len(model.requests) == 2)
        await idle(pilot, agent)
        assert not agent.holds
        users = [e.data for e in agent.session.events if e.type == "user/message"]
        assert [(u["id"], u["content"][0]["text"]) for u in users] == [
            ("m0", "first"), ("q1", "queued and more")]  # the edited text, same id
        ends = [e.data for e in agent.session.events if e.type == "inbox/hold-end"]
        assert [e["reason"] for e in ends] == ["released"]
        live = [(e.kind, e.actor) for e in view.timeline.entries if e.seq < 0]
        assert live == [("hold", "person"), ("release", "person")]  # the editor's life
        assert "Edit #q1 · ctrl+z undoes" in status_line(app)


async def test_the_held_item_shows_held_and_the_tree_row_a_badge() -> None:
    ctx, _ = world([hang()])
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        await running_with_queue(pilot, agent, (msg("later", "q1"), "next-turn"))
        await focus_item(pilot, "q1")
        await pilot.press("enter")
        await settle(pilot)
        shown = screen_text(app)
        assert "Held: the agent will not claim this item while you edit" in shown
        assert "✎ held · editing" in shown and "✎held" in shown
        await pilot.press("escape")  # cancel releases the hold
        await settle(pilot)
        assert not agent.holds
        assert "held" not in screen_text(app)
        agent.cancel()
        await idle(pilot, agent)


async def test_saving_after_the_item_left_keeps_the_dialog_open() -> None:
    ctx, _ = world([hang()])
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        await running_with_queue(pilot, agent, (msg("soon gone", "q1"), "next-turn"))
        await focus_item(pilot, "q1")
        await pilot.press("enter")
        screen = app.screen
        assert isinstance(screen, EditScreen)
        agent.inbox.remove("q1")  # gone before any flush could tell the dialog
        screen.action_save()
        await pilot.pause()
        assert app.screen is screen and screen.claimed and screen.text == "soon gone"
        screen.query_one("#send-steer").press()
        await pilot.pause()
        assert [m.text for m in agent.inbox.next_step] == ["soon gone"]
        assert agent.inbox.next_step[0].source["lane"] == "steer"
        agent.cancel()
        await idle(pilot, agent)


async def test_remove_then_undo_restores_position() -> None:
    ctx, _ = world([hang()])
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        await running_with_queue(pilot, agent, (msg("a", "q1"), "next-turn"),
                                 (msg("b", "q2"), "next-turn"), (msg("c", "q3"), "next-turn"))
        await focus_item(pilot, "q2")
        await pilot.press("delete")
        await settle(pilot)
        assert ids(agent.inbox.next_turn) == ["q1", "q3"]
        assert "✗ removed" in screen_text(app)
        await pilot.press("ctrl+z")
        await settle(pilot)
        assert ids(agent.inbox.next_turn) == ["q1", "q2", "q3"]
        assert "✗ removed" not in screen_text(app)
        await focus_item(pilot, "q3")
        await pilot.press("delete")
        await settle(pilot)
        assert ids(agent.inbox.next_turn) == ["q1", "q2"]
        agent.cancel()
        await idle(pilot, agent)


async def test_move_up_down_and_across_lanes() -> None:
    ctx, _ = world([hang()])
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        await running_with_queue(pilot, agent, (msg("a", "q1"), "next-turn"),
                                 (msg("b", "q2"), "next-turn"), (msg("c", "q3"), "next-turn"))
        await focus_item(pilot, "q3")
        await pilot.press("shift+up")
        await settle(pilot)
        assert ids(agent.inbox.next_turn) == ["q1", "q3", "q2"]
        assert app.main.inbox.highlighted_id == "msg:q3"  # the cursor follows the item
        await pilot.press("shift+up")
        await pilot.press("shift+up")  # already first: nothing moves
        await settle(pilot)
        assert ids(agent.inbox.next_turn) == ["q3", "q1", "q2"]
        await pilot.press("shift+down")
        await settle(pilot)
        assert ids(agent.inbox.next_turn) == ["q1", "q3", "q2"]
        # l re-files: follow-up → steer → inject → follow-up, keeping the id
        await pilot.press("shift+right")
        await settle(pilot)
        assert ids(agent.inbox.next_step) == ["q3"]
        assert agent.inbox.get("q3").source == {"kind": "user", "lane": "steer"}
        await focus_item(pilot, "q3")
        await pilot.press("shift+right")
        await settle(pilot)
        assert agent.inbox.get("q3").source["lane"] == "inject"
        assert agent.inbox.locate("q3") == ("next-step", 0)
        said = status_line(app)
        assert "re-file #q3 as injected context" in said.lower(), said  # not "a inject"
        assert "a inject" not in said, said
        await focus_item(pilot, "q3")
        await pilot.press("shift+right")
        await settle(pilot)
        assert agent.inbox.locate("q3") == ("next-turn", 0)  # its index, not the end
        assert agent.inbox.get("q3").text == "c"
        assert not any(t.kind == "discarded" for t in app.main.selected_view.tombstones)
        agent.cancel()
        await idle(pilot, agent)


async def test_clear_asks_first() -> None:
    ctx, _ = world([hang()])
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        await running_with_queue(pilot, agent, (msg("a", "q1"), "next-turn"),
                                 (msg("b", "s1", "steer"), "next-step"))
        app.main.inbox.focus()
        await pilot.press("shift+delete")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")
        assert agent.inbox.has_pending
        await pilot.press("shift+delete")
        await pilot.press(YES_KEY)
        await settle(pilot)
        assert not agent.inbox.has_pending and agent.status == "running"
        await pilot.press("ctrl+z")  # undo brings both back
        await settle(pilot)
        assert ids(agent.inbox.next_turn) == ["q1"] and ids(agent.inbox.next_step) == ["s1"]
        agent.cancel()
        await idle(pilot, agent)


async def test_claimed_items_visibly_leave_for_the_transcript() -> None:
    ctx, _ = world([text("one"), text("two")])
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        agent.followup(msg("first", "m1"))
        await idle(pilot, agent)
        shown = screen_text(app)
        assert "LEFT THE INBOX · 1" in shown
        assert "✓ answered · turn 1 step 1  #m1" in shown  # its receipt stays
        assert "NEXT TURN · 0" in shown
        assert "↵ follow-up  you  #m1" in shown  # now in the transcript


async def test_a_claimed_steer_is_rescued_as_a_steer() -> None:
    ctx, model = world([text("took the steer"), text("took the rescued text")])
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx, NO_HOLD)
    async with app.run_test(size=SIZE) as pilot:
        app.main.select_agent("planner")
        agent.inbox.append("next-step", msg("steer this way", "s1", "steer"))  # no wake
        await settle(pilot)
        await focus_item(pilot, "s1")
        await pilot.press("enter")
        screen = app.screen
        assert isinstance(screen, EditScreen)
        await pilot.press(*", please")
        agent.wake()  # the agent claims s1 while the dialog is open
        await wait_until(pilot, lambda: agent.inbox.get("s1") is None)
        await settle(pilot)
        assert screen.claimed and "ctrl+s sends it as a steer" in str(
            screen.query_one("#claimed").render())
        await pilot.press("ctrl+s")
        await idle(pilot, agent)
        await wait_until(pilot, lambda: len(model.requests) == 2)
        await idle(pilot, agent)
        users = [e.data for e in agent.session.events if e.type == "user/message"]
        assert [u["content"][0]["text"] for u in users] == ["steer this way",
                                                           "steer this way, please"]
        assert users[1]["source"].get("lane") == "steer"


async def test_a_long_queue_builds_only_the_rows_that_fill_the_pane_and_the_rest_on_the_way(
        ) -> None:
    """Issue 25 §5: selecting an agent with 10,000 queued items built (and had Textual
    measure) every row the pane may list, 100 items and more, to show the twenty that fit.
    Now the rows of two pane heights are built; moving, paging, `end`, scrolling and
    `highlight_message` build the rest on the way, and the numbers run on."""
    from dsh_tui.ui.state.inbox_rows import LANE_ROW_LIMIT

    ctx, _ = world([])
    agent = await add_agent(ctx, "planner", "planner")
    for n in range(10_000):
        agent.inbox.append("next-turn", msg(f"queued {n}", f"q{n:05d}"))
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        inbox = app.main.inbox
        listed = len(inbox.rows)
        assert listed >= LANE_ROW_LIMIT + 2  # a banner, two headers, 100 items, a hint
        height = inbox.size.height
        assert inbox.fills_pane and inbox.measured <= height + 8 < listed  # 2 screens
        assert "queued 0" in screen_text(app)
        inbox.focus()
        for _ in range(height):  # down through the first screen and on: rows keep coming
            await pilot.press("down")
        await settle(pilot)
        number = height + 1
        assert inbox.highlighted_id == f"msg:q{number - 1:05d}"
        assert f"{number}. " in screen_text(app) and f"queued {number - 1}" in screen_text(app)
        await pilot.press("end")
        await settle(pilot)
        assert inbox.measured == listed  # every row, the "… 9,900 more" hint last
        assert inbox.rows[-1].kind == "hint" and "9,900 more queued" in inbox.rows[-1].text
        assert inbox.row_id(listed - 1) == f"hint:{listed - 1}"
        assert "100. " in screen_text(app)
        assert inbox.highlighted_id == f"msg:q{LANE_ROW_LIMIT - 1:05d}"
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        inbox = app.main.inbox
        built = inbox.measured
        inbox.scroll_end(animate=False, immediate=True)
        await settle(pilot)
        assert inbox.measured > built  # scrolling toward the end builds the next rows
        inbox.highlight_message(f"q{LANE_ROW_LIMIT - 2:05d}")
        await settle(pilot)
        assert inbox.highlighted_id == f"msg:q{LANE_ROW_LIMIT - 2:05d}"
        assert f"{LANE_ROW_LIMIT - 1}. " in screen_text(app)


async def test_a_sent_receipt_turns_answered_in_the_pane_when_only_the_reply_arrives() -> None:
    """The reply is a tool call to a tool still working: no inbox operation, no turn end,
    only the model's answer moves the receipt on; the pane draws it all the same."""
    gate = asyncio.Event()

    async def gated(_request: Any) -> Any:
        await gate.wait()
        return tool_call("c1", "slow", {})

    async def slow(call: Any) -> Any:
        await call.signal.wait()  # working until the agent is stopped
        return ToolOutput.text("stopped")

    ctx, _ = world([gated], tools=[Tool("slow", "A slow tool", {"type": "object"}, slow)])
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        agent.followup(msg("first", "m1"))
        await wait_until(pilot, lambda: "→ sent · turn 1 step 1" in screen_text(app))
        gate.set()
        await wait_until(pilot, lambda: any(e.type == "tool/call" for e in agent.session.events))
        await settle(pilot)
        await wait_until(pilot, lambda: "✓ answered · turn 1 step 1" in screen_text(app))
        agent.cancel()
        await idle(pilot, agent)
