"""MainScreen: the agent tree, transcript, inbox and composer, and every action on them.

The screen reads only the registry, the agents, their inboxes, live `agent/*` events and
session logs (through the app's bridge), and acts only through the public Agent, Inbox
and registry calls; the inbox rules themselves are plain functions in
`dsh_tui.ui.state.inbox_rules`. Actions are implemented once, here, under their pinned
names: the panes' key bindings name them as `screen.<action>` and the command palette
runs them on this screen.
"""

from __future__ import annotations

import asyncio
import time
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, cast

from textual import events, getters, work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.css.query import NoMatches
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.widget import Widget

from dsh_tui.harness import Agent, Context, UserMessage, user_message
from dsh_tui.harness.names import rename, suggest_numbered, take_name

from ..bindings import bind, keys_for
from ..keys import key_name
from ..state.agent_view import AgentView
from ..state.breakpoints import CONTINUE, SKIP, Breakpoints, Pause
from ..state.bridge import Bridge, FlushBatch
from ..state.config import UiConfig
from ..state.inbox_rules import (
    deliver_kept,
    move_destination,
    pending_count,
    put_back,
    refile,
    undo,
    undo_choice,
)
from ..state.lanes import lane_of, source_for
from ..state.search import SearchState
from ..state.text import visible_label
from ..state.titles import TranscriptTitle
from ..state.transcript import token_figures, waiting_seconds
from ..state.workspace import (
    initial_breakpoints,
    initial_selection,
    open_target,
    record_breakpoint,
    record_dropped,
    record_root,
    record_selected,
    root_meta,
    with_live,
    workspace_cwd,
)
from ..state.world import create_agent, spawn_child
from ..widgets.agent_tree import AgentTree
from ..widgets.breakpoint_panel import DISARM, BreakpointPanel
from ..widgets.composer import Composer
from ..widgets.event_log import EventLog, EventLogRoom
from ..widgets.inbox import InboxView
from ..widgets.key_bar import KeyBar
from ..widgets.save_state import SaveState
from ..widgets.search_bar import SearchBar
from ..widgets.transcript import Transcript
from .confirm import ConfirmScreen
from .edit import EditScreen
from .name import NameScreen
from .sessions import Chosen, SessionsScreen, target_of

if TYPE_CHECKING:
    from ..app import DshApp

READ_ONLY_NOTICE = "Read-only view of a session log: sending and editing are disabled."
SENDERS = {"follow-up": "followup", "steer": "steer", "inject": "inject"}
LANE_PHRASE = {"follow-up": "a follow-up", "steer": "a steer", "inject": "injected context"}

WAITING_SHOWN_AFTER_S = 2
"""A model that has sent nothing for this long is shown as waited on, with the count."""


def set_title(widget: Any, title: str, attr: str = "border_title") -> None:
    """Set a border title as plain text (agent names are never markup), only on change:
    Textual repaints the whole widget on every assignment."""
    cache = f"_dsh_{attr}"
    if getattr(widget, cache, None) == title:
        return
    setattr(widget, cache, title)
    setattr(widget, attr, Content(visible_label(title)))


class CenterColumn(Vertical):
    """The transcript and the breakpoint panel. Its size changes whenever the terminal is
    resized or a side pane is shown or folded: the screen then re-reads which panes show."""

    def on_resize(self) -> None:
        screen = self.screen
        if isinstance(screen, MainScreen):
            screen.call_after_refresh(screen.after_resize)


