"""The command palette (ctrl+p): every action with the key that runs it, themes, agents.

The palette reads the action registry (`keys.ACTIONS`), so it offers exactly what the
help screen lists, each with the key a person has after the config's `[keys]`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial
from typing import Any, Protocol, runtime_checkable

from textual.app import App
from textual.command import CommandPalette, DiscoveryHit, Hit, Hits, Provider, SearchIcon
from textual.content import Content
from textual.markup import escape

from .bindings import keys_for
from .keys import ACTIONS
from .screens.main import MainScreen
from .state.bridge import Bridge
from .state.text import visible_label

PALETTE_ICON = "›"
"""Textual's palette shows 🔎: a two-cell colour emoji, or an empty box in a browser's font."""


@runtime_checkable
class PaletteHost(Protocol):
    """What the palette needs of the app (`DshApp`): where actions run, and the agents."""

    @property
    def bridge(self) -> Bridge: ...

    @property
    def main(self) -> MainScreen: ...

    def run_palette_action(self, name: str) -> None: ...


class DshCommands(Provider):
    """The command palette: every action with its key, themes, and agents to jump to."""

    def _commands(self) -> Iterable[tuple[str, str, Callable[[], Any]]]:
        app = self.app
        assert isinstance(app, PaletteHost)
        return _commands_of(app, app)

    async def discover(self) -> Hits:
        for title, help_text, callback in self._commands():
            yield DiscoveryHit(Content(title), callback, text=title, help=escape(help_text))

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, callback in self._commands():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(escape(title)), callback, text=title,
                          help=escape(help_text))


def _commands_of(app: App[Any],
                 host: PaletteHost) -> Iterable[tuple[str, str, Callable[[], Any]]]:
    """The palette's rows; `app` and `host` are the one app, seen as Textual's App and as
    what the palette needs of this one."""
    for spec in ACTIONS:
        keys = " / ".join(keys_for(app, spec.name))
        title = f"{spec.title}  ({keys})" if keys else spec.title
        yield title, spec.help, partial(host.run_palette_action, spec.name)
    for name in sorted(app.available_themes):
        yield f"theme: {name}", "Switch to this theme (remembered)", \
            partial(setattr, app, "theme", name)
    for view in list(host.bridge.views.values()):
        yield f"agent: {view.name}", f"Select {visible_label(view.id)}", \
            partial(host.main.select_agent, view.id, focus_tree=True)


class Palette(CommandPalette):
    """Textual's command palette with a single-cell, text-presentation search icon."""

    def on_mount(self) -> None:
        self.query_one(SearchIcon).icon = PALETTE_ICON
