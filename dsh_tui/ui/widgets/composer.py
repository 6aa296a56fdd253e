"""The composer (`#composer`): a multi-line input with three ways to send.

`enter` queues a follow-up (next turn), `ctrl+s` steers the running turn (next step, wakes
an idle agent), `ctrl+t` (`alt+t` in a browser) injects context for the next step without
waking anyone, `ctrl+j` inserts a newline. `ctrl+w` or `alt+backspace` deletes a word.
Pasted text keeps its newlines; `up`/`down` at the edges walk through what was sent. Keys
resolve through the bindings, so remapping `followup` frees `enter` for newlines.
"""

from __future__ import annotations

from typing import Any, ClassVar

from textual import events
from textual.binding import BindingType
from textual.widgets import TextArea
from textual.widgets.text_area import Edit, EditResult

from ..bindings import bind
from ..panekeys import run_bound_key
from ..state.text import visible_input

HISTORY_LIMIT = 200


class SafeTextArea(TextArea):
    """A TextArea that never holds a raw control character.

    A TextArea draws its document as is, so a pasted ESC or NUL (or a queued message
    that carried one into the edit dialog) would reach the terminal raw. Everything
    typed, pasted or loaded passes the shared rule first: controls become visible
    symbols (and are sent that way), CRLF and CR become newlines.
    """

    def __init__(self, text: str = "", **kwargs: Any) -> None:
        super().__init__(visible_input(text), **kwargs)

    def edit(self, edit: Edit) -> EditResult:
        """Every change to the document passes here (Textual's public `TextArea.edit`):
        typing, a bracketed paste, the app clipboard (`action_paste`), `insert`,
        `replace`. So the text is made visible once, at this one door, and the undo
        history records the clean text; undo and redo replay recorded edits only."""
        clean = visible_input(edit.text)
        if clean != edit.text:
            edit = Edit(clean, edit.from_location, edit.to_location,
                        edit.maintain_selection_offset)
        return super().edit(edit)

    def load_text(self, text: str) -> None:
        super().load_text(visible_input(text))


class Composer(SafeTextArea):
    BINDINGS: ClassVar[list[BindingType]] = [
        bind("followup", action="screen.followup"),
        bind("steer", action="screen.steer"),
        bind("inject", action="screen.inject"),
        bind("newline", show=False),
        # A browser sends alt+backspace as ESC DEL, which Textual reads as ctrl+w.
        bind("delete_word", show=False),
    ]

    HELP = "Type a message for the selected agent. enter: follow-up (queued for the next " \
           "turn) · ctrl+s: steer (delivered at the next step) · ctrl+t (alt+t in a " \
           "browser): inject context (next step, does not wake the agent) · ctrl+j: newline."

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(soft_wrap=True, show_line_numbers=False, tab_behavior="focus",
                         highlight_cursor_line=False, **kwargs)
        self.sent_history: list[str] = []
        self._history_index: int | None = None
        self._draft = ""

    # -- keys ----------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """What the screen does not offer (`view` is read-only), the composer does not either."""
        return self.screen.check_action(action, parameters)

    async def on_key(self, event: events.Key) -> None:
        """Run a bound key here, in the order keys arrived, not after the rest of the read.

        Textual checks non-priority bindings only when a key has bubbled back up to the
        app, through one message queue per ancestor, while the characters typed after it
        are inserted here at once; so `msgONE⏎msgTWO⏎` in one read became one message
        `msgONEmsgTWO`, and `one ctrl+j two` put the newline last. Every key that is bound
        (after the config's `[keys]`; priority bindings already ran at the app) is run
        right here instead, and stopped with `prevent_default()`, so neither TextArea's
        own key handler (which Textual calls after this one, subclass first) nor the app
        runs it a second time. An unbound key goes on to TextArea's handler untouched."""
        if event.key != event.character:
            await run_bound_key(self, event)

    def action_delete_word(self) -> None:
        self.action_delete_word_left()

    def action_newline(self) -> None:
        if not self.read_only:
            start, end = self.selection
            self.replace("\n", start, end, maintain_selection_offset=False)

    # -- history -------------------------------------------------------------------------------

    def remember(self, text: str) -> None:
        if text.strip() and (not self.sent_history or self.sent_history[-1] != text):
            self.sent_history.append(text)
            del self.sent_history[:-HISTORY_LIMIT]
        self._history_index = None
        self._draft = ""

    def action_cursor_up(self, select: bool = False) -> None:
        if not select and self.cursor_location[0] == 0 and self.sent_history:
            if self._history_index is None:
                self._draft = self.text
                self._history_index = len(self.sent_history)
            if self._history_index > 0:
                self._history_index -= 1
                self._load(self.sent_history[self._history_index])
            return
        super().action_cursor_up(select)

    def action_cursor_down(self, select: bool = False) -> None:
        last_row = self.document.line_count - 1
        if not select and self._history_index is not None and \
                self.cursor_location[0] == last_row:
            self._history_index += 1
            if self._history_index >= len(self.sent_history):
                self._history_index = None
                self._load(self._draft)
            else:
                self._load(self.sent_history[self._history_index])
            return
        super().action_cursor_down(select)

    def show_draft(self, text: str) -> None:
        """Show `text` as the message being written (another agent's draft): a walk
        through the sent history starts over from it."""
        self._history_index = None
        self._draft = ""
        if text != self.text:
            self._load(text)

    def _load(self, text: str) -> None:
        self.load_text(text)
        self.move_cursor(self.document.end)
