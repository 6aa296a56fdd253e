"""Selection and titles: the one place the selected agent changes, the panes that follow
it, the bridge's flushes shown on them, and the titles over the panes.

Titles are plain text (agent names are never markup) and set only on change: Textual
repaints the whole widget on every assignment.
"""

from __future__ import annotations

import time
from typing import Protocol

from textual.content import Content
from textual.widget import Widget

from dsh_tui.harness.capabilities import Capabilities, capabilities_of

from ..state.bridge import FlushBatch
from ..state.hold_view import title_state
from ..state.text import visible_label
from ..state.titles import TranscriptTitle
from ..state.transcript import token_figures, waiting_seconds
from ..state.workspace import record_selected
from ..widgets.breakpoint_panel import BreakpointPanel
from .agents import offers_routes
from .breakpoints import BreakpointActions
from .drafts import DraftKeeper
from .editing import Editing
from .seams import Panes, Screenside, World

WAITING_SHOWN_AFTER_S = 2
"""A model that has sent nothing for this long is shown as waited on, with the count."""


def set_title(widget: Widget, title: str, attr: str = "border_title") -> None:
    """Set a border title as plain text (agent names are never markup), only on change."""
    cache = f"_dsh_{attr}"
    if getattr(widget, cache, None) == title:
        return
    setattr(widget, cache, title)
    setattr(widget, attr, Content(visible_label(title)))


class Host(World, Panes, Screenside, Protocol):
    """What selection needs of the screen (it is the screen's `Selection` seam)."""

    def refresh_bindings(self) -> None: ...


