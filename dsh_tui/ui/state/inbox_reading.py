"""One reading of an agent's log for both its receipts and its inbox timeline.

The receipts (what the inbox lists) and the timeline (the view of every inbox operation)
are two folds of the same facts (`inbox_log.InboxLogReader`). Reading the log once for
both halves the work, and the timeline of an agent whose inbox the screen has shown is
already folded when it opens: opening it draws the lines on screen and nothing more.
Plain Python, no Textual.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .inbox_log import InboxLogReader
from .receipts import ReceiptBook
from .timeline import Timeline


class InboxReading:
    """`apply` each event (or `apply_all` a log); read `receipts` and `timeline`."""

    def __init__(self, seed_length: int = 0) -> None:
        self.reader = InboxLogReader(seed_length)
        self.receipts = ReceiptBook(seed_length, reader=self.reader)
        self.timeline = Timeline(seed_length, reader=self.reader)

    def apply(self, event: Any) -> None:
        """Fold one session event into both."""
        fold, add = self.receipts.fold, self.timeline.add
        for fact in self.reader.apply(event):
            fold(fact)
            add(fact)

    def apply_all(self, events: Iterable[Any]) -> InboxReading:
        """Fold a whole log, then settle; returns self."""
        fold, add, read = self.receipts.fold, self.timeline.add, self.reader.apply
        for event in events:
            for fact in read(event):
                fold(fact)
                add(fact)
        self.settle()
        return self

    def settle(self) -> None:
        """Resolve a held-back removal (a claim) now: at a quiet moment (a move's two
        halves are appended in one call, so never between them)."""
        for fact in self.reader.settle():
            self.receipts.fold(fact)
            self.timeline.add(fact)
