"""The key bar (`KeyBar`): Textual's footer, cut honestly when the terminal is narrow.

Textual's footer lays its keys out in one row and lets the edge of the terminal cut the
last ones mid-word: at 80 columns the composer's bar ended in "^n New a" and `f1 Help` was
nowhere. This one keeps the keys that fit whole, in their order, and ends the row with
"…" and the help key (which lists every key), so nothing is cut without an ellipsis and
a way to see it. The palette key stays docked at the right, as in Textual's footer.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.events import Resize
from textual.widget import Widget
from textual.widgets import Footer
from textual.widgets._footer import FooterKey, FooterLabel

HELP_ACTIONS = frozenset({"help", "app.help"})


def key_width(key: FooterKey) -> int:
    """Cells a key takes in the (non-compact) footer: " key " then "description "."""
    width = len(key.key_display) + 2
    return width + len(key.description) + 1 if key.description else width


class KeyBar(Footer):
    """A footer that drops the keys that do not fit whole and says so (see the module)."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._fitted_to = 0

    def compose(self) -> ComposeResult:
        shown: list[Widget] = list(super().compose())
        width = self.size.width
        self._fitted_to = width
        keys = [w for w in shown if isinstance(w, FooterKey)
                and not w.has_class("-command-palette")]
        docked = [w for w in shown if w not in keys]
        room = width - sum(key_width(w) + 3 for w in docked if isinstance(w, FooterKey))
        if width <= 0 or sum(key_width(k) for k in keys) <= room:
            yield from shown
            return
        helper = next((k for k in keys if k.action in HELP_ACTIONS), None)
        room -= 2 + (key_width(helper) if helper is not None else 0)  # "… " and the help key
        used = 0
        for key in keys:
            if key is helper:
                continue
            used += key_width(key)
            if used > room:
                break
            yield key
        yield FooterLabel("…", classes="-more")
        if helper is not None:
            yield helper
        yield from docked

    def on_resize(self, event: Resize) -> None:
        if event.size.width != self._fitted_to:
            self.call_after_refresh(self.recompose)
