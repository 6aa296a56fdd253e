"""Lane badges (`⚑ steer`, `✚ inject` …): one look wherever a message's lane is shown
(the inbox, the transcript, the edit dialog, the pause panel, help)."""

from __future__ import annotations

from textual.content import Content

LANE_GLYPH = {"follow-up": "↵", "steer": "⚑", "inject": "✚", "context": "◇", "message": "•"}
LANE_STYLE = {"follow-up": "$lane-followup", "steer": "$lane-steer", "inject": "$lane-inject",
              "context": "$lane-context", "message": "$foreground"}


def lane_badge(lane: str) -> Content:
    """`⚑ steer` in the lane's colour."""
    glyph = LANE_GLYPH.get(lane, "•")
    return Content.styled(f"{glyph} {lane}", f"bold {LANE_STYLE.get(lane, '$foreground')}")
