"""The "not saved" line (`#save-state`): shown only while sessions cannot be written.

A full or read-only data dir must never look like a working one. The
persistence keeps unwritten events in memory and retries by itself; this line
polls its cheap `save_failure` twice a second and stays up, in the warning
colour, until everything is on disk again, then hides.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.reactive import var
from textual.widgets import Static

POLL_SECONDS = 0.5


class SaveState(Static):

    failing = var(False, toggle_class="-failing")
    """Saving fails: the bar shows (the `-failing` class follows it)."""

    def __init__(self, persistence: Any, **kwargs: Any) -> None:
        super().__init__("", markup=False, **kwargs)
        self.persistence = persistence
        self.failure: str | None = None

    def on_mount(self) -> None:
        if self.persistence is not None:
            self.set_interval(POLL_SECONDS, self.check)

    def check(self) -> None:
        failure = getattr(self.persistence, "save_failure", None)
        if failure == self.failure:
            return
        self.failure = failure
        self.failing = failure is not None
        if failure is not None:
            self.update(Text(f"! not saved — {failure} (kept in memory; retrying)",
                             no_wrap=True, overflow="ellipsis"))
