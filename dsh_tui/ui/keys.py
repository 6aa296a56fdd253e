"""The action registry: every action's pinned name, where it works and what it does.

Bindings live on the widget where a key makes sense (the composer sends, the
inbox edits, the tree spawns); this table is what the help screen and the command
palette read, so both always show the key a person actually has, after the
config's `[keys]` remapping.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from textual.binding import Binding

if TYPE_CHECKING:
    from textual.app import App


@dataclass(frozen=True, slots=True)
class ActionSpec:
    name: str
    title: str
    help: str
    area: str  # Composer | Inbox | Agents | Transcript | Event log | App


ACTIONS: tuple[ActionSpec, ...] = (
    ActionSpec("followup", "Send as follow-up",
               "Queue the composer text for the next turn (enter on an empty composer "
               "delivers work kept after a stop)", "Composer"),
    ActionSpec("steer", "Send as steer",
               "Deliver the text at the next step of the running turn (wakes an idle agent)",
               "Composer"),
    ActionSpec("inject", "Send as injected context",
               "Add context for the next step without waking the agent", "Composer"),
    ActionSpec("newline", "Insert a newline", "A line break in the composer", "Composer"),
    ActionSpec("delete_word", "Delete the word before the cursor",
               "In the composer (a browser keeps ctrl+w to close the tab: alt+backspace)",
               "Composer"),
    ActionSpec("edit_item", "Edit queued item",
               "Edit the highlighted inbox item in place (same id)", "Inbox"),
    ActionSpec("remove_item", "Remove queued item",
               "Remove the highlighted inbox item (ctrl+z in the inbox undoes)", "Inbox"),
    ActionSpec("move_item_up", "Move item up", "Move the highlighted item earlier", "Inbox"),
    ActionSpec("move_item_down", "Move item down", "Move the highlighted item later", "Inbox"),
    ActionSpec("move_item_lane", "Change item lane",
               "Cycle the highlighted item: follow-up → steer → inject → follow-up", "Inbox"),
    ActionSpec("undo_discard", "Undo remove",
               "Put the last removed items back where they were", "Inbox"),
    ActionSpec("clear_inbox", "Clear inbox",
               "Remove every pending item of the selected agent (asks first)", "Inbox"),
    ActionSpec("spawn_child", "Spawn child agent",
               "Create an agent owned by the selected one", "Agents"),
    ActionSpec("rename_agent", "Rename agent",
               "Name the selected agent (kept in its log; shown in the tree, the composer, "
               "the transcript title, the sessions list and exports)", "Agents"),
    ActionSpec("dispose_agent", "Dispose agent",
               "Dispose the selected agent and its children (asks first)", "Agents"),
    ActionSpec("toggle_breakpoint", "Break before each step",
               "Stop the selected agent before each step and show what the step will send "
               "from its inbox: continue, skip the step, or remove the breakpoint", "Agents"),
    ActionSpec("breakpoint_continue", "Continue at breakpoint",
               "Let the selected agent, paused at its breakpoint, send its step (with your "
               "edits); the panel under its transcript also offers skip and remove", "Agents"),
    ActionSpec("restore_unsent", "Put back unsent messages",
               "Put messages an ended turn claimed but never sent (a stop, a skipped step) "
               "back at the head of their lane, same text and id", "Inbox"),
    ActionSpec("new_agent", "New root agent", "Create a new top-level agent", "App"),
    ActionSpec("cancel_keep_inbox", "Stop (keep inbox)",
               "Cancel the running turn; pending items stay, paused", "App"),
    ActionSpec("interrupt", "Stop or quit",
               "Stop the selected running agent keeping its inbox; on an idle one, press "
               "twice to quit (copies a selection in a text field)", "App"),
    ActionSpec("cancel_clear", "Stop and clear inbox",
               "Cancel the running turn and discard pending items (asks first)", "App"),
    ActionSpec("toggle_event_log", "Event log", "Show or hide the event log", "App"),
    ActionSpec("toggle_agents", "Agents pane",
               "Show or hide the agent tree (hidden by default below 100 columns)", "App"),
    ActionSpec("toggle_inbox", "Inbox pane",
               "Show or hide the inbox (hidden by default below 100 columns; the transcript "
               "title keeps its counts)", "App"),
    ActionSpec("zoom_transcript", "Zoom the transcript",
               "Hide both side panes so the transcript takes the width, or bring them back",
               "App"),
    ActionSpec("help", "Help", "This screen: every key and what it does", "App"),
    ActionSpec("change_theme", "Change theme", "Pick a theme (remembered)", "App"),
    ActionSpec("sessions", "Past sessions", "List saved sessions and resume one", "App"),
    ActionSpec("toggle_reasoning", "Expand reasoning",
               "Expand or collapse every reasoning block", "Transcript"),
    ActionSpec("toggle_tools", "Expand tool calls",
               "Expand or collapse tool arguments and results", "Transcript"),
    ActionSpec("follow", "Follow the tail", "Scroll to the end and keep following",
               "Transcript"),
    ActionSpec("load_older", "Load older items", "Show the page of items before the first",
               "Transcript"),
    ActionSpec("search", "Search the transcript",
               "Find text in the selected agent's transcript, however far back: enter or up "
               "goes to the older match, down to the newer, escape closes",
               "Transcript"),
    ActionSpec("event_log_scope", "Event log: all agents",
               "Toggle the event log between the selected agent and all", "Event log"),
    ActionSpec("quit", "Quit", "Leave dsh-tui: running turns stop, every inbox is kept "
               "(--resume brings them back)", "App"),
)

SPEC_BY_NAME = {spec.name: spec for spec in ACTIONS}
AREA_ORDER = ("Composer", "Inbox", "Agents", "Transcript", "Event log", "App")


def binding_sources() -> list[type[Any]]:
    """The classes whose BINDINGS hold the registry's actions."""
    from .app import DshApp
    from .screens.main import MainScreen
    from .widgets.agent_tree import AgentTree
    from .widgets.composer import Composer
    from .widgets.event_log import EventLog
    from .widgets.inbox import InboxView
    from .widgets.transcript import Transcript

    return [Composer, InboxView, AgentTree, Transcript, EventLog, MainScreen, DshApp]


