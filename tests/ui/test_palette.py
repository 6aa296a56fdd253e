"""The command palette finds an action by the words a person would type for it.

"export" found nothing: exporting lives in the sessions list (f3), whose palette row is
titled "Past sessions". Every user-facing action answers to its everyday words.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.command import CommandPalette

from dsh_tui.ui.commands import DshCommands
from dsh_tui.ui.keys import SPEC_BY_NAME
from dsh_tui.ui.screens.sessions import SessionsScreen

from .conftest import SIZE, add_agent, make_app, screen_text, wait_until, world
from .test_workspaces import _world

WORDS: dict[str, tuple[str, ...]] = {
    # what a person types: the actions it must find
    "export": ("sessions",),
    "archive": ("sessions",),
    "export session": ("sessions",),
    "delete session": ("sessions",),
    "markdown": ("sessions",),
    "resume": ("sessions", "breakpoint_continue"),
    "reopen": ("sessions",),
    "history": ("sessions", "load_older"),
    "rename": ("rename_agent",),
    "delete": ("dispose_agent", "remove_item", "clear_inbox", "sessions", "delete_word"),
    "kill": ("dispose_agent",),
    "remove agent": ("dispose_agent",),
    "stop": ("cancel_keep_inbox", "interrupt", "cancel_clear"),
    "cancel": ("cancel_keep_inbox", "cancel_clear"),
    "abort": ("cancel_keep_inbox", "cancel_clear"),
    "clear": ("clear_inbox", "cancel_clear"),
    "discard": ("clear_inbox", "remove_item", "cancel_clear"),
    "undo": ("undo_discard", "restore_unsent"),
    "restore": ("undo_discard", "restore_unsent"),
    "pause": ("toggle_breakpoint", "cancel_keep_inbox"),
    "new agent": ("new_agent", "spawn_child"),
    "subagent": ("spawn_child",),
    "find": ("search",),
    "exit": ("quit",),
    "thinking": ("toggle_reasoning",),
    "shortcuts": ("help",),
    "colours": ("change_theme",),
    "fullscreen": ("zoom_transcript",),
}
BEST = {"export": "sessions", "archive": "sessions", "export session": "sessions",
        "delete session": "sessions", "reopen": "sessions", "rename": "rename_agent",
        "kill": "dispose_agent", "remove agent": "dispose_agent", "new agent": "new_agent",
        "exit": "quit", "stop": "cancel_keep_inbox", "quit": "quit"}
"""Queries with one clear answer: it is the best hit."""


async def _hits(app: Any, query: str) -> list[str]:
    """The palette's hits for `query`, best first, as the titles it shows."""
    provider = DshCommands(app.screen)
    hits = [hit async for hit in provider.search(query)]
    hits.sort(key=lambda hit: -hit.score)
    return [hit.text or "" for hit in hits]


def _title(action: str) -> str:
    return SPEC_BY_NAME[action].title


async def test_every_action_is_found_by_the_words_a_person_types() -> None:
    ctx, _ = world([])
    await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=SIZE):
        missing = []
        for query, actions in WORDS.items():
            hits = await _hits(app, query)
            for action in actions:
                if not any(hit.startswith(_title(action) + "  (") for hit in hits):
                    missing.append(f"{query!r}: {_title(action)} not among {hits}")
        for query, action in BEST.items():
            hits = await _hits(app, query)
            if not hits or not hits[0].startswith(_title(action) + "  ("):
                missing.append(f"{query!r}: best hit {hits[:1]}, wanted {_title(action)}")
        assert not missing, "\n".join(missing)
        assert await _hits(app, "xyzzy") == []


@pytest.mark.parametrize(("query", "shown"), [("export", "· export"), ("archive", "· archive")])
async def test_typing_export_in_the_palette_opens_the_sessions_list(
        query: str, shown: str, tmp_path: Path) -> None:
    ctx, _ = _world(tmp_path / "data")  # sessions saved on disk: the list opens
    await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+p")
        await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette))
        await pilot.press(*query)
        await wait_until(pilot, lambda: "Past sessions  (f3)" in screen_text(app))
        text = screen_text(app)
        assert shown in text and "ctrl+e exports one as Markdown" in text
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionsScreen))
