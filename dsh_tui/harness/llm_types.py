"""The model vocabulary shared by the loop, the adapters and the UI.

Blocks, stream chunks, usage, finish reasons and failures are plain JSON dicts
with upstream's camelCase keys, because they are logged verbatim in
`assistant/chunk` and `assistant/message` events and read back by other tools.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Mapping
from typing import Any, Literal, NotRequired, Protocol, TypedDict, runtime_checkable

# ---- content blocks -------------------------------------------------------------------------


class TextBlock(TypedDict):
    """A visible text block of an assistant message (§1.5)."""

    type: Literal["text"]
    text: str


class ReasoningBlock(TypedDict):
    """The model's reasoning; DeepSeek wants it passed back on every assistant message (§11.2)."""

    type: Literal["reasoning"]
    text: str


class ToolCallBlock(TypedDict):
    """One tool call, with its arguments kept as the exact text the model produced (§6.5)."""

    type: Literal["tool-call"]
    id: str
    name: str
    arguments: str  # raw JSON text exactly as the model produced it


class ToolResultBlock(TypedDict):
    """A tool's answer to `toolCallId`; `isError` is absent unless true (never null)."""

    type: Literal["tool-result"]
    toolCallId: str
    content: list[dict[str, Any]]
    isError: NotRequired[bool]


ContentBlock = dict[str, Any]

# ---- usage, failures, finish ---------------------------------------------------------------


class TokenUsage(TypedDict):
    """Token counts of one call; `inputTokens` counts uncached input only and `outputTokens`
    includes reasoning, as upstream records them."""

    inputTokens: int  # uncached input only
    outputTokens: int  # includes reasoning
    cacheReadTokens: NotRequired[int]
    cacheWriteTokens: NotRequired[int]
    reasoningTokens: NotRequired[int]


class LlmFailure(TypedDict):
    """Why a model call failed: a stable `code` (routed on) and facts a UI may show; every
    optional key is absent rather than null, since the record is logged verbatim."""

    message: str
    code: str
    status: NotRequired[int]
    providerRetryAfterMs: NotRequired[float]
    requestId: NotRequired[str]


FinishReason = dict[str, Any]
StreamChunk = dict[str, Any]
"""One of block-start, text-delta, reasoning-delta, tool-call-delta, block-end, usage, finish."""

CHUNK_TYPES = frozenset({
    "block-start", "text-delta", "reasoning-delta", "tool-call-delta", "block-end", "usage",
    "finish",
})


def is_token_delta(chunk: Mapping[str, Any]) -> bool:
    """True for chunks that carry visible output (used for first-token timing)."""
    kind = chunk.get("type")
    if kind in ("text-delta", "reasoning-delta"):
        return bool(chunk.get("text"))
    if kind == "tool-call-delta":
        return bool(chunk.get("argumentsDelta")) or bool(chunk.get("name"))
    return False


# ---- errors ---------------------------------------------------------------------------------


class HarnessError(Exception):
    """Base error with a stable machine-routable `code`."""

    def __init__(self, message: str, code: str = "UNKNOWN") -> None:
        super().__init__(message)
        self.code = code

    @property
    def message(self) -> str:
        """The error text (what upstream's `error.message` holds)."""
        return str(self)


def make_failure(message: str, code: str, *, status: int | None = None,
                 retry_after_ms: float | None = None, request_id: str | None = None) -> LlmFailure:
    """Build a validated failure record; optional facts are absent, never None."""
    if not message:
        message = code or "unknown failure"
    if not code:
        code = "UNKNOWN"
    failure: dict[str, Any] = {"message": message, "code": code}
    if status is not None and isinstance(status, int) and 100 <= status <= 599:
        failure["status"] = status
    if retry_after_ms is not None and retry_after_ms > 0 and retry_after_ms != float("inf"):
        failure["providerRetryAfterMs"] = retry_after_ms
    if request_id:
        failure["requestId"] = request_id
    return failure  # type: ignore[return-value]


class LlmError(HarnessError):
    """A model failure whose facts (`failure`) end a turn verbatim."""

    def __init__(self, failure: Mapping[str, Any]) -> None:
        facts = dict(failure)
        message = str(facts.get("message") or facts.get("code") or "model request failed")
        code = str(facts.get("code") or "UNKNOWN")
        facts["message"], facts["code"] = message, code
        super().__init__(message, code)
        self.failure: LlmFailure = facts  # type: ignore[assignment]


def error_chain(error: BaseException | object) -> str:
    """Outermost message first, each distinct cause appended with ': '."""
    seen: set[int] = set()
    parts: list[str] = []
    current: object | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, BaseException):
            text = str(current) or type(current).__name__
            if isinstance(current, BaseExceptionGroup):
                members = "; ".join(error_chain(e) for e in current.exceptions)
                text = f"{current.message} [{members}]"
            if not parts or parts[-1] != text:
                parts.append(text)
            current = current.__cause__  # explicit causes only, like JavaScript's `cause`
        else:
            parts.append(str(current))
            current = None
    return ": ".join(parts)


