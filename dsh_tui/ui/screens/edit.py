"""Edit a queued message in place (same id, `inbox.replace`), without losing a race.

The agent may claim the message while the person is still typing. Nothing is
lost then: the screen says so at once, keeps the edited text, and offers to send
it as a new follow-up or steer instead of saving into an item that is gone.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.reactive import var
from textual.screen import ModalScreen
from textual.widgets import Button, Static, TextArea

from ..badges import lane_badge
from ..state.text import short_id, visible_label
from ..widgets.composer import SafeTextArea

SaveCallback = Callable[[str], bool]
SendCallback = Callable[[str, str], None]


class EditScreen(ModalScreen[str | None]):
    """Dismisses with "saved", "sent", or None when cancelled."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "save", "Save", id="edit_save"),
        Binding("escape", "cancel", "Cancel", id="edit_cancel"),
    ]

    CSS_PATH = Path(__file__).with_name("edit.tcss")

    claimed = var(False, toggle_class="-claimed")
    """The agent took the item: the dialog offers to send the text as new (the `-claimed`
    class follows it)."""

    def __init__(self, *, agent_name: str, message: Any, lane: str, on_save: SaveCallback,
                 on_send: SendCallback, what: str = "Edit queued message") -> None:
        super().__init__()
        self.what = what
        self.agent_name = agent_name
        self.message = message
        self.lane = lane
        self.on_save = on_save
        self.on_send = on_send

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Content.assemble((self.what, "bold"), "  ",
                                          lane_badge(self.lane), "  ",
                                          (f"#{short_id(self.message.id)}", "$text-muted"),
                                          ("  for ", "$text-muted"), (visible_label(self.agent_name), "bold")),
                         id="edit-title")
            yield SafeTextArea(self.message.text, id="edit-text", soft_wrap=True,
                           tab_behavior="focus")
            yield Static(id="claimed")
            with Horizontal(id="edit-buttons"):
                yield Static(Content("ctrl+s save · escape cancel"), id="edit-keys")
                yield Button("Cancel", id="cancel")
                yield Button("Save", id="save", variant="primary")
                yield Button("Send as follow-up", id="send-followup",
                             variant="default" if self.steering else "primary")
                yield Button("Send as steer", id="send-steer",
                             variant="primary" if self.steering else "default")

    def on_mount(self) -> None:
        editor = self.query_one("#edit-text", TextArea)
        editor.focus()
        editor.move_cursor(editor.document.end)

    @property
    def steering(self) -> bool:
        """The item was steering the running turn (a steer or an inject): the rescue offers
        a steer first, so the text still reaches this turn."""
        return self.lane in ("steer", "inject", "context")

    @property
    def rescue_lane(self) -> str:
        return "steer" if self.steering else "follow-up"

    @property
    def text(self) -> str:
        return self.query_one("#edit-text", TextArea).text

    def mark_claimed(self, turn: int | None = None) -> None:
        """The agent took the original: keep the text, offer to send it as new."""
        if self.claimed:
            return
        self.claimed = True
        when = f" in turn {turn}" if turn else ""
        self.query_one("#claimed", Static).update(Content(
            f"! The agent already claimed this message{when}, so it can no longer be "
            f"edited. Your text is kept: send it as a new message (ctrl+s sends it as a "
            f"{self.rescue_lane}), or cancel (escape)."))
        self.query_one("#edit-keys", Static).update(Content(f"ctrl+s send as {self.rescue_lane}"
                                                           " · escape cancel"))

    def action_save(self) -> None:
        if self.claimed:
            self._send(self.rescue_lane)
            return
        if self.on_save(self.text):
            self.dismiss("saved")
        else:
            self.mark_claimed()

    def _send(self, lane: str) -> None:
        self.on_send(self.text, lane)
        self.dismiss("sent")

    def action_cancel(self) -> None:
        self.dismiss(None)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "save":
            self.action_save()
        elif event.button.id == "send-followup":
            self._send("follow-up")
        elif event.button.id == "send-steer":
            self._send("steer")
        else:
            self.action_cancel()
