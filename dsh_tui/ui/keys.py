"""The action registry: every action's pinned name, where it works and what it does.

Bindings live on the widget where a key makes sense (the composer sends, the
inbox edits, the tree spawns); this table is what the help screen and the command
palette read, so both always show the key a person actually has, after the
config's `[keys]` remapping.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

from textual.binding import Binding

if TYPE_CHECKING:
    from textual.app import App


@dataclass(frozen=True, slots=True)
class ActionSpec:
    """An action as help and the palette list it: its pinned name, a title, the area it
    belongs to (Composer | Inbox | Agents | Transcript | Event log | App). What it does is
    the `tooltip` of its Binding, the one place that text is written."""

    name: str
    title: str
    area: str

    @property
    def help(self) -> str:
        """The action's Binding tooltip (the footer shows it on hover too)."""
        binding = default_bindings().get(self.name)
        return binding.tooltip if binding is not None else ""


ACTIONS: tuple[ActionSpec, ...] = (
    ActionSpec("followup", "Send as follow-up", "Composer"),
    ActionSpec("steer", "Send as steer", "Composer"),
    ActionSpec("inject", "Send as injected context", "Composer"),
    ActionSpec("newline", "Insert a newline", "Composer"),
    ActionSpec("delete_word", "Delete the word before the cursor", "Composer"),
    ActionSpec("edit_item", "Edit queued item", "Inbox"),
    ActionSpec("remove_item", "Remove queued item", "Inbox"),
    ActionSpec("move_item_up", "Move item up", "Inbox"),
    ActionSpec("move_item_down", "Move item down", "Inbox"),
    ActionSpec("move_item_lane", "Change item lane", "Inbox"),
    ActionSpec("undo_discard", "Undo remove", "Inbox"),
    ActionSpec("clear_inbox", "Clear inbox", "Inbox"),
    ActionSpec("spawn_child", "Spawn child agent", "Agents"),
    ActionSpec("rename_agent", "Rename agent", "Agents"),
    ActionSpec("dispose_agent", "Dispose agent", "Agents"),
    ActionSpec("toggle_breakpoint", "Break before each step", "Agents"),
    ActionSpec("breakpoint_continue", "Continue at breakpoint", "Agents"),
    ActionSpec("restore_unsent", "Put back unsent messages", "Inbox"),
    ActionSpec("new_agent", "New root agent", "App"),
    ActionSpec("cancel_keep_inbox", "Stop (keep inbox)", "App"),
    ActionSpec("interrupt", "Stop or quit", "App"),
    ActionSpec("cancel_clear", "Stop and clear inbox", "App"),
    ActionSpec("toggle_event_log", "Event log", "App"),
    ActionSpec("toggle_agents", "Agents pane", "App"),
    ActionSpec("toggle_inbox", "Inbox pane", "App"),
    ActionSpec("zoom_transcript", "Zoom the transcript", "App"),
    ActionSpec("help", "Help", "App"),
    ActionSpec("change_theme", "Change theme", "App"),
    ActionSpec("sessions", "Past sessions", "App"),
    ActionSpec("toggle_reasoning", "Expand reasoning", "Transcript"),
    ActionSpec("toggle_tools", "Expand tool calls", "Transcript"),
    ActionSpec("follow", "Follow the tail", "Transcript"),
    ActionSpec("load_older", "Load older items", "Transcript"),
    ActionSpec("search", "Search the transcript", "Transcript"),
    ActionSpec("event_log_scope", "Event log: all agents", "Event log"),
    ActionSpec("quit", "Quit", "App"),
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


@cache
def default_bindings() -> dict[str, Binding]:
    """Binding id → Binding, as declared (before any keymap; the first declaration of an
    id, in `binding_sources` order, is the one that carries its tooltip). Made once: the
    classes' BINDINGS do not change while the program runs."""
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
    spec = getattr(app, "keymap", {}).get(action, binding.key)
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