class MainScreen(Screen[None]):
    """The app's default screen: the panes over the selected agent, and their actions."""

    CSS_PATH = Path(__file__).with_name("main.tcss")
    """Also in DshApp.CSS_PATH: Textual does not load a default screen's own CSS_PATH."""

    BINDINGS: ClassVar[list[BindingType]] = [
        bind("cancel_keep_inbox"),
        bind("cancel_clear"),
        bind("new_agent"),
        # priority: the composer (a TextArea) binds f6 to select-line itself, and it has the
        # focus nearly always. A dialog over this screen cuts it out of the binding chain, so
        # the dialog keeps f6 (priority bindings of the app would reach past it).
        bind("rename_agent", show=False, priority=True),
        bind("toggle_event_log"),
        bind("sessions", show=False),
        bind("search", show=False),
        bind("toggle_agents", show=False),
        bind("toggle_inbox", show=False),
        bind("zoom_transcript", show=False),
        bind("breakpoint_continue", show=False),
    ]
    """The screen's own keys (the panes add theirs; help, theme, quit and ctrl+c are the
    app's, which stay live over dialogs too)."""

    READ_ONLY_HIDDEN = frozenset({"followup", "steer", "inject", "newline", "new_agent",
                                  "cancel_keep_inbox", "cancel_clear", "spawn_child", "rename_agent",
                                  "dispose_agent", "toggle_breakpoint", "edit_item",
                                  "remove_item", "move_item_up", "move_item_down",
                                  "move_item_lane", "undo_discard", "clear_inbox"})
    """Actions `view` (a read-only log) neither offers in the footer nor runs."""

    NEEDS_AGENT = frozenset({"followup", "steer", "inject", "cancel_keep_inbox", "cancel_clear",
                             "spawn_child", "rename_agent", "dispose_agent", "toggle_breakpoint",
                             "breakpoint_continue", "edit_item", "remove_item", "move_item_up",
                             "move_item_down", "move_item_lane", "undo_discard", "clear_inbox",
                             "restore_unsent"})
    """Actions on the selected agent: greyed out in the footer (and not run) while no agent
    is selected."""

    agent_tree = getters.query_one("#agent-tree", AgentTree)
    transcript = getters.query_one("#transcript", Transcript)
    inbox = getters.query_one("#inbox", InboxView)
    composer = getters.query_one("#composer", Composer)
    event_log = getters.query_one("#event-log", EventLog)
    breakpoint_panel = getters.query_one("#breakpoint-panel", BreakpointPanel)
    search_bar = getters.query_one("#search", SearchBar)

    def __init__(self) -> None:
        super().__init__()
        self.selected_id: str | None = None
        self._greyed = True
        """Whether the footer was last drawn with no agent selected (see `check_action`)."""
        self._edit: tuple[EditScreen, str, str] | None = None
        self.search = SearchState()
        self._children = 0

    # -- the world this screen shows belongs to the app ----------------------------------------

    @property
    def dsh(self) -> DshApp:
        return cast("DshApp", self.app)

    @property
    def ctx(self) -> Context:
        return self.dsh.ctx

    @property
    def bridge(self) -> Bridge:
        return self.dsh.bridge

    @property
    def config(self) -> UiConfig:
        return self.dsh.config

    @property
    def read_only(self) -> bool:
        return self.dsh.read_only

    @property
    def breakpoints(self) -> Breakpoints | None:
        return self.dsh.breakpoints

    @property
    def closing(self) -> bool:
        return self.dsh.closing

    def say(self, message: str, severity: SeverityLevel = "information",
            timeout: float = 5) -> None:
        """A notification whose text is never parsed as markup (see `DshApp.say`)."""
        self.dsh.say(message, severity, timeout)

    # -- layout --------------------------------------------------------------------------------

    def start(self) -> None:
        """Called by the app once the panes are mounted and the keymap is set: titles,
        the bridge's listeners and first flush, the composer's hint and focus."""
        set_title(self.agent_tree, "Agents")
        set_title(self.transcript, "Transcript")
        set_title(self.inbox, "Inbox")
        self.bridge.start()
        self.bridge.flush()
        if not self.read_only:  # the keymap is set: the keys it names are the ones that work
            self.composer.placeholder = (
                f"Message the selected agent — {key_name(self.app, 'followup')} follow-up · "
                f"{key_name(self.app, 'steer')} steer · {key_name(self.app, 'inject')} inject")
        self.composer.focus()

    def restore_workspace(self) -> None:
        """A reopened workspace comes back as it was left: its selection and breakpoints."""
        assert self.breakpoints is not None
        armed = {agent_id for agent_id in initial_breakpoints(self.ctx)
                 if self.ctx.agents.get(agent_id) is not None}
        for agent_id in armed:
            if not self.breakpoints.is_armed(agent_id):
                self.breakpoints.toggle(agent_id)
        if armed:
            self.agent_tree.refresh_rows(self.bridge.views, armed)
        wanted = initial_selection(self.ctx)
        if wanted is not None and wanted in self.bridge.views:
            self.select_agent(wanted)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """In `view` (read-only) the footer offers nothing that sends or changes agents
        (False: hidden); with no agent selected, what acts on one is greyed out (None:
        shown disabled). Textual runs no action this refuses, from a key or the palette;
        `select_agent` refreshes the footer when the answer changes."""
        if self.read_only and action in self.READ_ONLY_HIDDEN:
            return False
        if action in self.NEEDS_AGENT and self.selected_agent is None:
            return None
        return True

    def panes(self) -> ComposeResult:
        """The panes. The app composes them into this screen (`DshApp.compose`), so they
        are mounted before the app's Mount, as a key typed at start or a test's first
        query expects; a screen's own compose would run later, on the screen's task."""
        with Horizontal(id="main"):
            yield AgentTree(id="agent-tree")
            with CenterColumn(id="center"):
                yield Transcript(id="transcript")
                yield BreakpointPanel(id="breakpoint-panel")
                yield EventLogRoom(id="event-log-room")
            yield InboxView(id="inbox")
            yield EventLog(self.bridge, id="event-log")  # (drawn over the panes: main.tcss)
        yield SearchBar(id="search")
        yield Composer(id="composer", placeholder=READ_ONLY_NOTICE if self.read_only else "",
                       read_only=self.read_only)
        yield SaveState(self.ctx.registry.persistence,
                        id="save-state")
        yield KeyBar()

    # -- typing is safe -------------------------------------------------------------------------

    def type_into_composer(self, key: str, character: str | None) -> None:
        """A printable key pressed in a pane: the composer takes the focus and the key
        (see `panekeys`), so prose typed into the wrong pane is a draft, never a command."""
        composer = self.composer
        if self.app.screen is not self:
            return
        self.set_focus(composer)  # now, not later: the next keys must follow it
        composer._forward_event(events.Key(key, character))

    def apply_flush(self, batch: FlushBatch) -> None:
        """Show one batch of changes: one render per widget, whatever the batch holds."""
        views = self.bridge.views
        tree = self.agent_tree
        if batch.structure:
            node = tree.nodes.get(self.selected_id or "")
            owner = node.parent.data if node is not None and node.parent is not None else None
            tree.sync_structure(self.ctx.agents, views)
            tree.refresh_rows(views)
            if self.selected_id not in views or self.selected_id not in tree.nodes:
                self._select_fallback(owner)
            else:
                tree.select_agent(self.selected_id)  # rows moved: the cursor stays on it
        elif batch.agents:
            tree.refresh_rows(views, batch.agents)
        selected = self.selected_id
        if selected is not None:
            if selected in batch.transcripts:
                self.transcript.request_sync()
            if selected in batch.inboxes or selected in batch.agents:
                self.inbox.sync()
            if selected in batch.agents or selected in batch.transcripts:
                self.update_titles()
        if self.event_log.display and batch.log_to > batch.log_from:
            self.event_log.append_new()
        self._check_edit()

    def _select_fallback(self, owner: str | None = None) -> None:
        """The selected agent went away: select its owner, else the first root."""
        current = self.selected_id
        if current is not None and current in self.agent_tree.nodes:
            return
        self.selected_id = None
        if owner is not None and owner in self.agent_tree.nodes and owner in self.bridge.views:
            self.select_agent(owner)
            return
        roots = [a for a in self.ctx.agents.roots() if a.id in self.bridge.views]
        self.select_agent(roots[0].id if roots else None)

    # -- selection -----------------------------------------------------------------------------

    @property
    def selected_view(self) -> AgentView | None:
        return self.bridge.views.get(self.selected_id) if self.selected_id else None

    @property
    def selected_agent(self) -> Any:
        view = self.selected_view
        return view.agent if view is not None else None

    def select_agent(self, agent_id: str | None, *, focus_tree: bool = False,
                     from_tree: bool = False) -> None:
        """The one place the selected agent changes: the transcript, inbox, composer title,
        event log and tree cursor all follow `selected_id`. `from_tree` is the tree
        reporting the person's cursor move (the cursor is already there)."""
        if agent_id is not None and agent_id not in self.bridge.views:
            return
        if (agent_id is None) != self._greyed:
            self._greyed = agent_id is None
            self.refresh_bindings()  # `check_action` answers differently now
        if agent_id != self.selected_id:
            self.selected_id = agent_id
            record_selected(self.ctx, agent_id)
            view = self.selected_view
            self.transcript.show(view)
            self.inbox.show(view)
            self.event_log.show_agent(agent_id)
            self._sync_pause_panel()
            self.update_titles()
        if not from_tree:
            self.agent_tree.select_agent(agent_id)
        if focus_tree:
            self.agent_tree.focus()

    def on_agent_tree_selected(self, event: AgentTree.Selected) -> None:
        self.select_agent(event.agent_id)
        if event.chosen and not self.read_only:
            self.composer.focus()

    def update_titles(self) -> None:
        view = self.selected_view
        if view is None:
            set_title(self.transcript, "Transcript")
            set_title(self.inbox, "Inbox")
            set_title(self.composer, "" if self.read_only else
                      f"no agent selected · {key_name(self.app, 'new_agent')} creates one")
            return
        agent = view.agent
        model = view.transcript
        status = agent.status
        route = f" ({view.route_label})" if self.offers_routes() and view.route_label else ""
        pause = self._paused(view.id)
        inbox = agent.inbox
        state: tuple[str, ...] = ()
        waited = None
        if self.read_only:
            state = ("read-only",)
        elif pause is not None:
            state = (BreakpointPanel.summary(pause), f"◆ paused · t{pause.turn} s{pause.step}",
                     "◆ paused")
        elif status == "running":
            state = (f"running · turn {model.turn} step {model.step}",
                     f"running · t{model.turn} s{model.step}", "running")
            seconds = waiting_seconds(model, time.time() * 1000)
            if seconds is not None and seconds >= WAITING_SHOWN_AFTER_S:
                waited = seconds
        title = TranscriptTitle(
            name=view.name, state=state, waited=waited,
            # The inbox pane is folded away (narrow screen or a toggle): its counts stay in
            # sight here, and the key that shows it is named.
            inbox=None if self.inbox.display else (len(inbox.next_step), len(inbox.next_turn)),
            inbox_keys=" / ".join(keys_for(self.app, "toggle_inbox")),
            figures=token_figures(model))
        # Textual's room for a border title: the pane's width less corners and blanks.
        set_title(self.transcript, title.fit(self.transcript.outer_size.width - 6))
        set_title(self.inbox, f"Inbox · {view.name} · {len(inbox.next_step)} step · "
                              f"{len(inbox.next_turn)} turn")
        if self.read_only:
            set_title(self.composer, "read-only")
        else:
            hints = [f"{' / '.join(keys_for(self.app, a))} {label}" for a, label in (
                ("followup", "follow-up"), ("steer", "steer"), ("inject", "inject"),
                ("newline", "newline"))]
            set_title(self.composer, f"→ {view.name}{route} · " + " · ".join(hints))

    # -- helpers -------------------------------------------------------------------------------

    def _writable_agent(self) -> Any:
        """The selected agent, or None when nothing may change it. `check_action` already
        keeps these actions from running then (their keys are hidden or greyed out); this
        guards a direct call."""
        return None if self.read_only else self.selected_agent

    def _undo_key(self) -> str:
        return " / ".join(keys_for(self.app, "undo_discard")) or "undo"

    def display_name(self, agent_id: str) -> str:
        view = self.bridge.views.get(agent_id)
        return view.name if view is not None else agent_id

    def _send(self, lane: str) -> None:
        agent = self._writable_agent()
        if agent is None:
            return
        composer = self.composer
        text = composer.text
        if not text.strip():
            if lane == "follow-up" and agent.status != "running" and agent.inbox.has_pending:
                self._deliver_kept(agent)
            else:
                self.say("Nothing to send: type a message first.")
            return
        self._send_text(agent, text, lane)
        composer.remember(text)
        composer.clear()

    def _send_text(self, agent: Any, text: str, lane: str) -> bool:
        message = user_message(text, source=source_for(lane))
        try:
            getattr(agent, SENDERS[lane])(message)
        except Exception as error:
            self.say(f"Could not send to {self.display_name(agent.id)}: {error}", "error")
            return False
        return True

    def _deliver_kept(self, agent: Agent) -> None:
        """Wake an idle agent on the work it kept after a stop, in the same order."""
        try:
            count = deliver_kept(agent)
        except Exception as error:
            self.say(f"Could not deliver the kept inbox: {error}", "error")
            return
        self.say(f"Delivering {count} kept item{'s' if count != 1 else ''} to "
                 f"{self.display_name(agent.id)}.")

    def action_followup(self) -> None:
        self._send("follow-up")

    def action_steer(self) -> None:
        self._send("steer")

    def action_inject(self) -> None:
        self._send("inject")

    def action_delete_word(self) -> None:
        self.composer.action_delete_word_left()
        self.composer.focus()

    def action_newline(self) -> None:
        if self.read_only:
            self.say(READ_ONLY_NOTICE, "warning")
            return
        self.composer.action_newline()
        self.composer.focus()

    # -- cancelling ----------------------------------------------------------------------------

    def action_cancel_keep_inbox(self) -> None:
        agent = self._writable_agent()
        if agent is None:
            return
        name = self.display_name(agent.id)
        if agent.status != "running":
            self.say(f"{name} is not running.")
            return
        agent.cancel(None, keep_inbox=True)
        kept = pending_count(agent.inbox)
        if kept:
            self.say(f"Stopped {name}. {kept} inbox item{'s' if kept != 1 else ''} kept "
                     "(paused): enter on an empty composer delivers them.")
        else:
            self.say(f"Stopped {name}.")

    def action_cancel_clear(self) -> None:
        agent = self._writable_agent()
        if agent is None:
            return
        name = self.display_name(agent.id)
        pending = pending_count(agent.inbox)
        running = agent.status == "running"
        if not running and not pending:
            self.say(f"{name} is idle with an empty inbox: nothing to stop or clear.")
            return

        def answer(yes: bool | None) -> None:
            if not yes:
                return
            agent.cancel(None, keep_inbox=False)
            self.say(f"Stopped {name} and discarded {pending} inbox item"
                     f"{'s' if pending != 1 else ''} ({self._undo_key()} in the inbox undoes).")

        what = "Stop" if running else "Clear the inbox of"
        self.app.push_screen(ConfirmScreen(
            f"{what} {name} and discard {pending} pending item{'s' if pending != 1 else ''}?",
            "The running turn ends as aborted. Discarded items can be restored with undo "
            "for a few seconds.", yes="Stop and clear"), answer)

    # -- inbox operations ----------------------------------------------------------------------

    def _inbox_item(self) -> tuple[Any, Any] | None:
        """(agent, row) of the highlighted inbox item, or None after saying why."""
        agent = self._writable_agent()
        if agent is None:
            return None
        row = self.inbox.current_row()
        if row is None or row.kind != "item":
            self.say("Highlight a pending item in the inbox first (it may just have been "
                     "claimed).")
            return None
        return agent, row

    def action_edit_item(self) -> None:
        found = self._inbox_item()
        if found is None:
            return
        agent, row = found
        message: UserMessage = row.message

        def save(text: str) -> bool:
            return bool(agent.inbox.replace(message.id, message.with_text(text)))

        def send(text: str, lane: str) -> None:
            if self._send_text(agent, text, lane):
                self.say(f"Sent your edited text to {self.display_name(agent.id)} as {LANE_PHRASE[lane]}.")

        screen = EditScreen(agent_name=self.display_name(agent.id), message=message, lane=row.lane,
                            on_save=save, on_send=send)
        self._edit = (screen, agent.id, message.id)

        def done(result: str | None) -> None:
            self._edit = None
            if result == "saved":
                self.say("Saved: the queued item keeps its place and id.")
            (self.inbox if self.inbox.display else self.composer).focus()

        self.app.push_screen(screen, done)
        self._check_edit()

    def _check_edit(self) -> None:
        """Tell an open edit dialog when the agent took (or someone removed) its item."""
        if self._edit is None:
            return
        screen, agent_id, message_id = self._edit
        view = self.bridge.views.get(agent_id)
        if view is None:
            screen.mark_claimed()
            return
        if message_id in view.claimed:
            screen.mark_claimed(view.claimed[message_id])
        elif view.agent.inbox.get(message_id) is None:
            screen.mark_claimed()

    def action_restore_unsent(self) -> None:
        """Put what ended turns claimed but never sent back at the head of their lanes:
        the highlighted one's turn when an offered row is highlighted, else all of them."""
        agent = self._writable_agent()
        view = self.selected_view
        if agent is None or view is None:
            return
        offered = view.unsent.unsent
        if not offered:
            self.say("Nothing to put back: every claimed message reached the model.")
            return
        row = self.inbox.highlighted_row()
        if row is not None and row.kind == "unsent":
            offered = [u for u in offered if u.turn == row.unsent.turn]
        done = put_back(agent.inbox, offered)
        for _target, count, error in done.errors:
            self.say(f"Could not put back {count} message{'s' if count != 1 else ''}: {error}",
                     "warning")
        restored = done.count
        if restored:
            self.bridge.mark_inbox(agent.id)
            note = "" if agent.status == "running" else \
                " The agent is idle: enter on an empty composer delivers them."
            self.say(f"Put back {restored} message{'s' if restored != 1 else ''} at the head "
                     f"of {'their lanes' if restored != 1 else 'its lane'}.{note}", timeout=4)

    def action_remove_item(self) -> None:
        row = self.inbox.highlighted_row()
        view = self.selected_view
        if row is not None and row.kind == "unsent" and view is not None and not self.read_only:
            view.unsent.dismiss({row.unsent.id})
            self.bridge.mark_inbox(view.id)
            self.say(f"#{row.unsent.id[:6]} is no longer offered back (it was never sent).",
                     timeout=3)
            return
        found = self._inbox_item()
        if found is None:
            return
        agent, row = found
        if agent.inbox.remove(row.message.id):
            self.say(f"Removed #{row.message.id[:6]} ({self._undo_key()} undoes).", timeout=3)

    def _move(self, delta: int) -> None:
        found = self._inbox_item()
        if found is None:
            return
        agent, row = found
        index = move_destination(agent.inbox, row.target, row.index, delta)
        if index is None:
            self.say("Already at the " + ("top." if delta < 0 else "bottom."), timeout=2)
            return
        self.bridge.suppress_tombstones(row.message.id)
        agent.inbox.move(row.message.id, row.target, index)

    def action_move_item_up(self) -> None:
        self._move(-1)

    def action_move_item_down(self) -> None:
        self._move(1)

    def action_move_item_lane(self) -> None:
        """Re-file the item: follow-up → steer → inject → follow-up (same id)."""
        found = self._inbox_item()
        if found is None:
            return
        agent, row = found
        message: UserMessage = row.message
        self.bridge.suppress_tombstones(message.id)
        lane = refile(agent.inbox, message, row.lane, row.target)
        note = ""
        if agent.status != "running" and lane != "inject":
            note = " The agent is idle: enter on an empty composer delivers the inbox."
        self.say(f"#{message.id[:6]} is now {LANE_PHRASE[lane]}.{note}", timeout=3)

    def action_undo_discard(self) -> None:
        agent = self._writable_agent()
        view = self.selected_view
        if agent is None or view is None:
            return
        row = self.inbox.highlighted_row()
        if row is not None and row.kind == "unsent":
            self.action_restore_unsent()
            return
        highlighted = row.tombstone if row is not None else None
        chosen = undo_choice(view.tombstones, highlighted)
        if not chosen:
            self.say("Nothing to undo.")
            return
        done = undo(agent.inbox, chosen)
        for message_id, _count, error in done.errors:
            self.say(f"Could not restore #{message_id[:6]}: {error}", "warning")
        for tombstone in done.restored:
            view.tombstones.remove(tombstone)
        if done.count:
            self.bridge.mark_inbox(agent.id)
            self.say(f"Restored {done.count} item{'s' if done.count != 1 else ''}.", timeout=3)

    def action_clear_inbox(self) -> None:
        agent = self._writable_agent()
        if agent is None:
            return
        pending = pending_count(agent.inbox)
        if not pending:
            self.say("The inbox is already empty.")
            return

        def answer(yes: bool | None) -> None:
            if yes:
                agent.inbox.clear()
                self.say(f"Cleared {pending} item{'s' if pending != 1 else ''} ({self._undo_key()} undoes).")

        self.app.push_screen(ConfirmScreen(
            f"Clear {pending} pending item{'s' if pending != 1 else ''} of "
            f"{self.display_name(agent.id)}?", "The running turn, if any, continues.", yes="Clear"),
            answer)

    # -- agents --------------------------------------------------------------------------------

    def _route(self) -> tuple[str | None, str | None]:
        if self.config.provider:
            return self.config.provider, self.config.model
        agent = self.selected_agent or next(iter(self.ctx.agents.roots()), None)
        if agent is None:
            return None, None
        return agent.options.provider, agent.options.model

    # -- routes --------------------------------------------------------------------------------

    def offers_routes(self) -> bool:
        """More than one route in this run: the person chooses one per agent, and sees it."""
        return len(self.config.routes) > 1

    def _likely_route(self, agent: Any = None) -> str | None:
        """The route a new agent most likely wants: `agent`'s (the parent, or the selected
        agent), else the run's default."""
        agent = agent or self.selected_agent
        name = getattr(getattr(agent, "options", None), "provider", None)
        return name if name in self.config.routes else self.config.route

    def _choose_route(self, question: str, current: str | None, then: Any) -> None:
        """Ask which route (when there is a choice), then call `then(route or None)`;
        escape calls nothing."""
        if not self.offers_routes():
            then(self.config.routes.get(current or "") or None)
            return
        import os

        from .route import RouteScreen

        missing = {name: key for name, route in self.config.routes.items()
                   if (key := route.missing_key(os.environ))}

        def chosen(name: str | None) -> None:
            if name is not None:
                then(self.config.routes.get(name))

        self.app.push_screen(RouteScreen(question, list(self.config.routes.values()), current,
                                         missing), chosen)

    def action_new_agent(self) -> None:
        if self.read_only:
            self.say(READ_ONLY_NOTICE, "warning")
            return
        suggested = suggest_numbered(self.ctx, "agent", len(self.ctx.agents.roots()) + 1)

        def named(title: str | None) -> None:
            if title:
                self._choose_route(f"Route for {title}", self._likely_route(),
                                   lambda route: self._create_root(title, route))

        self.app.push_screen(NameScreen("Name the new agent", suggested), named)

    @work(group="agents", exit_on_error=False)
    async def _create_root(self, title: str, route: Any = None) -> None:
        provider, model = self._route()
        try:
            handle = await create_agent(self.ctx, provider=provider, model=model, title=title,
                                        options=route.agent_options() if route else None,
                                        meta=root_meta(self.ctx))
        except Exception as error:
            self.say(f"Could not create an agent: {error}", "error")
            return
        take_name(self.ctx, title, handle.agent.id)
        record_root(self.ctx, handle.agent.id)
        await self._adopt(handle.agent.id)
        self.say(f"Created {title}. Type its first message below.", timeout=3)
        self.composer.focus()

    async def _adopt(self, agent_id: str) -> None:
        """Select a just-created agent as soon as the bridge has shown it."""
        if agent_id not in self.agent_tree.nodes:
            self.bridge.flush()
        self.select_agent(agent_id)

    # -- breakpoints ---------------------------------------------------------------------------

    def action_toggle_breakpoint(self) -> None:
        agent = self._writable_agent()
        if agent is None or self.breakpoints is None:
            return
        name = self.display_name(agent.id)
        armed = self.breakpoints.toggle(agent.id)
        record_breakpoint(self.ctx, agent.id, armed)
        if armed:
            self.say(f"Breakpoint set: {name} stops before each step and shows what it will "
                     f"send ({' / '.join(keys_for(self.app, 'toggle_breakpoint'))} again removes it).")
        else:
            self.say(f"Breakpoint removed from {name}.")
        self.agent_tree.refresh_rows(self.bridge.views, {agent.id})

    def pause_reached(self, pause: Pause) -> None:
        """From the agent's pre-step: record nothing more, schedule the panel."""
        self.call_later(self._show_pause, pause)

    def pause_ended(self, pause: Pause) -> None:
        self.call_later(self._close_pause, pause)

    def _paused(self, agent_id: str | None) -> Pause | None:
        if agent_id is None or self.breakpoints is None:
            return None
        pause = self.breakpoints.paused.get(agent_id)
        return pause if pause is not None and pause.open else None

    def _show_pause(self, pause: Pause) -> None:
        """The agent's own panel shows the pause; any other agent's screen is left alone."""
        if not pause.open or self.closing:
            return
        agent_id = pause.agent.id
        self.agent_tree.refresh_rows(self.bridge.views, {agent_id})
        if agent_id == self.selected_id:
            self._sync_pause_panel()
            self.update_titles()
        else:
            self.say(f"{self.display_name(agent_id)} is paused at its breakpoint: select it "
                     "to see and edit the step it will send.", timeout=6)

    def _close_pause(self, pause: Pause) -> None:
        """The pause ended (decided here, or a cancel or a disposal): take the panel away."""
        agent_id = pause.agent.id
        try:
            self.agent_tree.refresh_rows(self.bridge.views, {agent_id})
            if agent_id == self.selected_id:
                self._sync_pause_panel()
                self.update_titles()
        except NoMatches:
            return
        if pause.decided.done() and pause.decided.result() not in (CONTINUE, SKIP) \
                and not self.closing:
            self.say(f"{self.display_name(agent_id)} was stopped while at its breakpoint.",
                     "warning")

    def _sync_pause_panel(self) -> None:
        pause = self._paused(self.selected_id)
        name = self.display_name(pause.agent.id) if pause is not None else ""
        self.breakpoint_panel.show(pause, name)

    def on_breakpoint_panel_decided(self, event: BreakpointPanel.Decided) -> None:
        self._decide(event.pause, event.decision)

    def _decide(self, pause: Pause, decision: str) -> None:
        if not pause.open:
            return
        agent_id = pause.agent.id
        if decision == DISARM and self.breakpoints is not None:
            self.breakpoints.disarm(agent_id)
            record_breakpoint(self.ctx, agent_id, False)
        pause.resolve(SKIP if decision == SKIP else CONTINUE)
        name = self.display_name(agent_id)
        if decision == SKIP:
            self.say(f"Skipped the step of {name}: the turn ends as blocked; its messages are "
                     "offered back in the inbox.", timeout=4)
        elif decision == DISARM:
            self.say(f"{name} continues; breakpoint removed.", timeout=3)
        self.agent_tree.refresh_rows(self.bridge.views, {agent_id})
        if self.focused is not None and self.breakpoint_panel in self.focused.ancestors:
            self.composer.focus()

    def action_breakpoint_continue(self) -> None:
        """Continue the selected agent's paused step (never another agent's)."""
        pause = self._paused(self.selected_id)
        if pause is None:
            self.say("The selected agent is not paused at a breakpoint.")
            return
        self._decide(pause, CONTINUE)

    def on_breakpoint_panel_edit_requested(self, event: BreakpointPanel.EditRequested) -> None:
        pause = event.pause
        message = next((m for m in pause.batch if m.id == event.message_id), None)
        if message is None or not pause.open:
            return
        agent = pause.agent

        def save(text: str) -> bool:
            if not pause.edit(message.id, text):
                return False
            self._sync_pause_panel()
            return True

        def send(text: str, lane: str) -> None:
            if self._send_text(agent, text, lane):
                self.say(f"Sent your edited text to {self.display_name(agent.id)} as {LANE_PHRASE[lane]}.")

        screen = EditScreen(agent_name=self.display_name(agent.id), message=message,
                            lane=lane_of(message.source, None), on_save=save, on_send=send,
                            what="Edit the message this step will send")
        focused = self.focused

        def done(result: str | None) -> None:
            if result == "saved":
                self.say("Saved: the step will send your edited text (same id).", timeout=3)
            if focused is not None and focused.is_attached and focused.display:
                focused.focus()

        self.app.push_screen(screen, done)

    def action_spawn_child(self) -> None:
        agent = self._writable_agent()
        if agent is None:
            return
        suggested = suggest_numbered(self.ctx, f"{self.display_name(agent.id)} › child")

        def named(title: str | None) -> None:
            if title:
                self._choose_route(f"Route for {title}", self._likely_route(agent),
                                   lambda route: self._spawn(agent, title, route))

        self.app.push_screen(NameScreen(f"Name the new child of {self.display_name(agent.id)}",
                                        suggested), named)

    @work(group="agents", exit_on_error=False)
    async def _spawn(self, parent: Any, title: str, route: Any = None) -> None:
        try:
            handle = await spawn_child(parent, title=title,
                                       options=route.agent_options() if route else None)
        except Exception as error:
            self.say(f"Could not spawn a child of {self.display_name(parent.id)}: {error}", "error")
            return
        take_name(self.ctx, title, handle.agent.id)
        await self._adopt(handle.agent.id)
        self.say(f"Spawned {title}, owned by {self.display_name(parent.id)}. Type its task below.",
                 timeout=3)
        self.composer.focus()

    def action_dispose_agent(self) -> None:
        agent = self._writable_agent()
        if agent is None:
            return
        name = self.display_name(agent.id)
        below = self._descendants(agent)

        def answer(yes: bool | None) -> None:
            if yes:
                self._dispose(agent.id, name)

        extra = f" and its {below} sub-agent{'s' if below != 1 else ''}" if below else ""
        self.app.push_screen(ConfirmScreen(
            f"Dispose {name}{extra}?",
            "A running turn is cancelled. Saved sessions stay on disk and can be resumed.",
            yes="Dispose"), answer)

    def _descendants(self, agent: Any) -> int:
        count = 0
        stack = list(self.ctx.agents.children_of(agent))
        while stack:
            child = stack.pop()
            count += 1
            stack.extend(self.ctx.agents.children_of(child))
        return count

    @work(group="agents", exit_on_error=False)
    async def _dispose(self, agent_id: str, name: str) -> None:
        """Through the registry (`ctx.agents.dispose`), whoever created it: this app, the
        CLI, a parent's tool, a resume."""
        done = self.ctx.agents.dispose(agent_id)
        if done is None:
            self.say(f"{name} cannot be disposed: it is no longer live.", "warning")
            return
        try:
            await done
        except Exception as error:
            self.say(f"Disposing {name} failed: {error}", "error")
            return
        record_dropped(self.ctx, agent_id)  # the workspace does not bring it back
        self.say(f"Disposed {name}.", timeout=3)

    # -- panels, screens, theme ----------------------------------------------------------------

    def action_toggle_event_log(self) -> None:
        log = self.event_log
        log.shown = not log.shown
        self.query_one(EventLogRoom).display = log.shown
        if log.shown:
            log.agent_id = self.selected_id
            log.reload()  # once (show_agent would reload as well)

    def action_rename_agent(self) -> None:
        """Name the selected agent: a `session/title` in its log (source user, as upstream
        records a rename), shown in the tree, the composer target, the transcript title,
        the sessions list and exports."""
        agent = self._writable_agent()
        if agent is None:
            return
        old = self.display_name(agent.id)

        def named(name: str | None) -> None:
            if not name or name == old or self.ctx.agents.get(agent.id) is None:
                return
            rename(agent.session, name)
            take_name(self.ctx, name, agent.id)
            self.bridge.flush()
            self.agent_tree.refresh_rows(self.bridge.views, {agent.id})
            self.update_titles()
            self.say(f"Renamed {old} to {name}.", timeout=3)

        self.app.push_screen(NameScreen(f"Rename {old}", old), named)

    def action_sessions(self) -> None:
        persistence = self.ctx.registry.persistence
        if persistence is None:
            self.say("Sessions are not saved in this world (no persistence).", "warning")
            return
        self._show_sessions(persistence)

    @work(group="sessions", exclusive=True, exit_on_error=False)
    async def _show_sessions(self, persistence: Any) -> None:
        """The catalog is file reads: it is built off the event loop."""
        from dsh_tui.harness.persistence.catalog import build_catalog

        try:
            catalog = await asyncio.to_thread(build_catalog, persistence)
        except Exception as error:
            self.say(f"Could not list saved sessions: {error}", "error")
            return
        live = {agent.id for agent in self.ctx.agents.list()}
        catalog = with_live(catalog, self.ctx, self.display_name)

        def chosen(choice: Chosen | None) -> None:
            if choice is None:
                return
            entry = choice.entry
            if entry is not None and entry.id in live:
                self.select_agent(entry.id, focus_tree=True)
                return
            holder = entry.holder if entry is not None else choice.group.holder
            if holder is not None and not holder.is_this_process:
                what = visible_label(entry.name) if entry is not None else \
                    f"workspace {choice.group.id}"
                self.say(f"{what} is open in another dsh-tui ({holder.describe()}): one "
                         "process writes a session at a time. Quit it there first.",
                         "warning", timeout=8)
                return
            self._resume(target_of(catalog, choice), persistence)

        self.app.push_screen(SessionsScreen(catalog, live, on_action=partial(
            self._tidy, persistence)), chosen)

    def _tidy(self, persistence: Any, choice: Chosen) -> tuple[str, list[Any]]:
        """Delete, archive or export a row of the sessions screen (it asked first)."""
        from dsh_tui.harness.persistence.catalog import build_catalog, remove

        if choice.action == "export":
            return self._export(persistence, choice), with_live(
                build_catalog(persistence), self.ctx, self.display_name)
        tree = [e for _, e in (choice.entry.walk() if choice.entry is not None
                               else choice.group.walk())]
        open_here = [e for e in tree if self.ctx.agents.get(e.id) is not None]
        if open_here:
            return (f"{visible_label(open_here[0].name)} is open here: dispose it first "
                    f"({key_name(self.app, 'dispose_agent')} in the tree).",
                    with_live(build_catalog(persistence), self.ctx, self.display_name))
        count = remove(persistence, choice.group, choice.entry,
                       archive=choice.action == "archive")
        done = "Archived" if choice.action == "archive" else "Deleted"
        return (f"{done} {count} session{'s' if count != 1 else ''}.",
                with_live(build_catalog(persistence), self.ctx, self.display_name))

    def _export(self, persistence: Any, choice: Chosen) -> str:
        """One Markdown file per tree (a row, or each root of a workspace heading), its
        sub-agents nested under the tool calls that spawned them, into the working dir."""
        import os
        from pathlib import Path

        from dsh_tui.harness.persistence import SessionLogError, read_session_log

        from ..state.export import export_markdown

        tops = [choice.entry] if choice.entry is not None else list(choice.group.roots)
        entries = {e.id: e for top in tops for _, e in top.walk()}

        def children(session_id: str) -> list[Any]:
            out = []
            for child in entries[session_id].children if session_id in entries else []:
                try:
                    out.append(read_session_log(persistence.path_for(child.header)))
                except (OSError, SessionLogError):
                    continue
            return out

        folder = Path(workspace_cwd(self.ctx) or os.getcwd())
        written = []
        for top in tops:
            header, events = read_session_log(persistence.path_for(top.header))
            target = folder / f"dsh-tui-{top.id}.md"
            target.write_text(export_markdown(header, events, children=children),
                              encoding="utf-8")
            written.append(target.name)
        return f"Exported {len(written)} tree(s) as Markdown to {folder}: " + \
            ", ".join(written[:3]) + (" …" if len(written) > 3 else "")

    @work(group="agents", exit_on_error=False)
    async def _resume(self, target: Any, persistence: Any) -> None:
        try:
            handles = await open_target(self.ctx, target, persistence.list_sessions())
        except Exception as error:
            self.say(f"Could not resume: {error}", "error")
            return
        if not handles:
            return
        chosen = target.select if target.select and self.ctx.agents.get(target.select) \
            is not None else handles[0].agent.id
        await self._adopt(chosen)
        self.say(f"Resumed {self.display_name(chosen)}"
                 + (f" and {len(handles) - 1} more" if len(handles) > 1 else "") + ".",
                 timeout=3)

    def action_toggle_reasoning(self) -> None:
        self.transcript.action_toggle_reasoning()

    def action_toggle_tools(self) -> None:
        self.transcript.action_toggle_tools()

    def action_follow(self) -> None:
        self.transcript.action_follow()

    async def action_load_older(self) -> None:
        await self.transcript.action_load_older()

    # -- layout toggles ------------------------------------------------------------------------

    def _toggle_pane(self, name: str, widget: Any) -> None:
        """Show or hide a side pane; on a narrow screen only one side pane is open at once,
        so the transcript keeps the rest of the width."""
        shown = not widget.display
        app = self.app  # the pane classes are the app's: they survive a dialog on top
        app.set_class(shown, f"-show-{name}")
        app.set_class(not shown, f"-hide-{name}")
        if shown and self.has_class("-narrow"):
            other = "inbox" if name == "tree" else "tree"
            app.remove_class(f"-show-{other}")
        self.call_after_refresh(self._after_toggle, widget if shown else None)

    def _after_toggle(self, widget: Any) -> None:
        if widget is not None and widget.display:
            widget.focus()
        else:
            self.keep_focus_visible()
        self.update_titles()

    def keep_focus_visible(self) -> None:
        """Focus never stays in a pane that was folded away: it goes to the composer."""
        if self.app.screen is not self:
            return  # a dialog is open: it owns the focus
        focused = self.focused
        if focused is None or any(not node.display for node in focused.ancestors_with_self
                                  if isinstance(node, Widget)):
            self.composer.focus()  # Textual blurs a widget that is hidden: focus is lost

    def action_toggle_agents(self) -> None:
        self._toggle_pane("tree", self.agent_tree)

    def action_toggle_inbox(self) -> None:
        self._toggle_pane("inbox", self.inbox)

    def action_zoom_transcript(self) -> None:
        """Hide both side panes (the transcript takes the width), or bring them back."""
        zoomed = not self.agent_tree.display and not self.inbox.display
        app = self.app
        for name in ("tree", "inbox"):
            app.set_class(zoomed, f"-show-{name}")
            app.set_class(not zoomed, f"-hide-{name}")
        if zoomed and self.has_class("-narrow"):
            app.remove_class("-show-tree")  # one side pane at a time on a narrow screen
        self.call_after_refresh(self._after_toggle, None)

    def after_resize(self) -> None:
        """The center column changed size: titles and focus follow the panes now shown."""
        try:
            self.update_titles()
            self.keep_focus_visible()
        except NoMatches:
            pass

    # -- search --------------------------------------------------------------------------------

    def action_search(self) -> None:
        bar = self.search_bar
        bar.open()
        if self.search.query:
            self._search_again(self.search.query)
            bar.show_status(self.search.status(), bool(self.search.matches))

    def on_search_bar_changed(self, event: SearchBar.Changed) -> None:
        self.search.current = None
        self._search_again(event.query)
        self._search_step(older=True)

    def on_search_bar_step(self, event: SearchBar.Step) -> None:
        self._search_again(self.search.query)
        self._search_step(event.older)

    def on_search_bar_closed(self, event: SearchBar.Closed) -> None:
        self.search_bar.close()
        self.transcript.mark(None)
        self.transcript.focus()

    def _search_again(self, query: str) -> None:
        """Search the selected transcript as it is now (it may have grown, or be another)."""
        view = self.selected_view
        if view is None:
            self.search = SearchState(query)
            return
        if self.search.agent_id != view.id:
            self.search = SearchState()
        self.search.refresh(view.id, view.transcript.items, query)

    def _search_step(self, older: bool) -> None:
        index, wrapped = self.search.step(older)
        status = self.search.status()
        if wrapped:
            status += " · wrapped"
        self.search_bar.show_status(status, index is not None or
                                                         not self.search.query)
        if index is None:
            self.transcript.mark(None)
            return
        self.transcript.search_query = self.search.query
        self.transcript.reveal(index)

    def action_event_log_scope(self) -> None:
        if not self.event_log.shown:
            self.action_toggle_event_log()
        self.event_log.action_toggle_scope()

