"""The inbox timeline (f5): opening it on the selected agent, and going from an entry to
the place in the transcript where its message entered the model's context.

The link into the transcript goes through the transcript's one public way to show an
item, `Transcript.reveal(index)` (search uses it too); the index is that of the item of
the message's `user/message` in the agent's transcript model.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from ..screens.timeline import TimelineScreen
from ..state.text import short_id
from ..state.timeline import Timeline
from .seams import Notes, Panes, Screenside, Selection, World


class Host(World, Notes, Panes, Selection, Screenside, Protocol):
    """What the timeline needs of the screen."""


class TimelineActions:
    """Opens the timeline screen; shows a message's place in the transcript."""

    def __init__(self, host: Host) -> None:
        self.host = host

    def open(self, message_id: str | None = None) -> None:
        """The selected agent's timeline (filtered to `message_id` when given)."""
        host = self.host
        view = host.selected_view
        if view is None:
            return
        agent_id = view.id
        host.bridge.want_reading(agent_id)  # read in slices if the inbox has not yet

        def events() -> Sequence[Any]:
            return view.agent.session.events

        def current() -> Timeline:
            return view.timeline

        def progress() -> float:
            return view.reading_progress

        screen = TimelineScreen(view.name, view.timeline, events, message=message_id,
                                current=current, progress=progress)

        def done(chosen: str | None) -> None:
            if chosen is not None:
                self.show_in_transcript(agent_id, chosen)

        host.ask(screen, done)

    def show_in_transcript(self, agent_id: str, message_id: str) -> bool:
        """Select the agent and reveal the transcript item of `message_id`; False (saying
        why) when the message never reached the transcript."""
        host = self.host
        view = host.bridge.views.get(agent_id)
        if view is None:
            return False
        host.select_agent(agent_id)
        items = view.transcript.items
        index = next((i for i in range(len(items) - 1, -1, -1)
                      if items[i].message_id == message_id), None)
        receipt = view.receipts.receipt(message_id, view.agent.holds) \
            if view.reading_ready else None
        state = receipt.label() if receipt is not None else "not in the log read so far"
        if index is None:
            host.note(f"#{short_id(message_id)} is not in the transcript ({state}).")
            return False
        host.transcript.reveal(index)
        host.transcript.focus()
        host.note(f"#{short_id(message_id)}: where it entered the model's context ({state}).")
        return True
