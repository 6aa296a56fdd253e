"""The search line (`#search`): find text in the selected agent's transcript.

Hidden until `ctrl+f`. Typing searches as you type and jumps to the newest match;
enter (or up) goes to the next older match, down (or shift+enter where the terminal
reports it) to the next newer one, escape closes it and leaves the transcript where the match put it. The bar
only reports what the person did; the app owns the search and the transcript.
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.content import Content
from textual.message import Message
from textual.reactive import var
from textual.widgets import Input, Static


class SearchInput(Input):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter,up", "step(True)", "Older match"),
        Binding("down,shift+enter", "step(False)", "Newer match"),
        Binding("escape", "close", "Close search"),
    ]

    def action_step(self, older: bool) -> None:
        self.post_message(SearchBar.Step(older))

    def action_close(self) -> None:
        self.post_message(SearchBar.Closed())


class SearchBar(Horizontal):

    is_open = var(False)
    """Shown under the transcript."""
    no_match = var(False, toggle_class="-no-match")
    """The query finds nothing: the status turns to a warning."""

    class Changed(Message):
        def __init__(self, query: str) -> None:
            super().__init__()
            self.query = query

    class Step(Message):
        def __init__(self, older: bool) -> None:
            super().__init__()
            self.older = older

    class Closed(Message):
        pass

    def compose(self) -> ComposeResult:
        yield SearchInput(placeholder="search this transcript (a capital letter matches case)",
                          id="search-input")
        yield Static(Content(""), id="search-status")

    @property
    def input(self) -> SearchInput:
        return self.query_one(SearchInput)

    def watch_is_open(self, is_open: bool) -> None:
        # `display` itself, not a class the stylesheet matches: a class change applied the
        # whole stylesheet to the bar's widgets again on every ctrl+f and escape.
        self.display = is_open

    def open(self) -> None:
        self.is_open = True
        self.border_title = "Search"
        self.input.focus()
        self.input.select_all()

    def close(self) -> None:
        self.is_open = False

    def show_status(self, text: str, found: bool) -> None:
        self.query_one("#search-status", Static).update(Content(text))
        self.no_match = not found

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.post_message(self.Changed(event.value))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()  # enter is bound to the older match; nothing is submitted
