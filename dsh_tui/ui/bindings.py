"""Textual's side of the action registry: Bindings built from `keys.ACTIONS`, and keys shown.

A widget or screen declares where an action's key works (`bind("steer",
action="screen.steer")`); the key, the footer label and the tooltip come from the
registry row of that id, so they are written once and the config's `[keys]` remaps
them by id.
"""

from __future__ import annotations

from typing import Any

from textual.app import App
from textual.binding import Binding

from .keys import SPEC_BY_NAME, bound_keys


def bind(name: str, *, action: str | None = None, show: bool = True,
         priority: bool = False) -> Binding:
    """The Binding of registry action `name` (its id), running `action` (default: `name`;
    a pane names the screen's, `screen.NAME`)."""
    spec = SPEC_BY_NAME[name]
    return Binding(spec.key, action or name, spec.label, show=show, priority=priority,
                   id=name, tooltip=spec.help)


def keys_for(app: App[Any], action: str) -> list[str]:
    """The keys bound to `action` right now, as the footer would show them (only those
    that work where the app runs: not a key the browser keeps, not shift+enter in a
    terminal)."""
    return [app.get_key_display(Binding(key, action)) for key in bound_keys(app, action)]
