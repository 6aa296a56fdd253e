"""The inbox timeline (f5) and the links between it and the transcript, both ways.

From an entry of the timeline to the transcript: by the event's seq, through the
transcript's `reveal_seq` (the agent's transcript model knows which item each event
made), so a message lands on its own `user/message`, where it entered the model's
context, however far back. From a sent message in the transcript (a click on its
receipt, or enter) to the timeline: opened filtered to that message, the cursor on the
entry where it was sent.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from ..screens.timeline import TimelineScreen
from ..state.text import short_id
from ..state.timeline import Jump, Timeline
from .seams import Notes, Panes, Screenside, Selection, World


class Host(World, Notes, Panes, Selection, Screenside, Protocol):
    """What the timeline needs of the screen."""


class TimelineActions:
    """Opens the timeline screen; shows an entry's place in the transcript."""

    def __init__(self, host: Host) -> None:
        self.host = host

    def open(self, message_id: str | None = None, at_seq: int | None = None) -> None:
        """The selected agent's timeline (filtered to `message_id` when given, the cursor
        on the entry at `at_seq`)."""
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
                                current=current, progress=progress, at_seq=at_seq)

        def done(jump: Jump | None) -> None:
            if jump is not None:
                self.show_in_transcript(agent_id, jump)

        host.ask(screen, done)

    def history_of(self, message_id: str | None, seq: int | None = None) -> None:
        """A sent message's history (from the transcript): the timeline filtered to it,
        the cursor where it was sent (at `seq`, else its first sending)."""
        host = self.host
        view = host.selected_view
        if view is None:
            return
        if message_id is None:
            host.note("No sent message here: click a message's receipt, or mark one (a "
                      "search) and press enter.")
            return
        if seq is None and view.reading_ready:
            seq = view.timeline.entered_at(message_id)
        self.open(message_id, at_seq=seq)

    def show_in_transcript(self, agent_id: str, jump: Jump) -> bool:
        """Select the agent and reveal the transcript place of `jump`: a message's own
        item where it entered the model's context, else the moment the entry happened.
        False (saying why) when the transcript has no such place."""
        host = self.host
        view = host.bridge.views.get(agent_id)
        if view is None:
            return False
        host.select_agent(agent_id)
        name = f"#{short_id(jump.message_id)}" if jump.message_id else f"seq {jump.seq}"
        receipt = view.receipts.receipt(jump.message_id, view.agent.holds) \
            if view.reading_ready and jump.message_id else None
        state = f" ({receipt.label()})" if receipt is not None else ""
        index = host.transcript.reveal_seq(jump.seq, exact=jump.entered)
        if index is None:
            host.note(f"{name} is not in the transcript{state}: not in the part of the log "
                      "loaded." if jump.entered else f"{name}: nothing in the transcript "
                      "after this moment yet.")
            return False
        host.transcript.focus()
        if jump.entered:
            host.note(f"{name}: where it entered the model's context{state} · enter: its "
                      "history.")
        elif jump.message_id is not None:
            host.note(f"{name} never entered the model's context{state}: the transcript "
                      "when this happened.")
        else:
            host.note(f"seq {jump.seq}: the transcript at this moment.")
        return True
