"""Lanes and sources: how a person's message is filed and how its badge is read back.

A person sends in one of three lanes (follow-up, steer, inject). The lane is stored on
the message's `source`, so it survives a restart and shows in `dsh-tui view` too; the
inbox list it sits in (next-step or next-turn) is the harness's business.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

LANES: tuple[str, ...] = ("follow-up", "steer", "inject")
"""The three ways a person sends: the lane is stored on the message source (`lane`), so it
survives a restart and shows in `dsh-tui view` too."""

LANE_TARGET = {"follow-up": "next-turn", "steer": "next-step", "inject": "next-step"}


def lane_of(source: Mapping[str, Any] | None, target: str | None) -> str:
    """The badge of a message: the lane the person chose, else what its list and source imply."""
    source = source if isinstance(source, Mapping) else {}
    lane = source.get("lane")
    if lane in LANES and (target is None or LANE_TARGET[lane] == target):
        return str(lane)
    if target == "next-turn":
        return "follow-up"
    kind = source.get("kind")
    if kind in ("plugin", "tool"):
        return "context"
    if target == "next-step":
        return "steer"
    return "message"


def source_label(source: Mapping[str, Any] | None) -> str:
    """Who sent it: "you", a plugin or tool name, or the source kind."""
    source = source if isinstance(source, Mapping) else {}
    kind = source.get("kind")
    if kind == "user" or source.get("lane") in LANES:  # the app marks what a person typed
        return "you"
    if kind == "plugin":
        return str(source.get("plugin") or "plugin")
    if kind == "tool":
        return "tool"
    return str(kind or "unknown")


def source_for(lane: str) -> dict[str, Any]:
    """The source of text a person sends in `lane`.

    Follow-ups and steers are prompts (`kind: user`). Injected text is context, and
    context is what `kind: plugin` means to the harness and to models that tell
    the two apart (the demo reacts to it as context), so an inject is filed as the
    app's plugin context. Either way `lane` records what the person chose.
    """
    if lane == "inject":
        return {"kind": "plugin", "plugin": "dsh-tui", "lane": lane}
    return {"kind": "user", "lane": lane}


def with_lane(source: Mapping[str, Any] | None, lane: str) -> dict[str, Any]:
    """The source of a message re-filed into `lane` by the person (same id)."""
    out = dict(source) if isinstance(source, Mapping) else {}
    if out.get("kind") in (None, "user", "plugin") and (out.get("lane") in LANES or
                                                        out.get("kind") in (None, "user")):
        return source_for(lane)  # typed by a person: the lane decides the kind
    out["lane"] = lane
    return out
