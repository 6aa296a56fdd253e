"""MainScreen: composes the panes and routes every action and message to its controller.

The screen owns the panes (`panes()`), the controllers (`ui/controllers/`, one per job)
and the seams they use (`controllers/seams.py`: the world, the panes, the selection,
dialogs and keys). Textual finds actions on the screen, so each `action_NAME` (its name
pinned: bindings and the config's `[keys]` use it) is one line handing over to the
controller that implements it; the key, label and help of each live in `ui/keys.py`.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, ClassVar

from textual import events, getters
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical
from textual.notifications import SeverityLevel
from textual.screen import Screen

from dsh_tui.harness import Agent, Context
from dsh_tui.harness.connection import Connection, Notice, connection_of

from ..bindings import bind, keys_for
from ..controllers.agents import AgentActions, offers_routes
from ..controllers.breakpoints import BreakpointActions
from ..controllers.drafts import DraftKeeper
from ..controllers.editing import Editing
from ..controllers.edits import InboxEdits
from ..controllers.fleet import Fleet
from ..controllers.inbox import InboxActions
from ..controllers.layout import Layout
from ..controllers.seams import ResultT, World
from ..controllers.search import Search
from ..controllers.selection import SelectionKeeper, set_title
from ..controllers.sending import READ_ONLY_NOTICE, Sending
from ..controllers.sessions import SessionActions
from ..controllers.status import StatusLine
from ..controllers.timeline import TimelineActions
from ..keys import key_name
from ..state.agent_view import AgentView
from ..state.breakpoints import Breakpoints, Pause
from ..state.bridge import Bridge, FlushBatch
from ..state.config import UiConfig
from ..state.gestures import refused
from ..state.workspace import initial_breakpoints, initial_selection, workspace_of
from ..textual_compat import forward
from ..widgets.agent_tree import AgentTree
from ..widgets.breakpoint_panel import BreakpointPanel
from ..widgets.composer import Composer
from ..widgets.event_log import EventLog, EventLogRoom
from ..widgets.inbox import InboxView
from ..widgets.key_bar import KeyBar
from ..widgets.save_state import SaveState
from ..widgets.search_bar import SearchBar
from ..widgets.transcript import Transcript
from ..widgets.tree_filter import TreeFilter

__all__ = ["READ_ONLY_NOTICE", "CenterColumn", "MainScreen", "set_title"]


class CenterColumn(Vertical):
    """The transcript and the breakpoint panel. Its size changes whenever the terminal is
    resized or a side pane is shown or folded: the screen then re-reads which panes show."""

    def on_resize(self) -> None:
        screen = self.screen
        if isinstance(screen, MainScreen):
            screen.call_after_refresh(screen.after_resize)


class MainScreen(Screen[None]):
    """The app's default screen: the panes over the selected agent, and their actions.
    `world` is what the app holds (the context, its bridge, settings, breakpoints)."""

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
        bind("timeline", show=False),
        bind("undo_discard", show=False),
        bind("redo_inbox", show=False),
        bind("jump_needs_you", show=False),
    ]
    """The screen's own keys (the panes add theirs; help, theme, quit and ctrl+c are the
    app's, which stay live over dialogs too)."""

    READ_ONLY_HIDDEN = frozenset({"followup", "steer", "inject", "newline", "new_agent",
                                  "cancel_keep_inbox", "cancel_clear", "spawn_child", "rename_agent",
                                  "dispose_agent", "toggle_breakpoint", "edit_item",
                                  "remove_item", "move_item_up", "move_item_down",
                                  "move_item_lane", "undo_discard", "clear_inbox",
                                  "redo_inbox", "mark_item", "merge_items", "transfer_items",
                                  "mark_agent", "mark_subtree", "clear_marks", "broadcast",
                                  "stop_marked", "stop_after_step", "stop_subtree",
                                  "dispose_finished"})
    """Actions `view` (a read-only log) neither offers in the footer nor runs."""

    NEEDS_AGENT = frozenset({"followup", "steer", "inject", "cancel_keep_inbox", "cancel_clear",
                             "spawn_child", "rename_agent", "dispose_agent", "toggle_breakpoint",
                             "breakpoint_continue", "edit_item", "remove_item", "move_item_up",
                             "move_item_down", "move_item_lane", "undo_discard", "clear_inbox",
                             "restore_unsent", "timeline", "mark_item", "merge_items",
                             "transfer_items", "broadcast", "stop_marked", "stop_after_step",
                             "stop_subtree", "dispose_finished"})
    """Actions on the selected agent: greyed out in the footer (and not run) while no agent
    is selected."""

    agent_tree = getters.query_one("#agent-tree", AgentTree)
    transcript = getters.query_one("#transcript", Transcript)
    inbox = getters.query_one("#inbox", InboxView)
    composer = getters.query_one("#composer", Composer)
    event_log = getters.query_one("#event-log", EventLog)
    event_log_room = getters.query_one("#event-log-room", EventLogRoom)
    breakpoint_panel = getters.query_one("#breakpoint-panel", BreakpointPanel)
    search_bar = getters.query_one("#search", SearchBar)
    tree_filter = getters.query_one("#tree-filter", TreeFilter)
    key_bar = getters.query_one(KeyBar)

    def __init__(self, world: World) -> None:
        super().__init__()
        self.world = world
        self.inbox_edits = InboxEdits(self)
        self.sending = Sending(self, self.inbox_edits)
        self.editing = Editing(self, self.sending)
        self.breakpoint_actions = BreakpointActions(self, self.editing)
        self.draft_keeper = DraftKeeper(self)
        self.fleet = Fleet(self, self.inbox_edits)
        self.selection = SelectionKeeper(self, self.breakpoint_actions, self.editing,
                                         self.draft_keeper, self.fleet)
        self.timelines = TimelineActions(self)
        self.inbox_actions = InboxActions(self, self.editing, self.timelines, self.inbox_edits,
                                          self.fleet.marks)
        self.agent_actions = AgentActions(self)
        self.session_actions = SessionActions(self)
        self.pane_layout = Layout(self)
        self.searching = Search(self)
        self.status_line = StatusLine(self)

    # -- the world this screen shows belongs to the app ----------------------------------------

    @property
    def ctx(self) -> Context:
        return self.world.ctx

    @property
    def bridge(self) -> Bridge:
        return self.world.bridge

    @property
    def config(self) -> UiConfig:
        return self.world.config

    @property
    def read_only(self) -> bool:
        return self.world.read_only

    @property
    def breakpoints(self) -> Breakpoints | None:
        return self.world.breakpoints

    @property
    def closing(self) -> bool:
        return self.world.closing

    def keys_held(self) -> int:
        return self.world.keys_held()

    def say(self, message: str, severity: SeverityLevel = "information",
            timeout: float = 5) -> None:
        """A notification whose text is never parsed as markup (see `DshApp.say`)."""
        self.world.say(message, severity, timeout)

    def note(self, message: str, severity: SeverityLevel = "information",
             seconds: float = 4.0) -> None:
        """One line on the status line (the composer's bottom border), replacing the last:
        what an inbox action did, without a toast over the panes."""
        self.status_line.note(message, severity, seconds)

    def schedule(self, delay: float, callback: Callable[[], Any]) -> Any:
        return self.world.schedule(delay, callback)

    # -- seams the controllers use (controllers/seams.py) --------------------------------------

    def ask(self, dialog: Screen[ResultT], then: Callable[[ResultT | None], None]) -> None:
        self.app.push_screen(dialog, then)

    def spawn(self, work: Coroutine[Any, Any, None], *, group: str,
              exclusive: bool = False) -> None:
        # named after its coroutine function, as Textual's `@work` names a worker
        self.run_worker(work, name=getattr(work, "__name__", ""), group=group,
                        exclusive=exclusive, exit_on_error=False)

    def key_name(self, action: str) -> str:
        return key_name(self.app, action)

    def keys_label(self, action: str) -> str:
        return " / ".join(keys_for(self.app, action))

    # -- start -----------------------------------------------------------------------------------

    def start(self) -> None:
        """Called by the app once the panes are mounted and the keymap is set: titles,
        the bridge's listeners and first flush, the composer's hint and focus."""
        self.show_connection(connection_of(self.ctx))  # the app hears later changes
        set_title(self.transcript, "Transcript")
        set_title(self.inbox, "Inbox")
        self.inbox.marks = self.inbox_edits.marks
        self.agent_tree.source = self.fleet
        self.pane_layout.apply_widths()
        self.bridge.start()
        self.bridge.flush()
        if not self.read_only:  # the keymap is set: the keys it names are the ones that work
            self.composer.placeholder = (
                f"Message the selected agent — {self.key_name('followup')} follow-up · "
                f"{self.key_name('steer')} steer · {self.key_name('inject')} inject")
        self.composer.focus()

    def show_connection(self, connection: Connection | None) -> None:
        """The agents pane names where an attached world's agents run, and says when the
        link is down (`reconnecting`, `closed`); a local world's pane is just "Agents"."""
        if not self.closing:
            self.fleet.title_base = "Agents" if connection is None else \
                f"Agents · {connection.describe()}"
            self.fleet.update_title()

    def show_notice(self, notice: Notice) -> None:
        """A line the world owes the person (a request its runtime refused, …)."""
        if not self.closing:
            self.say(notice.text, notice.level, timeout=8)

    def restore_workspace(self) -> None:
        """A reopened workspace comes back as it was left: its selection, breakpoints and
        each agent's unsent text."""
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
        workspace = workspace_of(self.ctx)
        if workspace is not None and workspace.drafts:
            self.draft_keeper.restore(workspace.drafts)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """In `view` (read-only) the footer offers nothing that sends or changes agents
        (False: hidden); with no agent selected, what acts on one is greyed out (None:
        shown disabled). Textual runs no action this refuses, from a key or the palette;
        `select_agent` refreshes the footer when the answer changes."""
        if self.read_only and action in self.READ_ONLY_HIDDEN:
            return False
        if action in self.NEEDS_AGENT and self.selected_agent is None:
            return None
        if refused(self.selected_agent, action) is not None:
            return None  # this agent cannot (a dsh runtime's): pressed, it says why (app.py)
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
        yield TreeFilter(id="tree-filter")
        yield Composer(id="composer", placeholder=READ_ONLY_NOTICE if self.read_only else "",
                       read_only=self.read_only)
        yield SaveState(self.ctx.registry.persistence,
                        id="save-state")
        yield KeyBar()

    def type_into_composer(self, key: str, character: str | None) -> None:
        """A printable key pressed in a pane: the composer takes the focus and the key
        (see `panekeys`), so prose typed into the wrong pane is a draft, never a command."""
        composer = self.composer
        if self.app.screen is not self:
            return
        self.set_focus(composer)  # now, not later: the next keys must follow it
        forward(composer, events.Key(key, character))

    # -- selection, flushes, titles (controllers/selection.py) ---------------------------------

    @property
    def selected_id(self) -> str | None:
        return self.selection.selected_id

    @property
    def selected_view(self) -> AgentView | None:
        selected = self.selection.selected_id
        return self.bridge.views.get(selected) if selected else None

    @property
    def selected_agent(self) -> Agent | None:
        view = self.selected_view
        return view.agent if view is not None else None

    def writable_agent(self) -> Agent | None:
        """The selected agent, or None when nothing may change it. `check_action` already
        keeps these actions from running then (their keys are hidden or greyed out); this
        guards a direct call."""
        return None if self.read_only else self.selected_agent

    def display_name(self, agent_id: str) -> str:
        view = self.bridge.views.get(agent_id)
        return view.name if view is not None else agent_id

    def select_agent(self, agent_id: str | None, *, focus_tree: bool = False,
                     from_tree: bool = False) -> None:
        self.selection.select(agent_id, focus_tree=focus_tree, from_tree=from_tree)

    async def adopt(self, agent_id: str) -> None:
        await self.selection.adopt(agent_id)

    def update_titles(self) -> None:
        self.selection.update_titles()

    def apply_flush(self, batch: FlushBatch) -> None:
        self.selection.apply_flush(batch)

    def offers_routes(self) -> bool:
        """More than one route in this run (the tree shows each agent's route then)."""
        return offers_routes(self.config)

    def on_text_area_changed(self, event: Composer.Changed) -> None:
        if event.text_area is self.composer:
            self.draft_keeper.edited()

    def save_drafts(self) -> None:
        """Save every agent's unsent text with the workspace now (the app is leaving)."""
        self.draft_keeper.save()

    def on_agent_tree_selected(self, event: AgentTree.Selected) -> None:
        self.select_agent(event.agent_id)
        if event.chosen and not self.read_only:
            self.composer.focus()

    def tree_cursor_moved(self, agent_id: str | None, waited: float = 0.0) -> None:
        self.selection.cursor_moved(agent_id, waited)

    def tree_settle_now(self) -> None:
        self.selection.settle_now()

    def tree_toggle_fold(self, agent_id: str) -> None:
        self.fleet.toggle_fold(agent_id)

    # -- many agents: needs-you, folds, filter, marks, bulk (controllers/fleet.py) ------------

    def action_jump_needs_you(self) -> None:
        self.fleet.jump()

    def action_fold_agent(self) -> None:
        self.fleet.fold(True)

    def action_unfold_agent(self) -> None:
        self.fleet.fold(False)

    def action_fold_all(self) -> None:
        self.fleet.fold_all(True)

    def action_unfold_all(self) -> None:
        self.fleet.fold_all(False)

    def action_filter_agents(self) -> None:
        self.fleet.open_filter()

    def action_hide_finished(self) -> None:
        self.fleet.hide_finished()

    def action_mark_agent(self) -> None:
        self.fleet.mark()

    def action_mark_subtree(self) -> None:
        self.fleet.mark_subtree()

    def action_clear_marks(self) -> None:
        self.fleet.clear_marks()

    def action_broadcast(self) -> None:
        self.fleet.broadcast()

    def action_stop_marked(self) -> None:
        self.fleet.stop_marked()

    def action_stop_after_step(self) -> None:
        self.fleet.stop_marked(after_step=True)

    def action_stop_subtree(self) -> None:
        self.fleet.stop_subtree()

    def action_dispose_finished(self) -> None:
        self.fleet.dispose_finished()

    def on_tree_filter_changed(self, event: TreeFilter.Changed) -> None:
        self.fleet.filter_changed(event.query)

    def on_tree_filter_done(self, event: TreeFilter.Done) -> None:
        self.fleet.filter_done(event.keep)

    def on_tree_filter_move(self, event: TreeFilter.Move) -> None:
        self.fleet.filter_move(event.delta)

    def show_agents_pane(self) -> None:
        self.pane_layout.show_tree()

    def fit_panes(self) -> None:
        self.pane_layout.apply_widths()

    # -- sending and stopping (controllers/sending.py) -----------------------------------------

    def action_followup(self) -> None:
        self.sending.send("follow-up")

    def action_steer(self) -> None:
        self.sending.send("steer")

    def action_inject(self) -> None:
        self.sending.send("inject")

    def action_delete_word(self) -> None:
        self.sending.delete_word()

    def action_newline(self) -> None:
        self.sending.newline()

    def action_cancel_keep_inbox(self) -> None:
        self.sending.cancel_keep_inbox()

    def action_cancel_clear(self) -> None:
        self.sending.cancel_clear()

    # -- the inbox (controllers/inbox.py) ------------------------------------------------------

    def action_edit_item(self) -> None:
        self.inbox_actions.edit_item()

    def action_remove_item(self) -> None:
        self.inbox_actions.remove_item()

    def action_move_item_up(self) -> None:
        self.inbox_actions.move(-1)

    def action_move_item_down(self) -> None:
        self.inbox_actions.move(1)

    def action_move_item_lane(self) -> None:
        self.inbox_actions.move_lane()

    def action_undo_discard(self) -> None:
        self.inbox_actions.undo_discard()

    def action_clear_inbox(self) -> None:
        self.inbox_actions.clear_inbox()

    def action_redo_inbox(self) -> None:
        self.inbox_actions.redo()

    def action_mark_item(self) -> None:
        self.inbox_actions.mark()

    def action_merge_items(self) -> None:
        self.inbox_actions.merge()

    def action_transfer_items(self) -> None:
        self.inbox_actions.transfer()

    def composer_is_empty(self) -> bool:
        """No draft in the composer: space in the inbox marks instead of typing."""
        return not self.composer.text

    def action_restore_unsent(self) -> None:
        self.inbox_actions.restore_unsent()

    # -- the inbox timeline (controllers/timeline.py) ------------------------------------------

    def action_timeline(self) -> None:
        self.timelines.open()

    def on_transcript_history_wanted(self, event: Transcript.HistoryWanted) -> None:
        self.timelines.history_of(event.message_id, event.seq)

    # -- agents (controllers/agents.py) --------------------------------------------------------

    def action_new_agent(self) -> None:
        self.agent_actions.new_agent()

    def action_spawn_child(self) -> None:
        self.agent_actions.spawn_child()

    def action_dispose_agent(self) -> None:
        self.agent_actions.dispose_agent()

    def action_rename_agent(self) -> None:
        self.agent_actions.rename_agent()

    # -- breakpoints (controllers/breakpoints.py) ----------------------------------------------

    def action_toggle_breakpoint(self) -> None:
        self.breakpoint_actions.toggle()

    def action_breakpoint_continue(self) -> None:
        self.breakpoint_actions.continue_selected()

    def pause_reached(self, pause: Pause) -> None:
        self.fleet.pause_reached(pause.agent.id)
        self.breakpoint_actions.reached(pause)

    def pause_ended(self, pause: Pause) -> None:
        self.fleet.pause_ended(pause.agent.id)
        self.breakpoint_actions.ended(pause)

    def on_breakpoint_panel_decided(self, event: BreakpointPanel.Decided) -> None:
        self.breakpoint_actions.decide(event.pause, event.decision)

    def on_breakpoint_panel_edit_requested(self, event: BreakpointPanel.EditRequested) -> None:
        self.breakpoint_actions.edit(event.pause, event.message_id)

    # -- sessions (controllers/sessions.py) ----------------------------------------------------

    def action_sessions(self) -> None:
        self.session_actions.open()

    # -- layout (controllers/layout.py) --------------------------------------------------------

    def action_toggle_event_log(self) -> None:
        self.pane_layout.toggle_event_log()

    def action_event_log_scope(self) -> None:
        self.pane_layout.event_log_scope()

    def action_toggle_agents(self) -> None:
        self.pane_layout.toggle_agents()

    def action_toggle_inbox(self) -> None:
        self.pane_layout.toggle_inbox()

    def action_zoom_transcript(self) -> None:
        self.pane_layout.zoom_transcript()

    def keep_focus_visible(self) -> None:
        self.pane_layout.keep_focus_visible()

    def after_resize(self) -> None:
        self.pane_layout.after_resize()

    # -- the transcript's own keys, and search (controllers/search.py) -------------------------

    def action_toggle_reasoning(self) -> None:
        self.transcript.action_toggle_reasoning()

    def action_toggle_tools(self) -> None:
        self.transcript.action_toggle_tools()

    def action_follow(self) -> None:
        self.transcript.action_follow()

    async def action_load_older(self) -> None:
        await self.transcript.action_load_older()

    def action_message_history(self) -> None:
        self.transcript.action_message_history()

    def action_search(self) -> None:
        self.searching.open()

    def on_search_bar_changed(self, event: SearchBar.Changed) -> None:
        self.searching.changed(event.query)

    def on_search_bar_step(self, event: SearchBar.Step) -> None:
        self.searching.step(event.older)

    def on_search_bar_closed(self, event: SearchBar.Closed) -> None:
        self.searching.closed()
