"""Edit a queued message in place (same id, `inbox.replace`), without losing a race.

While the dialog is open the item is held (docs/contract.md §3.8): an agent that would
claim it waits, and the line under the text says so, with the seconds left before the
hold lapses. If the agent claims it anyway (the hold lapsed, or there was none), nothing
is lost: the screen says so at once, keeps the edited text, and offers to send it as a
new follow-up or steer instead of saving into an item that is gone.
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
SplitCallback = Callable[[str, int], bool]
"""(text, cursor offset) → whether the item was split there."""
HoldLine = Callable[[], str]
"""What the hold line says now ("" hides it); polled while the dialog is open."""

HOLD_POLL = 0.5
"""Seconds between two readings of the hold line (its countdown moves in whole seconds)."""


class EditScreen(ModalScreen[str | None]):
    """Dismisses with "saved", "split", "sent", or None when cancelled."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "save", "Save", id="edit_save"),
        Binding("escape", "cancel", "Cancel", id="edit_cancel"),
        Binding("ctrl+b", "split", "Split here", id="edit_split"),
    ]

    CSS_PATH = Path(__file__).with_name("edit.tcss")

    claimed = var(False, toggle_class="-claimed")
    """The agent took the item: the dialog offers to send the text as new (the `-claimed`
    class follows it)."""

    def __init__(self, *, agent_name: str, message: Any, lane: str, on_save: SaveCallback,
                 on_send: SendCallback, what: str = "Edit queued message",
                 hold_line: HoldLine | None = None,
                 on_split: SplitCallback | None = None) -> None:
        super().__init__()
        self.on_split = on_split
        self.hold_line = hold_line
        self.hold_shown = ""
        """The hold line as last shown (its Static is updated only when it changes)."""
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
            yield Static(id="held")
            yield Static(id="claimed")
            with Horizontal(id="edit-buttons"):
                keys = "ctrl+s save · ctrl+b split at the cursor · escape cancel" \
                    if self.on_split is not None else "ctrl+s save · escape cancel"
                yield Static(Content(keys), id="edit-keys")
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
        if self.hold_line is not None:
            self.show_hold()
            self.set_interval(HOLD_POLL, self.show_hold)

    def show_hold(self) -> None:
        """Read the hold line again (the countdown, or that the agent now waits)."""
        line = "" if self.claimed or self.hold_line is None else self.hold_line()
        if line != self.hold_shown:
            self.hold_shown = line
            held = self.query_one("#held", Static)
            held.update(Content(line))
            held.display = bool(line)

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
        self.query_one("#held", Static).display = False
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

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Split only where the caller offers it, and not once the item is gone."""
        if action == "split":
            return self.on_split is not None and not self.claimed
        return True

    def action_split(self) -> None:
        """Split the item at the cursor: it keeps the text before, a new item right after
        it takes the rest (the edit is saved first)."""
        if self.on_split is None or self.claimed:
            return
        editor = self.query_one("#edit-text", TextArea)
        row, column = editor.cursor_location
        text = self.text
        offset = sum(len(line) + 1 for line in text.split("\n")[:row]) + column
        if self.on_split(text, offset):
            self.dismiss("split")

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
