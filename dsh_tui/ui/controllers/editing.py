"""Editing one message: the single path the inbox (a queued item) and the breakpoint
panel (the step's message) both open the edit dialog through.

The caller says how a save is written and what to say after it; sending the text as
a new message instead, holding a queued item while its editor is open (the agent waits
for the edit instead of claiming around it: docs/contract.md §3.8; released on save,
send or cancel), and telling the dialog when the agent took a watched item anyway,
happen here once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from dsh_tui.harness import Agent, UserMessage
from dsh_tui.harness.capabilities import capabilities_of

from ..screens.edit import EditScreen
from ..state.hold_view import editor_line
from .seams import Notes, Screenside, Selection, World
from .sending import LANE_PHRASE, Sending


class Host(World, Notes, Selection, Screenside, Protocol):
    """What editing needs of the screen."""


class Editing:
    """Opens the edit dialog; remembers the one watched for a claim (`check`)."""

    def __init__(self, host: Host, sending: Sending) -> None:
        self.host = host
        self.sending = sending
        self._watched: tuple[EditScreen, str, str] | None = None

    def edit(self, agent: Agent, message: UserMessage, lane: str, save: Callable[[str], bool],
             *, saved: str, saved_timeout: float = 5, what: str = "Edit queued message",
             watch: bool = False, refocus: Callable[[], None],
             split: Callable[[str, int], bool] | None = None) -> None:
        """Edit `message` of `agent` in a dialog. `save(text)` writes the edit (False: it
        could not, the item is gone); `saved` is said after a save; `watch` holds the
        still-queued message while the dialog is open (for the config's `hold_limit`)
        and tells the dialog when the agent claims it; `refocus` runs when the dialog
        closes; `split(text, cursor)` splits the item at the cursor (None: no split)."""
        host = self.host
        name = host.display_name(agent.id)
        hold = None
        if watch and not host.read_only and capabilities_of(agent).allows("hold_item"):
            # An agent that cannot hold (a remote one) is edited without: a claim that
            # comes first is reported by the dialog, as before holds existed.
            hold = agent.hold(message.id, limit=host.config.hold_limit)

        def send(text: str, lane: str) -> None:
            if self.sending.send_text(agent, text, lane):
                host.note(f"Sent your edited text to {name} as {LANE_PHRASE[lane]}.")

        def hold_line() -> str:
            view = host.bridge.views.get(agent.id)
            return editor_line(hold, view.waiting_on if view is not None else ())

        screen = EditScreen(agent_name=name, message=message, lane=lane, on_save=save,
                            on_send=send, what=what,
                            hold_line=hold_line if hold is not None else None,
                            on_split=split)
        if watch:
            self._watched = (screen, agent.id, message.id)

        def done(result: str | None) -> None:
            if hold is not None:
                hold.release()
            if watch:
                self._watched = None
            if result == "saved" and saved:
                host.note(saved, seconds=saved_timeout)
            refocus()

        host.ask(screen, done)
        self.check()

    def check(self) -> None:
        """Tell an open edit dialog when the agent took (or someone removed) its item."""
        if self._watched is None:
            return
        screen, agent_id, message_id = self._watched
        if screen.is_mounted:
            screen.show_hold()  # the agent may have begun to wait on the hold
        view = self.host.bridge.views.get(agent_id)
        if view is None:
            screen.mark_claimed()
            return
        if message_id in view.claimed:
            screen.mark_claimed(view.claimed[message_id])
        elif view.agent.inbox.get(message_id) is None:
            screen.mark_claimed()
