"""The sessions dialog (f3): list saved sessions, resume one, and tidy (delete, archive,
export as Markdown) what is not open here.

The catalog is file reads, so it is built off the event loop; resuming runs as a worker
and selects what it opened once the bridge shows it.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import Any, Protocol

from dsh_tui.harness.persistence import SessionLogError, read_session_log
from dsh_tui.harness.persistence.catalog import Target, WorkspaceEntry, build_catalog, remove
from dsh_tui.harness.persistence.jsonl import JsonlPersistence

from ..screens.sessions import Chosen, SessionsScreen, target_of
from ..state.text import visible_label
from ..state.workspace import open_target, with_live, workspace_cwd
from .seams import Screenside, Selection, World


class Host(World, Selection, Screenside, Protocol):
    """What the sessions dialog needs of the screen."""


class SessionActions:
    """f3: the saved sessions, and what the person does with one."""

    def __init__(self, host: Host) -> None:
        self.host = host

    def open(self) -> None:
        persistence = self.host.ctx.registry.persistence
        if persistence is None:
            self.host.say("Sessions are not saved in this world (no persistence).", "warning")
            return
        self.host.spawn(self._show(persistence), group="sessions", exclusive=True)

    def _catalog(self, persistence: JsonlPersistence) -> list[WorkspaceEntry]:
        return with_live(build_catalog(persistence), self.host.ctx, self.host.display_name)

    async def _show(self, persistence: JsonlPersistence) -> None:
        """The catalog is file reads: it is built off the event loop."""
        host = self.host
        try:
            catalog = await asyncio.to_thread(build_catalog, persistence)
        except Exception as error:
            host.say(f"Could not list saved sessions: {error}", "error")
            return
        live = {agent.id for agent in host.ctx.agents.list()}
        catalog = with_live(catalog, host.ctx, host.display_name)

        def chosen(choice: Chosen | None) -> None:
            if choice is None:
                return
            entry = choice.entry
            if entry is not None and entry.id in live:
                host.select_agent(entry.id, focus_tree=True)
                return
            holder = entry.holder if entry is not None else choice.group.holder
            if holder is not None and not holder.is_this_process:
                what = visible_label(entry.name) if entry is not None else \
                    f"workspace {choice.group.id}"
                host.say(f"{what} is open in another dsh-tui ({holder.describe()}): one "
                         "process writes a session at a time. Quit it there first.",
                         "warning", timeout=8)
                return
            host.spawn(self._resume(target_of(catalog, choice), persistence), group="agents")

        host.ask(SessionsScreen(catalog, live, on_action=partial(self._tidy, persistence)),
                 chosen)

    def _tidy(self, persistence: JsonlPersistence,
              choice: Chosen) -> tuple[str, list[WorkspaceEntry]]:
        """Delete, archive or export a row of the sessions screen (it asked first)."""
        if choice.action == "export":
            return self._export(persistence, choice), self._catalog(persistence)
        tree = [e for _, e in (choice.entry.walk() if choice.entry is not None
                               else choice.group.walk())]
        open_here = [e for e in tree if self.host.ctx.agents.get(e.id) is not None]
        if open_here:
            return (f"{visible_label(open_here[0].name)} is open here: dispose it first "
                    f"({self.host.key_name('dispose_agent')} in the tree).",
                    self._catalog(persistence))
        count = remove(persistence, choice.group, choice.entry,
                       archive=choice.action == "archive")
        done = "Archived" if choice.action == "archive" else "Deleted"
        return (f"{done} {count} session{'s' if count != 1 else ''}.",
                self._catalog(persistence))

    def _export(self, persistence: JsonlPersistence, choice: Chosen) -> str:
        """One Markdown file per tree (a row, or each root of a workspace heading), its
        sub-agents nested under the tool calls that spawned them, into the working dir."""
        from ..state.export import export_markdown  # here: only an export pays its import

        tops = [choice.entry] if choice.entry is not None else list(choice.group.roots)
        entries = {e.id: e for top in tops for _, e in top.walk()}

        def children(session_id: str) -> list[Any]:
            out = []
            for child in entries[session_id].children if session_id in entries else []:
                try:
                    out.append(read_session_log(persistence.path_for(child.header)))
                except (OSError, SessionLogError):
                    continue
            return out

        folder = Path(workspace_cwd(self.host.ctx) or os.getcwd())
        written = []
        for top in tops:
            header, events = read_session_log(persistence.path_for(top.header))
            target = folder / f"dsh-tui-{top.id}.md"
            target.write_text(export_markdown(header, events, children=children),
                              encoding="utf-8")
            written.append(target.name)
        return f"Exported {len(written)} tree(s) as Markdown to {folder}: " + \
            ", ".join(written[:3]) + (" …" if len(written) > 3 else "")

    async def _resume(self, target: Target, persistence: JsonlPersistence) -> None:
        host = self.host
        headers: list[Mapping[str, Any]] = [*persistence.list_sessions()]
        try:
            handles = await open_target(host.ctx, target, headers)
        except Exception as error:
            host.say(f"Could not resume: {error}", "error")
            return
        if not handles:
            return
        chosen = target.select if target.select and host.ctx.agents.get(target.select) \
            is not None else handles[0].agent.id
        await host.adopt(chosen)
        host.say(f"Resumed {host.display_name(chosen)}"
                 + (f" and {len(handles) - 1} more" if len(handles) > 1 else "") + ".",
                 timeout=3)
