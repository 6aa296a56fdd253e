"""Move or copy inbox items to another agent: a small chooser of where to.

The candidates are the agent's parent, its children and the marked agents (every other
agent when it has none of those), each offered twice: moved (the items leave here, same
ids) and copied (new ids there, the originals stay). One list, no hidden toggle: enter
on a row does what it says. Dismisses with (agent id, copy) or None.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from ..state.text import visible_label

Choice = tuple[str, bool]


class TransferScreen(ModalScreen[Choice | None]):
    """`TransferScreen(what, [(agent id, name, relation), ...])`."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="transfer_cancel"),
    ]

    CSS_PATH = Path(__file__).with_name("transfer.tcss")

    def __init__(self, what: str, targets: Sequence[tuple[str, str, str]]) -> None:
        super().__init__()
        self.what = what
        self.targets = list(targets)
        self.choices: list[Choice] = []

    def compose(self) -> ComposeResult:
        options: list[Option] = []
        for agent_id, name, relation in self.targets:
            label = visible_label(name)
            for copy in (False, True):
                verb = "Copy to" if copy else "Move to"
                self.choices.append((agent_id, copy))
                options.append(Option(Content.assemble(
                    (f"{'+' if copy else '→'} {verb} ", "bold" if not copy else ""),
                    (label, "bold"), (f"  {relation}", "$text-muted"))))
        with Vertical():
            yield Static(Content.assemble((self.what, "bold"), ("  enter chooses · escape "
                                                                "cancels", "$text-muted")),
                         id="transfer-title")
            yield OptionList(*options, id="transfer-targets")

    def on_mount(self) -> None:
        self.query_one("#transfer-targets", OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(self.choices[event.option_index])

    def action_cancel(self) -> None:
        self.dismiss(None)
