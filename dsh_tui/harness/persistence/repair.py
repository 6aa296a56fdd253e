"""Closing a turn a crash left open (upstream's `interruptedTurnClosers`).

A process killed mid-turn leaves a `turn/start` with no `turn/end`, maybe an open step and
tool calls with no result. Providers reject a dangling tool call and the loop expects
balanced turns, so before such a log is live again it gets synthetic closers: an error
`tool/result` per pending call, a `step/end` if a step is open, and
`turn/end {reason: interrupted}`. It is a pure function over event records: the strict
loader appends its result, and a viewer can show how a crashed log would be closed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

TOOL_NOT_STARTED = "TOOL_NOT_STARTED"
TOOL_OUTCOME_UNKNOWN = "TOOL_OUTCOME_UNKNOWN"

# Model-facing text, byte-identical to upstream's repair.ts so both harnesses
# show a resumed model exactly the same words.
OUTCOME_UNKNOWN_TEXT = (
    "The tool call was interrupted after it was recorded, but no result was durably recorded. "
    "Its outcome is unknown. Decide whether to retry from the tool semantics: retry only if the "
    "operation is read-only or idempotent; if it may have side effects, first verify external "
    "state or ask the user. Do not retry blindly.")
NOT_STARTED_TEXT = ("The tool call was interrupted before the Harness recorded it as started. "
                    "Retry it if it is still needed.")


def _fields(event: Any) -> tuple[Any, Any, Any, Any]:
    if isinstance(event, Mapping):
        return event.get("type"), event.get("seq"), event.get("time"), event.get("data")
    return event.type, event.seq, event.time, event.data


def _get(value: Any, key: str) -> Any:
    return value.get(key) if isinstance(value, Mapping) else None


def _tool_call_ids(data: Any) -> list[str]:
    message = _get(data, "message")
    # A pre-identity upstream log keeps the blocks at the data level.
    content = _get(message, "content") if message is not None else _get(data, "content")
    ids: list[str] = []
    for block in content if isinstance(content, (list, tuple)) else ():
        if _get(block, "type") == "tool-call" and isinstance(_get(block, "id"), str):
            ids.append(block["id"])
    return ids


def _result_call_id(data: Any) -> Any:
    source = _get(_get(data, "message"), "source")
    call_id = _get(source, "callId")
    return call_id if call_id is not None else _get(data, "callId")


def _open_turn_start(events: Sequence[Any]) -> int | None:
    """Index of the `turn/start` of the turn left open at the end, if any.

    A `turn/start` resets every piece of state the closer scan keeps, so only
    the events from the last one on matter; a last boundary that is a
    `turn/end` (or none at all) means no turn is open. Scanning back from the
    end keeps the cost of resuming a long balanced log constant.
    """
    for index in range(len(events) - 1, -1, -1):
        kind = _fields(events[index])[0]
        if kind == "turn/start":
            return index
        if kind == "turn/end":
            return None
    return None


def interrupted_turn_closers(events: Iterable[Any]) -> list[dict[str, Any]]:
    """The events that close a log's open last turn, in order; `[]` for a balanced log.

    Seqs continue from the last event and every closer reuses the last event's
    time, so the result is deterministic and never invents a future time.
    """
    log = events if isinstance(events, Sequence) else list(events)
    start = _open_turn_start(log)
    if start is None:
        return []
    open_turn = _get(_fields(log[start])[3], "turn")
    open_step: Any = None
    # call id -> [step, seq of its tool/call or None]; insertion order is transcript order
    pending: dict[str, list[Any]] = {}
    for event in log[start + 1:]:
        kind, seq, _, data = _fields(event)
        if kind == "step/start":
            open_step = _get(data, "step")
        elif kind == "step/end":
            open_step = None
            pending.clear()
        elif kind == "assistant/message":
            for call_id in _tool_call_ids(data):
                pending[call_id] = [_get(data, "step"), None]
        elif kind == "tool/call":
            entry = pending.get(_get(data, "callId"))
            if entry is not None:
                entry[1] = seq
        elif kind == "tool/result":
            pending.pop(_result_call_id(data), None)
    _, last_seq, last_time, _ = _fields(log[-1])
    seq, time = last_seq + 1, last_time
    closers: list[dict[str, Any]] = []
    for call_id, (step, call_seq) in pending.items():
        started = call_seq is not None
        message = {
            "id": f"interrupted-tool-result-{call_id}-{seq}",
            "role": "user",
            "source": {"kind": "tool", "callId": call_id},
            "content": [{
                "type": "tool-result",
                "toolCallId": call_id,
                "isError": True,
                "content": [{"type": "text",
                             "text": OUTCOME_UNKNOWN_TEXT if started else NOT_STARTED_TEXT}],
            }],
        }
        error = {"name": "ToolOutcomeUnknownError", "code": TOOL_OUTCOME_UNKNOWN} if started \
            else {"name": "ToolNotStartedError", "code": TOOL_NOT_STARTED}
        closer: dict[str, Any] = {"type": "tool/result", "seq": seq, "time": time,
                                  "data": {"turn": open_turn, "step": step, "message": message,
                                           "error": error},
                                  "surfaceOp": "append"}
        if started:
            closer["sourceEventSeqs"] = [call_seq]
        closers.append(closer)
        seq += 1
    if open_step is not None:
        closers.append({"type": "step/end", "seq": seq, "time": time,
                        "data": {"turn": open_turn, "step": open_step}})
        seq += 1
    closers.append({"type": "turn/end", "seq": seq, "time": time,
                    "data": {"turn": open_turn, "reason": {"kind": "interrupted"}}})
    return closers
