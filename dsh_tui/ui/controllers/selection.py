"""Selection and titles: the one place the selected agent changes, the panes that follow
it, the bridge's flushes shown on them, and the titles over the panes.

Titles are plain text (agent names are never markup) and set only on change: Textual
repaints the whole widget on every assignment.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from textual.content import Content
from textual.widget import Widget

from dsh_tui.harness.capabilities import Capabilities, capabilities_of

from ..state.bridge import FlushBatch
from ..state.hold_view import title_state
from ..state.settle import Settle
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

if TYPE_CHECKING:
    from .fleet import Fleet  # (it imports `set_title` from here)

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

    def fit_panes(self) -> None:
        """The side panes' widths follow the selected agent's inbox (an empty one is
        narrower)."""


class SelectionKeeper:
    """Owns `selected_id`; every pane follows it."""

    def __init__(self, host: Host, breakpoints: BreakpointActions, editing: Editing,
                 drafts: DraftKeeper, fleet: Fleet) -> None:
        self.host = host
        self.breakpoints = breakpoints
        self.editing = editing
        self.drafts = drafts
        self.fleet = fleet
        self.selected_id: str | None = None
        self.settle = Settle(self._after_keys, self._rested,
                             keys_coming=lambda: host.keys_held() > 0)
        """The tree's cursor moves at once; the selection follows when it rests."""
        self._greyed = True
        """Whether the footer was last drawn with no agent selected (see `check_action`)."""
        self._caps: Capabilities | None = None
        """The selected agent's capabilities when the footer was last drawn."""

    def select(self, agent_id: str | None, *, focus_tree: bool = False,
               from_tree: bool = False) -> None:
        """The one place the selected agent changes: the transcript, inbox, composer (its
        title and the agent's draft), event log and tree cursor all follow `selected_id`.
        `from_tree` is the selection catching up with the tree's cursor (the cursor is
        already there)."""
        host = self.host
        views = host.bridge.views
        if agent_id is not None and agent_id not in views:
            return
        if not from_tree:
            self.settle.selected_elsewhere(agent_id)  # a pending rest is dropped
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
            self.fleet.looked_at(agent_id)
            host.fit_panes()
            if agent_id is not None and agent_id not in host.agent_tree.listed:
                host.agent_tree.sync_structure()  # folded or filtered away: listed again
        if from_tree:
            host.agent_tree.show_selected(agent_id)
        else:
            host.agent_tree.select_agent(agent_id)
        if focus_tree:
            host.agent_tree.focus()

    def cursor_moved(self, agent_id: str | None, waited: float = 0.0) -> None:
        """The person moved the tree's cursor: the selection follows once it rests
        (`waited`: how long the key that moved it had waited in the queue)."""
        self.settle.moved(agent_id, waited)

    def keys_done(self) -> None:
        """The app handled every key that had arrived (a burst is over)."""
        self.settle.keys_done()

    def settle_now(self) -> None:
        """A key that acts on the selected agent: select the cursor's agent first."""
        self.settle.flush()

    def _after_keys(self, delay: float, callback: Callable[[], Any]) -> Any:
        """The settle's scheduler: after `delay`, `callback` runs on the tree's own queue,
        behind every key already handed to it (the app forwards a burst's keys to the
        focused tree before it runs this timer), so a rest never falls inside a burst."""
        tree = self.host.agent_tree
        return self.host.schedule(delay, lambda: tree.call_later(callback))

    def _rested(self, agent_id: str) -> None:
        if not self.host.closing:
            self.select(agent_id, from_tree=True)

    async def adopt(self, agent_id: str) -> None:
        """Select a just-created agent as soon as the bridge has shown it."""
        if agent_id not in self.host.agent_tree.listed:
            self.host.bridge.flush()
        self.select(agent_id)

    def apply_flush(self, batch: FlushBatch) -> None:
        """Show one batch of changes: one render per widget, whatever the batch holds."""
        host = self.host
        views = host.bridge.views
        neighbour = self._neighbour() if batch.structure and self.selected_id not in views \
            else None
        changed = batch.agents | batch.transcripts | batch.inboxes
        if batch.structure or changed:
            self.fleet.observe(changed, structure=batch.structure)
        if batch.structure and self.selected_id not in views:
            self._select_fallback(neighbour)
        selected = self.selected_id
        if selected is not None:
            host.bridge.want_reading(selected)  # (again after `view` paged its log)
            if selected in batch.transcripts:
                host.transcript.request_sync()
            if selected in batch.inboxes or selected in batch.agents:
                host.inbox.sync()
                host.fit_panes()
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
        line = tree.listed.get(self.selected_id or "")
        if line is None:
            return None
        for other in (*range(line - 1, -1, -1), *range(line + 1, len(tree.lines))):
            agent_id = tree.lines[other].agent_id
            if agent_id in views:
                return agent_id
        return None

    def _select_fallback(self, neighbour: str | None = None) -> None:
        """The selected agent went away: select its neighbour (`_neighbour`), else the
        first root."""
        host = self.host
        current = self.selected_id
        if current is not None and current in host.bridge.views:
            return
        self.selected_id = None
        if neighbour is not None and neighbour in host.bridge.views:
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
