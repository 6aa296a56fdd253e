"""Workspaces inside the app (issue 13): f3 filters, deletes and archives (after a
confirm) and exports; a reopened workspace brings back its breakpoints, its selection and
its names; a rename is recorded as upstream records one and works from a browser's key;
what a session list shows is visible-safe; a turn left running reads as interrupted."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest

from dsh_tui import cli
from dsh_tui.compose import leave
from dsh_tui.harness import user_message
from dsh_tui.harness.persistence import JsonlPersistence
from dsh_tui.harness.persistence.catalog import build_catalog
from dsh_tui.llm.scripted import hang
from dsh_tui.reopen import choose_target, open_workspace
from dsh_tui.ui.app import DshApp
from dsh_tui.ui.keys import startup_keymap
from dsh_tui.ui.screens.confirm import YES_KEY, ConfirmScreen
from dsh_tui.ui.screens.name import NameScreen
from dsh_tui.ui.screens.sessions import SessionsScreen
from dsh_tui.ui.state.workspace import new_workspace, record_root, root_meta, start_workspace
from dsh_tui.ui.state.world import create_agent

from .conftest import SIZE, screen_text, settle, wait_until
from .test_workspaces import _args, _world, make_workspace


def _app_world(data: Path, cwd: Path) -> tuple[Any, Any, Any]:
    ctx, persistence = _world(data)
    workspace = start_workspace(ctx, persistence, new_workspace(persistence, cwd))
    return ctx, persistence, workspace


async def test_f3_filters_deletes_and_archives_after_a_confirm_and_exports(
        tmp_path: Path) -> None:
    data, here = tmp_path / "data", tmp_path / "proj"
    here.mkdir()
    await make_workspace(data, here, {"alpha": ["scout"], "beta": [], "gamma": []}, "w")
    ctx, _persistence, workspace = _app_world(data, here)
    handle = await create_agent(ctx, provider="mock", model="mock", title="current",
                                session_id="now", meta=root_meta(ctx))
    record_root(ctx, handle.agent.id)
    app = DshApp(ctx)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f3")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionsScreen))
        await wait_until(pilot, lambda: "scout" in screen_text(app))
        screen = app.screen
        await pilot.press(*"alph")  # typing filters: alpha (under its heading) is left
        await pilot.pause()
        ids = [o.id for o in screen.query_one("#sessions-list").options]
        assert ids[1:] == ["s:w-root0"] and ids[0].startswith("w:ws-")
        await pilot.press("delete")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert "Delete alpha (2 sessions)?" in screen_text(app)
        await pilot.press("n")  # asked first: no means nothing happens
        await wait_until(pilot, lambda: app.screen is screen)
        assert (data / f"--{str(here).strip('/').replace('/', '-')}--" / "w-root0").is_dir()
        await pilot.press("ctrl+e")  # export: Markdown into the working directory
        await wait_until(pilot, lambda: (here / "dsh-tui-w-root0.md").is_file())
        exported = (here / "dsh-tui-w-root0.md").read_text()
        assert exported.startswith("# alpha")
        assert "scout" in exported and "work for scout" in exported  # its child, nested
        await pilot.press("delete")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press(YES_KEY)
        await wait_until(pilot, lambda: "Deleted 2 sessions" in screen_text(app))
        await pilot.press("ctrl+u", *"beta", "ctrl+a")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert "Archive beta?" in screen_text(app)
        await pilot.press(YES_KEY)
        await wait_until(pilot, lambda: "Archived 1 session" in screen_text(app))
        await pilot.press("ctrl+u", *"now", "delete")  # open here: refused, kept
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press(YES_KEY)
        await wait_until(pilot, lambda: "current is open here: dispose it first"
                         in screen_text(app))
        await pilot.press("escape")
    await leave(ctx)
    workspace.close()
    left = {e.id for g in build_catalog(JsonlPersistence(data)) for _, e in g.walk()}
    assert left == {"w-root2"}  # alpha and scout deleted, beta archived; "now" never saved
    assert list((data / "~archive").rglob("session.jsonl"))  # beta, kept under ~archive


async def test_a_reopened_workspace_has_its_breakpoints_selection_and_names(
        tmp_path: Path) -> None:
    data, here = tmp_path / "data", tmp_path / "proj"
    here.mkdir()
    ws = await make_workspace(data, here, {"alpha": ["scout"], "beta": []}, "r")
    target = choose_target(_args(data, "--resume", ws), JsonlPersistence(data), str(here))
    ctx, persistence = _world(data)
    workspace = await open_workspace(ctx, persistence, target, str(here))
    app = DshApp(ctx)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        scout = next(a.id for a in ctx.agents.list() if a.id.startswith("r-root0."))
        app.main.select_agent(scout)
        await app.run_action("screen.toggle_breakpoint")
        app.main.select_agent("r-root1")
        await app.run_action("screen.rename_agent")
        await wait_until(pilot, lambda: isinstance(app.screen, NameScreen))
        await pilot.press(*"editor", "enter")  # typing replaces the offered name
        await wait_until(pilot, lambda: "→ editor" in screen_text(app))
    await leave(ctx)
    workspace.close()
    titles = [r for r in (JsonlPersistence(data).path_for("r-root1").read_text().splitlines())
              if '"session/title"' in r]
    assert '"title":"editor","messageSeqs":[],"source":{"kind":"user"}' in titles[-1]

    target = choose_target(_args(data, "-c"), JsonlPersistence(data), str(here))
    ctx, persistence = _world(data)
    workspace = await open_workspace(ctx, persistence, target, str(here))
    app = DshApp(ctx)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.main.selected_id == "r-root1" and "→ editor" in screen_text(app)
        assert app.breakpoints is not None and app.breakpoints.is_armed(scout)
        assert not app.breakpoints.is_armed("r-root0")
        assert {"alpha", "scout", "editor"} <= {v.name for v in app.bridge.views.values()}
    await leave(ctx)
    workspace.close()


async def test_rename_has_a_key_a_browser_passes_on(tmp_path: Path) -> None:
    ctx, _, workspace = _app_world(tmp_path / "data", tmp_path)
    await create_agent(ctx, provider="mock", model="mock", title="solo", session_id="solo",
                       meta=root_meta(ctx))
    app = DshApp(ctx)
    async with app.run_test(size=SIZE) as pilot:
        app.set_keymap(startup_keymap(True, {}))  # as `dsh-tui serve` starts it
        await settle(pilot)
        await pilot.press("alt+r")
        await wait_until(pilot, lambda: isinstance(app.screen, NameScreen))
        assert "Rename solo" in screen_text(app)
        await pilot.press("escape")  # cancelled: the name stays
        await wait_until(pilot, lambda: not isinstance(app.screen, NameScreen))
        assert app.bridge.views["solo"].name == "solo"
    await leave(ctx)
    workspace.close()


async def test_f6_renames_from_the_composer_where_the_focus_nearly_always_is(
        tmp_path: Path) -> None:
    """The composer is a TextArea, which binds f6 (select line) itself: the rename key must
    still reach the app from there."""
    ctx, _, workspace = _app_world(tmp_path / "data", tmp_path)
    await create_agent(ctx, provider="mock", model="mock", title="solo", session_id="solo",
                       meta=root_meta(ctx))
    app = DshApp(ctx)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.query_one("#composer").focus()
        await settle(pilot)
        await pilot.press("f6")
        await wait_until(pilot, lambda: isinstance(app.screen, NameScreen))
        assert "Rename solo" in screen_text(app)
        await pilot.press("f6")  # the dialog keeps its keys: no second dialog over it
        await settle(pilot)
        assert len(app.screen_stack) == 2
        await pilot.press(*"lone", "enter")
        await wait_until(pilot, lambda: not isinstance(app.screen, NameScreen))
        assert app.bridge.views["solo"].name == "lone"
    await leave(ctx)
    workspace.close()


async def test_session_lists_show_hostile_titles_as_visible_symbols_and_running_as_interrupted(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data, here = tmp_path / "data", tmp_path / "proj"
    here.mkdir()
    ctx, _, workspace = _app_world(data, here)
    handle = await create_agent(ctx, provider="mock", model="mock",
                                title="evil\x1b[31m\u202eeman\x07", session_id="evil",
                                meta=root_meta(ctx))
    record_root(ctx, "evil")
    ctx.services["router"].providers["mock"].extend([hang("working")])
    handle.agent.followup(user_message("start"))
    for _ in range(200):
        if handle.agent.status == "running":
            break
        await asyncio.sleep(0.01)
    await leave(ctx)  # quit while the turn runs
    workspace.close()
    assert cli.main(["--data-dir", str(data), "sessions"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\u202e" not in out and "\x07" not in out
    row = next(line for line in out.splitlines()
               if "evil" in re.split(r"\s{2,}", line.strip()))  # the id column
    assert "interrupted" in row
