"""The status line's one notice: what the last inbox action did, for a few seconds.

A burst of inbox keys used to raise a toast per key, stacked over the panes being edited.
The status line shows one notice at a time: a newer one replaces the older at once, and
each goes when its time is up, by a deadline the app's own scheduler checks (an asyncio
timer that always fires, not a widget timer a busy frame can skip). Plain Python, no
Textual.
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_SECONDS = 4.0
"""How long a notice stays, unless its caller says otherwise."""


@dataclass(frozen=True, slots=True)
class Notice:
    """One line of the status line: its text, severity and the moment it goes."""

    text: str
    severity: str
    until: float


class StatusNotes:
    """The notice shown now (None: the line is empty)."""

    def __init__(self) -> None:
        self.current: Notice | None = None
        self.shown = 0
        """Notices put so far (tests and the coalescing check read it)."""

    def put(self, text: str, severity: str, now: float,
            seconds: float = DEFAULT_SECONDS) -> Notice:
        """Show `text` from `now` for `seconds`, replacing whatever was shown."""
        self.current = Notice(text, severity, now + max(0.0, seconds))
        self.shown += 1
        return self.current

    def expire(self, now: float) -> bool:
        """Drop the notice if its time is up; True when that changed what shows."""
        current = self.current
        if current is None or current.until > now:
            return False
        self.current = None
        return True

    def clear(self) -> bool:
        """Drop the notice now (a dialog took the line's place); True if one was shown."""
        shown = self.current is not None
        self.current = None
        return shown
