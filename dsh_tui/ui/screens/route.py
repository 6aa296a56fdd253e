"""Which route a new agent takes: one line per configured route, the likely one preselected.

Shown by `ctrl+n` and the tree's spawn key when more than one route is on offer, so
`enter` alone keeps the preselected route (the selected agent's) and arrows pick another.
A route whose key is missing from the environment is listed, marked, and still choosable:
its requests fail with the adapter's one-line "no key" error, as they would anyway.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from ..state.routes import Route
from ..state.text import visible_label
from ..widgets.flat_highlight import FlatOptionList


class RouteScreen(ModalScreen[str | None]):
    """Dismisses with the chosen route's name, or None (escape)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="route_cancel"),
    ]

    CSS_PATH = Path(__file__).with_name("route.tcss")

    # Stays in default CSS: OptionList's own `:focus` border must keep winning (the list is
    # focused while the dialog is open), as it did; a .tcss rule would hide it.
    DEFAULT_CSS = """
    RouteScreen OptionList { height: auto; max-height: 12; border: none; padding: 0; }
    """

    def __init__(self, question: str, routes: Sequence[Route], current: str | None,
                 missing_keys: Mapping[str, str] | None = None) -> None:
        super().__init__()
        self.question = question
        self.routes = list(routes)
        self.current = current
        self.missing_keys = dict(missing_keys or {})

    def compose(self) -> ComposeResult:
        options = []
        for route in self.routes:
            line = route.describe()
            if route.name in self.missing_keys:
                line += f" · {self.missing_keys[route.name]} not set"
            options.append(Option(Content(visible_label(line)), id=route.name))
        with Vertical():
            yield Static(Content.styled(visible_label(self.question), "bold"), id="route-title")
            yield FlatOptionList(*options, id="route-list")
            yield Static(Content("enter chooses · ↑↓ move · escape cancels"), id="route-keys")

    def on_mount(self) -> None:
        listing = self.query_one(OptionList)
        names = [route.name for route in self.routes]
        listing.highlighted = names.index(self.current) if self.current in names else 0
        listing.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)
