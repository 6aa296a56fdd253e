"""Issue 11: while a model sends nothing, the transcript title says "waiting for the model…
(Ns)", counting, and escape stops the wait."""

from __future__ import annotations

import pytest

from dsh_tui.llm.scripted import Reply
from dsh_tui.ui.controllers import selection

from .conftest import SIZE, add_agent, make_app, msg, screen_text, settle, wait_until, world


async def test_a_silent_model_is_shown_as_waited_on_and_escape_stops_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(selection, "WAITING_SHOWN_AFTER_S", 0)
    ctx, _ = world([Reply(hang=True)])  # the request is sent; nothing ever comes back
    agent = await add_agent(ctx, "silent", "silent")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        app.main.select_agent(agent.id)
        agent.followup(msg("hello?", "m1"))
        await settle(pilot)

        def title() -> str:
            return str(app.main.transcript.border_title or "")

        # The pane is ~70 columns wide here: the notice takes a shorter form ("waiting 0s
        # · escape stops"); tests/ui/test_titles.py shows every form and when it is used.
        await wait_until(pilot, lambda: "waiting 0s" in title())
        await wait_until(pilot, lambda: "waiting 1s" in title(), rounds=1000)
        assert "escape stops" in title()
        assert title() in screen_text(app)  # all of it in sight
        app.main.composer.focus()
        await pilot.press("escape")
        await wait_until(pilot, lambda: agent.status == "idle")
        await settle(pilot)
        assert "waiting" not in title()


async def test_at_60x20_the_title_keeps_name_state_wait_and_counts_in_sight(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """At 60 columns the inbox pane is folded away and its counts live in the transcript's
    title; the waiting notice used to push them past the border into Textual's ellipsis.
    The title gets shorter part by part instead: name, state, wait and counts all show."""
    monkeypatch.setattr(selection, "WAITING_SHOWN_AFTER_S", 0)
    ctx, _ = world([Reply(hang=True)])
    agent = await add_agent(ctx, "silent", "a silent planner")
    app = make_app(ctx)
    async with app.run_test(size=(60, 20)) as pilot:
        app.main.select_agent(agent.id)
        agent.followup(msg("hello?", "m1"))
        await wait_until(pilot, lambda: agent.status == "running")
        agent.followup(msg("and then", "m2"))
        agent.followup(msg("and after", "m3"))
        await settle(pilot)

        def top() -> str:
            return screen_text(app).splitlines()[0]

        await wait_until(pilot, lambda: "waiting" in top() and "↵2" in top())
        assert not app.main.inbox.display  # the counts have no pane of their own here
        title = top()
        for part in ("a silent planner", "running", "waiting", "⚑0 ↵2"):
            assert part in title, title
        assert "…" not in title, title  # nothing cut at the border
