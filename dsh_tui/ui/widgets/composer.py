"""The composer (`#composer`): a multi-line input with three ways to send.

`enter` queues a follow-up (next turn), `ctrl+s` steers the running turn (next
step, wakes an idle agent), `ctrl+t` (`alt+t` in a browser, which keeps ctrl+t for a
new tab) injects context for the next step without waking anyone, `ctrl+j` inserts a
newline (so does `shift+enter` in a browser and where the terminal reports it; most
terminals send it as enter, so a terminal never advertises it). `ctrl+w` or `alt+backspace`
deletes the word before the cursor (a browser closes the tab on ctrl+w). Pasted text
keeps its newlines. `up` on the first line and `down` on the last walk through what was
sent before.

Keys are resolved through the bindings, not hard-coded, so remapping `followup`
to another key in the config frees `enter` to insert newlines again.
"""

from __future__ import annotations

from typing import Any, ClassVar

from textual import events
from textual.binding import BindingType
from textual.geometry import Region
from textual.message import Message
from textual.strip import Strip
from textual.widgets import TextArea
from textual.widgets.text_area import Edit, EditResult

from ..bindings import bind
from ..keypaint import KeyPaint
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
        self._styled: tuple[Any, int] | None = None
        self._style_updates = 0
        super().__init__(visible_input(text), **kwargs)

    def notify_style_update(self) -> None:
        self._style_updates += 1
        super().notify_style_update()

    def render_lines(self, crop: Region) -> list[Strip]:
        """TextArea's, without applying the CSS to its theme on every render.

        TextArea copies its CSS (base colours, cursor, selection) into its theme each time
        it draws, ~1 ms of every keystroke's frame; the result changes only when the CSS
        does (a theme, focus, a class: `notify_style_update`) or the theme object is
        replaced (TextArea makes a new one on each theme change), so it is applied then."""
        theme = self._theme
        if theme is not None and self._styled != (theme, self._style_updates):
            theme.apply_css(self)
            self._styled = (theme, self._style_updates)
        return super(TextArea, self).render_lines(crop)

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
        self.key_paint = KeyPaint(self)
        """Paints what a key changed here at once, ahead of the screen's next frame."""

    # -- keys ----------------------------------------------------------------------------------

    async def _on_message(self, message: Message) -> None:
        """Once a key is handled here (typed, deleted, moved the cursor), its change is
        painted now, before the layout and redraw of streamed text that the screen's next
        frame would make it wait behind (`keypaint.py`)."""
        await super()._on_message(message)
        if isinstance(message, events.Key) and self.is_mounted and self.key_paint.after_key():
            painted = getattr(self.app, "key_painted", None)
            if callable(painted):
                painted()  # streamed text that waited for typing is drawn right after it

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
