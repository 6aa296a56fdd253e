"""The status line: inbox actions say what they did on the composer's bottom border.

One line, no toast: a newer notice replaces the older (a burst of twenty inbox keys leaves
one line, the last), it covers no pane (the border is there anyway), and it goes when its
time is up through the app's scheduler (asyncio's timer, which always fires; see
`state/notices.py`), idle app or not.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Protocol

from textual.content import Content

from ..state.notices import DEFAULT_SECONDS, StatusNotes
from ..state.text import visible
from .seams import Panes, World

STYLES = {"information": "$text", "warning": "bold $warning", "error": "bold $error"}


class Host(World, Panes, Protocol):
    """What the status line needs of the screen."""


class StatusLine:
    """`note(text)`: show one line for a few seconds on the composer's bottom border."""

    def __init__(self, host: Host, clock: Callable[[], float] = time.monotonic) -> None:
        self.host = host
        self.notes = StatusNotes()
        self._clock = clock

    @property
    def text(self) -> str:
        """The line shown now ("" when none)."""
        current = self.notes.current
        return current.text if current is not None else ""

    def note(self, text: str, severity: str = "information",
             seconds: float = DEFAULT_SECONDS) -> None:
        """Show `text` (sanitised here) until `seconds` pass or a newer note replaces it."""
        self.notes.put(visible(" ".join(text.split())), severity, self._clock(), seconds)
        self._paint()
        self.host.schedule(seconds + 0.02, self._expire)

    def _expire(self) -> None:
        if self.notes.expire(self._clock()):
            self._paint()

    def _paint(self) -> None:
        current = self.notes.current
        composer: Any = self.host.composer
        if current is None:
            composer.border_subtitle = None
            return
        composer.border_subtitle = Content.styled(f" {current.text} ",
                                                  STYLES.get(current.severity, "$text"))
