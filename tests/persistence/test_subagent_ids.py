"""Issue 25 §2: a sub-agent's id stays short at any depth, and a child whose log cannot be
created is a failed spawn.

Ids nested the parent's id with the name in it and no bound: 24 emoji in a name hit
ENAMETOOLONG at depth 1 (CJK at depth 2, ASCII at depth 8), the child's log was lost with
the process, and the model was told the spawn succeeded. Runs the real `spawn_agent` tool
through the loop, with real files.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from dsh_tui.compose import build_context
from dsh_tui.harness import AgentOptions, CreateAgentOptions, user_message
from dsh_tui.harness.names import MAX_CHILD_ID_SEGMENT, child_session_id
from dsh_tui.harness.persistence import JsonlPersistence
from dsh_tui.harness.persistence.paths import encode_segment
from dsh_tui.llm.scripted import ScriptedModel, text, tool_call
from dsh_tui.loop.builtin_tools import agent_tools


def _world(data: Path, script: list[Any]) -> tuple[Any, JsonlPersistence]:
    persistence = JsonlPersistence(data)
    ctx = build_context(providers={"mock": ScriptedModel(script)}, tools=agent_tools(),
                        retry=False, system_prompt=None, persistence=persistence)
    return ctx, persistence


def _results(agent: Any) -> list[tuple[bool, str]]:
    """(is an error, text) of each tool result in `agent`'s log."""
    blocks = [block for e in agent.session.events if e.type == "tool/result"
              for block in e.data["message"]["content"] if block.get("type") == "tool-result"]
    return [(block.get("isError", False), block["content"][0]["text"]) for block in blocks]


def _titles(data: Path) -> dict[str, str]:
    """Session id → its latest title, read back from the files on disk."""
    import json

    found: dict[str, str] = {}
    for log in data.rglob("session.jsonl"):
        lines = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
        titles = [r["data"]["title"] for r in lines[1:] if r["type"] == "session/title"]
        found[lines[0]["id"]] = titles[-1] if titles else ""
    return found


@pytest.mark.parametrize(("name", "depth"), [("😀" * 24, 1), ("研究员" * 8, 2),
                                             ("a-long-ascii-agent-name!", 8)],
                         ids=["emoji at depth 1", "CJK at depth 2", "ASCII at depth 8"])
async def test_nested_sub_agents_with_long_names_are_all_saved_under_their_names(
        tmp_path: Path, name: str, depth: int) -> None:
    script = [tool_call(f"c{n}", "spawn_agent", {"task": f"level {n + 1}", "name": name})
              for n in range(depth)]
    script += [text(f"answer {n}") for n in range(depth, -1, -1)]
    ctx, _ = _world(tmp_path, script)
    handle = await ctx.agents.create(CreateAgentOptions(
        session_id="main-1a2b3c4d", agent_options=AgentOptions(provider="mock", model="m")))
    root = handle.agent
    try:
        root.followup(user_message("go deep"))
        await asyncio.wait_for(root.when_idle(), 30)
        assert [failed for failed, _ in _results(root)] == [False], _results(root)
        agents = ctx.agents.list()
        assert len(agents) == depth + 1
    finally:
        await handle.dispose()
        await ctx.scope.dispose()
    titles = _titles(tmp_path)
    assert len(titles) == depth + 1, "every child's log is on disk"
    children = [title for session_id, title in titles.items() if session_id != root.id]
    assert children == [name] * depth  # a bare world keeps names as asked
    for session_id in titles:
        assert len(encode_segment(session_id)) <= MAX_CHILD_ID_SEGMENT


def test_child_ids_stay_bounded_and_read_as_their_parents() -> None:
    parent = "main-1a2b3c4d"
    first = child_session_id(parent, "researcher two")
    assert first.startswith("main-1a2b3c4d.researcher-two-")
    ids = [parent]
    for level in range(40):
        ids.append(child_session_id(ids[-1], ["😀" * 30, "研究员" * 20, "x" * 300][level % 3]))
    assert max(len(encode_segment(i)) for i in ids) <= MAX_CHILD_ID_SEGMENT
    assert len(set(ids)) == len(ids)
    assert child_session_id("\udcff weird\x00 id" * 30, "").endswith(tuple("0123456789abcdef"))


async def test_a_child_whose_log_cannot_be_created_is_a_failed_spawn(tmp_path: Path) -> None:
    script = [tool_call("c1", "spawn_agent", {"task": "research", "name": "researcher"}),
              text("the spawn failed, so I answer myself")]
    ctx, persistence = _world(tmp_path, script)
    handle = await ctx.agents.create(CreateAgentOptions(
        session_id="main-1a2b3c4d", agent_options=AgentOptions(provider="mock", model="m")))
    root = handle.agent
    project = None
    try:
        root.followup(user_message("delegate this"))  # the root's log is created here
        project = persistence.path_for(root.id).parent.parent
        # The project directory is replaced by a file: the root keeps writing through its
        # open descriptor, but no new session directory can be made there.
        os.rename(project, project.with_name("moved"))
        project.write_text("not a directory")
        await asyncio.wait_for(root.when_idle(), 30)
        ((failed, said),) = _results(root)
        assert failed is True
        assert said.startswith("Error: sub-agent 'researcher' was not started: its session "
                               "log cannot be saved (")
        assert ctx.agents.list() == [root]  # the child is gone, not left failing each write
        assert persistence.save_failure is None
        ends = [e.data["reason"]["kind"] for e in root.session.events if e.type == "turn/end"]
        assert ends == ["completed"]
    finally:
        if project is not None and project.is_file():
            project.unlink()
            os.rename(project.with_name("moved"), project)
        await handle.dispose()
        await ctx.scope.dispose()
    assert persistence.lost_on_exit is None
