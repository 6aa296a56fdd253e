"""Drafts are kept per agent (issue 25): the composer's unsent text stays with the agent it
was typed for when the selection moves, and is saved with the workspace (`drafts.json`
beside its record), so a reopened workspace gives every agent its text back."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from dsh_tui.compose import leave
from dsh_tui.harness.persistence import JsonlPersistence
from dsh_tui.harness.persistence.workspace import DRAFTS_FILE, Workspace, read_drafts
from dsh_tui.reopen import choose_target, open_workspace
from dsh_tui.ui.app import DshApp

from .conftest import SIZE, add_agent, settle, wait_until, world
from .test_workspaces import _args, _world, make_workspace


async def test_each_agent_keeps_its_own_unsent_text() -> None:
    ctx, _model = world()
    await add_agent(ctx, "a", "alpha")
    await add_agent(ctx, "b", "beta")
    app = DshApp(ctx)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        main = app.main
        composer = main.composer
        main.select_agent("a")
        await pilot.press(*"half a thought")
        main.select_agent("b")
        await settle(pilot)
        assert composer.text == ""  # beta has no draft: alpha's text stayed with alpha
        await pilot.press(*"for beta", "ctrl+j", *"two lines")
        main.select_agent("a")
        await settle(pilot)
        assert composer.text == "half a thought"
        main.select_agent("b")
        await settle(pilot)
        assert composer.text == "for beta\ntwo lines"
        await pilot.press("enter")  # sent: beta has no draft any more, alpha still has
        await wait_until(pilot, lambda: composer.text == "")
        main.select_agent("a")
        await settle(pilot)
        assert composer.text == "half a thought"
        main.select_agent("b")
        await settle(pilot)
        assert composer.text == ""
        assert main.draft_keeper.drafts.snapshot() == {"a": "half a thought"}
    await leave(ctx)


async def test_drafts_are_saved_with_the_workspace_and_come_back(tmp_path: Path) -> None:
    data, here = tmp_path / "data", tmp_path / "proj"
    here.mkdir()
    ws = await make_workspace(data, here, {"alpha": [], "beta": []}, "d")
    target = choose_target(_args(data, "--resume", ws), JsonlPersistence(data), str(here))
    ctx, persistence = _world(data)
    workspace = await open_workspace(ctx, persistence, target, str(here))
    app = DshApp(ctx)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        main = app.main
        main.select_agent("d-root0")
        await pilot.press(*"alpha's draft")
        main.select_agent("d-root1")
        await pilot.press(*"beta's draft")
        drafts = workspace.path.parent / DRAFTS_FILE
        # Saved when typing pauses (a second), without quitting.
        await wait_until(pilot, lambda: read_drafts(drafts.parent).get("d-root1") ==
                         "beta's draft", rounds=2000)
        await pilot.press(*" and more")
        await pilot.press("ctrl+q")  # the last keys are saved on the way out
    await leave(ctx)
    workspace.close()
    assert read_drafts(drafts.parent) == {"d-root0": "alpha's draft",
                                          "d-root1": "beta's draft and more"}
    assert json.loads(drafts.read_text())["type"] == "drafts"

    target = choose_target(_args(data, "-c"), JsonlPersistence(data), str(here))
    ctx, persistence = _world(data)
    workspace = await open_workspace(ctx, persistence, target, str(here))
    app = DshApp(ctx)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        main = app.main
        assert main.selected_id == "d-root1"
        assert main.composer.text == "beta's draft and more"
        main.select_agent("d-root0")
        await settle(pilot)
        assert main.composer.text == "alpha's draft"
    await leave(ctx)
    workspace.close()


def test_drafts_wait_for_the_workspace_and_a_damaged_file_reads_as_none(
        tmp_path: Path) -> None:
    workspace = Workspace.new(tmp_path, "/p")
    workspace.save_drafts({"s1": "kept", "s2": ""})
    directory = workspace.path.parent
    assert not directory.exists()  # in memory until the workspace is on disk
    workspace.materialize()
    assert read_drafts(directory) == {"s1": "kept"}
    workspace.save_drafts({})
    assert not (directory / DRAFTS_FILE).exists()
    workspace.close()
    for damaged in (b"{not json", b'{"type":"other"}', b'{"type":"drafts","drafts":[1]}'):
        (directory / DRAFTS_FILE).write_bytes(damaged)
        assert read_drafts(directory) == {}
    (directory / DRAFTS_FILE).write_text(json.dumps(
        {"type": "drafts", "drafts": {"ok": "text", "bad": 3, "": "x", "empty": ""}}))
    assert read_drafts(directory) == {"ok": "text"}


async def test_a_draft_that_cannot_be_written_shows_as_not_saved_and_is_retried(
        tmp_path: Path) -> None:
    workspace = Workspace.new(tmp_path, "/p")
    workspace.materialize()
    directory = workspace.path.parent
    (directory / DRAFTS_FILE).mkdir()  # in the way: the new file cannot take its name
    workspace.save_drafts({"s1": "text"})
    failure: Any = workspace.save_failure
    assert failure is not None and str(workspace.path) in failure
    (directory / DRAFTS_FILE).rmdir()
    deadline = asyncio.get_running_loop().time() + 10
    while workspace.save_failure is not None:  # nobody saves again: the retry writes it
        assert asyncio.get_running_loop().time() < deadline, "the drafts were never retried"
        await asyncio.sleep(0.05)
    assert read_drafts(directory) == {"s1": "text"}
    assert not list(directory.glob("*.tmp"))
    workspace.close()
    assert workspace.lost_on_exit is None
