"""The key gate fails safe (dsh_tui/ui/keygate.py).

The gate reads a few private fields of Textual 8.2.8 to know when a key's effects have
settled. If they are not what it expects (a newer Textual), or reading them fails in the
middle of a burst, it turns itself off and keys go straight to Textual, in order: a burst
still arrives whole, none held, none lost, and the app does not crash. Keys are posted
all at once, as the driver does with one read of the terminal.
"""

from __future__ import annotations

from typing import Any

import pytest
from textual import events

from dsh_tui.llm.scripted import text
from dsh_tui.ui import keygate

from .conftest import SIZE, add_agent, idle, make_app, settle, wait_until, world


def post_burst(app: Any, *keys: str) -> None:
    """Every key at once, as the terminal driver posts the keys of one read."""
    for name in keys:
        event = events.Key(name, name if len(name) == 1 else None)
        event.set_sender(app)
        app.post_message(event)


def sent(agent: Any) -> list[str]:
    return [e.data["content"][0]["text"] for e in agent.session.events
            if e.type == "user/message"]


async def test_the_gate_reads_what_the_pinned_textual_has() -> None:
    ctx, _ = world()
    await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert keygate.gate_fits(app)
        post_burst(app, "h", "i")
        await wait_until(pilot, lambda: app.main.composer.text == "hi")
        assert app._key_gate.enabled is True


async def test_with_other_internals_keys_go_straight_through_in_order(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(keygate, "gate_fits", lambda app: False)
    ctx, _ = world([text("ok")])
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        post_burst(app, "o", "n", "e", "enter", "t", "w", "o")
        await wait_until(pilot, lambda: app.main.composer.text == "two")
        await idle(pilot, agent)
        assert sent(agent) == ["one"]
        assert app._key_gate.enabled is False
        assert not app._key_gate.held


async def test_a_settle_check_that_fails_mid_burst_turns_the_gate_off_and_loses_no_key(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(app: Any) -> bool:
        raise AttributeError("'Widget' object has no attribute '_next_callbacks'")

    monkeypatch.setattr(keygate, "_settling", broken)
    ctx, _ = world([text("ok")])
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        # "enter" is bound: after it the gate checks whether its effects settled, which
        # fails; the keys it held go on in order and the app keeps running.
        post_burst(app, "o", "n", "e", "enter", "t", "w", "o")
        await wait_until(pilot, lambda: app.main.composer.text == "two")
        await idle(pilot, agent)
        assert sent(agent) == ["one"]
        assert app._key_gate.enabled is False
        assert app.is_running


async def test_a_burst_of_tree_moves_reaches_the_tree_in_one_run_and_the_next_key_waits() -> None:
    # Key repeat on the tree: each move only moves the cursor, so the gate hands the whole
    # run over at once instead of following each key up to the app (rounds that, with
    # agents streaming, waited behind frames and put a 30-key burst at ~0.3-0.6 s).
    ctx, _ = world()
    for n in range(12):
        await add_agent(ctx, f"a{n:02d}", f"agent {n}")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        app.main.select_agent("a00", focus_tree=True)
        await settle(pilot)
        gate, tree = app._key_gate, app.main.agent_tree
        rounds = gate.ticket
        post_burst(app, *["down"] * 9)
        await wait_until(pilot, lambda: app.main.selected_id == "a09")
        assert tree.cursor_agent_id == "a09"
        assert gate.ticket - rounds <= 3  # one run (each key alone took a round or more)
        # A key that is not a move still waits for what came before it, and what comes
        # after it goes where it put the focus: enter chooses the row the run left the
        # cursor on and moves to the composer, so the last `down` is the composer's.
        rounds = gate.ticket
        post_burst(app, "up", "up", "enter", "down")
        await wait_until(pilot, lambda: app.focused is app.main.composer)
        await settle(pilot)
        assert app.main.selected_id == "a07" and tree.cursor_agent_id == "a07"
        assert gate.ticket - rounds >= 2  # the run, then enter on its own
