"""Packed chunk rows: the storage shorthand upstream uses for runs of stream deltas.

A provider streams token-sized deltas, so upstream may store a run of three or
more same-block `assistant/chunk` deltas as one row (`text-chunks`,
`reasoning-chunks` or `tool-call-chunks`) with a first seq/time and time gaps.
Rows are storage records, not events: every reader expands them back into the
exact events they stand for. A row that does not have exactly the documented
shape is corruption (a whole run would silently vanish otherwise), so
`expand_row` raises instead of guessing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..jsonvalue import MAX_SAFE_INTEGER

ROW_TYPES = frozenset({"text-chunks", "reasoning-chunks", "tool-call-chunks"})

_ROW_KEYS = frozenset({"type", "seq0", "time0", "data"})
_TEXT_KEYS = frozenset({"turn", "step", "index", "dt", "texts"})
_CALL_KEYS = frozenset({"turn", "step", "index", "id", "dt", "args"})
_CALL_KEYS_NAMED = _CALL_KEYS | {"name"}
_DELTA_TYPES = {"text-chunks": "text-delta", "reasoning-chunks": "reasoning-delta"}


class MalformedRowError(ValueError):
    """A row-tagged record whose shape is not exactly a packed chunk row."""


def _safe_int(value: Any) -> bool:
    return type(value) is int and -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER


def _number(value: Any) -> bool:
    return type(value) in (int, float)


def _check(row: Mapping[str, Any], tag: str) -> tuple[Mapping[str, Any], list[str]]:
    def bad(why: str) -> MalformedRowError:
        return MalformedRowError(f"malformed {tag} storage row: {why}")

    if row.keys() != _ROW_KEYS:
        raise bad("envelope must be exactly {type, seq0, time0, data}")
    seq0, time0, data = row["seq0"], row["time0"], row["data"]
    if not _safe_int(seq0) or seq0 < 0:
        raise bad("seq0 must be a non-negative safe integer")
    if not _safe_int(time0):
        raise bad("time0 must be a safe integer")
    if not isinstance(data, Mapping):
        raise bad("data must be an object")
    if tag == "tool-call-chunks":
        keys = data.keys()
        if keys != _CALL_KEYS and keys != _CALL_KEYS_NAMED:
            raise bad("data must be exactly {turn, step, index, id, name?, dt, args}")
        if not isinstance(data["id"], str) or ("name" in data and not isinstance(data["name"],
                                                                                    str)):
            raise bad("id (and name when present) must be strings")
        members = data["args"]
        payload_key = "args"
    else:
        if data.keys() != _TEXT_KEYS:
            raise bad("data must be exactly {turn, step, index, dt, texts}")
        members = data["texts"]
        payload_key = "texts"
    if not (_number(data["turn"]) and _number(data["step"]) and _number(data["index"])):
        raise bad("turn/step/index must be numbers")
    if not isinstance(members, list) or not members or any(type(m) is not str for m in members):
        raise bad(f"{payload_key} must be a non-empty string array")
    gaps = data["dt"]
    if not isinstance(gaps, list) or not all(_safe_int(gap) for gap in gaps):
        raise bad("dt must be an array of safe integers")
    if len(gaps) != len(members) - 1:
        raise bad(f"dt length {len(gaps)} does not match {len(members)} members")
    if not _safe_int(seq0 + len(members) - 1):
        raise bad("member seqs must stay safe integers")
    time = time0
    for gap in gaps:
        time += gap
        if not _safe_int(time):
            raise bad("member times must stay safe integers")
    return data, members


def expand_row(row: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The `assistant/chunk` events a packed row stands for, in order (raises if malformed)."""
    tag = row.get("type")
    if tag not in ROW_TYPES:
        raise MalformedRowError(f"not a packed chunk row: {tag!r}")
    data, members = _check(row, tag)
    turn, step, index = data["turn"], data["step"], data["index"]
    seq, time, gaps = row["seq0"], row["time0"], data["dt"]
    events: list[dict[str, Any]] = []
    if tag == "tool-call-chunks":
        call_id = data["id"]
        named = "name" in data
        name = data.get("name")
        for k, fragment in enumerate(members):
            if k:
                time += gaps[k - 1]
            chunk: dict[str, Any] = {"type": "tool-call-delta", "index": index, "id": call_id}
            if named:
                chunk["name"] = name
            chunk["argumentsDelta"] = fragment
            events.append({"type": "assistant/chunk", "seq": seq + k, "time": time,
                           "data": {"turn": turn, "step": step, "chunk": chunk}})
        return events
    delta = _DELTA_TYPES[tag]
    for k, text in enumerate(members):
        if k:
            time += gaps[k - 1]
        events.append({"type": "assistant/chunk", "seq": seq + k, "time": time,
                       "data": {"turn": turn, "step": step,
                                "chunk": {"type": delta, "index": index, "text": text}}})
    return events
