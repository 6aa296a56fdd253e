"""The open workspace of an app run, as the app and the CLI use it (no Textual here).

`start_workspace` installs a new (or reopened) `Workspace` record in the world: it is the
world's name book, it is created on disk together with the first session that is, and it
records the roots, the selection, the breakpoints and the disposals as they happen.
`open_target` brings a stored workspace back whole (every root, every child but the
disposed ones; inboxes come back with the sessions) or adopts one older session tree into
a new workspace. The app reads `initial_selection`/`initial_breakpoints` once at mount.
"""

from __future__ import annotations

import os
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dsh_tui.harness.names import NAMES_SERVICE
from dsh_tui.harness.persistence.catalog import SessionEntry, Target, WorkspaceEntry
from dsh_tui.harness.persistence.workspace import Workspace

from .world import resume_tree

WORKSPACE_SERVICE = "dsh_tui.workspace"
"""`ctx.services` key of the open `Workspace`."""


def workspace_of(ctx: Any) -> Workspace | None:
    """The open workspace of `ctx`'s world, or None."""
    services = getattr(ctx, "services", None)
    found = services.get(WORKSPACE_SERVICE) if services is not None else None
    return found if isinstance(found, Workspace) else None


def workspace_cwd(ctx: Any) -> str | None:
    """The working directory new root agents of this world are stored under."""
    workspace = workspace_of(ctx)
    return workspace.state.cwd if workspace is not None else None


def root_meta(ctx: Any) -> dict[str, Any] | None:
    """Header fields of a new root agent: its working directory (upstream's layout)."""
    cwd = workspace_cwd(ctx)
    return {"cwd": cwd} if cwd else None


def start_workspace(ctx: Any, persistence: Any, workspace: Workspace) -> Workspace:
    """Make `workspace` this world's: its name book, and created on disk with the first
    session that is (or already there, for a reopened one)."""
    ctx.services[WORKSPACE_SERVICE] = workspace
    ctx.services[NAMES_SERVICE] = workspace
    workspace.opened_selection = workspace.state.selected
    workspace.opened_breakpoints = set(workspace.state.breakpoints)
    observers = getattr(persistence, "on_first_write", None)
    if observers is not None:
        observers.append(lambda header: workspace.materialize())
    keep_named = getattr(persistence, "keep_named_sessions", None)
    if keep_named is not None:
        workspace.when_on_disk(keep_named)  # named agents come back with it (issue 25)
    companions = getattr(persistence, "companions", None)
    if companions is not None:
        companions.append(workspace)  # its failures show as "not saved" too
    return workspace


def new_workspace(persistence: Any, cwd: str | os.PathLike[str] | None) -> Workspace:
    """A new workspace of `cwd` beside `persistence`'s sessions (in memory for now)."""
    return Workspace.new(Path(persistence.root), os.fspath(cwd) if cwd is not None else None)


def reopen_workspace(persistence: Any, target: Target, cwd: str | None) -> Workspace:
    """The workspace `target` belongs to, locked for this process (`SessionLockedError`
    when another has it open); a new one in `cwd` for sessions no workspace holds."""
    state = target.group.state
    if target.group.id is None or state is None or (target.roots and target.roots[0].dropped):
        return new_workspace(persistence, cwd)
    return Workspace.reopen(Path(persistence.root), state)


async def open_target(ctx: Any, target: Target, headers: list[Mapping[str, Any]]) -> list[Any]:
    """Resume every root of `target` with its children (the disposed ones left out) into
    `ctx`'s world, recording them in the open workspace. Returns the root handles."""
    workspace = workspace_of(ctx)
    state = workspace.state if workspace is not None else None
    skip = set(state.dropped) if state is not None and target.group.id == state.id else set()
    handles = []
    for root in target.roots:
        if ctx.agents.get(root.id) is not None:
            continue
        handles.append(await resume_tree(ctx, root.id, headers, skip))
        if workspace is not None:
            if root.id not in workspace.state.roots:
                workspace.record("root", session=root.id)
            for _, entry in root.walk():
                if entry.title and entry.title not in workspace.state.names:
                    workspace.record("name", name=entry.title, session=entry.id)
    if handles and workspace is not None:
        workspace.materialize()  # its sessions are on disk already: so is the workspace
    return handles


