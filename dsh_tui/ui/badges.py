"""Lane badges (`⚑ steer`, `✚ inject` …): one look wherever a message's lane is shown
(the inbox, the transcript, the edit dialog, the pause panel, help); and the glyph and
colour of a receipt's state, the same in the inbox and on the transcript's messages."""

from __future__ import annotations

from textual.content import Content

LANE_GLYPH = {"follow-up": "↵", "steer": "⚑", "inject": "✚", "context": "◇", "message": "•"}
LANE_STYLE = {"follow-up": "$lane-followup", "steer": "$lane-steer", "inject": "$lane-inject",
              "context": "$lane-context", "message": "$foreground"}


def lane_badge(lane: str) -> Content:
    """`⚑ steer` in the lane's colour."""
    glyph = LANE_GLYPH.get(lane, "•")
    return Content.styled(f"{glyph} {lane}", f"bold {LANE_STYLE.get(lane, '$foreground')}")


RECEIPT_LOOK = {"claimed": ("◌", "bold $accent"), "sent": ("→", "bold $accent"),
                "answered": ("✓", "bold $success"), "discarded": ("✗", "bold $error"),
                "offered back": ("↺", "bold $warning"), "tombstoned": ("✗", "$text-muted")}
"""A receipt's glyph and style by state (`state/receipts.py`)."""


def receipt_look(state: str) -> tuple[str, str]:
    """(glyph, style) of a receipt in `state`."""
    return RECEIPT_LOOK.get(state, ("·", "$text-muted"))
