"""Putting back what a crash took out of an inbox but never recorded.

A claim (a removal without `outcome`) is durable before the agent wakes, but the
`user/message` recording the claimed batch comes later, after the pre-step waterfall (a
breakpoint may wait minutes) and in a batched write; a move between lanes is a removal then
an insertion. A `kill -9` in between leaves a message that is neither pending nor in the
transcript. `requeue_splices` finds those and returns ordinary inbox splices that make them
pending again, so every reader of the log, upstream's included, sees them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .repair import _fields, _get

_SPLICE = "agent/inbox/spliced"


def _window_start(events: Sequence[Any]) -> int:
    """Index from which claim-like removals count as unfinished (see the module doc)."""
    for index in range(len(events) - 1, -1, -1):
        kind, _, _, data = _fields(events[index])
        if kind == "turn/start":
            return index  # an open turn
        if kind == "turn/end":
            if _get(_get(data, "reason"), "kind") == "interrupted":
                for back in range(index - 1, -1, -1):
                    if _fields(events[back])[0] == "turn/start":
                        return back
                return 0
            return index + 1
    return 0


def requeue_splices(events: Sequence[Any], seed_length: int, next_seq: int,
                    time: Any) -> list[dict[str, Any]]:
    """Splice records (seq from `next_seq`) that make lost claimed/moved messages pending again.

    A lost message is a removal without `outcome` whose message is later neither
    re-inserted, nor recorded as a `user/message`, nor pending, inside a turn a crash ended
    (still open, or closed `interrupted` by the repair) or after the last turn that ended
    normally (where claims never happen, so only a half move can). The result is one splice
    per lane, inserting those messages back where they were taken from.

    A claimed batch of a turn that ended *normally* (cancel, a pre-step reject, a
    breakpoint skip) is not touched: the contract says the turn owns it, and the app
    offers it back.
    """
    if not events:
        return []
    window = _window_start(events)
    lanes: dict[str, list[Any]] = {"next-turn": [], "next-step": []}
    # message id -> (lane it was taken from, index it was taken at, message json)
    taken: dict[str, tuple[str, int, Any]] = {}
    for index in range(max(seed_length, 0), len(events)):
        kind, _, _, data = _fields(events[index])
        if kind == _SPLICE:
            target = _get(data, "target")
            items = lanes.get(target) if isinstance(target, str) else None
            if items is None:
                continue
            start = _get(data, "start")
            count = _get(data, "removedCount") or 0
            inserted = list(_get(data, "inserted") or ())
            if type(start) is not int or type(count) is not int:
                continue
            removed = items[start:start + count]
            items[start:start + count] = inserted
            if index >= window and _get(data, "outcome") is None:
                for offset, message in enumerate(removed):
                    message_id = _get(message, "id")
                    if isinstance(message_id, str):
                        taken[message_id] = (target, start + offset, message)
            for message in inserted:
                taken.pop(_get(message, "id"), None)
        elif kind == "user/message" and index >= window:
            taken.pop(_get(data, "id"), None)
    if not taken:
        return []
    pending = {_get(m, "id") for items in lanes.values() for m in items}
    by_lane: dict[str, list[tuple[int, Any]]] = {}
    for message_id, (target, position, message) in taken.items():
        if message_id not in pending:
            by_lane.setdefault(target, []).append((position, message))
    splices: list[dict[str, Any]] = []
    for target in ("next-step", "next-turn"):
        group = by_lane.get(target)
        if not group:
            continue
        start = min(min(position for position, _ in group), len(lanes[target]))
        data = {"target": target, "start": start,
                "inserted": [_plain(message) for _, message in group]}
        splices.append({"type": _SPLICE, "seq": next_seq, "time": time, "data": data})
        next_seq += 1
    return splices


def _plain(value: Any) -> Any:
    """A JSON copy (events from a live session hold read-only views)."""
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value
