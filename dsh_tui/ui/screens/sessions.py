"""Saved workspaces and sessions (f3, and the `--resume` picker) as trees.

Each workspace is a heading with its roots under it and their children indented, each
row with name, status at the last write, last activity, size and id. Typing filters
(name, id, directory, first prompt; a match keeps its ancestors); `enter` opens the row
(a heading: the whole workspace); `delete` deletes and `ctrl+a` archives the row's tree
after a confirm; `ctrl+e` exports it as Markdown. Every outside string passes through
`visible_label`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.driver import Driver
from textual.screen import ModalScreen, Screen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from dsh_tui.harness.persistence.catalog import (
    SessionEntry,
    Target,
    WorkspaceEntry,
    target_of_session,
    target_of_workspace,
)

from ..state.session_rows import cells, heading, name, pad, size, status, when
from ..state.text import visible_label
from ..widgets.flat_highlight import FlatOptionList


@dataclass(frozen=True)
class Chosen:
    """What the person did with a row: `action` is open, delete, archive or export."""

    action: str
    group: WorkspaceEntry
    entry: SessionEntry | None  # None: the workspace heading


def _matches(text: str, entry: SessionEntry) -> bool:
    return any(text in (value or "").casefold() for value in
               (entry.name, entry.id, entry.preview))


def _keep(rows: list[Any], group: WorkspaceEntry, entry: SessionEntry, depth: int, text: str,
          whole: bool) -> bool:
    """Append `entry`'s rows that match (or lead to a match); True if any did."""
    mark = len(rows)
    rows.append((group, entry, depth))
    hit = whole or _matches(text, entry)
    for child in entry.children:
        hit = _keep(rows, group, child, depth + 1, text, whole) or hit
    if not hit:
        del rows[mark:]
    return hit


def filtered(catalog: list[WorkspaceEntry], text: str,
             ) -> list[tuple[WorkspaceEntry, SessionEntry | None, int]]:
    """(group, entry or None for the heading, depth) rows that match `text` (casefolded);
    a match keeps its ancestors and its workspace heading."""
    text = text.casefold().strip()
    out: list[tuple[WorkspaceEntry, SessionEntry | None, int]] = []
    for group in catalog:
        whole = not text or text in (group.id or "").casefold() or \
            text in (group.cwd or "").casefold()
        rows: list[Any] = []
        for root in group.roots:
            _keep(rows, group, root, 0, text, whole)
        if rows:
            out.append((group, None, 0))
            out += rows
    return out


