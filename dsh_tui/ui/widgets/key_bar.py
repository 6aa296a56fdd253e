"""The key bar (`KeyBar`): Textual's footer, cut honestly when the terminal is narrow.

Textual's footer lays its keys out in one row and lets the edge of the terminal cut the
last ones mid-word: at 80 columns the composer's bar ended in "^n New a" and `f1 Help` was
nowhere. This one keeps the keys that fit whole, in their order, and ends the row with
"…" and the help key (which lists every key), so nothing is cut without an ellipsis and
a way to see it. The palette key stays docked at the right, as in Textual's footer.
"""

from __future__ import annotations

from typing import Protocol, cast

from textual.app import ComposeResult
from textual.events import Resize
from textual.widget import Widget
from textual.widgets import Footer, Label

HELP_ACTIONS = frozenset({"help", "app.help"})


class FooterKeyLike(Protocol):
    """What the bar reads of a key Textual's footer composes. Textual 8.2 exports no public
    name for that widget class (`FooterKey` lives in the private `textual.widgets._footer`),
    so the bar recognises one by these public attributes instead of importing it."""

    key_display: str
    description: str
    action: str


def is_key(widget: Widget) -> bool:
    """A footer key: the widgets `Footer.compose` yields that carry a binding."""
    return all(isinstance(getattr(widget, name, None), str)
               for name in ("key_display", "description", "action"))


def key_width(widget: Widget) -> int:
    """Cells a key takes in the (non-compact) footer: " key " then "description "."""
    key = cast(FooterKeyLike, widget)
    width = len(key.key_display) + 2
    return width + len(key.description) + 1 if key.description else width


class KeyBar(Footer):
    """A footer that drops the keys that do not fit whole and says so (see the module)."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._fitted_to = 0

    def compose(self) -> ComposeResult:
        shown: list[Widget] = list(super().compose())
        for widget in shown:
            self._styled_as_bound(widget)
        width = self.size.width
        self._fitted_to = width
        keys = [w for w in shown if is_key(w) and not w.has_class("-command-palette")]
        docked = [w for w in shown if w not in keys]
        room = width - sum(key_width(w) + 3 for w in docked if is_key(w))
        if width <= 0 or sum(key_width(k) for k in keys) <= room:
            yield from shown
            return
        helper = next((k for k in keys if cast(FooterKeyLike, k).action in HELP_ACTIONS), None)
        room -= 2 + (key_width(helper) if helper is not None else 0)  # "… " and the help key
        used = 0
        for key in keys:
            if key is helper:
                continue
            used += key_width(key)
            if used > room:
                break
            yield key
        yield Label("…", classes="-more")
        if helper is not None:
            yield helper
        yield from docked

    def _styled_as_bound(self, widget: Widget) -> None:
        """Give a key bound to the bar's `compact` that value (and its class) before it
        mounts. Textual's key starts compact and is restyled on its own when the binding
        sets it: one style pass per key on every recompose, and the bar recomposes whenever
        focus moves (opening or closing the search or the event log): ~20 keys, ~50 ms of
        the frame. (The palette key is not bound and keeps its own value.)"""
        compact = getattr(type(widget), "compact", None)
        bound = "compact" in (getattr(widget, "_reactive_connect", None) or {})
        if compact is None or not bound:
            return
        widget.set_reactive(compact, self.compact)
        widget.set_class(self.compact, "-compact", update=False)

    def on_resize(self, event: Resize) -> None:
        if event.size.width != self._fitted_to:
            self.call_after_refresh(self.recompose)
