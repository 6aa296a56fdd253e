"""The whole text of a reply too long to render as Markdown in the transcript.

A read-only TextArea lays out only the lines on screen, so even a 5 MB reply opens
without freezing the app; the text passes the same sanitising rule as everything else.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static, TextArea

from ..state.text import visible


class FullTextScreen(ModalScreen[None]):
    """Dismisses on escape."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close", id="full_text_close"),
    ]

    CSS_PATH = Path(__file__).with_name("full_text.tcss")

    # The border rule stays in default CSS: TextArea's own `:focus` border must keep winning
    # (the text is focused whenever the dialog is open), as it did; a .tcss rule would hide it.
    DEFAULT_CSS = """
    FullTextScreen TextArea { height: 1fr; border: none; }
    """

    def __init__(self, title: str, text: str) -> None:
        super().__init__()
        self.title_text = title
        self.text = text

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Content(f"{self.title_text} · {len(self.text):,} characters · "
                                 "escape closes"), id="full-text-title")
            yield TextArea(visible(self.text), read_only=True, soft_wrap=False,
                           show_line_numbers=False, id="full-text")

    def on_mount(self) -> None:
        self.query_one("#full-text", TextArea).focus()

    def action_close(self) -> None:
        self.dismiss(None)
