"""The action registry as plain data: every action's pinned id, default key, help and area.

One row per action a person can run from the main screen or anywhere in the app: the
id (the binding id, the action's name and the config's `[keys]` name; pinned, never
renamed), its default key(s), the footer label, the help text (the binding's tooltip),
and the area the help screen and palette group it under. Widgets and screens build
their Bindings from these rows (`bindings.bind`); this module imports nothing of the
UI, so every part of it can read the table without an import circle.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ActionSpec:
    """An action as help, the palette and its Binding know it. `key` is Textual's key
    string (comma-separated alternatives); `label` is the footer's word for it; `help`
    says what it does (the Binding's tooltip, so the footer shows it on hover too)."""

    name: str
    title: str
    area: str
    key: str
    label: str
    help: str
    words: str = ""
    """Other words a person types for it in the palette (export, delete, resume...):
    the title's own words need not be repeated."""


ACTIONS: tuple[ActionSpec, ...] = (
    ActionSpec("followup", "Send as follow-up", "Composer", "enter", "Follow-up",
               "Queue the composer text for the next turn (enter on an empty composer delivers "
               "work kept after a stop)",
               words="send submit message queue post ask prompt"),
    ActionSpec("steer", "Send as steer", "Composer", "ctrl+s", "Steer",
               "Deliver the text at the next step of the running turn (wakes an idle agent)",
               words="send redirect correct nudge interrupt guide now"),
    ActionSpec("inject", "Send as injected context", "Composer", "ctrl+t", "Inject",
               "Add context for the next step without waking the agent",
               words="send add context note aside quiet"),
    ActionSpec("newline", "Insert a newline", "Composer", "ctrl+j,shift+enter", "Newline",
               "A line break in the composer",
               words="line break return multiline enter"),
    ActionSpec("delete_word", "Delete the word before the cursor", "Composer",
               "ctrl+w,alt+backspace", "Delete word",
               "In the composer (a browser keeps ctrl+w to close the tab: alt+backspace)",
               words="erase remove backspace"),
    ActionSpec("edit_item", "Edit queued item", "Inbox", "enter", "Edit",
               "Edit the highlighted inbox item in place (same id)",
               words="change modify fix rewrite message queued inbox"),
    ActionSpec("remove_item", "Remove queued item", "Inbox", "delete", "Remove",
               "Remove the highlighted inbox item (ctrl+z in the inbox undoes)",
               words="delete discard drop message queued inbox"),
    ActionSpec("move_item_up", "Move item up", "Inbox", "shift+up", "Move up",
               "Move the highlighted item earlier",
               words="reorder earlier sooner priority raise"),
    ActionSpec("move_item_down", "Move item down", "Inbox", "shift+down", "Move down",
               "Move the highlighted item later",
               words="reorder later lower priority"),
    ActionSpec("move_item_lane", "Change item lane", "Inbox", "shift+right", "Lane",
               "Cycle the highlighted item: follow-up \u2192 steer \u2192 inject \u2192 follow-up",
               words="steer inject follow-up followup kind switch"),
    ActionSpec("undo_discard", "Undo inbox edit", "Inbox", "ctrl+z", "Undo",
               "Undo the latest inbox edit (remove, edit, move, re-file, clear, merge, split, "
               "move to another agent, a broadcast, a subtree stop's discard), back through "
               "the whole session; from any pane (the composer keeps ctrl+z for its own "
               "text); the status line names what it undid",
               words="restore undelete recover bring back removed revert unsend take back"),
    ActionSpec("redo_inbox", "Redo inbox edit", "Inbox", "ctrl+y", "Redo",
               "Do again the inbox edit undo took back (a new edit forgets what was undone); "
               "from any pane",
               words="again reapply repeat"),
    ActionSpec("mark_item", "Mark item", "Inbox", "space", "Mark",
               "Mark or unmark the highlighted item and go to the next (space marks only while "
               "the composer is empty: with a draft there, space is typed into it); merge, "
               "move and copy act on the marked items",
               words="select pick choose tag"),
    ActionSpec("merge_items", "Merge marked items", "Inbox", "ctrl+j", "Merge",
               "Join the marked items of one list into the first of them, in inbox order: "
               "one turn instead of several, one undo",
               words="join combine squash concatenate"),
    ActionSpec("transfer_items", "Move or copy to another agent", "Inbox", "shift+left",
               "To agent", "Move (or copy) the marked items, or the highlighted one, to the "
               "parent, a child or a marked agent: a small chooser asks which",
               words="send forward hand off delegate copy move agent child parent"),
    ActionSpec("timeline", "Inbox timeline", "Inbox", "f5", "Timeline",
               "Every inbox operation of the selected agent on one time axis, with who made "
               "it (you, a model, the system): turns, steps, claims, edits with their change, "
               "moves; filter by message, lane and actor; enter goes to the transcript",
               words="history log receipts debug steering who when claimed sent"),
    ActionSpec("clear_inbox", "Clear inbox", "Inbox", "shift+delete", "Clear",
               "Remove every pending item of the selected agent (asks first)",
               words="delete discard empty remove all queued messages"),
    ActionSpec("spawn_child", "Spawn child agent", "Agents", "ctrl+k", "Spawn child",
               "Create an agent owned by the selected one",
               words="new create add subagent sub-agent child fork delegate"),
    ActionSpec("rename_agent", "Rename agent", "Agents", "f6", "Rename",
               "Name the selected agent (kept in its log; shown in the tree, the composer, the "
               "transcript title, the sessions list and exports)",
               words="name title label call"),
    ActionSpec("dispose_agent", "Dispose agent", "Agents", "delete", "Dispose",
               "Dispose the selected agent and its children (asks first)",
               words="delete remove kill close destroy end agent"),
    ActionSpec("toggle_breakpoint", "Break before each step", "Agents", "f7", "Breakpoint",
               "Stop the selected agent before each step and show what the step will send from "
               "its inbox: continue, skip the step, or remove the breakpoint",
               words="pause debug step inspect review approve"),
    ActionSpec("breakpoint_continue", "Continue at breakpoint", "Agents", "f8", "Continue",
               "Let the selected agent, paused at its breakpoint, send its step (with your "
               "edits); the panel under its transcript also offers skip and remove",
               words="resume go run step approve"),
    ActionSpec("restore_unsent", "Put back unsent messages", "Inbox", "ctrl+u", "Put back",
               "Put messages an ended turn claimed but never sent (a stop, a skipped step) back "
               "at the head of their lane, same text and id",
               words="restore recover undo unsent claimed messages back"),
    ActionSpec("new_agent", "New root agent", "App", "ctrl+n", "New agent",
               "Create a new top-level agent",
               words="create add start root agent"),
    ActionSpec("cancel_keep_inbox", "Stop (keep inbox)", "App", "escape", "Stop",
               "Cancel the running turn; pending items stay, paused",
               words="stop cancel halt abort pause interrupt"),
    ActionSpec("interrupt", "Stop or quit", "App", "ctrl+c", "Stop",
               "Stop the selected running agent keeping its inbox; on an idle one, press twice "
               "to quit (first copies selected text, if any)",
               words="stop cancel copy halt"),
    ActionSpec("cancel_clear", "Stop and clear inbox", "App", "ctrl+l", "Stop+clear",
               "Cancel the running turn and discard pending items (asks first)",
               words="stop clear cancel abort discard reset empty"),
    ActionSpec("toggle_event_log", "Event log", "App", "f2", "Events",
               "Show or hide the event log",
               words="events log debug show hide"),
    ActionSpec("toggle_agents", "Agents pane", "App", "ctrl+b", "Agents",
               "Show or hide the agent tree (hidden by default below 100 columns)",
               words="tree sidebar show hide panel"),
    ActionSpec("toggle_inbox", "Inbox pane", "App", "ctrl+o", "Inbox",
               "Show or hide the inbox (hidden by default below 100 columns; the transcript "
               "title keeps its counts)",
               words="queue sidebar show hide panel"),
    ActionSpec("zoom_transcript", "Zoom the transcript", "App", "f9", "Zoom",
               "Hide both side panes so the transcript takes the width, or bring them back",
               words="maximize fullscreen wide focus hide panes"),
    ActionSpec("help", "Help", "App", "f1", "Help",
               "This screen: every key and what it does",
               words="keys shortcuts bindings docs manual"),
    ActionSpec("change_theme", "Change theme", "App", "f4", "Theme",
               "Pick a theme (remembered)",
               words="colours colors appearance dark light contrast"),
    ActionSpec("sessions", "Past sessions", "App", "f3", "Sessions",
               "List saved sessions and resume one; there ctrl+e exports one as Markdown, "
               "ctrl+a archives it, delete deletes it (both ask first)",
               words="resume reopen open load continue history saved workspace export "
                     "markdown archive delete remove"),
    ActionSpec("toggle_reasoning", "Expand reasoning", "Transcript", "ctrl+r", "Reasoning",
               "Expand or collapse every reasoning block",
               words="thinking thoughts expand collapse show hide"),
    ActionSpec("toggle_tools", "Expand tool calls", "Transcript", "ctrl+e", "Tool details",
               "Expand or collapse tool arguments and results",
               words="tool calls arguments results expand collapse show hide"),
    ActionSpec("follow", "Follow the tail", "Transcript", "end", "Follow",
               "Scroll to the end and keep following",
               words="tail bottom end latest scroll"),
    ActionSpec("load_older", "Go to the start", "Transcript", "home", "Start",
               "Go to the start of the transcript (in a huge log, read the page before)",
               words="history earlier more top start scroll"),
    ActionSpec("search", "Search the transcript", "Transcript", "ctrl+f", "Search",
               "Find text in the selected agent's transcript, however far back: enter or up goes"
               " to the older match, down to the newer, escape closes",
               words="find grep look filter"),
    ActionSpec("message_history", "A sent message's history", "Transcript", "enter",
               "History",
               "Open the inbox timeline of a message you sent, filtered to it: the one "
               "marked (a search's match, the timeline's jump), else the last on screen; a "
               "click on a message's receipt does the same",
               words="receipt timeline claimed sent answered steering debug"),
    ActionSpec("event_log_scope", "Event log: all agents", "Event log", "ctrl+a", "All agents",
               "Toggle the event log between the selected agent and all",
               words="events filter every all"),
    ActionSpec("quit", "Quit", "App", "ctrl+q", "Quit",
               "Leave dsh-tui: running turns stop, every inbox is kept (--resume brings them "
               "back)",
               words="exit leave close bye"),
    # Many agents at once (issue 28): after the single-agent actions, whose titles win a tie
    # in the palette ("stop" is first Stop (keep inbox), then these).
    ActionSpec("jump_needs_you", "Next agent that needs you", "Agents", "ctrl+g", "Needs you",
               "Select the agent that has needed you longest (paused at its breakpoint, "
               "failed, blocked, work kept after a stop, or a finished turn not yet seen); "
               "again for the next one",
               words="go next waiting attention alert paused failed blocked inbox finished"),
    ActionSpec("mark_agent", "Mark agent", "Agents", "space", "Mark",
               "In the tree: mark or unmark the agent under the cursor and move down (only "
               "while the composer is empty: with a draft there, space is typed into it). "
               "Bulk actions act on the marked agents (none marked: the selected one)",
               words="select pick choose tag many"),
    ActionSpec("mark_subtree", "Mark agent and its sub-agents", "Agents", "ctrl+a",
               "Mark tree", "In the tree: mark the agent under the cursor with every agent "
               "it owns (again: unmark them)",
               words="select pick tag children tree many"),
    ActionSpec("clear_marks", "Clear marks", "Agents", "backspace", "Unmark",
               "In the tree: unmark every agent",
               words="unselect unmark none deselect"),
    ActionSpec("fold_agent", "Fold sub-agents", "Agents", "left", "Fold",
               "In the tree: fold the agent's sub-agents into its row (which then sums "
               "them); on a row without open sub-agents, go to its owner",
               words="collapse close hide children"),
    ActionSpec("unfold_agent", "Unfold sub-agents", "Agents", "right", "Unfold",
               "In the tree: show the agent's sub-agents; on an open row, go to its first",
               words="expand open show children"),
    ActionSpec("fold_all", "Fold every agent", "Agents", "shift+left", "Fold all",
               "In the tree: fold every agent that owns others, so the roots fit",
               words="collapse close all roots"),
    ActionSpec("unfold_all", "Unfold every agent", "Agents", "shift+right", "Unfold all",
               "In the tree: show every sub-agent",
               words="expand open all"),
    ActionSpec("filter_agents", "Filter agents by name", "Agents", "ctrl+f", "Filter",
               "In the tree: list only agents whose name has every word typed (with their "
               "owners); enter keeps the filter, escape clears it",
               words="find search narrow name type"),
    ActionSpec("hide_finished", "Hide finished sub-agents", "Agents", "ctrl+d", "Hide done",
               "In the tree: hide (or show again) sub-agents that finished and need nothing",
               words="done completed collapse declutter"),
    ActionSpec("broadcast", "Broadcast a message", "Agents", "ctrl+r", "Broadcast",
               "Send one message to every marked agent in the lane you choose (follow-up, "
               "steer, inject); one undo (ctrl+z, any pane) takes back the copies still pending",
               words="send all many marked message steer inject follow-up"),
    ActionSpec("stop_marked", "Stop marked agents", "Agents", "ctrl+x", "Stop marked",
               "Stop every marked agent that runs, keeping its inbox (paused)",
               words="cancel halt kill interrupt many marked"),
    ActionSpec("stop_after_step", "Stop marked after this step", "Agents", "ctrl+e",
               "Stop at step end", "Let every marked agent finish the step it is in, then "
               "stop, keeping its inbox",
               words="soft stop finish step boundary graceful"),
    ActionSpec("stop_subtree", "Stop agent and its sub-agents", "Agents", "ctrl+delete",
               "Stop tree", "Stop the selected agent and every agent it owns; asks whether "
               "their inboxes are kept or discarded (one undo, ctrl+z, puts a discard back)",
               words="cancel halt kill children tree parent discard keep"),
    ActionSpec("dispose_finished", "Dispose finished sub-agents", "Agents", "shift+delete",
               "Dispose done", "Dispose every finished sub-agent of the marked agents (none "
               "marked: of the selected one), after one confirmation",
               words="delete remove clean up cleanup done children bulk"),
)

SPEC_BY_NAME = {spec.name: spec for spec in ACTIONS}
AREA_ORDER = ("Composer", "Inbox", "Agents", "Transcript", "Event log", "App")


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
"""Keys that most terminals send exactly as another key (shift+enter arrives as enter):
still bound for the terminals that report them, never advertised there. Served, they are
shown: the page sends shift+enter as itself (`dsh_tui.serve.page`)."""


def startup_keymap(web: bool, configured: dict[str, str]) -> dict[str, str]:
    """The keymap the app starts with: the browser's second keys when served, then the
    config's `[keys]`."""
    return {**(BROWSER_KEYS if web else {}), **configured}


def bound_keys(app: object, action: str) -> list[str]:
    """The key names bound to `action` that work where `app` runs, after its keymap (the
    app's `keymap`, set by `DshApp.set_keymap`; a served app's `is_web` hides the keys a
    browser keeps, a terminal's hides the keys it cannot tell apart)."""
    spec = SPEC_BY_NAME.get(action)
    if spec is None:
        return []
    keys = getattr(app, "keymap", {}).get(action, spec.key)
    hidden = BROWSER_KEPT if getattr(app, "is_web", False) else UNTOLD
    return [key for key in (k.strip() for k in keys.split(",")) if key and key not in hidden]


def key_name(app: object, action: str) -> str:
    """The first working key of `action` as prose names it (`alt+t`), for hints."""
    keys = bound_keys(app, action)
    return keys[0] if keys else "the palette (ctrl+p)"
