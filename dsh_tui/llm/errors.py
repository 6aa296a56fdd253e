"""HTTP and in-band provider errors → upstream failure records.

The failure `code` is what the retry policy and the UI route on, so the mapping
follows upstream's `httpErrorCode` table with this project's two decisions
(docs/contract.md §11.4): 402 is always `QUOTA` and 422 is always
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


RETRY_AFTER_DIGITS = 12
"""A delay-seconds value with more digits than this (over 31,000 years) is read as this many."""


def retry_after_ms(value: str | None, *, now: float | None = None) -> float | None:
    """`Retry-After` as delay-seconds or an HTTP date; None unless it is in the future."""
    if value is None:
        return None
    value = value.strip()
    if _DIGITS.fullmatch(value):
        # Clamped before `int()`: a hostile 5,000-digit value would otherwise raise
        # Python's integer-limit error, shown as the failure's message.
        digits = value.lstrip("0") or "0"
        seconds = int(digits) if len(digits) <= RETRY_AFTER_DIGITS else 10 ** RETRY_AFTER_DIGITS
        delay = seconds * 1000.0
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


REDACTED = "***"
MIN_SECRET = 6
"""Shorter strings are not treated as secrets: a test's `api_key="k"` would otherwise
turn every "k" of a stream into `***`, and no real key is that short."""


def redact(text: str, secret: str | None) -> str:
    """Remove a secret from text that may be shown or logged (a gateway may echo it)."""
    if not secret or secret not in text:
        return text
    return text.replace(secret, REDACTED)


def redact_all(value: Any, secrets: tuple[str, ...]) -> Any:
    """`value` with every secret removed from every string value in it, nested ones
    included: a failure record stores a message, a code, a request id and provider facts,
    and a proxy may echo the key into any of them."""
    secrets = tuple(s for s in secrets if len(s) >= MIN_SECRET)
    if not secrets:
        return value
    if isinstance(value, str):
        for secret in secrets:
            value = redact(value, secret)
        return value
    if isinstance(value, Mapping):
        return {k: redact_all(v, secrets) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_all(v, secrets) for v in value]
    return value


_DELTA_FIELDS = {"text-delta": "text", "reasoning-delta": "text",
                 "tool-call-delta": "argumentsDelta"}


class SecretFilter:
    """Removes a secret from a chunk stream, even one the model spells over several deltas.

    No character of a secret is ever released, wherever the server splits it: a delta whose
    text ends with the start of a secret (its first character up to all but its last) is
    held back, whole, until the block's next delta shows whether the secret follows. If it
    does not, the held deltas go out unchanged, so the boundaries stay as the server sent
    them (the log replays them); if it does, the deltas that spell it become one delta with
    the secret replaced. Held deltas go out just before their block's `block-end` (or the
    stream's `usage`/`finish`). The `block-end`'s assembled block and every other chunk are
    redacted whole.
    """

    __slots__ = ("_held", "_secrets", "_starts")

    def __init__(self, secrets: tuple[str, ...]) -> None:
        self._secrets = tuple(s for s in secrets if len(s) >= MIN_SECRET)
        self._held: dict[int, list[dict[str, Any]]] = {}  # per block index, in order
        # Characters a secret's proper prefix can end with: most deltas end with none of them.
        self._starts = frozenset(ch for s in self._secrets for ch in s[:-1])

    def feed(self, chunk: dict[str, Any]) -> list[dict[str, Any]]:
        if not self._secrets:
            return [chunk]
        kind = chunk.get("type")
        field = _DELTA_FIELDS.get(str(kind))
        if field is not None and isinstance(chunk.get(field), str):
            return self._delta(chunk, field)
        out: list[dict[str, Any]] = []
        if kind == "block-end":
            out += self._release(chunk.get("index"))
        elif kind in ("finish", "usage"):
            for index in list(self._held):
                out += self._release(index)
        out.append(redact_all(chunk, self._secrets))
        return out

    def _start_at_end(self, text: str) -> int:
        """The length of the longest proper prefix of a secret that `text` ends with (or 0)."""
        if not text or text[-1] not in self._starts:
            return 0
        longest = 0
        for secret in self._secrets:
            for n in range(min(len(secret) - 1, len(text)), longest, -1):
                if text.endswith(secret[:n]):
                    longest = n
                    break
        return longest

    def _delta(self, chunk: dict[str, Any], field: str) -> list[dict[str, Any]]:
        index = chunk.get("index")
        key = index if isinstance(index, int) else -1
        chunks = [*self._held.pop(key, ()), chunk]
        texts = [c[field] for c in chunks]
        joined = "".join(texts)
        redacted = redact_all(joined, self._secrets)
        if redacted != joined:
            # A secret is complete: one delta (fields of the latest, which knows the most)
            # carries the redacted text; a new start at its end is held as before.
            keep = self._start_at_end(redacted)
            merged = redact_all(chunk, self._secrets)
            cut = len(redacted) - keep
            if keep:
                self._held[key] = [{**merged, field: redacted[cut:]}]
            return [{**merged, field: redacted[:cut]}] if cut or field == "argumentsDelta" else []
        cut = len(joined) - self._start_at_end(joined)
        out: list[dict[str, Any]] = []
        end = 0
        for position, (held, text) in enumerate(zip(chunks, texts, strict=True)):
            if end + len(text) > cut:  # this delta holds the start: it and the rest wait
                self._held[key] = chunks[position:]
                break
            end += len(text)
            out.append(redact_all(held, self._secrets))
        return out

    def _release(self, index: Any) -> list[dict[str, Any]]:
        key = index if isinstance(index, int) else -1
        return [redact_all(chunk, self._secrets) for chunk in self._held.pop(key, ())]
