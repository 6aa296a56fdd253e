"""Breakpoints: arm one on an agent, show its pause in the panel under the transcript, and
continue, skip or disarm it (from the panel or f8); editing the step's message goes
through the one edit path (`editing.py`).

A pause is reported from the agent's pre-step; the panel is changed on the screen's
queue (`call_later`), and only the selected agent's panel shows it.
"""

from __future__ import annotations

from typing import Protocol

from textual.css.query import NoMatches

from dsh_tui.harness import Agent

from ..state.breakpoints import CONTINUE, SKIP, Pause
from ..state.lanes import lane_of
from ..state.workspace import record_breakpoint
from ..widgets.breakpoint_panel import DISARM
from .editing import Editing
from .seams import Panes, Screenside, Selection, World


class Host(World, Panes, Selection, Screenside, Protocol):
    """What breakpoints need of the screen."""


class BreakpointActions:
    """Arming, the pause panel, and the decisions on a pause."""

    def __init__(self, host: Host, editing: Editing) -> None:
        self.host = host
        self.editing = editing

    def toggle(self) -> None:
        host = self.host
        agent = host.writable_agent()
        breakpoints = host.breakpoints
        if agent is None or breakpoints is None:
            return
        name = host.display_name(agent.id)
        armed = breakpoints.toggle(agent.id)
        record_breakpoint(host.ctx, agent.id, armed)
        if armed:
            host.say(f"Breakpoint set: {name} stops before each step and shows what it will "
                     f"send ({host.keys_label('toggle_breakpoint')} again removes it).")
        else:
            host.say(f"Breakpoint removed from {name}.")
        host.agent_tree.refresh_rows(host.bridge.views, {agent.id})

    def reached(self, pause: Pause) -> None:
        """From the agent's pre-step: record nothing more, schedule the panel."""
        self.host.call_later(self._show, pause)

    def ended(self, pause: Pause) -> None:
        self.host.call_later(self._close, pause)

    def paused(self, agent_id: str | None) -> Pause | None:
        """The open pause of `agent_id`, if it is stopped at its breakpoint."""
        breakpoints = self.host.breakpoints
        if agent_id is None or breakpoints is None:
            return None
        pause = breakpoints.paused.get(agent_id)
        return pause if pause is not None and pause.open else None

    def _show(self, pause: Pause) -> None:
        """The agent's own panel shows the pause; any other agent's screen is left alone."""
        host = self.host
        if not pause.open or host.closing:
            return
        agent_id = pause.agent.id
        host.agent_tree.refresh_rows(host.bridge.views, {agent_id})
        if agent_id == host.selected_id:
            self.sync_panel()
            host.update_titles()
        else:
            host.say(f"{host.display_name(agent_id)} is paused at its breakpoint: select it "
                     "to see and edit the step it will send.", timeout=6)

    def _close(self, pause: Pause) -> None:
        """The pause ended (decided here, or a cancel or a disposal): take the panel away."""
        host = self.host
        agent_id = pause.agent.id
        try:
            host.agent_tree.refresh_rows(host.bridge.views, {agent_id})
            if agent_id == host.selected_id:
                self.sync_panel()
                host.update_titles()
        except NoMatches:
            return
        if pause.decided.done() and pause.decided.result() not in (CONTINUE, SKIP) \
                and not host.closing:
            host.say(f"{host.display_name(agent_id)} was stopped while at its breakpoint.",
                     "warning")

    def sync_panel(self) -> None:
        """The panel shows the selected agent's pause, or nothing."""
        pause = self.paused(self.host.selected_id)
        name = self.host.display_name(pause.agent.id) if pause is not None else ""
        self.host.breakpoint_panel.show(pause, name)

    def decide(self, pause: Pause, decision: str) -> None:
        """Continue, skip or disarm-and-continue an open pause."""
        host = self.host
        if not pause.open:
            return
        agent_id = pause.agent.id
        if decision == DISARM and host.breakpoints is not None:
            host.breakpoints.disarm(agent_id)
            record_breakpoint(host.ctx, agent_id, False)
        pause.resolve(SKIP if decision == SKIP else CONTINUE)
        name = host.display_name(agent_id)
        if decision == SKIP:
            host.say(f"Skipped the step of {name}: the turn ends as blocked; its messages are "
                     "offered back in the inbox.", timeout=4)
        elif decision == DISARM:
            host.say(f"{name} continues; breakpoint removed.", timeout=3)
        host.agent_tree.refresh_rows(host.bridge.views, {agent_id})
        if host.focused is not None and host.breakpoint_panel in host.focused.ancestors:
            host.composer.focus()

    def continue_selected(self) -> None:
        """Continue the selected agent's paused step (never another agent's)."""
        pause = self.paused(self.host.selected_id)
        if pause is None:
            self.host.say("The selected agent is not paused at a breakpoint.")
            return
        self.decide(pause, CONTINUE)

    def edit(self, pause: Pause, message_id: str) -> None:
        """Edit one message of the step's batch (the panel's enter)."""
        message = next((m for m in pause.batch if m.id == message_id), None)
        if message is None or not pause.open:
            return
        agent: Agent = pause.agent
        focused = self.host.focused

        def save(text: str) -> bool:
            if not pause.edit(message.id, text):
                return False
            self.sync_panel()
            return True

        def refocus() -> None:
            if focused is not None and focused.is_attached and focused.display:
                focused.focus()

        self.editing.edit(agent, message, lane_of(message.source, None), save,
                          what="Edit the message this step will send", refocus=refocus,
                          saved="Saved: the step will send your edited text (same id).",
                          saved_timeout=3)
