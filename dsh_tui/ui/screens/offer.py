"""The question a browser tab's new app asks first: reopen the workspace this page left?

Only enter (on the focused Reopen button) and escape answer it, never a letter: keys
typed while the page was loading arrive here, and a stray "y" or "n" in them must not
decide for the person.
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

from ..state.text import visible_label
from ..state.workspace import WorkspaceOffer


class OfferScreen(ModalScreen[bool]):
    """Dismisses with True (reopen) or False (a new workspace)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "answer(False)", "New workspace"),
    ]

    CSS_PATH = Path(__file__).with_name("offer.tcss")

    def __init__(self, offer: WorkspaceOffer) -> None:
        super().__init__()
        self.offer = offer

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Content.styled("Reopen the workspace this page left?", "bold"),
                         id="question")
            yield Static(Content(visible_label(f"{self.offer.workspace_id} · "
                                               f"{self.offer.summary}")), id="detail")
            with Horizontal():
                yield Button("New workspace (esc)", id="no")
                yield Button("Reopen (enter)", id="yes", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#yes", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "yes")

    def action_answer(self, value: bool) -> None:
        self.dismiss(value)
