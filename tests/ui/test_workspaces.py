"""Workspaces from the command line (issue 13): `sessions` as trees and `--json`, `-c`,
`--resume` by prefix or title, ambiguity, the picker, names that are never reused, and
sessions saved before workspaces (the `_no-cwd` layout) still listed and resumable.

The stores are made by the real harness (sessions through `ctx.agents`, JSONL persistence,
the workspace record) and read back by the real CLI entry point.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from dsh_tui import cli
from dsh_tui.compose import build_context, leave
from dsh_tui.harness import session as session_module
from dsh_tui.harness import user_message
from dsh_tui.harness.names import claim_name
from dsh_tui.harness.persistence import JsonlPersistence
from dsh_tui.harness.persistence.catalog import build_catalog
from dsh_tui.harness.persistence.workspace import WORKSPACE_LOG, read_state
from dsh_tui.llm.scripted import ScriptedModel
from dsh_tui.reopen import choose_target, open_workspace
from dsh_tui.ui.screens.sessions import PickerApp, SessionsScreen
from dsh_tui.ui.state.workspace import new_workspace, record_root, root_meta, start_workspace
from dsh_tui.ui.state.world import create_agent, spawn_child

from .conftest import wait_until


def _world(data: Path) -> tuple[Any, JsonlPersistence]:
    persistence = JsonlPersistence(data)
    ctx = build_context(providers={"mock": ScriptedModel([])}, persistence=persistence,
                        tools=[], retry=False, system_prompt=None)
    return ctx, persistence


async def _queue(agent: Any, text: str) -> None:
    agent.inbox.append("next-turn", user_message(text))  # pending, the agent stays idle


async def make_workspace(data: Path, cwd: Path, plan: dict[str, list[str]],
                         prefix: str) -> str:
    """A saved workspace of `cwd`: each root of `plan` with its children, one queued item
    each, left as the app leaves it (quit is not dispose). Returns its id."""
    ctx, persistence = _world(data)
    workspace = start_workspace(ctx, persistence, new_workspace(persistence, cwd))
    for n, (root_name, children) in enumerate(plan.items()):
        name = claim_name(ctx, root_name)
        handle = await create_agent(ctx, provider="mock", model="mock", title=name,
                                    session_id=f"{prefix}-root{n}", meta=root_meta(ctx))
        record_root(ctx, handle.agent.id)
        await _queue(handle.agent, f"work for {name}")
        for child_name in children:
            child = await spawn_child(handle.agent, title=claim_name(ctx, child_name))
            await _queue(child.agent, f"work for {child_name}")
    await leave(ctx)
    workspace.close()
    return workspace.id


def _args(data: Path, *rest: str) -> Any:
    return cli.build_parser().parse_args(["--data-dir", str(data), *rest])


@pytest.fixture
async def store(tmp_path: Path) -> dict[str, Any]:
    data, here, there = tmp_path / "data", tmp_path / "proj", tmp_path / "other"
    here.mkdir()
    there.mkdir()
    older = await make_workspace(data, there, {"planner": ["researcher"]}, "old")
    newer = await make_workspace(data, here, {"demo": ["researcher", "researcher"],
                                              "writer": []}, "new")
    return {"data": data, "here": here, "there": there, "older": older, "newer": newer}


async def test_sessions_prints_each_workspace_as_an_aligned_tree(
        store: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["--data-dir", str(store["data"]), "sessions"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out  # plain text, readable piped
    lines = out.splitlines()
    first = lines.index(next(line for line in lines if store["newer"] in line))
    assert first < lines.index(next(line for line in lines if store["older"] in line)), \
        "the most recently active workspace comes first"
    assert f"reopen: dsh-tui --data-dir {store['data']} --resume {store['newer']}" in out
    rows = [line for line in lines if re.search(r"\d\d:\d\d", line) and "workspace" not in line]
    by_name = {re.split(r"\s{2,}", line.strip())[0]: line for line in rows}
    assert set(by_name) >= {"demo", "researcher", "researcher 2", "writer", "planner"}
    assert by_name["researcher 2"].startswith("    researcher 2")  # a child, indented
    assert by_name["demo"].startswith("  demo")  # a root
    assert "idle · 1 pending" in by_name["demo"]
    status_at = {line.index("idle") for line in rows}
    assert len(status_at) == 1, "the status column is aligned"
    order = [re.split(r"\s{2,}", line.strip())[0] for line in lines[first:first + 6]
             if line.startswith("  ") and not line.strip().startswith("reopen")]
    assert order[:4] == ["demo", "researcher", "researcher 2", "writer"]


async def test_sessions_json_is_the_same_tree_for_scripts(
        store: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["--data-dir", str(store["data"]), "sessions", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["root"] == str(store["data"])
    newer = doc["workspaces"][0]
    assert newer["id"] == store["newer"] and newer["cwd"] == str(store["here"])
    assert newer["command"].endswith(f"--resume {store['newer']}")
    demo, writer = newer["sessions"]
    assert (demo["title"], demo["status"], demo["pending"]) == ("demo", "idle", 1)
    assert [c["title"] for c in demo["children"]] == ["researcher", "researcher 2"]
    assert demo["children"][0]["parentSession"] == demo["id"]
    assert writer["children"] == [] and writer["bytes"] > 0 and writer["lastActivity"] > 0


async def test_children_made_within_one_millisecond_keep_their_order(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A root's children made in one burst: the clock does not move between them, and the
    listing (by `createdAt`) still shows them in the order they were made; so does the
    tree of the reopened workspace."""
    monkeypatch.setattr(session_module, "now_ms", lambda: 1_700_000_000_000)
    names = ["e", "d", "c", "b", "a", "f"]  # neither sorted nor the file system's order
    here = tmp_path / "here"
    here.mkdir()
    await make_workspace(tmp_path / "data", here, {"root": names}, "burst")
    assert cli.main(["--data-dir", str(tmp_path / "data"), "sessions", "--json"]) == 0
    root, = json.loads(capsys.readouterr().out)["workspaces"][0]["sessions"]
    assert [child["title"] for child in root["children"]] == names
    created = [child["createdAt"] for child in root["children"]]
    assert created == sorted(set(created)), "each later than the one before"
    ctx, persistence = _world(tmp_path / "data")
    target = choose_target(_args(tmp_path / "data", "-c"), persistence, str(here))
    assert target is not None
    workspace = await open_workspace(ctx, persistence, target, str(here))
    try:
        parent, = (agent for agent in ctx.agents.list() if agent.id == root["id"])
        assert [child.id for child in ctx.agents.children_of(parent)] == \
            [child["id"] for child in root["children"]]
    finally:
        await leave(ctx)
        workspace.close()


