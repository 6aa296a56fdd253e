"""`dsh-tui sessions` as a person reads it (issue 25, §4): rows that fit the terminal,
the reopen command quitting printed, and "last active" moved only by activity.

Rows were about 150 columns and wrapped at 80; now each row is fitted to the width
(`COLUMNS`, else the terminal's; a pipe keeps rows whole) by dropping the size, the
year, cutting long names, then the date, never the id; `--json` is unchanged. Resuming
a log appends `session/end-seed`, which moved every session's "last active" (its
file's modification time) on a reopen; it is now the time of the last record that is
activity. The stores are made by the real harness; the listing is `cli.main`'s.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from dsh_tui import cli
from dsh_tui.compose import build_context, leave
from dsh_tui.harness import AgentOptions, CreateAgentOptions, ResumeAgentOptions, user_message
from dsh_tui.harness import session as session_module
from dsh_tui.harness.names import claim_name
from dsh_tui.harness.persistence import JsonlPersistence
from dsh_tui.llm.scripted import ScriptedModel, text
from dsh_tui.reopen import choose_target, open_workspace, reopen_message
from dsh_tui.ui.state.session_rows import cells
from dsh_tui.ui.state.workspace import new_workspace, record_root, root_meta, start_workspace
from dsh_tui.ui.state.world import create_agent

from .test_workspaces import _args, _queue, _world, make_workspace

T0 = 1_700_000_000_000
HOUR = 3_600_000
LONG = "an agent with the long name people give"


@pytest.fixture
async def store(tmp_path: Path) -> dict[str, Any]:
    data, here = tmp_path / "data", tmp_path / "proj"
    here.mkdir()
    newer = await make_workspace(data, here, {LONG: ["researcher of many things", "scout"],
                                              "writer": []}, "new")
    return {"data": data, "here": here, "newer": newer}


def _listing(data: Path, capsys: pytest.CaptureFixture[str], *more: str) -> str:
    assert cli.main(["--data-dir", str(data), "sessions", *more]) == 0
    return capsys.readouterr().out


def _rows(out: str) -> list[str]:
    """The session rows (neither a workspace's heading nor its reopen line)."""
    return [line for line in out.splitlines()
            if line.startswith("  ") and not line.startswith("  reopen: ")]


@pytest.mark.parametrize("width", [200, 100, 80, 60, 40])
async def test_rows_fit_the_terminal_and_keep_the_id(
        store: dict[str, Any], capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch, width: int) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    whole = _rows(_listing(store["data"], capsys))  # piped: rows as long as they are
    assert max(cells(row) for row in whole) > 100
    monkeypatch.setenv("COLUMNS", str(width))
    out = _listing(store["data"], capsys)
    rows = _rows(out)
    assert len(rows) == len(whole) == 4
    assert all(cells(line) <= width for line in out.splitlines()
               if not line.startswith("  reopen: ")), out
    ids = ["new-root0", "new-root1"]
    assert all(any(re.search(rf"\b{i}\b", row) for row in rows) for i in ids)
    assert all(re.search(r"new-root0\.child-[0-9a-f]{6}\b", row) for row in rows[1:3])
    assert all("idle" in row for row in rows) == (width >= 60)  # the status, to the last
    if width == 200:
        assert LONG in out and " B  " in out  # the whole name, and the size
    else:
        assert " B  " not in out  # the size is the first to go
    reopen = f"  reopen: dsh-tui --data-dir {store['data']} --resume {store['newer']}"
    assert reopen in out.splitlines()  # a command is never cut


async def test_json_does_not_depend_on_the_width(
        store: dict[str, Any], capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    wide = _listing(store["data"], capsys, "--json")
    monkeypatch.setenv("COLUMNS", "40")
    assert _listing(store["data"], capsys, "--json") == wide
    assert json.loads(wide)["workspaces"][0]["sessions"][0]["title"] == LONG


async def test_sessions_prints_the_command_quitting_printed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Before: the listing built its command from its own options, so a workspace used
    with `--config` was listed without it. Now both read the options the workspace was
    last opened with (as `run_app` records them), in both directions."""
    from dsh_tui.reopen import record_options  # what run_app calls once the workspace is open

    data, here = tmp_path / "data", tmp_path / "proj"
    here.mkdir()
    config = tmp_path / "my config.toml"
    config.write_text('theme = "light"\n', encoding="utf-8")
    first = _args(data, "--config", str(config), "--route", "work")
    ctx, persistence = _world(data)
    workspace = start_workspace(ctx, persistence, new_workspace(persistence, here))
    record_options(workspace, first)
    handle = await create_agent(ctx, provider="mock", model="mock",
                                title=claim_name(ctx, "demo"), session_id="demo-1",
                                meta=root_meta(ctx))
    record_root(ctx, handle.agent.id)
    await _queue(handle.agent, "hello")
    await leave(ctx)
    workspace.close()
    said = reopen_message(first, workspace)
    assert said is not None
    quit_line = said.splitlines()[1].strip()
    assert f"--config '{config}'" in quit_line and "--route work" in quit_line
    assert f"  reopen: {quit_line}" in _listing(data, capsys).splitlines()
    doc = json.loads(_listing(data, capsys, "--json"))
    assert doc["workspaces"][0]["command"] == quit_line
    # Reopened without them: the quit line and the listing drop them together.
    again = _args(data, "-c")
    ctx, persistence = _world(data)
    target = choose_target(again, persistence, str(here))
    assert target is not None
    workspace = await open_workspace(ctx, persistence, target, str(here))
    record_options(workspace, again)
    await leave(ctx)
    workspace.close()
    said = reopen_message(again, workspace)
    assert said is not None
    quit_line = said.splitlines()[1].strip()
    assert quit_line == f"dsh-tui --data-dir {data} --resume {workspace.id}"
    assert f"  reopen: {quit_line}" in _listing(data, capsys).splitlines()


def _last_active(data: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, int]:
    doc = json.loads(_listing(data, capsys, "--json"))
    out: dict[str, int] = {}

    def walk(session: dict[str, Any]) -> None:
        out[session["id"]] = session["lastActivity"]
        for child in session["children"]:
            walk(child)

    for group in doc["workspaces"]:
        for session in group["sessions"]:
            walk(session)
    return out


def _left_at(data: Path, ms: int) -> None:
    """The session files as the last run left them, `ms` since the epoch."""
    for path in data.rglob("session.jsonl"):
        os.utime(path, ns=(ms * 1_000_000, ms * 1_000_000))


async def test_reopening_moves_last_active_only_of_sessions_that_got_activity(
        store: dict[str, Any], capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [T0]
    monkeypatch.setattr(session_module, "now_ms", lambda: clock[0])
    data, here = store["data"], store["here"]
    await make_workspace(data, here, {"planner": ["helper"], "idle": []}, "day")
    day = {"day-root0", "day-root1"}
    _left_at(data, T0)
    before = _last_active(data, capsys)
    assert {before[i] for i in day} == {T0}
    clock[0] = T0 + HOUR  # an hour later, the workspace is reopened; one agent is used
    ctx, persistence = _world(data)
    target = choose_target(_args(data, "-c"), persistence, str(here))
    assert target is not None
    workspace = await open_workspace(ctx, persistence, target, str(here))
    used = ctx.agents.get("day-root1")
    assert used is not None
    await _queue(used, "one more thing")
    await leave(ctx)
    workspace.close()
    after = _last_active(data, capsys)
    assert after == {**before, "day-root1": T0 + HOUR}
    reopened = [p for p in data.rglob("session.jsonl") if "day-root" in str(p)]
    assert len(reopened) == 3 and all(b'"session/end-seed"' in p.read_bytes()
                                      for p in reopened)  # each resumed, and written to


async def test_a_resume_that_repairs_a_crash_is_not_activity(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A log cut inside a turn (kill -9) is closed by the repair on resume; the closers
    carry the crash's last time, the end-seed the resume's: last active is the crash's."""
    ticks = iter(range(T0, T0 + HOUR, 1000))
    monkeypatch.setattr(session_module, "now_ms", lambda: next(ticks))
    route = AgentOptions(provider="mock", model="mock")
    data = tmp_path / "data"
    ctx = build_context(providers={"mock": ScriptedModel([text("an answer")])},
                        persistence=JsonlPersistence(data), tools=[], retry=False)
    handle = await ctx.agents.create(CreateAgentOptions(session_id="agent-1",
                                                        agent_options=route))
    handle.agent.followup(user_message("hi"))
    await handle.agent.when_idle()
    await leave(ctx)
    path = JsonlPersistence(data).path_for("agent-1")
    lines = path.read_bytes().splitlines(keepends=True)
    cut = next(i for i, line in enumerate(lines) if b'"type":"step/start"' in line) + 1
    path.write_bytes(b"".join(lines[:cut]))  # killed right after the step started
    crashed_at = json.loads(lines[cut - 1])["time"]
    _left_at(data, T0)
    monkeypatch.setattr(session_module, "now_ms", lambda: T0 + HOUR)
    again = build_context(providers={"mock": ScriptedModel([])},
                          persistence=JsonlPersistence(data), tools=[], retry=False)
    await again.agents.resume(ResumeAgentOptions(resume_session_id="agent-1",
                                                 agent_options=route))
    await leave(again)
    written = path.read_text(encoding="utf-8")
    assert '"kind":"interrupted"' in written and '"session/end-seed"' in written
    assert _last_active(data, capsys)["agent-1"] == crashed_at
