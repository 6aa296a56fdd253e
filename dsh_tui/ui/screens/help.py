"""The help screen (f1): every binding with the key it has now, by area, and a legend."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from ..badges import lane_badge
from ..bindings import keys_for
from ..keys import ACTIONS, AREA_ORDER

LEGEND: tuple[tuple[str, str], ...] = (
    ("follow-up", "queued for the next turn, one message per turn"),
    ("steer", "delivered at the next step of the running turn; wakes an idle agent"),
    ("inject", "context for the next step; never wakes the agent"),
    ("context", "context a tool or plugin added for the next step"),
)

SYMBOLS: tuple[tuple[str, str], ...] = (
    ("◐", "running (animated)"),
    ("○", "idle"),
    ("‖", "idle with work kept in its inbox (paused after a stop)"),
    ("✗", "its last turn ended with an error"),
    ("◆", "breakpoint set; \"◆ name paused\": waiting at it (select it to see the step)"),
    ("t3", "current turn"),
    ("⚑2 ↵1", "pending next-step items · queued follow-ups"),
)


NARROW = 100
"""Below this many columns the help is two columns: keys, then title with its text below."""


def help_table(app: Any, width: int | None = None) -> Table:
    """Every action with the key it has now (after `[keys]` remapping), by area.

    On a narrow screen (`width` < NARROW) the description goes under the title and the
    action's name is left out, so nothing is cut; the palette (ctrl+p) shows names too."""
    narrow = width is not None and width < NARROW
    theme = app.current_theme
    accent = Style(color=theme.accent or theme.primary, bold=True)
    heading = Style(color=theme.primary, bold=True)
    muted = Style(dim=True)
    if narrow:
        table = Table.grid(padding=(0, 1), expand=True)
        table.add_column("keys", no_wrap=True, max_width=16)
        table.add_column("action", ratio=1)
        for area in AREA_ORDER:
            table.add_row(Text(area.upper(), heading), "")
            for spec in [s for s in ACTIONS if s.area == area]:
                keys = " / ".join(keys_for(app, spec.name)) or "palette"
                table.add_row(Text(keys, accent, overflow="fold"),
                              Text.assemble((spec.title, Style(bold=True)), "\n",
                                            (spec.help, muted)))
            table.add_row("", "")
        return table
    table = Table.grid(padding=(0, 2), expand=True)
    table.add_column("keys", no_wrap=True, min_width=14)
    table.add_column("action", no_wrap=True, min_width=24)
    table.add_column("what it does", ratio=1)
    table.add_column("name", no_wrap=True)
    for area in AREA_ORDER:
        specs = [s for s in ACTIONS if s.area == area]
        table.add_row(Text(area.upper(), heading), "", "", "")
        for spec in specs:
            keys = " / ".join(keys_for(app, spec.name)) or "palette"
            table.add_row(Text(keys, accent), Text(spec.title, Style(bold=True)),
                          Text(spec.help, muted), Text(spec.name, muted))
        table.add_row("", "", "", "")
    return table


def legend(app: Any) -> Content:
    lines: list[Content] = [Content.styled("LANES", "bold $primary")]
    for lane, words in LEGEND:
        lines.append(Content.assemble("  ", lane_badge(lane).pad_right(14 - len(lane)),
                                      (words, "$text-muted")))
    lines.append(Content(""))
    lines.append(Content.styled("AGENT TREE", "bold $primary"))
    for symbol, words in SYMBOLS:
        lines.append(Content.assemble((f"  {symbol:<8}", "bold"), (words, "$text-muted")))
    lines.append(Content(""))
    lines.append(Content.styled("TYPING IS SAFE", "bold $primary"))
    lines.append(Content.styled(
        "  No letter is a command in the tree, the inbox or the transcript: what you type\n"
        "  there lands in the composer. The focused pane has the bright border; the footer\n"
        "  shows its keys. ctrl+q keeps every inbox (--resume brings them back).",
        "$text-muted"))
    lines.append(Content(""))
    lines.append(Content.styled(
        "Remap any key in the config file's [keys] table by action name, e.g. "
        'steer = "ctrl+e". ctrl+p opens the command palette; ctrl+q quits.', "$text-muted"))
    return Content("\n").join(lines)


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,f1,q", "close", "Close", id="help_close")]

    CSS_PATH = Path(__file__).with_name("help.tcss")

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(Content.assemble(("dsh-tui keys", "bold"),
                                          ("  ·  escape closes", "$text-muted")),
                         id="help-title")
            yield Static(help_table(self.app, self.app.size.width), id="help-body")
            yield Static(legend(self.app), id="help-legend")

    def on_resize(self) -> None:
        self.query_one("#help-body", Static).update(help_table(self.app, self.app.size.width))

    def action_close(self) -> None:
        self.dismiss(None)
