"""Issue 25 §2: agents made and named but never sent a message come back with the workspace.

The quit line said "13 root agents saved" and 3 came back: a session holding only its name
was never written, so only the agents that had a message were on disk. Once the workspace
is on disk (one of its agents had a message, or it was reopened), every agent of it is
written as soon as it is named, with its route, and `-c` brings it back with its name,
route, children and breakpoint. An app opened and closed without a message still leaves
nothing behind.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dsh_tui.compose import build_context, leave
from dsh_tui.harness import AgentOptions, user_message
from dsh_tui.harness.names import claim_name
from dsh_tui.harness.persistence import JsonlPersistence
from dsh_tui.harness.persistence.catalog import build_catalog, most_recent, target_of_workspace
from dsh_tui.llm.scripted import ScriptedModel
from dsh_tui.reopen import open_workspace, reopen_message
from dsh_tui.ui.state.workspace import (
    new_workspace,
    record_breakpoint,
    record_root,
    root_meta,
    start_workspace,
)
from dsh_tui.ui.state.world import create_agent, spawn_child

from .test_workspaces import _args

OTHER = AgentOptions(provider="other", model="other-model", temperature=0.5)


def _world(data: Path) -> tuple[Any, JsonlPersistence]:
    persistence = JsonlPersistence(data)
    ctx = build_context(providers={"mock": ScriptedModel([]), "other": ScriptedModel([])},
                        persistence=persistence, tools=[], retry=False, system_prompt=None)
    runtime = ctx.services["loop"]
    runtime.default_options = AgentOptions(provider="mock", model="mock")
    runtime.routes = {"mock": runtime.default_options, "other": OTHER}
    return ctx, persistence


def _title(agent: Any) -> str | None:
    titles = [e.data["title"] for e in agent.session.events if e.type == "session/title"]
    return titles[-1] if titles else None


async def _root(ctx: Any, name: str, options: AgentOptions | None = None) -> Any:
    title = claim_name(ctx, name)
    handle = await create_agent(ctx, provider="mock", model="mock", title=title,
                                session_id=f"{name}-id", meta=root_meta(ctx), options=options)
    record_root(ctx, handle.agent.id)
    return handle.agent


async def test_named_agents_that_never_had_a_message_come_back_with_the_workspace(
        tmp_path: Path) -> None:
    data, cwd = tmp_path / "data", tmp_path / "proj"
    cwd.mkdir()
    ctx, persistence = _world(data)
    workspace = start_workspace(ctx, persistence, new_workspace(persistence, cwd))
    early = await _root(ctx, "early", OTHER)  # named before anything is on disk
    used = await _root(ctx, "used")
    used.inbox.append("next-turn", user_message("the one message"))  # the workspace is saved
    late = await _root(ctx, "late", OTHER)  # named after it is
    kid = await spawn_child(late, title=claim_name(ctx, "kid"))
    record_breakpoint(ctx, late.id, True)
    await leave(ctx)
    workspace.close()
    said = reopen_message(_args(data), workspace)
    assert said is not None and "(3 root agents," in said

    again, persistence = _world(data)
    group = most_recent(build_catalog(persistence), str(cwd))
    assert group is not None and group.id == workspace.id
    reopened = await open_workspace(again, persistence, target_of_workspace(group), str(cwd))
    try:
        roots = {agent.id: agent for agent in again.agents.roots()}
        assert set(roots) == {early.id, used.id, late.id}
        names = {agent.id: _title(agent) for agent in again.agents.list()}
        assert names[early.id] == "early" and names[late.id] == "late"
        assert names[kid.agent.id] == "kid"
        assert [c.id for c in again.agents.children_of(roots[late.id])] == [kid.agent.id]
        for agent in (roots[early.id], roots[late.id]):
            assert (agent.options.provider, agent.options.model,
                    agent.options.temperature) == ("other", "other-model", 0.5)
        assert roots[used.id].options.provider == "mock"
        assert [m.text for m in roots[used.id].inbox.next_turn] == ["the one message"]
        assert reopened.opened_breakpoints == {late.id}
    finally:
        await leave(again)
        reopened.close()


async def test_an_app_opened_and_closed_without_a_message_still_leaves_nothing(
        tmp_path: Path) -> None:
    data, cwd = tmp_path / "data", tmp_path / "proj"
    cwd.mkdir()
    ctx, persistence = _world(data)
    workspace = start_workspace(ctx, persistence, new_workspace(persistence, cwd))
    await _root(ctx, "main")
    second = await _root(ctx, "second", OTHER)
    await spawn_child(second, title=claim_name(ctx, "kid"))
    await leave(ctx)
    workspace.close()
    assert reopen_message(_args(data), workspace) is None
    assert not data.exists() or [p for p in data.rglob("*") if p.is_file()] == []
