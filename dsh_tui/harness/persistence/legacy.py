"""Older upstream shapes of format version 0, upgraded in memory on resume.

Upstream's older builds wrote a few shapes under the same format version (a `turn/start`
with a `trigger`, old `turn/end` reasons, the removed `steering/message`, messages without
ids). The strict loader upgrades them as upstream's does, so a log written by any upstream
build resumes here; the file itself is never rewritten, and shapes that look legacy but
are malformed raise instead of being disguised as data. The viewer keeps shapes as
recorded and only uses `steering_as_user_message`, which needs no invented data.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .errors import SessionFormatUnsupportedError, SessionLogCorruptError

_FINAL_REASONS = frozenset({"completed", "blocked", "max-tokens", "interrupted"})
_FAILURE_OPTIONAL = ("status", "providerRetryAfterMs", "requestId")


def _record(value: Any) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None


def _only_keys(record: Mapping[str, Any], required: Iterable[str],
               optional: Iterable[str] = ()) -> bool:
    required = tuple(required)
    allowed = set(required) | set(optional)
    return all(key in allowed for key in record) and all(key in record for key in required)


def _positive_turn(value: Any) -> bool:
    return type(value) is int and value >= 1


def legacy_message_id(session_id: str, seq: int) -> str:
    """The stable id upstream mints for a message stored before messages had ids."""
    return f"legacy-message:{session_id}:{seq}"


def assert_supported(events: Iterable[Mapping[str, Any]], session_id: str) -> None:
    """Refuse the retired shapes upstream refuses too (they cannot be upgraded faithfully)."""
    for event in events:
        kind = event.get("type")
        if kind == "request/header-delta" or kind == "mode/set":
            raise SessionFormatUnsupportedError(
                f'session "{session_id}" contains unsupported legacy {kind} event at seq '
                f"{event.get('seq')}")
        if kind == "request/header" and _record(event.get("data")) is not None and \
                event["data"].get("reason") == "fallback":
            raise SessionFormatUnsupportedError(
                f'session "{session_id}" contains unsupported legacy request/header reason '
                f'"fallback" at seq {event.get("seq")}')


def _malformed(session_id: str, what: str, event: Mapping[str, Any]) -> SessionLogCorruptError:
    return SessionLogCorruptError(
        f'session "{session_id}" contains malformed pre-react-loop {what} at seq '
        f"{event.get('seq')}")


def _turn_start(event: dict[str, Any], session_id: str) -> dict[str, Any]:
    data = _record(event.get("data"))
    if data is None or "trigger" not in data:
        return event
    trigger = _record(data["trigger"])
    if not _positive_turn(data.get("turn")) or not _only_keys(data, ("turn", "trigger")) or \
            trigger is None or not isinstance(trigger.get("kind"), str) or not trigger["kind"]:
        raise _malformed(session_id, "turn/start", event)
    return {**event, "data": {"turn": data["turn"]}}


def _failure_ok(failure: Mapping[str, Any]) -> bool:
    return _only_keys(failure, ("message", "code"), _FAILURE_OPTIONAL) and \
        isinstance(failure.get("message"), str) and isinstance(failure.get("code"), str) and \
        ("status" not in failure or type(failure["status"]) in (int, float)) and \
        ("providerRetryAfterMs" not in failure or
         type(failure["providerRetryAfterMs"]) in (int, float)) and \
        ("requestId" not in failure or isinstance(failure["requestId"], str))


def _turn_end(event: dict[str, Any], session_id: str) -> dict[str, Any]:
    data = _record(event.get("data"))
    if data is None:
        return event
    reason = _record(data.get("reason"))
    if not _positive_turn(data.get("turn")) or not _only_keys(data, ("turn", "reason")) or \
            reason is None or not isinstance(reason.get("kind"), str):
        raise _malformed(session_id, "turn/end", event)
    kind = reason["kind"]
    upgraded: dict[str, Any]
    if kind in _FINAL_REASONS:
        if not _only_keys(reason, ("kind",)):
            raise _malformed(session_id, "turn/end", event)
        return event
    if kind == "aborted":
        if "reason" in reason:
            return event
        if not _only_keys(reason, ("kind",)):
            raise _malformed(session_id, "turn/end", event)
        upgraded = {"kind": "aborted", "reason": {"kind": "legacy"}}
    elif kind == "disposed":
        if not _only_keys(reason, ("kind",)):
            raise _malformed(session_id, "turn/end", event)
        upgraded = {"kind": "aborted", "reason": {"kind": "disposed"}}
    elif kind == "error":
        if "error" in reason:
            return event
        step = reason.get("step")
        if type(step) is not int or step < 0:
            raise _malformed(session_id, "turn/end", event)
        failure = _record(reason.get("failure"))
        if failure is not None and _only_keys(reason, ("kind", "step", "failure")) and \
                _failure_ok(failure):
            upgraded = {"kind": "error", "error": failure}
        else:
            keys = ("kind", "step", "message") if "code" not in reason else (
                "kind", "step", "message", "code")
            if not _only_keys(reason, keys) or not isinstance(reason.get("message"), str) or \
                    ("code" in reason and not isinstance(reason["code"], str)):
                raise _malformed(session_id, "turn/end", event)
            upgraded = {"kind": "error", "error": {
                "message": reason["message"],
                "code": reason["code"] if isinstance(reason.get("code"), str) else "UNKNOWN"}}
    else:
        return event
    return {**event, "data": {**data, "reason": upgraded}}


def _steering(event: dict[str, Any], session_id: str) -> dict[str, Any]:
    data = _record(event.get("data"))
    if data is None:
        raise _malformed(session_id, "steering/message", event)
    wrapped = _record(data.get("message"))
    if wrapped is not None and type(data.get("turn")) is int and \
            _only_keys(data, ("turn", "message")):
        return {**event, "type": "user/message", "data": wrapped}
    if type(data.get("turn")) is not int or not _only_keys(data, ("turn", "content", "source")):
        raise _malformed(session_id, "steering/message", event)
    message = {key: value for key, value in data.items() if key != "turn"}
    message["id"] = legacy_message_id(session_id, event["seq"])
    message["role"] = "user"
    return {**event, "type": "user/message", "data": message}


def _replacement_start(event: Mapping[str, Any]) -> Any:
    op = event.get("surfaceOp")
    if isinstance(op, dict) and op.get("op") == "replace" and type(op.get("start")) in (int,
                                                                                      float):
        return op["start"]
    return None


def _message(event: dict[str, Any], session_id: str,
             message_ids: Mapping[int, str]) -> dict[str, Any]:
    data = _record(event.get("data"))
    if data is None:
        return event
    kind = event["type"]
    if kind == "user/message":
        if "id" in data or "role" in data or "message" in data or "content" not in data or \
                "source" not in data:
            return event
        return {**event, "data": {**data, "id": legacy_message_id(session_id, event["seq"]),
                                  "role": "user"}}
    if kind == "assistant/message":
        if "message" in data or "content" not in data or "provenance" not in data:
            return event
        rest = {k: v for k, v in data.items() if k not in ("content", "provenance")}
        provenance = _record(data["provenance"]) or {}
        rest["message"] = {"id": legacy_message_id(session_id, event["seq"]),
                           "role": "assistant", "content": data["content"],
                           "source": {**provenance, "kind": "model"}}
        return {**event, "data": rest}
    # tool/result
    if "message" in data or "callId" not in data or "content" not in data or \
            "isError" not in data:
        return event
    rest = {k: v for k, v in data.items() if k not in ("callId", "content", "isError")}
    start = _replacement_start(event)
    message: dict[str, Any] = {}
    if start is None:
        message["id"] = legacy_message_id(session_id, event["seq"])
    elif start in message_ids:
        message["id"] = message_ids[start]  # a pruned result keeps the id it replaces
    message["role"] = "user"
    message["content"] = [{"type": "tool-result", "toolCallId": data["callId"],
                           "content": data["content"], "isError": data["isError"]}]
    message["source"] = {"kind": "tool", "callId": data["callId"]}
    rest["message"] = message
    return {**event, "data": rest}


def _message_id(event: Mapping[str, Any]) -> str | None:
    data = event.get("data")
    message = data if event.get("type") == "user/message" else _record(
        data.get("message") if isinstance(data, dict) else None)
    if isinstance(message, dict) and isinstance(message.get("id"), str):
        return message["id"]
    return None


_MESSAGE_TYPES = frozenset({"user/message", "assistant/message", "tool/result"})
_LEGACY_TYPES = _MESSAGE_TYPES | {"turn/start", "turn/end", "steering/message"}


def upgrade_events(events: list[dict[str, Any]], session_id: str) -> None:
    """Upgrade legacy shapes in place (only the affected records are replaced)."""
    assert_supported(events, session_id)
    message_ids: dict[int, str] = {}
    for index, event in enumerate(events):
        kind = event.get("type")
        if kind not in _LEGACY_TYPES:
            continue
        if kind == "turn/start":
            event = _turn_start(event, session_id)
        elif kind == "turn/end":
            event = _turn_end(event, session_id)
        elif kind == "steering/message":
            event = _steering(event, session_id)
        if event["type"] in _MESSAGE_TYPES:
            event = _message(event, session_id, message_ids)
            message_id = _message_id(event)
            if message_id is not None and type(event.get("seq")) is int:
                message_ids[event["seq"]] = message_id
        events[index] = event


def steering_as_user_message(record: Mapping[str, Any]) -> Mapping[str, Any]:
    """A `steering/message {turn, message}` as the `user/message` it became upstream.

    Only the wrapped form converts: it carries a whole message, so nothing has
    to be invented. Any other shape is returned unchanged for the viewer to show.
    """
    if record.get("type") != "steering/message":
        return record
    data = record.get("data")
    if isinstance(data, Mapping) and set(data) == {"turn", "message"} and \
            type(data.get("turn")) is int and isinstance(data.get("message"), Mapping) and \
            isinstance(data["message"].get("id"), str) and data["message"]["id"]:
        return {**record, "type": "user/message", "data": data["message"]}
    return record
