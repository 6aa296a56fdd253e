"""Broadcast: one message to every marked agent, in the lane the person picks.

One line of text; enter sends it as a follow-up, ctrl+s as a steer, ctrl+t injected
(as the composer's default keys), and the buttons say the same; escape cancels. Each agent gets its own copy (its own id).
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static

from ..state.text import visible_label


class BroadcastScreen(ModalScreen[tuple[str, str] | None]):
    """Dismisses with (text, lane) or None."""

    STEER = Binding("ctrl+s", "send('steer')", "Steer", id="broadcast_steer")
    INJECT = Binding("ctrl+t", "send('inject')", "Inject", id="broadcast_inject")
    BINDINGS: ClassVar[list[BindingType]] = [
        STEER, INJECT, Binding("escape", "cancel", "Cancel", id="broadcast_cancel"),
    ]

    CSS_PATH = Path(__file__).with_name("broadcast.tcss")

    def __init__(self, title: str) -> None:
        super().__init__()
        self.title_text = title

    def compose(self) -> ComposeResult:
        keys = {"steer": self.app.get_key_display(self.STEER),
                "inject": self.app.get_key_display(self.INJECT)}
        with Vertical():
            yield Static(Content.styled(visible_label(self.title_text), "bold"),
                         id="broadcast-title")
            yield Input(placeholder="the message every marked agent gets",
                        id="broadcast-text")
            with Horizontal():
                yield Button("Cancel (esc)", id="cancel")
                yield Button("Follow-up (enter)", id="send-follow-up", variant="primary")
                yield Button(f"Steer ({keys['steer']})", id="send-steer")
                yield Button(f"Inject ({keys['inject']})", id="send-inject")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_send("follow-up")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        button = event.button.id or ""
        if button.startswith("send-"):
            self.action_send(button.removeprefix("send-"))
        else:
            self.action_cancel()

    def action_send(self, lane: str) -> None:
        text = self.query_one(Input).value
        if not self.is_current:
            return
        if not text.strip():
            self.app.bell()
            return
        self.dismiss((text, lane))

    def action_cancel(self) -> None:
        if self.is_current:
            self.dismiss(None)