def default_bindings() -> dict[str, Binding]:
    """Binding id → Binding, as declared (before any keymap)."""
    found: dict[str, Binding] = {}
    for cls in binding_sources():
        for binding in cls.BINDINGS:
            if isinstance(binding, Binding) and binding.id:
                found.setdefault(binding.id, binding)
    return found


BROWSER_KEYS: dict[str, str] = {"inject": "alt+t", "new_agent": "alt+n",
                                "rename_agent": "alt+r"}
"""Served to a browser (`dsh-tui serve`): actions whose default key the browser keeps for
itself (ctrl+t opens a tab, ctrl+n a window) get a key the browser passes on. The
config's `[keys]` still wins."""

BROWSER_KEPT = frozenset({
    "ctrl+t", "ctrl+n", "ctrl+w", "ctrl+tab", "ctrl+shift+tab", "ctrl+pageup",
    "ctrl+pagedown", "ctrl+shift+t", "ctrl+shift+n", "ctrl+shift+w", "ctrl+shift+q", "f6"})
"""Keys a browser acts on before the page sees them (tabs, windows, f6 the address bar): never
shown there. The ctrl ones are Chromium's reserved shortcuts; every other key the app shows
reaches the page's terminal, which takes it (tests/ui/test_browser_keys.py presses each served
key in a headed Chromium)."""

UNTOLD = frozenset({"shift+enter"})
"""Keys that most terminals, and every browser, send exactly as another key (shift+enter
arrives as enter): still bound for the terminals that report them, never advertised."""


def startup_keymap(web: bool, configured: dict[str, str]) -> dict[str, str]:
    """The keymap the app starts with: the browser's second keys when served, then the
    config's `[keys]`."""
    return {**(BROWSER_KEYS if web else {}), **configured}


def bound_keys(app: App[Any], action: str) -> list[str]:
    """The key names bound to `action` that work where the app runs, after the keymap."""
    binding = default_bindings().get(action)
    if binding is None:
        return []
    spec = getattr(app, "_keymap", {}).get(action, binding.key)
    hidden = UNTOLD | (BROWSER_KEPT if getattr(app, "is_web", False) else frozenset())
    return [key for key in (k.strip() for k in spec.split(",")) if key and key not in hidden]


def keys_for(app: App[Any], action: str) -> list[str]:
    """The keys bound to `action` right now, as the footer would show them (only those
    that work where the app runs: not a key the browser keeps, not shift+enter)."""
    return [app.get_key_display(Binding(key, action)) for key in bound_keys(app, action)]


def key_name(app: App[Any], action: str) -> str:
    """The first working key of `action` as prose names it (`alt+t`), for hints."""
    keys = bound_keys(app, action)
    return keys[0] if keys else "the palette (ctrl+p)"
