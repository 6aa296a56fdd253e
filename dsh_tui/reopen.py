"""Leaving and coming back: which workspace an app run opens, and how to reopen it.

`dsh-tui` starts a new workspace in its working directory (`--cwd` or the current one);
`-c` reopens that directory's most recent workspace; `--resume X` reopens whatever X
names (a workspace or a session: exact id, exact title, or unique id prefix; a session
brings back its whole workspace with it selected); `--resume` alone picks from a list.
Quitting prints the exact command that reopens the workspace. `dsh-tui sessions` prints
the same catalog as trees (or JSON).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shlex
import time
from pathlib import Path
from typing import Any

from dsh_tui.cli import PICK, CliError, _check_terminal
from dsh_tui.harness.names import claim_name
from dsh_tui.harness.persistence import SessionLockedError
from dsh_tui.harness.persistence.catalog import (
    Target,
    WorkspaceEntry,
    build_catalog,
    most_recent,
    target_of,
    target_of_workspace,
    to_json,
)
from dsh_tui.harness.persistence.workspace import Workspace
from dsh_tui.harness.safe_text import visible_label
from dsh_tui.lookup import find
from dsh_tui.ui.state.session_rows import tree_text
from dsh_tui.ui.state.workspace import (
    new_workspace,
    open_target,
    record_root,
    reopen_workspace,
    root_meta,
    start_workspace,
)
from dsh_tui.ui.state.world import create_agent, new_agent_id

RUN_OPTIONS = {"config": "config", "route": "route", "provider": "provider",
               "model": "model", "base_url": "baseUrl"}
"""Options a reopen command repeats (the keys, and the route its agents need): argparse
name → the key of the workspace's `options` record."""


def app_cwd(args: argparse.Namespace) -> str:
    """The working directory of this run: `--cwd`, else the current one (absolute)."""
    given = getattr(args, "cwd", None)
    if given is None:
        return os.path.abspath(os.getcwd())
    path = Path(os.path.expanduser(given))
    if not path.is_dir():
        raise CliError(f"--cwd {given} is not a directory")
    return os.path.abspath(path)


def run_options(args: argparse.Namespace) -> dict[str, str]:
    """The options of this run that a reopen repeats, as the workspace records them."""
    out: dict[str, str] = {}
    for name, key in RUN_OPTIONS.items():
        value = getattr(args, name, None)
        if value is not None:
            out[key] = _absolute(value) if isinstance(value, Path) else str(value)
    return out


def _absolute(path: Path) -> str:
    return os.path.abspath(os.path.expanduser(path))


def record_options(workspace: Workspace, args: argparse.Namespace) -> None:
    """Record the options this run opened `workspace` with (when they changed), so the
    command `sessions` prints for it is the one quitting prints."""
    options = run_options(args)
    if workspace.state.options != options:
        workspace.record("options", **options)


def reopen_command(args: argparse.Namespace, what: str,
                   options: dict[str, str] | None = None) -> str:
    """`dsh-tui [--data-dir D] [options] --resume WHAT`: the data dir this command was
    given, and `options` (a workspace's recorded ones; default: this run's)."""
    argv = ["dsh-tui"]
    if getattr(args, "data_dir", None) is not None:
        argv += ["--data-dir", _absolute(args.data_dir)]
    options = run_options(args) if options is None else options
    for name, key in RUN_OPTIONS.items():
        if key in options:
            argv += ["--" + name.replace("_", "-"), options[key]]
    return shlex.join([*argv, "--resume", what])


def _group_command(args: argparse.Namespace, group: WorkspaceEntry) -> str:
    if group.id is not None:
        return reopen_command(args, group.id, _recorded(group))
    return reopen_command(args, "ID") + "   (one tree: ID is its root's id)"


def _recorded(group: WorkspaceEntry) -> dict[str, str] | None:
    return group.state.options if group.state is not None else None


def reopen_message(args: argparse.Namespace, workspace: Workspace | None) -> str | None:
    """What quitting prints: the command that reopens this workspace (None if nothing was
    saved: an app opened and closed leaves nothing to reopen). It is the command
    `dsh-tui sessions` prints for it."""
    if workspace is None or not workspace.materialized:
        return None
    roots = len(workspace.state.roots)
    return (f"dsh-tui: workspace {workspace.id} is saved ({roots} root agent"
            f"{'s' if roots != 1 else ''}, every inbox kept). Reopen it with:\n"
            f"  {reopen_command(args, workspace.id, workspace.state.options)}")


# -- choosing what to open ------------------------------------------------------------------------


def _refuse_if_open(target: Target) -> None:
    holder = target.group.holder
    if target.group.id is not None and holder is not None and not holder.is_this_process:
        raise CliError(f"workspace {target.group.id} is open in another dsh-tui "
                       f"({visible_label(holder.describe())}); close it there first")


