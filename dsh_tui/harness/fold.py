"""fold_consumed_work: what a finished activity accounts for, read from its log.

A sub-agent driver uses it to answer "did the child do the work it was given,
and was anything accepted then dropped unrun afterwards?".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


def _field(event: Any, name: str) -> Any:
    if isinstance(event, Mapping):
        return event.get(name)
    return getattr(event, name, None)


def fold_consumed_work(events: Iterable[Any]) -> dict[str, Any]:
    """Return {"end": <latest accounting turn/end>, "dropped_unrun": bool} ("end" may be absent)."""
    stepped: set[int] = set()
    claimed: set[int] = set()
    open_turn: int | None = None
    end: Any = None
    dropped_unrun = False
    for event in events:
        kind = _field(event, "type")
        data = _field(event, "data")
        if not isinstance(data, Mapping):
            data = {}
        if kind == "turn/start":
            open_turn = data.get("turn")
        elif kind == "step/start":
            stepped.add(data.get("turn"))
        elif kind == "agent/inbox/spliced":
            if data.get("removedCount") is None:
                continue  # a pure insertion
            if data.get("outcome") == "canceled":
                dropped_unrun = dropped_unrun or len(data.get("inserted") or ()) == 0
            elif open_turn is not None:
                claimed.add(open_turn)
        elif kind == "turn/end":
            open_turn = None
            turn = data.get("turn")
            accounts = False
            if turn in stepped:
                stepped.discard(turn)
                accounts = True
            elif turn in claimed:
                claimed.discard(turn)
                reason = data.get("reason")
                accounts = not (isinstance(reason, Mapping) and reason.get("kind") == "completed")
            if accounts:
                end = event
                dropped_unrun = False
    result: dict[str, Any] = {"dropped_unrun": dropped_unrun}
    if end is not None:
        result["end"] = end
    return result
