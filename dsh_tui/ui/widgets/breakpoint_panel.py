"""The breakpoint panel: one agent stopped before a step, shown in that agent's own screen.

It sits under the transcript and is visible only while the *selected* agent waits
at its breakpoint, so another agent's pause never covers the screen or takes a
key. It lists the batch the step will send (enter on a message edits it, same id)
and offers continue, continue-and-remove and skip as buttons; `f8` continues from
anywhere. It has no letter keys: prose typed into it can never decide a step, and
escape is the app's stop, never "continue". The button row is one tab stop, Continue;
the arrows reach the others, so tab never lands on Skip, whose enter ends the turn.
"""

from __future__ import annotations

from typing import Any, ClassVar

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.message import Message
from textual.reactive import var
from textual.widgets import Button, OptionList, Static
from textual.widgets.option_list import Option

from ..badges import lane_badge
from ..state.breakpoints import CONTINUE, SKIP, Pause
from ..state.lanes import lane_of, source_label
from ..state.text import short_id, visible
from .flat_highlight import FlatHighlight

DISARM = "disarm"
PREVIEW_LINES = 2


def batch_prompt(message: Any, edited: bool = False) -> Content:
    """One message of the batch: lane, sender, id (and "edited"), then its first lines."""
    source = getattr(message, "source", None)
    head = Content.assemble(lane_badge(lane_of(source, None)), "  ",
                            (source_label(source), "bold"), "  ",
                            (f"#{short_id(str(getattr(message, 'id', '')))}", "$text-muted"))
    if edited:
        head += Content.styled("  edited", "bold $warning")
    text = visible(getattr(message, "text", "") or "(no text)")
    lines = text.splitlines() or [""]
    body = "\n".join("  " + line[:400] for line in lines[:PREVIEW_LINES])
    if len(lines) > PREVIEW_LINES:
        body += f"\n  … {len(lines) - PREVIEW_LINES} more lines (enter shows and edits them)"
    return head + "\n" + Content(body)


class BatchList(FlatHighlight, OptionList):
    """The claimed batch; enter (or a click) on a message asks to edit it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "select", "Edit message", show=True),
    ]


class RowButton(Button):
    """A button of the panel's row. Only a `tab_stop` button is in the tab order; the
    others take the focus when the row's arrows bring it (`reach`) and keep it until it
    leaves. Clicking presses any of them."""

    def __init__(self, label: str, *, tab_stop: bool = False, **kwargs: Any) -> None:
        super().__init__(label, **kwargs)
        self.tab_stop = tab_stop
        self._reached = False

    def allow_focus(self) -> bool:
        return self.tab_stop or self._reached or self.has_focus

    def reach(self) -> None:
        """Focus it: the person moved here on purpose (an arrow key)."""
        self._reached = True
        self.focus()

    def on_blur(self, _event: events.Blur) -> None:
        self._reached = False


class ButtonRow(Horizontal):
    """left/right move between the row's buttons (no wrap)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left", "step(-1)", "Previous button", show=False),
        Binding("right", "step(1)", "Next button", show=False),
    ]

    def action_step(self, by: int) -> None:
        buttons = list(self.query(RowButton))
        focused = self.screen.focused
        if not isinstance(focused, RowButton) or focused not in buttons:
            return
        buttons[min(max(buttons.index(focused) + by, 0), len(buttons) - 1)].reach()


class BreakpointPanel(Vertical):
    """Shows one `Pause` (or nothing). Decisions and edits are posted as messages."""

    is_open = var(False, toggle_class="-open")
    """A pause is shown (the `-open` class follows it)."""

    class Decided(Message):
        def __init__(self, pause: Pause, decision: str) -> None:
            super().__init__()
            self.pause = pause
            self.decision = decision

    class EditRequested(Message):
        def __init__(self, pause: Pause, message_id: str) -> None:
            super().__init__()
            self.pause = pause
            self.message_id = message_id

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.pause: Pause | None = None
        self.can_focus = False
        self._subtitle = Content("")

    def compose(self) -> ComposeResult:
        yield Static(id="bp-where")
        yield BatchList(id="bp-batch")
        with ButtonRow(id="bp-buttons"):
            yield RowButton("Continue (f8)", id=CONTINUE, variant="primary", tab_stop=True)
            yield RowButton("Continue, remove ◆", id=DISARM)
            yield RowButton("Skip step", id=SKIP, variant="error")

    def show(self, pause: Pause | None, agent_name: str = "") -> None:
        """Show `pause` (None hides the panel); called again after an edit to redraw."""
        had_focus = self.has_focus_within
        self.pause = pause
        self.is_open = pause is not None
        if pause is None:
            if had_focus:
                self.app.call_later(self._leave)
            return
        self.border_title = Content(f"◆ {agent_name} · paused at breakpoint")
        batch = pause.batch
        count = len(batch)
        where = f"Turn {pause.turn}, before step {pause.step}: "
        where += (f"this step will send {count} new message{'s' if count != 1 else ''} "
                  "from the inbox." if count else "no new messages from the inbox; the step "
                  "goes on from what the model already has (tool results, context).")
        self.query_one("#bp-where", Static).update(Content(where))
        listing = self.query_one("#bp-batch", BatchList)
        keep = listing.highlighted
        listing.set_options([Option(batch_prompt(m, m.id in pause.edited), id=f"bp:{m.id}")
                             for m in batch])
        listing.display = bool(count)
        if count:
            listing.highlighted = min(keep or 0, count - 1)
        self._subtitle = Content(
            "enter on a message edits it · skip: turn ends blocked, messages offered back · "
            "escape stops" if count else "skip: the turn ends blocked · escape stops")
        self._show_subtitle()

    def _show_subtitle(self) -> None:
        """What the panel's keys do; with the focus on Skip, what enter there would do."""
        focused = self.screen.focused if self.is_attached else None
        if isinstance(focused, RowButton) and focused.id == SKIP and self in focused.ancestors:
            self.border_subtitle = Content.styled(
                "enter on Skip step ends this turn blocked (its messages are offered back) · "
                "← → move", "bold $warning")
        else:
            self.border_subtitle = self._subtitle

    def on_descendant_focus(self, _event: events.DescendantFocus) -> None:
        self._show_subtitle()

    def on_descendant_blur(self, _event: events.DescendantBlur) -> None:
        self.call_later(self._show_subtitle)  # after the focus has landed elsewhere

    def _leave(self) -> None:
        composer = self.app.query("#composer")
        if composer:
            composer.first().focus()

    def focus_continue(self) -> None:
        self.query_one(f"#{CONTINUE}", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if self.pause is not None and event.button.id:
            self.post_message(self.Decided(self.pause, event.button.id))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        option_id = event.option.id or ""
        if self.pause is not None and option_id.startswith("bp:"):
            self.post_message(self.EditRequested(self.pause, option_id[3:]))

    @staticmethod
    def summary(pause: Pause) -> str:
        """One line for the transcript title: where the agent stopped."""
        return f"◆ paused at breakpoint · turn {pause.turn}, before step {pause.step}"

