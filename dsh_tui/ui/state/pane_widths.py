"""How the side panes share the width with the transcript.

Fixed side panes (26 + 34 columns) left the transcript 33 columns at 100 and 13 at 60
with the inbox open, where tables break mid-word. Here each side pane asks for a share of
the width between a minimum and a maximum (an empty inbox asks for less), and a pane the
person has not asked for folds before the transcript drops below `TRANSCRIPT_MIN`: the
inbox first (the transcript title keeps its counts), then the tree (the needs-you count
stays on screen). A pane the person opened stays open and shrinks to its minimum first.
"""

from __future__ import annotations

from dataclasses import dataclass

AUTO, SHOWN, HIDDEN = "auto", "shown", "hidden"
TRANSCRIPT_MIN = 60
"""Columns the transcript keeps before a side pane the person did not open folds."""


@dataclass(frozen=True, slots=True)
class Share:
    """A side pane's claim: its share of the width, clamped to [least, most]."""

    share: float
    least: int
    most: int

    def width(self, total: int) -> int:
        """The columns this pane asks for at `total` columns."""
        return max(self.least, min(self.most, round(total * self.share)))


TREE = Share(0.22, 24, 44)
INBOX = Share(0.26, 30, 60)
EMPTY_INBOX = Share(0.16, 22, 32)


@dataclass(frozen=True, slots=True)
class Widths:
    """Columns per pane; 0 means folded."""

    tree: int
    inbox: int
    transcript: int


def pane_widths(total: int, *, tree: str = AUTO, inbox: str = AUTO,
                inbox_empty: bool = False) -> Widths:
    """The widths at `total` columns. `tree` / `inbox`: `auto` (shown while it fits),
    `shown` (the person opened it) or `hidden` (the person closed it)."""
    wants = {"tree": tree, "inbox": inbox}
    shares = {"tree": TREE, "inbox": EMPTY_INBOX if inbox_empty else INBOX}
    open_panes = [name for name in ("tree", "inbox") if wants[name] != HIDDEN]

    def asked() -> dict[str, int]:
        return {name: shares[name].width(total) for name in open_panes}

    for name in ("inbox", "tree"):  # the order panes fold in
        if total - sum(asked().values()) >= TRANSCRIPT_MIN:
            break
        if name in open_panes and wants[name] == AUTO:
            open_panes.remove(name)
    widths = asked()
    left = total - sum(widths.values())
    if left < TRANSCRIPT_MIN // 2 and widths:
        # Only panes the person opened are left: they give way down to a third each
        # of the width, so the transcript keeps something to read.
        for name in widths:
            widths[name] = max(min(widths[name], total // 3), 1)
        left = total - sum(widths.values())
    return Widths(widths.get("tree", 0), widths.get("inbox", 0), max(left, 0))
