"""Inbox rows: what the inbox pane lists, computed from a projection snapshot.

Plain data (no Textual): the pane turns rows into options, tests read rows directly.
"""

from __future__ import annotations

from collections.abc import Container, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .lanes import lane_of, source_label
from .text import message_text


@dataclass(slots=True, eq=False)
class Tombstone:
    """A message that just left the inbox: discarded (with undo) or claimed (a receipt)."""

    message: Any  # UserMessage
    target: str
    index: int
    lane: str
    kind: str  # "discarded" | "claimed"
    expires: float
    turn: int | None = None
    batch: int = 0


@dataclass(slots=True, eq=False)
class InboxRow:
    """One line group of the inbox pane, computed from a projection snapshot."""

    kind: str  # header | item | unsent | tombstone | banner | hint (a line of text)
    text: str = ""
    target: str = ""
    index: int = 0
    message: Any = None
    lane: str = ""
    source: str = ""
    count: int = 0
    tombstone: Tombstone | None = None
    unsent: Any = None  # an unsent.Unsent (kind "unsent")
    receipt: Any = None  # a receipts.Receipt (kind "receipt")
    badge: str = ""
    """A pending item's live state beyond its place: `held · agent waits 42 s`."""
    marked: bool = False
    """The person marked the item (merge, move and copy act on marked items)."""


RECENT_RECEIPTS = 3
"""Messages that left the inbox last, listed under the lists with their receipts."""

LANE_ROW_LIMIT = 100
"""Rows shown per list. A queue of 10,000 stays instant to show; the header keeps the true
count and a last row says how many more wait behind the ones shown."""


def inbox_rows(next_step: Sequence[Any], next_turn: Sequence[Any],
               tombstones: Sequence[Tombstone], *, paused: bool,
               limit: int = LANE_ROW_LIMIT, unsent: Sequence[Any] = (),
               recent: Sequence[Any] | None = None, badges: Mapping[str, str] | None = None,
               marked: Container[str] = ()) -> list[InboxRow]:
    """The rows of the inbox pane: NEXT STEP, NEXT TURN, what a turn claimed but never sent
    (offered back), what just left (removed: with undo), then, when `recent` receipts are
    given (newest first), the messages that left last with where each is in its life (they
    take the place of the short-lived "claimed" rows). `badges` and `marked` are keyed by
    message id."""
    badges = badges or {}
    rows: list[InboxRow] = []
    if paused:
        rows.append(InboxRow("banner", text="paused: the agent is idle with work kept. "
                                          "enter on an empty composer delivers it"))
    for target, items in (("next-step", next_step), ("next-turn", next_turn)):
        rows.append(InboxRow("header", target=target, count=len(items)))
        for index, message in enumerate(items[:limit]):
            rows.append(InboxRow("item", text=message.text, target=target, index=index,
                                 message=message, lane=lane_of(message.source, target),
                                 source=source_label(message.source),
                                 badge=badges.get(message.id, ""),
                                 marked=message.id in marked))
        if len(items) > limit:
            rows.append(InboxRow("hint", target=target, count=len(items) - limit,
                                 text=f"… {len(items) - limit:,} more queued behind these "
                                      f"{limit}"))
    if unsent:
        rows.append(InboxRow("header", target="unsent", count=len(unsent)))
        for entry in unsent[:limit]:
            message = entry.message
            source = message.get("source") if isinstance(message.get("source"), Mapping) \
                else None
            rows.append(InboxRow("unsent", text=message_text(message), target=entry.target,
                                 lane=lane_of(source, entry.target),
                                 source=source_label(source), unsent=entry))
    if not next_step and not next_turn and not unsent:
        rows.append(InboxRow("hint", text="Empty. What you send while the agent works waits "
                                         "here, where you can edit, reorder or re-file it."))
    for tombstone in tombstones:
        if recent is not None and tombstone.kind == "claimed":
            continue  # its receipt is listed below, and stays
        rows.append(InboxRow("tombstone", text=tombstone.message.text, target=tombstone.target,
                             message=tombstone.message, lane=tombstone.lane,
                             tombstone=tombstone))
    shown = {t.message.id for t in tombstones if t.kind != "claimed"} | \
        {getattr(u, "id", None) for u in unsent}
    listed = [r for r in recent or () if r.message_id not in shown][:RECENT_RECEIPTS]
    if listed:
        rows.append(InboxRow("header", target="recent", count=len(listed)))
        for receipt in listed:
            rows.append(InboxRow("receipt", text=receipt.text, lane=receipt.lane,
                                 receipt=receipt))
    return rows