def choose_target(args: argparse.Namespace, persistence: Any, cwd: str) -> Target | None:
    """What this run opens (None: a new workspace, or nothing picked)."""
    if args.continue_ and args.resume is not None:
        raise CliError("give either -c/--continue or --resume, not both")
    if not args.continue_ and args.resume is None:
        return None
    if args.resume is not None and args.resume != PICK and not args.resume.strip():
        raise CliError("--resume needs a workspace or session id (dsh-tui sessions lists "
                       "them), not an empty string")
    catalog = build_catalog(persistence)
    if args.continue_:
        group = most_recent(catalog, cwd)
        if group is None:
            elsewhere = most_recent(catalog, None)
            hint = (f"; the most recent one is in {visible_label(elsewhere.cwd or '?')}: "
                    f"{reopen_command(args, elsewhere.id or '', _recorded(elsewhere))}") \
                if elsewhere else ""
            raise CliError(f"no saved workspace for {visible_label(cwd)} in "
                           f"{persistence.root}{hint}")
        target = target_of_workspace(group)
    elif args.resume == PICK:
        if not catalog:
            raise CliError(f"no saved sessions in {persistence.root}")
        _check_terminal()
        target = pick(catalog)
        if target is None:
            return None
    else:
        target = target_of(catalog, find(catalog, args.resume, persistence.root))
    _refuse_if_open(target)
    return target


def pick(catalog: list[WorkspaceEntry]) -> Target | None:
    """The picker: the sessions tree as its own small app; None when closed."""
    from dsh_tui.ui.screens.sessions import PickerApp

    return PickerApp(catalog).run()


# -- opening ------------------------------------------------------------------------------------


async def open_workspace(ctx: Any, persistence: Any, target: Target, cwd: str,
                         patience: float = 0.0) -> Workspace:
    """Open `target` in `ctx`'s world: its workspace locked for this process, its sessions
    resumed. While another process holds it, try again for `patience` seconds (a reloaded
    page's app waits for the one it replaced to quit), then refuse in one line."""
    deadline = time.monotonic() + patience
    while True:
        try:
            workspace = reopen_workspace(persistence, target, cwd)
            break
        except SessionLockedError as error:
            if time.monotonic() >= deadline:
                raise CliError(str(error)) from None
            await asyncio.sleep(0.1)
        except OSError as error:
            raise CliError(f"cannot open workspace {target.group.id}: {error}") from None
    start_workspace(ctx, persistence, workspace)
    if target.select and workspace.state.selected != target.select:
        workspace.record("selected", session=target.select)
    workspace.opened_selection = target.select
    try:
        await open_target(ctx, target, persistence.list_sessions())
    except Exception as error:
        workspace.close()
        what = target.roots[0].id if target.group.id is None and target.roots else \
            f"workspace {target.group.id}"
        raise CliError(f"cannot resume {what}: {error}") from None
    return workspace


async def first_agent(ctx: Any, persistence: Any, cwd: str, provider: str | None,
                      model: str | None, options: Any = None) -> Workspace:
    """A new workspace in `cwd` with its first root agent (on `options`' route if given)."""
    workspace = start_workspace(ctx, persistence, new_workspace(persistence, cwd))
    title = claim_name(ctx, "demo" if provider == "demo" else "main")
    try:
        handle = await create_agent(ctx, provider=provider, model=model, title=title,
                                    session_id=new_agent_id(title), meta=root_meta(ctx),
                                    options=options)
    except Exception as error:
        raise CliError(f"cannot start the first agent: {error}") from None
    record_root(ctx, handle.agent.id)
    return workspace


def left_target(persistence: Any, workspace_id: str) -> Target | None:
    """The saved workspace `workspace_id`, whole (None: gone, or no root left in it)."""
    group = next((g for g in build_catalog(persistence) if g.id == workspace_id), None)
    if group is None or not any(not root.dropped for root in group.roots):
        return None
    return target_of_workspace(group)


def offer_summary(target: Target) -> str:
    """What an offered workspace holds, in a few words: its roots, when it was last used."""
    names = [visible_label(root.name) for root in target.roots]
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    when = time.strftime("%H:%M", time.localtime(target.group.last_activity / 1000))
    return (f"{len(names)} root agent{'s' if len(names) != 1 else ''} ({shown}), "
            f"last active {when}")


# -- listing ------------------------------------------------------------------------------------


def print_sessions(args: argparse.Namespace, persistence: Any) -> int:
    catalog = build_catalog(persistence)
    if getattr(args, "json", False):
        doc = {"root": str(persistence.root),
               "workspaces": to_json(catalog, lambda g: _group_command(args, g))}
        print(json.dumps(doc, indent=2, ensure_ascii=True))
        return 0
    if not catalog:
        print(f"no saved sessions in {persistence.root}")
        return 0
    print(tree_text(catalog, lambda g: _group_command(args, g), output_width()), end="")
    return 0


def output_width() -> int | None:
    """The cells a `sessions` row may take: the terminal's width (or `COLUMNS`, as `ps`
    honours it); None when the output goes to a pipe or file, where rows stay whole."""
    import shutil
    import sys

    if not os.environ.get("COLUMNS", "").strip().isdigit():
        try:
            if not sys.stdout.isatty():
                return None
        except (ValueError, OSError):
            return None
    columns = shutil.get_terminal_size().columns
    return columns if columns > 0 else None
