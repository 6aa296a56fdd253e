"""Which screen actions are gestures on the selected agent, and the line that says one is refused.

A key whose gesture the selected agent cannot do (an agent in a dsh runtime has no
inject, no breakpoints, …; `harness/capabilities.py`) is greyed out, and pressing it
says why in one line instead of doing nothing or pretending.
"""

from __future__ import annotations

from typing import Any

from dsh_tui.harness.capabilities import capabilities_of

ACTION_GESTURES: dict[str, tuple[str, str]] = {
    "followup": ("followup", "Follow-up"),
    "steer": ("steer", "Steer"),
    "inject": ("inject", "Inject"),
    "cancel_keep_inbox": ("cancel_keep_inbox", "Stop"),
    "cancel_clear": ("cancel_clear", "Stop and clear"),
    "edit_item": ("edit_item", "Editing a queued item"),
    "remove_item": ("remove_item", "Removing a queued item"),
    "move_item_up": ("reorder_item", "Moving an item"),
    "move_item_down": ("reorder_item", "Moving an item"),
    "move_item_lane": ("refile_item", "Re-filing an item"),
    "undo_discard": ("undo_discard", "Undo"),
    "restore_unsent": ("restore_unsent", "Putting back"),
    "clear_inbox": ("clear_inbox", "Clearing the inbox"),
    "toggle_breakpoint": ("breakpoint", "A breakpoint"),
    "breakpoint_continue": ("breakpoint", "A breakpoint"),
    "spawn_child": ("spawn_child", "Spawning a child"),
    "dispose_agent": ("dispose", "Disposing"),
    "rename_agent": ("rename", "Renaming"),
}
"""Screen action → (capability gesture, how the refusal names it)."""


def refused(agent: Any, action: str) -> str | None:
    """The reason `action` does not work on `agent` (None: it does, or it is no gesture)."""
    found = ACTION_GESTURES.get(action)
    if found is None or agent is None:
        return None
    return capabilities_of(agent).reason(found[0])


def refusal_line(agent: Any, action: str, name: str) -> str | None:
    """`Inject is not available for NAME: REASON.`, or None when the action works."""
    reason = refused(agent, action)
    if reason is None:
        return None
    return f"{ACTION_GESTURES[action][1]} is not available for {name}: {reason}."
