"""Past sessions (f3): what persistence has on disk, newest first; enter resumes one."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from ..state.text import visible_label


def _when(header: Mapping[str, Any]) -> str:
    created = header.get("createdAt")
    if not isinstance(created, int):
        return "?"
    return dt.datetime.fromtimestamp(created / 1000).strftime("%Y-%m-%d %H:%M")


def session_prompt(header: Mapping[str, Any], live: bool,
                   summary: Mapping[str, Any] | None = None, elsewhere: str | None = None,
                   ) -> Content:
    """One row: when, title (or id), then the first prompt, dimmed, and its lineage.
    `live`: open in this app; `elsewhere`: open in another process (who holds it)."""
    summary = summary or {}
    session_id = visible_label(str(header.get("id", "?")))
    title = summary.get("title")
    parts: list[Any] = [(_when(header), "$text-muted"), "  "]
    if isinstance(title, str) and title and title != session_id:
        parts += [(visible_label(title), "bold"), (f"  {session_id}", "$text-muted")]
    else:
        parts.append((session_id, "bold"))
    if header.get("origin") == "subagent":
        parts.append((f"  sub-agent of {visible_label(str(header.get('parentSession', '?')))}",
                      "$text-muted"))
    if live:
        parts.append(("  ● open", "$success"))
    elif elsewhere:
        parts += [("  ● open", "$warning"), (f" in another dsh-tui ({visible_label(elsewhere)})",
                                              "$text-muted")]
    preview = summary.get("preview")
    if isinstance(preview, str) and preview:
        parts += ["\n", ("   ", ""), (visible_label(preview), "$text-muted italic")]
    return Content.assemble(*parts)


class SessionsScreen(ModalScreen[str | None]):
    """Dismisses with the id to resume, or None."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,f3", "close", "Close", id="sessions_close")]

    DEFAULT_CSS = """
    SessionsScreen { align: center middle; }
    SessionsScreen > Vertical { width: 90%; max-width: 120; height: 80%; border: thick $primary; background: $surface; padding: 0 1; }
    SessionsScreen #sessions-title { padding: 0 0 1 0; }
    SessionsScreen OptionList { height: 1fr; }
    """

    def __init__(self, headers: Sequence[Mapping[str, Any]], live: set[str],
                 note: str = "", *,
                 summaries: Mapping[str, Mapping[str, Any]] | None = None,
                 elsewhere: Mapping[str, str] | None = None) -> None:
        super().__init__()
        self.headers = list(headers)
        self.live = live
        self.elsewhere = dict(elsewhere or {})
        self.note = note
        self.summaries = dict(summaries or {})

    def compose(self) -> ComposeResult:
        with Vertical():
            title = f"Saved sessions ({len(self.headers)})"
            yield Static(Content.assemble((title, "bold"),
                                          ("  ·  enter resumes · escape closes", "$text-muted")),
                         id="sessions-title")
            if self.note or not self.headers:
                yield Static(Content(self.note or "No saved sessions yet."), id="sessions-note")
            yield OptionList(*[Option(session_prompt(h, str(h.get("id")) in self.live,
                                                     self.summaries.get(str(h.get("id"))),
                                                     self.elsewhere.get(str(h.get("id")))),
                                      id=str(h.get("id"))) for h in self.headers],
                             id="sessions-list")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)

    def action_close(self) -> None:
        self.dismiss(None)
