"""The tree's filter line (`#tree-filter`): list only the agents whose name matches.

Opened from the tree (ctrl+f there) over the composer, like the search line. Typing
narrows the tree as you type (every word must appear, any case; a match keeps its
owners); up and down move the tree's cursor; enter keeps the filter and goes back to
the tree; escape clears it. The line only reports; the fleet controller filters.
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


class FilterInput(Input):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "done(True)", "Keep filter"),
        Binding("escape", "done(False)", "Clear filter"),
        Binding("up", "move(-1)", "Up", show=False),
        Binding("down", "move(1)", "Down", show=False),
    ]

    def action_done(self, keep: bool) -> None:
        self.post_message(TreeFilter.Done(keep))

    def action_move(self, delta: int) -> None:
        self.post_message(TreeFilter.Move(delta))


class TreeFilter(Horizontal):

    is_open = var(False, toggle_class="-visible")
    no_match = var(False, toggle_class="-no-match")

    class Changed(Message):
        def __init__(self, query: str) -> None:
            super().__init__()
            self.query = query

    class Done(Message):
        def __init__(self, keep: bool) -> None:
            super().__init__()
            self.keep = keep

    class Move(Message):
        def __init__(self, delta: int) -> None:
            super().__init__()
            self.delta = delta

    def compose(self) -> ComposeResult:
        yield FilterInput(placeholder="filter agents by name", id="tree-filter-input")
        yield Static(Content(""), id="tree-filter-status")

    @property
    def input(self) -> FilterInput:
        return self.query_one(FilterInput)

    def open(self, query: str) -> None:
        self.is_open = True
        self.border_title = "Filter agents"
        self.input.value = query
        self.input.focus()
        self.input.select_all()

    def close(self) -> None:
        self.is_open = False

    def show_status(self, text: str, found: bool) -> None:
        self.query_one("#tree-filter-status", Static).update(Content(text))
        self.no_match = not found

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.post_message(self.Changed(event.value))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()  # enter is bound to keeping the filter