async def test_continue_opens_the_most_recent_workspace_of_this_directory(
        store: dict[str, Any]) -> None:
    persistence = JsonlPersistence(store["data"])
    target = choose_target(_args(store["data"], "-c"), persistence, str(store["here"]))
    assert target is not None and target.group.id == store["newer"]
    assert [r.title for r in target.roots] == ["demo", "writer"]
    target = choose_target(_args(store["data"], "-c"), persistence, str(store["there"]))
    assert target is not None and target.group.id == store["older"]
    with pytest.raises(cli.CliError) as nowhere:
        choose_target(_args(store["data"], "-c"), persistence, str(store["data"]))
    assert "no saved workspace for" in str(nowhere.value)
    assert f"--resume {store['newer']}" in str(nowhere.value)  # where the latest one is


async def test_resume_takes_a_prefix_or_a_title_and_opens_the_whole_workspace(
        store: dict[str, Any]) -> None:
    persistence = JsonlPersistence(store["data"])

    def target(query: str) -> Any:
        return choose_target(_args(store["data"], "--resume", query), persistence,
                             str(store["here"]))

    whole = target(store["newer"][:6])  # "ws-" + 3 hex digits: unique here
    assert whole.group.id == store["newer"] and len(whole.roots) == 2
    by_title = target("Researcher 2")  # a title, case-insensitive
    assert by_title.group.id == store["newer"] and len(by_title.roots) == 2
    assert by_title.select.startswith("new-root0.child-")
    assert target("new-root0").select == "new-root0"  # an exact id beats longer ones
    assert target("old-root0.").group.id == store["older"]


async def test_an_ambiguous_prefix_or_title_lists_the_candidates(
        store: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    for query, count in (("researcher", 2), ("ws-", 2), ("new-root0.", 2)):
        code = cli.main(["--data-dir", str(store["data"]), "--resume", query])
        err = capsys.readouterr().err
        assert code == 2
        head, *candidates = err.strip().splitlines()
        assert f'"{query}" matches {count} saved workspaces or sessions' in head
        assert len(candidates) == count and all(c.startswith("  ") for c in candidates)
    code = cli.main(["--data-dir", str(store["data"]), "--resume", "researcher"])
    err = capsys.readouterr().err
    assert "old-root0.child-" in err and "new-root0.child-" in err  # which is which
    assert f"workspace {store['older']}" in err and f"workspace {store['newer']}" in err


async def test_the_picker_filters_as_you_type_and_opens_the_choice(
        store: dict[str, Any]) -> None:
    catalog = build_catalog(JsonlPersistence(store["data"]))
    app = PickerApp(catalog)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SessionsScreen))
        await pilot.press(*"plan")
        await pilot.pause()
        options = app.screen.query_one("#sessions-list")
        shown = [o.id for o in options.options]
        assert shown == [f"w:{store['older']}", "s:old-root0"]  # the match and its heading
        await pilot.press("enter")
    target = app.return_value
    assert target is not None and target.group.id == store["older"]
    assert target.select == "old-root0"


