"""The command palette (ctrl+p): every action with the key that runs it, themes, agents.

The palette reads the action registry (`keys.ACTIONS`), so it offers exactly what the
help screen lists, each with the key a person has after the config's `[keys]`. A row is
found by its title (Textual's fuzzy match) or by the words a person would type for it
(`ActionSpec.words`: "export", "delete", "resume" find the sessions list...), each query
word starting one of them; such a hit shows the words it matched.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial
from typing import Any, Protocol, runtime_checkable

from textual.app import App
from textual.command import CommandPalette, DiscoveryHit, Hit, Hits, Provider, SearchIcon
from textual.content import Content
from textual.fuzzy import Matcher
from textual.markup import escape

from .bindings import keys_for
from .keys import ACTIONS
from .screens.main import MainScreen
from .state.bridge import Bridge
from .state.text import visible_label

PALETTE_ICON = "›"
"""Textual's palette shows 🔎: a two-cell colour emoji, or an empty box in a browser's font."""


TITLE_START = 1.2
"""A title that begins with the query outranks one that has it further in."""
WORD_WEIGHT = 0.9
"""A word of a row's `words` counts a little less than the same word in its title."""


@dataclass(frozen=True)
class PaletteRow:
    """One thing the palette offers: what it shows, says, runs, and other words for it."""

    title: str
    help: str
    run: Callable[[], Any]
    words: str = ""


def word_score(query: str, row: PaletteRow) -> tuple[float, list[str]]:
    """How well `query` names `row` by words: every query word must start a word of the
    row's title or `words` (casefolded). The score sums Textual's fuzzy score of each query
    word against the word it starts (`WORD_WEIGHT` of it for one of `words`); the `words`
    it matched are returned to be shown. (0, []) when some query word starts none."""
    own = row.title.casefold().split()
    other = row.words.casefold().split()
    score = 0.0
    matched: list[str] = []
    for token in query.casefold().split():
        matcher = Matcher(token)
        best = max([(matcher.match(word), word) for word in own if word.startswith(token)] +
                   [(matcher.match(word) * WORD_WEIGHT, word) for word in other
                    if word.startswith(token)], default=None)
        if best is None:
            return 0.0, []
        score += best[0]
        if best[1] not in own and best[1] not in matched:
            matched.append(best[1])
    return score, matched


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

    def _commands(self) -> Iterable[PaletteRow]:
        app = self.app
        assert isinstance(app, PaletteHost)
        return _commands_of(app, app)

    async def discover(self) -> Hits:
        for row in self._commands():
            yield DiscoveryHit(Content(row.title), row.run, text=row.title,
                               help=escape(row.help))

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        start = query.casefold().strip()
        for row in self._commands():
            by_title = matcher.match(row.title)
            by_words, matched = word_score(query, row)
            score = max(by_title, by_words)
            if score <= 0:
                continue
            if start and row.title.casefold().startswith(start):
                score *= TITLE_START  # "quit": Quit before "Stop or quit"
            if matched and by_words > by_title:  # found through its other words: say which
                shown = Content(row.title) + Content.styled(f"  · {' '.join(matched)}",
                                                            "$text-muted")
            else:
                shown = matcher.highlight(escape(row.title))
            yield Hit(score, shown, row.run, text=row.title, help=escape(row.help))


def _commands_of(app: App[Any], host: PaletteHost) -> Iterable[PaletteRow]:
    """The palette's rows; `app` and `host` are the one app, seen as Textual's App and as
    what the palette needs of this one."""
    for spec in ACTIONS:
        keys = " / ".join(keys_for(app, spec.name))
        title = f"{spec.title}  ({keys})" if keys else spec.title
        yield PaletteRow(title, spec.help, partial(host.run_palette_action, spec.name),
                         spec.words)
    for name in sorted(app.available_themes):
        yield PaletteRow(f"theme: {name}", "Switch to this theme (remembered)",
                         partial(setattr, app, "theme", name), "colours colors appearance")
    for view in list(host.bridge.views.values()):
        yield PaletteRow(f"agent: {view.name}", f"Select {visible_label(view.id)}",
                         partial(host.main.select_agent, view.id, focus_tree=True),
                         "select go jump switch show")


class Palette(CommandPalette):
    """Textual's command palette with a single-cell, text-presentation search icon."""

    def on_mount(self) -> None:
        self.query_one(SearchIcon).icon = PALETTE_ICON
