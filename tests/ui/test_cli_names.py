"""One resolver for every command that names a saved session (issue 25, §4).

`--resume`, `export` and `view` read a name alike (id, id prefix or title, of a workspace
or a session) and say the same when it names nothing or several things. A prefix whose
matches are one session and its own sub-agents names that session, by the ownership the
logs record (`parentSession`), whatever shape the sub-agents' ids have: nested in the
parent's id as this build makes them, or not nested at all.

Stores are made by the real harness and read back through `cli.main`.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from dsh_tui import cli
from dsh_tui.compose import leave
from dsh_tui.harness.names import claim_name
from dsh_tui.harness.persistence import JsonlPersistence
from dsh_tui.reopen import choose_target
from dsh_tui.ui.state.workspace import new_workspace, record_root, root_meta, start_workspace
from dsh_tui.ui.state.world import create_agent

from .test_workspaces import _args, _queue, _world, make_workspace


@pytest.fixture
async def store(tmp_path: Path) -> dict[str, Any]:
    data, here, there = tmp_path / "data", tmp_path / "proj", tmp_path / "other"
    here.mkdir()
    there.mkdir()
    older = await make_workspace(data, there, {"planner": ["researcher"]}, "old")
    newer = await make_workspace(data, here, {"demo": ["researcher", "scout"],
                                              "writer": []}, "new")
    return {"data": data, "here": here, "older": older, "newer": newer}


def _exported(data: Path, query: str, capsys: pytest.CaptureFixture[str]) -> str:
    """The id of the session `export QUERY` writes (its JSONL header's)."""
    assert cli.main(["--data-dir", str(data), "export", query, "--format", "jsonl"]) == 0, \
        capsys.readouterr().err
    return str(json.loads(capsys.readouterr().out.splitlines()[0])["id"])


def _resumed(data: Path, here: Path, query: str) -> str | None:
    target = choose_target(_args(data, "--resume", query), JsonlPersistence(data), str(here))
    assert target is not None
    return target.select


def _error(capsys: pytest.CaptureFixture[str], *argv: str) -> list[str]:
    assert cli.main(list(argv)) == cli.EXIT_USAGE
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return captured.err.splitlines()


async def test_export_takes_what_resume_takes(store: dict[str, Any],
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """Before: `export` took only a whole id ("no saved session" for a prefix or a
    title); now each name exports the session `--resume` selects."""
    data, here = store["data"], store["here"]
    for query in ("new-root1", "new-root0", "old-r", "SCOUT", store["older"][:7]):
        assert _exported(data, query, capsys) == _resumed(data, here, query), query
    assert _exported(data, "writer", capsys) == "new-root1"  # a title
    assert _exported(data, "old-r", capsys) == "old-root0"  # a root and its child: the root
    assert _exported(data, store["older"][:7], capsys) == "old-root0"  # its one root


async def test_not_found_and_ambiguous_read_the_same_from_every_command(
        store: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    data = str(store["data"])
    for query in ("nope", "researcher", "new-root"):
        said = {command: _error(capsys, "--data-dir", data, *argv)
                for command, argv in (("--resume", ["--resume", query]),
                                      ("export", ["export", query]),
                                      ("view", ["view", query]))}
        resume = said.pop("--resume")
        for command, lines in said.items():  # export and view also look for a file
            assert [lines[0].replace("no such file and ", ""), *lines[1:]] == resume, command
    nope = _error(capsys, "--data-dir", data, "view", "nope")
    assert nope == [f'dsh-tui: no such file and no saved session "nope" (no workspace, '
                    f"session, id prefix or title matches it) in {data}; dsh-tui sessions "
                    "lists them"]
    head, *candidates = _error(capsys, "--data-dir", data, "export", "new-root")
    assert head.endswith('"new-root" matches 2 saved workspaces or sessions; give more of the '
                         "id (or the whole title):")
    assert [c.split()[0] for c in candidates] == ["new-root0", "new-root1"]
    assert candidates[0].endswith("(its 2 sub-agents match too)")  # folded, not listed


async def test_a_workspace_of_several_roots_asks_which_one_to_export(
        store: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    head, *candidates = _error(capsys, "--data-dir", str(store["data"]), "export",
                               store["newer"])
    assert f"names workspace {store['newer']}, which holds 2 root agents" in head
    assert [c.split()[0] for c in candidates] == ["new-root0", "new-root1"]


async def test_a_prefix_of_a_root_with_children_names_the_root(
        store: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    """Before: child ids start with the parent's, so any prefix of a root's id that has
    a child was "ambiguous"."""
    data, here = store["data"], store["here"]
    for query in ("old", "old-r", "old-root"):
        assert _resumed(data, here, query) == "old-root0", query
        assert _exported(data, query, capsys) == "old-root0", query
    _, *candidates = _error(capsys, "--data-dir", str(data), "--resume", "new-root0.")
    assert len(candidates) == 2  # two siblings, neither owns the other


async def _tree_with_ids(data: Path, cwd: Path, ids: dict[str, str | None]) -> None:
    """Sessions with the given ids, each a root (None) or the owned child of the named
    parent (made through the parent's `ctx.agents`, its header naming the parent)."""
    ctx, persistence = _world(data)
    workspace = start_workspace(ctx, persistence, new_workspace(persistence, cwd))
    agents: dict[str, Any] = {}
    for session_id, parent in ids.items():
        if parent is None:
            handle = await create_agent(ctx, provider="mock", model="mock",
                                        title=claim_name(ctx, session_id),
                                        session_id=session_id, meta=root_meta(ctx))
            record_root(ctx, handle.agent.id)
        else:
            owner = agents[parent]
            handle = await create_agent(
                owner.ctx, provider="mock", model="mock", title=claim_name(ctx, session_id),
                session_id=session_id,
                meta={"parentSession": owner.id, "origin": "subagent", "delegationDepth": 1,
                      "cwd": str(cwd)})
        agents[session_id] = handle.agent
        await _queue(handle.agent, f"work for {session_id}")
    await leave(ctx)
    workspace.close()


async def test_the_rule_follows_ownership_not_the_shape_of_ids(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Sub-agent ids with a short hash instead of the parent's whole id (the bounded
    ids), and an unrelated root whose id happens to extend another's: the prefix rule
    reads who owns whom from the headers, never from the strings."""
    data, here = tmp_path / "data", tmp_path / "proj"
    here.mkdir()
    await _tree_with_ids(data, here, {
        "plan-1a2b": None,
        "plan-1a7f": "plan-1a2b",  # owned, but not nested in the parent's id
        "plan-1a7f-c3": "plan-1a7f",  # a grandchild
        "agent-12": None,
        "agent-123": None,  # nested in "agent-12" as a string, owned by nobody
    })
    assert _resumed(data, here, "plan-1a") == "plan-1a2b"  # a root and its own descendants
    assert _exported(data, "plan-1", capsys) == "plan-1a2b"
    assert _resumed(data, here, "plan-1a7") == "plan-1a7f"  # a child and its own child
    head, *candidates = _error(capsys, "--data-dir", str(data), "--resume", "agent-1")
    assert "matches 2 saved" in head  # two roots, whatever their ids look like
    assert [c.split()[0] for c in candidates] == ["agent-12", "agent-123"]
    assert _resumed(data, here, "agent-12") == "agent-12"  # an exact id still wins


async def test_view_opens_what_it_names_through_the_same_rules(
        store: dict[str, Any], capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """`view` of a name gets past the lookup to the app's own check of the terminal
    (none here: the app never starts); tests/tty shows it open for real."""
    monkeypatch.delenv("TEXTUAL_DRIVER", raising=False)
    monkeypatch.setattr("sys.stdin", io.StringIO())
    lines = _error(capsys, "--data-dir", str(store["data"]), "view", "old-r")
    assert lines == ["dsh-tui: the app needs a terminal, and standard input is not one "
                     "(use sessions or export for scripts)"]
