"""A question with a few named answers (stop a subtree: keep or discard the inboxes).

Each answer is a button with its own chord (never a letter: prose typed a beat too long
after the dialog opened must not answer, as `confirm.py` says); escape cancels (None).
The focus starts on Cancel, so enter answers nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from ..state.text import visible_label


class ChoiceScreen(ModalScreen[str | None]):
    """Dismisses with the chosen answer's id, or None (escape, Cancel)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "answer('')", "Cancel", id="choice_cancel"),
    ]

    CSS_PATH = Path(__file__).with_name("choice.tcss")

    def __init__(self, question: str, detail: str,
                 answers: list[tuple[str, str, str]]) -> None:
        """`answers`: (id, label, key) for each button: the key is a chord (`ctrl+y`)."""
        super().__init__()
        self.question = question
        self.detail = detail
        self.answers = answers

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Content.styled(visible_label(self.question), "bold"), id="question")
            if self.detail:
                yield Static(Content(self.detail), id="detail")
            with Horizontal():
                yield Button("Cancel (esc)", id="cancel")
                for answer, label, chord in self.answers:
                    yield Button(f"{label} ({chord})", id=f"answer-{answer}",
                                 variant="warning")

    def on_mount(self) -> None:
        self.query_one("#cancel", Button).focus()

    def on_key(self, event: events.Key) -> None:
        for answer, _label, chord in self.answers:
            if event.key == chord:
                event.stop()
                self.action_answer(answer)
                return

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        button = event.button.id or ""
        self.action_answer(button.removeprefix("answer-") if button != "cancel" else "")

    def action_answer(self, answer: str) -> None:
        if self.is_current:
            self.dismiss(answer or None)