def record_root(ctx: Any, agent_id: str) -> None:
    """A new root agent joined the workspace."""
    workspace = workspace_of(ctx)
    if workspace is not None and agent_id not in workspace.state.roots:
        workspace.record("root", session=agent_id)


def record_dropped(ctx: Any, agent_id: str) -> None:
    """The person disposed `agent_id`: the workspace will not bring it back."""
    workspace = workspace_of(ctx)
    if workspace is not None:
        workspace.record("dropped", session=agent_id)


def record_selected(ctx: Any, agent_id: str | None) -> None:
    """The selected agent changed (written only when it did)."""
    workspace = workspace_of(ctx)
    if workspace is not None and agent_id and workspace.state.selected != agent_id:
        workspace.record("selected", session=agent_id)


def record_breakpoint(ctx: Any, agent_id: str, armed: bool) -> None:
    """A breakpoint was set or removed (written only when it changed)."""
    workspace = workspace_of(ctx)
    if workspace is not None and (agent_id in workspace.state.breakpoints) != armed:
        workspace.record("breakpoint", session=agent_id, armed=armed)


def initial_selection(ctx: Any) -> str | None:
    """The agent selected when the workspace was opened (before the app's own first pick)."""
    workspace = workspace_of(ctx)
    return workspace.opened_selection if workspace is not None else None


def initial_breakpoints(ctx: Any) -> set[str]:
    """The agents that had a breakpoint when the workspace was opened."""
    workspace = workspace_of(ctx)
    return set(workspace.opened_breakpoints) if workspace is not None else set()


def with_live(catalog: list[WorkspaceEntry], ctx: Any,
              name_of: Callable[[str], str]) -> list[WorkspaceEntry]:
    """The catalog with this world's live agents in it: those not on disk yet are added
    to this workspace's group (first), and live names replace stored ones (a rename shows
    at once)."""
    placed: dict[str, SessionEntry] = {}
    for group in catalog:
        for _, entry in group.walk():
            placed[entry.id] = entry
            if ctx.agents.get(entry.id) is not None:
                entry.title = name_of(entry.id)
    missing = [agent for agent in ctx.agents.list() if agent.id not in placed]
    if not missing:
        return catalog
    workspace = workspace_of(ctx)
    found = next((g for g in catalog if workspace is not None and g.id == workspace.id), None)
    if found is not None:
        group = found
    else:
        now = int(time.time() * 1000)
        group = WorkspaceEntry(id=workspace.id if workspace is not None else None,
                               cwd=workspace_cwd(ctx), created_at=now, last_activity=now,
                               state=workspace.state if workspace is not None else None)
        catalog = [group, *catalog]
    fresh = {agent.id: SessionEntry(id=agent.id, header=dict(agent.session.header),
                                    title=name_of(agent.id)) for agent in missing}
    for agent in missing:
        parent = agent.session.header.get("parentSession")
        holder = fresh.get(parent) or placed.get(parent) if isinstance(parent, str) else None
        if holder is not None:
            holder.children.append(fresh[agent.id])
        else:
            group.roots.append(fresh[agent.id])
    return catalog


@dataclass(frozen=True)
class WorkspaceOffer:
    """A saved workspace a browser tab just left (a reload, a tab reopened): the app asks
    whether to reopen it before it makes a new one, so a reload does not start blank (and
    a later f3 resume does not put its roots beside a second, new "demo")."""

    workspace_id: str
    summary: str
    """What it holds, in a few words (its roots' names; shown through the sanitiser)."""
    reopen: Callable[[], Awaitable[None]]
    """Open it in this world (waiting a little for the page it left to let go of it)."""
    fresh: Callable[[], Awaitable[None]]
    """Start a new workspace with its first agent instead, as an app run without it does."""