class SelectionKeeper:
    """Owns `selected_id`; every pane follows it."""

    def __init__(self, host: Host, breakpoints: BreakpointActions, editing: Editing,
                 drafts: DraftKeeper) -> None:
        self.host = host
        self.breakpoints = breakpoints
        self.editing = editing
        self.drafts = drafts
        self.selected_id: str | None = None
        self._greyed = True
        """Whether the footer was last drawn with no agent selected (see `check_action`)."""
        self._caps: Capabilities | None = None
        """The selected agent's capabilities when the footer was last drawn."""

    def select(self, agent_id: str | None, *, focus_tree: bool = False,
               from_tree: bool = False) -> None:
        """The one place the selected agent changes: the transcript, inbox, composer (its
        title and the agent's draft), event log and tree cursor all follow `selected_id`. `from_tree` is the tree
        reporting the person's cursor move (the cursor is already there)."""
        host = self.host
        views = host.bridge.views
        if agent_id is not None and agent_id not in views:
            return
        caps = capabilities_of(views[agent_id].agent) if agent_id is not None else None
        if (agent_id is None) != self._greyed or caps != self._caps:
            self._greyed = agent_id is None
            self._caps = caps  # an agent that cannot do everything greys out other keys
            host.refresh_bindings()  # `check_action` answers differently now
        if agent_id != self.selected_id:
            self.drafts.switched(self.selected_id, agent_id)  # the text stays with its agent
            self.selected_id = agent_id
            record_selected(host.ctx, agent_id)
            view = views.get(agent_id) if agent_id else None
            host.transcript.show(view)
            if agent_id is not None:
                host.bridge.want_reading(agent_id)  # the inbox's receipts (read in slices)
            host.inbox.show(view)
            host.event_log.show_agent(agent_id)
            self.breakpoints.sync_panel()
            self.update_titles()
        if not from_tree:
            host.agent_tree.select_agent(agent_id)
        if focus_tree:
            host.agent_tree.focus()

    async def adopt(self, agent_id: str) -> None:
        """Select a just-created agent as soon as the bridge has shown it."""
        if agent_id not in self.host.agent_tree.nodes:
            self.host.bridge.flush()
        self.select(agent_id)

    def apply_flush(self, batch: FlushBatch) -> None:
        """Show one batch of changes: one render per widget, whatever the batch holds."""
        host = self.host
        views = host.bridge.views
        tree = host.agent_tree
        if batch.structure:
            neighbour = self._neighbour() if self.selected_id not in views else None
            tree.sync_structure(host.ctx.agents, views)
            tree.refresh_rows(views)
            if self.selected_id not in views or self.selected_id not in tree.nodes:
                self._select_fallback(neighbour)
            else:
                tree.select_agent(self.selected_id)  # rows moved: the cursor stays on it
        elif batch.agents:
            tree.refresh_rows(views, batch.agents)
        selected = self.selected_id
        if selected is not None:
            host.bridge.want_reading(selected)  # (again after `view` paged its log)
            if selected in batch.transcripts:
                host.transcript.request_sync()
            if selected in batch.inboxes or selected in batch.agents:
                host.inbox.sync()
            if selected in batch.agents or selected in batch.transcripts:
                self.update_titles()
        if host.event_log.display and batch.log_to > batch.log_from:
            host.event_log.append_new()
        self.editing.check()

    def _neighbour(self) -> str | None:
        """Where the cursor goes if the selected agent has gone: the nearest row above it
        whose agent is still live (the row above, its owner for a first child), else the
        nearest below (the row taking its place at the top). Read before the tree drops
        the rows; the live agents are the bridge's views, already updated."""
        tree = self.host.agent_tree
        views = self.host.bridge.views
        node = tree.nodes.get(self.selected_id or "")
        if node is None:
            return None
        last = tree.last_line  # (rebuilds the lines, so `node.line` is current)
        line = node.line
        if line < 0:
            return None
        for other in (*range(line - 1, -1, -1), *range(line + 1, last + 1)):
            row = tree.get_node_at_line(other)
            if row is not None and row.data in views:
                return row.data
        return None

    def _select_fallback(self, neighbour: str | None = None) -> None:
        """The selected agent went away: select its neighbour (`_neighbour`), else the
        first root."""
        host = self.host
        current = self.selected_id
        if current is not None and current in host.agent_tree.nodes:
            return
        self.selected_id = None
        if neighbour is not None and neighbour in host.agent_tree.nodes \
                and neighbour in host.bridge.views:
            self.select(neighbour)
            return
        roots = [a for a in host.ctx.agents.roots() if a.id in host.bridge.views]
        self.select(roots[0].id if roots else None)

    def update_titles(self) -> None:
        """The titles over the transcript, the inbox and the composer, for the selection."""
        host = self.host
        view = host.bridge.views.get(self.selected_id) if self.selected_id else None
        if view is None:
            set_title(host.transcript, "Transcript")
            set_title(host.inbox, "Inbox")
            set_title(host.composer, "" if host.read_only else
                      f"no agent selected · {host.key_name('new_agent')} creates one")
            return
        agent = view.agent
        model = view.transcript
        status = agent.status
        route = f" ({view.route_label})" if offers_routes(host.config) and view.route_label \
            else ""
        pause = self.breakpoints.paused(view.id)
        inbox = agent.inbox
        state: tuple[str, ...] = ()
        waited = None
        if host.read_only:
            state = ("read-only",)
        elif pause is not None:
            state = (BreakpointPanel.summary(pause), f"◆ paused · t{pause.turn} s{pause.step}",
                     "◆ paused")
        elif status == "running":
            state = (f"running · turn {model.turn} step {model.step}",
                     f"running · t{model.turn} s{model.step}", "running")
            edit = title_state(agent.holds, view.waiting_on) if agent.holds else ""
            if edit:  # the agent waits at a boundary for an item being edited (§3.8)
                state = (f"{state[0]} · {edit}", f"{state[1]} · {edit}", edit)
            seconds = waiting_seconds(model, time.time() * 1000)
            if seconds is not None and seconds >= WAITING_SHOWN_AFTER_S:
                waited = seconds
        title = TranscriptTitle(
            name=view.name, state=state, waited=waited,
            # The inbox pane is folded away (narrow screen or a toggle): its counts stay in
            # sight here, and the key that shows it is named.
            inbox=None if host.inbox.display else (len(inbox.next_step), len(inbox.next_turn)),
            inbox_keys=host.keys_label("toggle_inbox"),
            figures=token_figures(model))
        # Textual's room for a border title: the pane's width less corners and blanks.
        set_title(host.transcript, title.fit(host.transcript.outer_size.width - 6))
        set_title(host.inbox, f"Inbox · {view.name} · {len(inbox.next_step)} step · "
                              f"{len(inbox.next_turn)} turn")
        if host.read_only:
            set_title(host.composer, "read-only")
        else:
            hints = [f"{host.keys_label(a)} {label}" for a, label in (
                ("followup", "follow-up"), ("steer", "steer"), ("inject", "inject"),
                ("newline", "newline"))]
            set_title(host.composer, f"→ {view.name}{route} · " + " · ".join(hints))
