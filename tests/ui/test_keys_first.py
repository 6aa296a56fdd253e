"""Keystrokes first, as a person types into the composer while the shown agent streams.

The drawing of streamed text waits while the person types (the frame a typed key would
wait behind), for at most `KeysFirst.max_hold`, then runs right after a key's frame;
the models keep up all along, and nothing streamed is lost or reordered on screen.
"""

from __future__ import annotations

import asyncio

from dsh_tui.compose import build_context
from dsh_tui.ui.widgets.blocks import AssistantBlock

from .conftest import SIZE, add_agent, make_app, msg, screen_text, settle, wait_until
from .test_transcript_view import GatedModel


async def test_streamed_text_waits_for_typing_and_still_arrives_whole_and_in_order() -> None:
    gated = GatedModel()
    ctx = build_context(providers={"mock": gated}, tools=[], retry=False, system_prompt=None)
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    parts = ["First paragraph.\n\n"]
    async with app.run_test(size=SIZE) as pilot:
        composer = app.main.composer
        composer.focus()
        agent.followup(msg("go", "m1"))
        await gated.parts.put(parts[0])
        await wait_until(pilot, lambda: "First paragraph." in screen_text(app))
        await settle(pilot)
        keys = app.keys_first
        keys.max_hold = 0.25
        view = app.bridge.views[agent.id]

        await pilot.press("a")
        assert keys.typing()
        parts.append("Second, sent while the person types.\n\n")
        await gated.parts.put(parts[1])
        # The model has it on the bridge's usual pacing; the screen waits for typing.
        await wait_until(pilot, lambda: "Second, sent" in view.transcript.items[-1].current_text())
        assert keys.held == 1
        assert "Second, sent" not in screen_text(app)
        await pilot.press("b")  # a key is handled, and drawn, while the text waits
        await wait_until(pilot, lambda: "ab" in screen_text(app))
        assert "Second, sent" not in screen_text(app)

        # Typing on without a pause: once the text has waited max_hold, it is drawn after
        # the next key's frame, while the person is still typing.
        typed = "ab"
        for character in "cdefghij":
            await asyncio.sleep(0.06)
            await pilot.press(character)
            typed += character
            if "Second, sent" in screen_text(app):
                break
        await wait_until(pilot, lambda: "Second, sent" in screen_text(app), rounds=40)
        assert keys.typing() and keys.held == 0
        assert composer.text == typed

        # More text in pieces, some while typing, some after: all of it, in order.
        for n in range(6):
            parts.append(f"Piece {n} ")
            await gated.parts.put(parts[-1])
            if n % 2 == 0:
                await pilot.press("k")
                typed += "k"
            await asyncio.sleep(0.05)
        await gated.parts.put(None)
        await asyncio.wait_for(agent.when_idle(), 10)
        await wait_until(pilot, lambda: not keys.typing() and keys.held == 0)
        await settle(pilot)
        (block,) = app.main.transcript.query(AssistantBlock)
        streamed = "".join(parts)
        assert view.transcript.items[block.item_index].current_text() == streamed
        assert block.source.strip() == streamed.strip()
        assert "Piece 5" in screen_text(app)
        assert composer.text == typed


async def test_a_key_that_does_not_type_ends_the_hold() -> None:
    """enter sends the message: typing is over, and the text held while it was typed is
    drawn after enter's frame (as after any key that does not type), not 0.3 s later."""
    gated = GatedModel()
    ctx = build_context(providers={"mock": gated}, tools=[], retry=False, system_prompt=None)
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        app.main.composer.focus()
        agent.followup(msg("go", "m1"))
        await gated.parts.put("Before typing.\n\n")
        await wait_until(pilot, lambda: "Before typing." in screen_text(app))
        keys = app.keys_first
        keys.hold = keys.max_hold = 60.0  # only a key that does not type can end it here
        view = app.bridge.views[agent.id]
        await pilot.press(*"more")
        await gated.parts.put("Held while typing.")
        await wait_until(pilot, lambda: "Held while" in view.transcript.items[-1].current_text())
        await settle(pilot)
        assert keys.held == 1 and "Held while typing." not in screen_text(app)
        await pilot.press("enter")  # queued as a follow-up: the turn is still running
        await wait_until(pilot, lambda: "Held while typing." in screen_text(app), rounds=40)
        assert not keys.typing() and keys.held == 0
        assert [m.text for m in agent.inbox.next_turn] == ["more"]
        await gated.parts.put(None)  # this reply ends, and the follow-up's turn starts:
        await gated.parts.put(None)  # its reply ends at once
        await asyncio.wait_for(agent.when_idle(), 10)