class SessionsScreen(ModalScreen["Chosen | None"]):
    """Dismisses with a `Chosen` (open) or None; delete/archive/export go to `on_action`,
    which returns a line to show and the catalog as it is now."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,f3", "close", "Close", id="sessions_close"),
        Binding("delete", "row('delete')", "Delete", id="sessions_delete"),
        Binding("ctrl+a", "row('archive')", "Archive", id="sessions_archive"),
        Binding("ctrl+e", "row('export')", "Export", id="sessions_export"),
    ]

    CSS_PATH = Path(__file__).with_name("sessions.tcss")

    def __init__(self, catalog: list[WorkspaceEntry], live: set[str] | None = None, *,
                 picker: bool = False, note: str = "",
                 on_action: Callable[[Chosen], tuple[str, list[WorkspaceEntry]]] | None = None,
                 ) -> None:
        super().__init__()
        self.catalog = catalog
        self.live = set(live or ())
        self.picker = picker
        self.note = note
        self.on_action = on_action
        self.filter_text = ""
        self._rows: dict[str, tuple[WorkspaceEntry, SessionEntry | None]] = {}

    def compose(self) -> ComposeResult:
        with Vertical():
            count = sum(1 for g in self.catalog for _ in g.walk())
            keys = "enter opens" if self.picker else \
                "enter opens · delete deletes · ctrl+a archives · ctrl+e exports"
            yield Static(Content.assemble((f"Saved sessions ({count})", "bold"),
                                          (f"  ·  type to filter · {keys} · escape closes",
                                           "$text-muted")), id="sessions-title")
            yield Static(self._filter_line(), id="sessions-filter")
            yield Static(Content(self.note), id="sessions-note")
            yield FlatOptionList(id="sessions-list")

    def on_mount(self) -> None:
        self._fill()
        self.query_one(OptionList).focus()

    # -- rows -----------------------------------------------------------------------------------

    def _filter_line(self) -> Content:
        if not self.filter_text:
            return Content("filter: (type to filter)")
        return Content.assemble("filter: ", (visible_label(self.filter_text), "bold"), "▏")

    def _prompt(self, group: WorkspaceEntry, entry: SessionEntry | None, depth: int,
                widths: tuple[int, int] = (0, 0)) -> Content:
        if entry is None:
            agents = sum(1 for _ in group.walk())
            return Content.assemble((heading(group), "bold $accent"),
                                    (f"  · {agents} agent{'s' if agents != 1 else ''}",
                                     "$text-muted"))
        live = entry.id in self.live
        state = status(entry, live=live)
        style = "$success" if live else "$warning" if "● open" in state or \
            entry.status == "interrupted" else "$text-muted"
        indent = "  " * (depth + 1)
        label = name(entry)
        gap = " " * max(0, widths[0] - cells(indent + label))
        parts: list[Any] = [indent, (label, "bold" if not entry.dropped
                                     else "$text-muted strike"),
                            gap + "  ", (pad(state, widths[1]), style), "  ",
                            (f"{when(entry.last_activity)}  {size(entry.bytes)}  "
                             if entry.last_activity > 0 else "not on disk yet  ", "$text-muted"),
                            (visible_label(entry.id), "$text-muted")]
        if depth == 0 and entry.preview:  # a root's first prompt, to recognise it by
            parts += ["\n", "  " * (depth + 2),
                      (visible_label(entry.preview), "$text-muted italic")]
        return Content.assemble(*parts)

    def _fill(self, keep: str | None = None) -> None:
        options = self.query_one(OptionList)
        highlighted = keep
        if highlighted is None and options.highlighted is not None and options.option_count:
            highlighted = options.get_option_at_index(options.highlighted).id
        self._rows.clear()
        items: list[Option] = []
        shown = filtered(self.catalog, self.filter_text)
        sessions = [(e, d) for _, e, d in shown if e is not None]
        widths = (max([cells("  " * (d + 1) + name(e)) for e, d in sessions] or [0]),
                  max([cells(status(e, live=e.id in self.live)) for e, _ in sessions] or [0]))
        for group, entry, depth in shown:
            key = f"s:{entry.id}" if entry is not None else f"w:{group.id or group.cwd or '-'}"
            if key in self._rows:
                continue
            self._rows[key] = (group, entry)
            items.append(Option(self._prompt(group, entry, depth, widths), id=key))
        options.clear_options()
        options.add_options(items)
        if not items:
            options.add_option(Option(Content("Nothing matches." if self.filter_text else
                                              "No saved sessions yet."), disabled=True))
            return
        index = next((i for i, o in enumerate(items) if o.id == highlighted), None)
        if index is None:  # first session row, not a heading
            index = next((i for i, o in enumerate(items) if o.id and o.id.startswith("s:")), 0)
        options.highlighted = index

    def _current(self) -> tuple[WorkspaceEntry, SessionEntry | None] | None:
        options = self.query_one(OptionList)
        if options.highlighted is None or not options.option_count:
            return None
        key = options.get_option_at_index(options.highlighted).id
        return self._rows.get(key or "")

    # -- typing filters ---------------------------------------------------------------------------

    async def on_key(self, event: events.Key) -> None:
        if event.is_printable and event.character:
            self.filter_text += event.character
        elif event.key == "backspace":
            self.filter_text = self.filter_text[:-1]
        elif event.key == "ctrl+u":
            self.filter_text = ""
        else:
            return
        event.stop()
        event.prevent_default()
        self.query_one("#sessions-filter", Static).update(self._filter_line())
        self._fill()

    # -- actions --------------------------------------------------------------------------------

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        row = self._rows.get(event.option.id or "")
        if row is not None:
            self.dismiss(Chosen("open", row[0], row[1]))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return not (action == "row" and (self.picker or self.on_action is None))

    def action_row(self, what: str) -> None:
        row = self._current()
        if row is None or self.on_action is None:
            return
        group, entry = row
        chosen = Chosen(what, group, entry)
        if what == "export":
            self._run(chosen)
            return
        from .confirm import ConfirmScreen

        if entry is None:
            label = f"workspace {group.id}" if group.id else "these sessions"
            count = sum(1 for _ in group.walk())
        else:
            label = visible_label(entry.name)
            count = sum(1 for _ in entry.walk())
        extra = f" ({count} sessions)" if count != 1 else ""
        if what == "delete":
            question = f"Delete {label}{extra}?"
            detail = "The session files are removed from disk. This cannot be undone."
        else:
            question = f"Archive {label}{extra}?"
            detail = ("The files move under ~archive in the data dir: no longer listed or "
                      "resumable; move them back to restore them.")

        def answer(yes: bool | None) -> None:
            if yes:
                self._run(chosen)

        self.app.push_screen(ConfirmScreen(question, detail, yes=what.capitalize()), answer)

    def _run(self, chosen: Chosen) -> None:
        assert self.on_action is not None
        try:
            said, catalog = self.on_action(chosen)
        except Exception as error:  # a file operation failed: say so, keep the list
            said, catalog = f"{chosen.action.capitalize()} failed: {error}", self.catalog
        self.catalog = catalog
        self.query_one("#sessions-note", Static).update(Content(said))
        self._fill()

    def action_close(self) -> None:
        self.dismiss(None)


def target_of(catalog: list[WorkspaceEntry], chosen: Chosen) -> Target:
    """What opening a row means: a heading opens its workspace whole; a session row opens
    the workspace that holds it (or, for a loose session, its root's tree)."""
    if chosen.entry is None:
        if chosen.group.id is not None:
            return target_of_workspace(chosen.group)
        roots = tuple(r for r in chosen.group.roots if not r.dropped)
        return Target(chosen.group, roots, roots[0].id if roots else None)
    return target_of_session(catalog, chosen.entry.id)


class _PickerScreen(Screen[None]):
    """Full-screen host of the picker modal (the app has nothing else to show)."""

    def compose(self) -> ComposeResult:
        yield Static("")


class PickerApp(App[Target | None]):
    """`dsh-tui --resume` without an id: pick a workspace or a session, or escape."""

    def __init__(self, catalog: list[WorkspaceEntry]) -> None:
        super().__init__()
        self.catalog = catalog

    def get_driver_class(self) -> type[Driver]:
        """As the main app's: a hang-up must not leave the picker running
        (`textual_compat.terminal_driver_class`)."""
        if os.name != "posix":
            return super().get_driver_class()
        from ..textual_compat import terminal_driver_class

        return terminal_driver_class(super().get_driver_class())

    def on_mount(self) -> None:
        self.push_screen(_PickerScreen())
        self.push_screen(SessionsScreen(self.catalog, picker=True), self._chosen)

    def _chosen(self, chosen: Chosen | None) -> None:
        # A workspace open elsewhere is refused by the CLI, naming its holder.
        self.exit(None if chosen is None else target_of(self.catalog, chosen))
