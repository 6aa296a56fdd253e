"""Issue 11: while a model sends nothing, the transcript title says "waiting for the model…
(Ns)", counting, and escape stops the wait."""

from __future__ import annotations

import pytest

from dsh_tui.llm.scripted import Reply
from dsh_tui.ui.screens import main as main_screen

from .conftest import SIZE, add_agent, make_app, msg, settle, wait_until, world


async def test_a_silent_model_is_shown_as_waited_on_and_escape_stops_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(main_screen, "WAITING_SHOWN_AFTER_S", 0)
    ctx, _ = world([Reply(hang=True)])  # the request is sent; nothing ever comes back
    agent = await add_agent(ctx, "silent", "silent")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        app.main.select_agent(agent.id)
        agent.followup(msg("hello?", "m1"))
        await settle(pilot)

        def title() -> str:
            return str(app.main.transcript.border_title or "")

        await wait_until(pilot, lambda: "waiting for the model… (0s)" in title())
        await wait_until(pilot, lambda: "waiting for the model… (1s)" in title(), rounds=1000)
        assert "escape stops" in title()
        app.main.composer.focus()
        await pilot.press("escape")
        await wait_until(pilot, lambda: agent.status == "idle")
        await settle(pilot)
        assert "waiting" not in title()