async def test_default_names_are_unique_and_never_reused_across_runs(tmp_path: Path) -> None:
    data, here = tmp_path / "data", tmp_path / "proj"
    here.mkdir()
    ws = await make_workspace(data, here, {"demo": ["researcher", "researcher"]}, "a")
    persistence = JsonlPersistence(data)
    target = choose_target(_args(data, "--resume", ws), persistence, str(here))
    ctx, persistence = _world(data)
    workspace = await open_workspace(ctx, persistence, target, str(here))
    child = next(a for a in ctx.agents.list() if a.session.header.get("parentSession"))
    done = ctx.agents.dispose(child.id)
    await done
    workspace.record("dropped", session=child.id)
    assert claim_name(ctx, "researcher") == "researcher 3"  # not a disposed one's name
    await leave(ctx)
    workspace.close()
    state, _ = read_state(workspace.path)
    assert state is not None and {"researcher", "researcher 2", "researcher 3"} <= state.names
    assert child.id in state.dropped


async def test_sessions_saved_before_workspaces_are_listed_and_resumable(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data, here = tmp_path / "data", tmp_path / "proj"
    here.mkdir()
    ctx, persistence = _world(data)  # an old app run: no workspace, no cwd
    handle = await create_agent(ctx, provider="mock", model="mock", title="legacy",
                                session_id="demo-0ld")
    await _queue(handle.agent, "still waiting")
    await leave(ctx)
    assert (data / "_no-cwd" / "demo-0ld" / "session.jsonl").is_file()
    assert cli.main(["--data-dir", str(data), "sessions"]) == 0
    out = capsys.readouterr().out
    assert "no workspace" in out and "legacy" in out and "1 pending" in out
    target = choose_target(_args(data, "--resume", "demo-0"), JsonlPersistence(data),
                           str(here))
    assert target is not None and target.group.id is None and target.select == "demo-0ld"
    ctx, persistence = _world(data)
    workspace = await open_workspace(ctx, persistence, target, str(here))
    agent = ctx.agents.get("demo-0ld")
    assert agent is not None and [m.text for m in agent.inbox.next_turn] == ["still waiting"]
    agent.inbox.append("next-turn", user_message("more"))  # the workspace reaches the disk
    await leave(ctx)
    workspace.close()
    assert (here.name in str(workspace.path)) and workspace.path.name == WORKSPACE_LOG
    catalog = build_catalog(JsonlPersistence(data))
    assert [(g.id, [r.id for r in g.roots]) for g in catalog] == [(workspace.id, ["demo-0ld"])]


async def test_a_model_naming_its_sub_agents_alike_gets_unique_names(tmp_path: Path) -> None:
    from dsh_tui.llm.scripted import text, tool_call

    data, here = tmp_path / "data", tmp_path / "proj"
    here.mkdir()
    task = {"task": "look it up", "name": "researcher"}
    model = ScriptedModel([tool_call("c1", "spawn_agent", task), text("found one"),
                           tool_call("c2", "spawn_agent", task), text("found two"),
                           text("done")])
    persistence = JsonlPersistence(data)
    ctx = build_context(providers={"mock": model}, persistence=persistence, retry=False,
                        workspace=here)  # the built-in tools, spawn_agent among them
    workspace = start_workspace(ctx, persistence, new_workspace(persistence, here))
    handle = await create_agent(ctx, provider="mock", model="mock", title="lead",
                                session_id="lead", meta=root_meta(ctx))
    record_root(ctx, "lead")
    handle.agent.followup(user_message("research twice"))
    await handle.agent.when_idle()
    await leave(ctx)
    workspace.close()
    catalog = build_catalog(JsonlPersistence(data))
    (group,) = catalog
    (lead,) = group.roots
    assert [child.title for child in lead.children] == ["researcher", "researcher 2"]
    assert all(child.header.get("cwd") == str(here) for child in lead.children)
