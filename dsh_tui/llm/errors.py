"""HTTP and in-band provider errors → upstream failure records.

The failure `code` is what the retry policy and the UI route on, so the mapping
follows upstream's `httpErrorCode` table with this project's two decisions
(`research/llm-adapter.md`, top): 402 is always `QUOTA` and 422 is always
`INVALID_REQUEST`, so neither is ever retried.
"""

from __future__ import annotations

import datetime
import email.utils
import json
import re
import time
from collections.abc import Mapping
from typing import Any

from dsh_tui.harness.llm_types import (
    LlmFailure,
    is_context_window_exceeded,
    is_quota_exceeded,
    make_failure,
)

MAX_MESSAGE_CHARS = 600
"""Provider messages are shown in the UI and logged; a gateway's HTML page is not a message."""

_DIGITS = re.compile(r"\d+")


def http_error_code(status: int, error: Mapping[str, Any] | None = None) -> str:
    """The stable code of a non-2xx response, given its parsed `error` object if any."""
    if status in (401, 403):
        return "AUTH"
    if status == 402:
        return "QUOTA"
    if status in (413, 422):
        return "INVALID_REQUEST"
    detail = " ".join(
        str(error.get(key)) for key in ("code", "type", "message")
        if error is not None and error.get(key) not in (None, "")
    )
    if is_quota_exceeded(detail):
        return "QUOTA"
    if status == 429:
        return "RATE_LIMIT"
    if status == 400:
        return "CONTEXT_WINDOW_EXCEEDED" if is_context_window_exceeded(detail) \
            else "INVALID_REQUEST"
    if status >= 500:
        return "SERVER"
    return f"HTTP_{status}"


def retry_after_ms(value: str | None, *, now: float | None = None) -> float | None:
    """`Retry-After` as delay-seconds or an HTTP date; None unless it is in the future."""
    if value is None:
        return None
    value = value.strip()
    if _DIGITS.fullmatch(value):
        delay = int(value) * 1000.0
        return delay if delay > 0 else None
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # "-0000": RFC 5322's "UTC, origin unknown"
        when = when.replace(tzinfo=datetime.UTC)
    delay = (when.timestamp() - (time.time() if now is None else now)) * 1000.0
    return delay if delay > 0 else None


def request_id_of(headers: Mapping[str, str]) -> str | None:
    """The provider's request id, for support tickets; DeepSeek uses either header."""
    value = headers.get("x-request-id") or headers.get("x-deepseek-request-id")
    return value or None


def provider_error(body: bytes) -> dict[str, Any] | None:
    """The `error` object of an error body, tolerating the shapes gateways send.

    OpenAI/DeepSeek send `{"error": {"message", "type", "code"}}`; Ollama sends
    `{"error": "text"}`; FastAPI-based servers send `{"detail": "text"}`. Anything
    else (HTML, empty) yields None and the status line names the failure.
    """
    try:
        parsed = json.loads(body.decode("utf-8", errors="replace"))
    except ValueError:
        return None
    if not isinstance(parsed, Mapping):
        return None
    error = parsed.get("error")
    if isinstance(error, Mapping):
        return dict(error)
    if isinstance(error, str) and error:
        return {"message": error}
    for key in ("message", "detail"):
        if isinstance(parsed.get(key), str) and parsed[key]:
            return {"message": parsed[key]}
    return None


def clip(text: str) -> str:
    text = text.strip()
    return text if len(text) <= MAX_MESSAGE_CHARS else text[:MAX_MESSAGE_CHARS - 1] + "…"


def http_failure(status: int, reason_phrase: str, body: bytes, headers: Mapping[str, str],
                 label: str) -> LlmFailure:
    """The failure record of one non-2xx response."""
    error = provider_error(body)
    message = error.get("message") if error is not None else None
    if not isinstance(message, str) or not message.strip():
        phrase = f" {reason_phrase}" if reason_phrase else ""
        message = f"{label} API error (HTTP {status}{phrase})"
    return make_failure(clip(message), http_error_code(status, error), status=status,
                        retry_after_ms=retry_after_ms(headers.get("retry-after")),
                        request_id=request_id_of(headers))


def in_band_failure(error: Any, label: str) -> LlmFailure:
    """A `data: {"error": …}` event inside a 200 stream (vLLM, gateways)."""
    details = dict(error) if isinstance(error, Mapping) else {"message": str(error)}
    message = details.get("message")
    if not isinstance(message, str) or not message.strip():
        message = f"{label} reported an error inside the stream"
    status = details.get("code")
    if type(status) is int and 400 <= status <= 599:
        code = http_error_code(status, details)
    elif is_context_window_exceeded(message):
        code = "CONTEXT_WINDOW_EXCEEDED"
    elif is_quota_exceeded(message):
        code = "QUOTA"
    else:
        code = "SERVER"  # the server failed mid-generation: transient by nature
    return make_failure(clip(message), code)


def redact(text: str, secret: str | None) -> str:
    """Remove a secret from text that may be shown or logged (a gateway may echo it)."""
    if not secret or secret not in text:
        return text
    return text.replace(secret, "***")
