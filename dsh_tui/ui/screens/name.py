"""Ask for an agent's name: a new agent, a spawned child, or a rename.

One line, prefilled with the suggested name (selected, so typing replaces it and `enter`
accepts it as is); `escape` cancels. The name is kept as typed, on one line (whitespace
runs become one space); wherever it is shown it passes through `visible_label`.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from dsh_tui.harness.names import normalize_name

from ..state.text import visible_label


class NameScreen(ModalScreen[str | None]):
    """Dismisses with the name (one line, trimmed, not empty) or None."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="name_cancel"),
    ]

    CSS_PATH = Path(__file__).with_name("name.tcss")

    def __init__(self, question: str, suggested: str) -> None:
        super().__init__()
        self.question = question
        self.suggested = suggested

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Content.styled(visible_label(self.question), "bold"), id="name-title")
            yield Input(self.suggested, id="name-input", select_on_focus=True)
            yield Static(Content("enter accepts · escape cancels"), id="name-keys")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if not self.is_current:
            return  # a key that reached this screen while it was closing: it answered already
        name = normalize_name(event.value)
        self.dismiss(name or None)

    def action_cancel(self) -> None:
        if self.is_current:
            self.dismiss(None)
