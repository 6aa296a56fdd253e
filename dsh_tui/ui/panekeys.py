"""Typing is safe: prose typed while a pane has focus lands in the composer, never acts.

The tree, the inbox and the transcript have no command on a printable key: one pressed in
them moves the focus to the composer and is typed there, so a sentence typed into the
wrong pane becomes a draft, not a dispose or a removal. A key still queued in a pane after
an earlier key of the same read moved the focus goes where the focus is now, in order.
Bound keys run where they were pressed, in order (`run_bound_key`): Textual checks them
only once a key has bubbled up to the app, against whatever has the focus *then*.
"""

from __future__ import annotations

from typing import Any

from textual import events

from .textual_compat import forward


async def run_bound_key(widget: Any, event: events.Key) -> bool:
    """If `event` is bound for `widget` (its own bindings and its ancestors', after the
    config's `[keys]`; priority bindings already ran at the app), run the binding now and
    stop the event so the app does not run it again. True when it ran, or when the binding
    is greyed out (`check_action` said None: no agent selected): such a key only rings the
    bell; it does not fall through to the widget (enter in the composer is not a newline)."""
    active = widget.screen.active_bindings.get(event.key)
    if active is None or active.binding.priority:
        return False
    event.stop()
    event.prevent_default()
    if not active.enabled:
        explain = getattr(widget.app, "explain_refusal", None)  # a gesture this agent lacks
        if explain is None or not explain(active.binding.action):
            widget.app.bell()
        return True
    await widget.app.run_action(active.binding.action, active.node)
    return True


class PaneKeys:
    """Mixin for a focusable pane (before the widget class in the bases)."""

    async def on_key(self, event: events.Key) -> None:
        """Runs before the widget's own key handling (a mixin comes first in the MRO)."""
        widget: Any = self
        app = widget.app
        focused = app.focused
        if focused is not None and focused is not widget and \
                widget not in focused.ancestors_with_self:
            # Focus moved on while this key waited in this pane's queue: deliver it there.
            event.stop()
            event.prevent_default()
            forward(focused, events.Key(event.key, event.character))
            return
        if event.is_printable and (focused is widget or focused is None):
            event.stop()
            event.prevent_default()
            type_into = getattr(widget.screen, "type_into_composer", None)
            if type_into is not None:
                type_into(event.key, event.character)
            return
        if focused is widget:
            await run_bound_key(widget, event)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """What the screen does not offer (`view` is read-only), the pane does not either."""
        widget: Any = self
        return widget.screen.check_action(action, parameters)