def failure_of(error: BaseException) -> LlmFailure:
    """An LlmError keeps its facts; anything else becomes {message, code: UNKNOWN}."""
    if isinstance(error, LlmError):
        return dict(error.failure)  # type: ignore[return-value]
    code = error.code if isinstance(error, HarnessError) else "UNKNOWN"
    return make_failure(error_chain(error), code)


_CONTEXT_OVERFLOW = [
    re.compile(r"(?:^|[^a-z0-9])context[\s_-](?:length|window)[\s_-]"
               r"(?:exceed(?:ed|s)?|overflow(?:ed)?|limit[\s_-]exceeded)(?:$|[^a-z0-9])", re.I),
    re.compile(r"\b(?:maximum|max)(?:\s+(?:allowed|supported))?\s+context\s+(?:length|window)\b",
               re.I),
    re.compile(r"\b(?:request|prompt|input|messages?)\s+(?:is\s+|are\s+)?too\s+(?:large|long)\s+"
               r"for\s+(?:(?:this|the)\s+)?(?:model(?:'s)?\s+)?context(?:\s+window)?\b", re.I),
    re.compile(r"\b(?:input|prompt|request)\s+(?:is\s+)?too\s+(?:long|large)\s+for\s+"
               r"(?:this|the)\s+model\b", re.I),
    re.compile(r"\b(?:input|prompt|request|messages?)\b.{0,40}\b(?:exceed(?:s|ed)?|overflows?|"
               r"is\s+larger\s+than)\b.{0,40}\b(?:the\s+)?(?:model(?:'s)?\s+)?context"
               r"(?:\s+(?:length|window))?\b", re.I),
]

_QUOTA = [
    re.compile(r"\binsufficient[\s_-]+(?:quota|balance|credits?)\b", re.I),
    re.compile(r"\b(?:quota|usage[\s_-]+limit)[\s_-]+(?:exceeded|exhausted|reached)\b", re.I),
    re.compile(r"\bexceed(?:ed|s)?[\s_-]+(?:(?:your|the)[\s_-]+)?(?:current[\s_-]+)?quota\b", re.I),
    re.compile(r"\b(?:balance|credits?)[\s_-]+(?:exhausted|depleted)\b", re.I),
    re.compile(r"\bout[\s_-]+of[\s_-]+(?:credits?|budget)\b", re.I),
]


def is_context_window_exceeded(detail: str) -> bool:
    """Whether a provider's error text says the request outgrew the model's context window
    (mapped to `CONTEXT_WINDOW_EXCEEDED`, which is never retried)."""
    return any(pattern.search(detail) for pattern in _CONTEXT_OVERFLOW)


def is_quota_exceeded(detail: str) -> bool:
    """Whether a provider's error text says the account ran out of quota or credit (`QUOTA`,
    never retried)."""
    return any(pattern.search(detail) for pattern in _QUOTA)


# ---- requests and providers ----------------------------------------------------------------

DEFAULT_RETRYABLE_CODES = frozenset({"EMPTY_RESPONSE", "RATE_LIMIT", "SERVER", "TIMEOUT",
                                     "TRANSPORT", "STREAM_CLOSED"})


class LlmRequest(TypedDict, total=False):
    """What the loop hands a provider: the call config plus history and tools."""

    provider: str
    model: str
    reasoningEffort: str
    temperature: float
    maxTokens: int
    stop: list[str]
    messages: list[dict[str, Any]]
    system: str
    tools: list[dict[str, Any]]
    sessionId: str
    signal: Any  # CancelSignal
    purpose: str


@runtime_checkable
class LlmProvider(Protocol):
    """A model adapter: one streamed response per request.

    `stream` yields StreamChunks and ends with exactly one `finish` chunk. It may
    raise instead; the loop's seam turns a raise into an error finish chunk.
    It must stop promptly (closing its connection) when `request["signal"]`
    aborts.
    """

    name: str

    def stream(self, request: LlmRequest) -> AsyncIterator[StreamChunk]:
        """Stream one response (§11.5): chunks, then one `finish`; stop promptly on abort."""


class ProviderInfo(Protocol):
    """Optional provider extras the loop asks for when present."""

    def context_window(self, model: str) -> int | None:
        """The model's context window in tokens, if known (shown against the request's usage)."""

    def prepare(self, config: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, bool]]:
        """Resolve a call config before the request: fill defaults and return, beside it, which
        settings came from the adapter (logged as `adapterDefaults` in `request/header`)."""
