"""Issue 25 §2: stores a person's disk can hold. One symbolic link that points at itself in
the data directory hid every session and workspace beside it (`sessions` said "no saved
sessions", `-c` found nothing): it is now skipped with one warning line and the rest is
listed, judged through the real CLI on a store made by the real harness. A working
directory whose path is not UTF-8 is recorded and read back."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from dsh_tui import cli
from dsh_tui.compose import build_context, leave
from dsh_tui.harness import user_message
from dsh_tui.harness.persistence import JsonlPersistence
from dsh_tui.harness.persistence.paths import project_dir_name
from dsh_tui.harness.persistence.workspace import WORKSPACES_DIR
from dsh_tui.llm.scripted import ScriptedModel
from dsh_tui.reopen import choose_target
from dsh_tui.ui.state.workspace import new_workspace, record_root, root_meta, start_workspace
from dsh_tui.ui.state.world import create_agent


async def _store(data: Path, cwd: Path) -> str:
    persistence = JsonlPersistence(data)
    ctx = build_context(providers={"mock": ScriptedModel([])}, persistence=persistence,
                        tools=[], retry=False, system_prompt=None)
    workspace = start_workspace(ctx, persistence, new_workspace(persistence, cwd))
    handle = await create_agent(ctx, provider="mock", model="mock", title="kept",
                                session_id="kept-1", meta=root_meta(ctx))
    record_root(ctx, handle.agent.id)
    handle.agent.inbox.append("next-turn", user_message("still here"))
    await leave(ctx)
    workspace.close()
    return workspace.id


@pytest.mark.parametrize("where", ["project", "root", "workspaces"])
async def test_a_self_referencing_symlink_is_skipped_and_the_rest_listed(
        tmp_path: Path, where: str, capsys: pytest.CaptureFixture[str],
        caplog: pytest.LogCaptureFixture) -> None:
    data, cwd = tmp_path / "data", tmp_path / "proj"
    cwd.mkdir()
    workspace_id = await _store(data, cwd)
    project = data / project_dir_name(str(cwd))
    holder = {"project": project, "root": data, "workspaces": project / WORKSPACES_DIR}[where]
    loop = holder / "loop\x1b]0;PWN\x07"
    os.symlink(loop.name, loop)
    with caplog.at_level(logging.WARNING, logger="dsh_tui"):
        assert cli.main(["--data-dir", str(data), "sessions"]) == 0
    out = capsys.readouterr().out
    assert "kept-1" in out and workspace_id in out and "still here" in out
    warnings = [r.getMessage() for r in caplog.records if "loop" in r.getMessage()]
    assert warnings and all("\n" not in w and "\x1b" not in w for w in warnings)
    assert all(w.startswith(f"skipping {holder}") for w in warnings)
    target = choose_target(cli.build_parser().parse_args(["--data-dir", str(data), "-c"]),
                           JsonlPersistence(data), str(cwd))
    assert target is not None and target.group.id == workspace_id
    assert [root.id for root in target.roots] == ["kept-1"]


def test_a_workspace_of_a_non_utf8_directory_is_recorded_and_read_back(tmp_path: Path) -> None:
    """The record of a cwd Python decoded with surrogates (`caf\\udce9`) was never written:
    json.dumps left the lone surrogate raw, encoding the header line raised, the file was
    left created and empty, and every retry said "File exists"."""
    from dsh_tui.harness.persistence.workspace import Workspace, read_state

    cwd = os.fsdecode(os.fsencode(tmp_path) + b"/caf\xe9")
    workspace = Workspace.new(tmp_path / "data", cwd)
    workspace.record("root", session="kept-1")
    workspace.materialize()
    try:
        assert workspace.materialized and workspace.save_failure is None
        state, _ = read_state(workspace.path)
        assert state is not None and state.cwd == cwd and state.roots == ["kept-1"]
        assert b"\\udce9" in workspace.path.read_bytes()  # escaped as JSON.stringify does
    finally:
        workspace.close()
    assert workspace.lost_on_exit is None
