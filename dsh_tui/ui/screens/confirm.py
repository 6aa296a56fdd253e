"""A yes/no question for destructive actions (dispose, clear, cancel-and-clear, delete).

Yes takes a deliberate key, `YES_KEY`: a single `y` confirmed, and a `y` is what prose typed
a moment too long after the dialog opened gives. The focus starts on No, so enter answers no;
`y` only says which key confirms.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Static

YES_KEY = "ctrl+y"
"""Confirms: one chord, never typed in prose, not the auto-repeat of the key that asked."""


class ConfirmScreen(ModalScreen[bool]):
    """Dismisses with True (`YES_KEY`, or the Yes button) or False (n, escape, enter on the
    No button the focus starts on)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(YES_KEY, "answer(True)", "Yes"),
        Binding("n,escape", "answer(False)", "No"),
        Binding("y", "nudge", show=False),
    ]

    CSS_PATH = Path(__file__).with_name("confirm.tcss")

    def __init__(self, question: str, detail: str = "", yes: str = "Yes") -> None:
        super().__init__()
        self.question = question
        self.detail = detail
        self.yes = yes

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Content.styled(self.question, "bold"), id="question")
            if self.detail:
                yield Static(Content(self.detail), id="detail")
            with Horizontal():
                yield Button("No (n)", id="no")
                yield Button(f"{self.yes} ({YES_KEY})", id="yes", variant="warning")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "yes")

    def action_answer(self, value: bool) -> None:
        self.dismiss(value)

    def action_nudge(self) -> None:
        """A lone `y` (yes used to be one letter): say which key confirms, decide nothing."""
        self.app.bell()
        self.notify(f"{YES_KEY} confirms ({self.yes}); n or escape cancels", severity="warning",
                    timeout=4)
