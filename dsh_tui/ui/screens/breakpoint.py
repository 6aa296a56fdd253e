"""The breakpoint dialog: an agent is stopped before a step, showing what the step will send."""

from __future__ import annotations

from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from ..breakpoints import CONTINUE, SKIP, Pause
from ..models import lane_of, source_label, visible

DISARM = "disarm"


def batch_lines(messages: tuple[Any, ...]) -> list[Content]:
    """One entry per message of the batch: lane, sender, then its text as sent."""
    out = []
    for message in messages:
        source = getattr(message, "source", None)
        lane = lane_of(source, None)
        head = Content.assemble((lane, "bold $accent"), "  ", (source_label(source), "bold"),
                                "  ", (f"#{str(getattr(message, 'id', ''))[:8]}", "$text-muted"))
        out.append(head + "\n" + Content(visible(getattr(message, "text", "") or "(no text)")))
    return out


class BreakpointScreen(ModalScreen[str]):
    """Dismisses with "continue", "skip" or "disarm" (continue and remove the breakpoint)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("c,enter,escape", "decide('continue')", "Continue"),
        Binding("s", "decide('skip')", "Skip step"),
        Binding("r", "decide('disarm')", "Continue, remove breakpoint"),
    ]

    DEFAULT_CSS = """
    BreakpointScreen { align: center middle; }
    BreakpointScreen > Vertical { width: 84; max-height: 80%; height: auto;
                                  border: thick $error; background: $surface; padding: 1 2; }
    BreakpointScreen #where { text-style: bold; margin-bottom: 1; }
    BreakpointScreen #batch { height: auto; max-height: 20; margin-bottom: 1; }
    BreakpointScreen .message { margin-bottom: 1; padding: 0 1; border-left: outer $accent; }
    BreakpointScreen #empty { color: $text-muted; margin-bottom: 1; }
    BreakpointScreen Horizontal { height: auto; align-horizontal: right; }
    BreakpointScreen Button { margin-left: 2; }
    """

    def __init__(self, pause: Pause, agent_name: str) -> None:
        super().__init__()
        self.pause = pause
        self.agent_name = agent_name

    def compose(self) -> ComposeResult:
        pause = self.pause
        count = len(pause.messages)
        with Vertical():
            yield Static(Content(f"◆ Breakpoint · {self.agent_name} · turn {pause.turn}, "
                                 f"before step {pause.step}"), id="where")
            if count:
                yield Static(Content(f"This step will send {count} new message"
                                     f"{'s' if count != 1 else ''} from the inbox:"))
                with VerticalScroll(id="batch"):
                    for line in batch_lines(pause.messages):
                        yield Static(line, classes="message", markup=False)
            else:
                yield Static(Content("No new messages from the inbox: the step goes on from "
                                     "what the model already has (tool results, context)."),
                             id="empty")
            yield Static(Content("Skip ends the turn as blocked; these messages go with it."),
                         id="skip-note")
            with Horizontal():
                yield Button("Skip step (s)", id=SKIP, variant="error")
                yield Button("Continue, remove breakpoint (r)", id=DISARM)
                yield Button("Continue (c)", id=CONTINUE, variant="primary")

    def on_mount(self) -> None:
        self.query_one(f"#{CONTINUE}", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(str(event.button.id))

    def action_decide(self, decision: str) -> None:
        self.dismiss(decision)
