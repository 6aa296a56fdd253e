"""Chat-completions stream payloads → harness StreamChunks.

One translator serves DeepSeek, vLLM, Ollama and llama.cpp, so it accepts every shape
those servers are known to send (docs/contract.md §11, item 3); the list is on
`ChatStreamTranslator`. Block ends, usage and finish are deferred to the end of the
stream, so nothing can follow a `finish`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from dsh_tui.harness.llm_types import FinishReason, LlmError, StreamChunk, TokenUsage

from .blocks import BlockWriter, OpenBlock
from .errors import in_band_failure

ERROR_FINISH_REASONS = frozenset({"insufficient_system_resource"})
"""Reasons that mean the server failed the generation (DeepSeek: out of capacity)."""


def map_finish_reason(reason: str | None, *, has_tool_calls: bool) -> FinishReason:
    """Wire `finish_reason` → harness finish (no reason at all is `stop`).

    A reason this adapter does not know (`content_filter`, a server's own, a future one)
    keeps what was streamed as the message: the step ends as a `stop` that names the
    reason in `finishReason`, so the transcript can say why it ended early instead of
    throwing the text away as an error.
    """
    if reason is None or reason == "stop":
        # Gemini-compat and older Ollama end tool-call turns with "stop".
        return {"kind": "tool-calls"} if has_tool_calls else {"kind": "stop"}
    if reason in ("tool_calls", "function_call"):
        return {"kind": "tool-calls"}
    if reason == "length":
        return {"kind": "max-tokens"}
    if reason in ERROR_FINISH_REASONS:
        return {"kind": "error",
                "failure": {"message": f"model stopped: {reason}", "code": reason.upper()}}
    return {"kind": "tool-calls" if has_tool_calls else "stop", "finishReason": reason[:200]}


CONTEXT_LIMIT = "context"
"""`limit` of a `max-tokens` finish cut by the context window, not by an output cap."""


def context_full(reason: FinishReason, usage: TokenUsage | None,
                 cap: int | None) -> FinishReason:
    """Say *which* limit cut a `length` finish: servers send `length` both when the reply
    reached the request's output cap and when the context window filled (llama.cpp stops a
    slot at `n_ctx` with STOP_TYPE_LIMIT and reports `length`; DeepSeek does the same).

    With no cap in the request, only the context can have ended the reply. With a cap, a
    reply that produced fewer tokens than it was allowed also ran into the context. The
    finish keeps upstream's kind (`max-tokens`: a truncated step, its partial tool calls
    dropped) and names the limit in the merge-extension field `limit: "context"`, so
    upstream still reads the log and this app can report the truth."""
    if reason.get("kind") != "max-tokens":
        return reason
    produced = usage.get("outputTokens") if usage is not None else None
    if cap is None or (isinstance(produced, int) and produced < cap):
        return {**reason, "limit": CONTEXT_LIMIT}
    return reason


def _count(value: Any) -> int | None:
    if type(value) is int and value >= 0:
        return value
    if type(value) is float and value >= 0 and value.is_integer():
        return int(value)
    return None


def _section(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def map_usage(usage: Mapping[str, Any] | None,
              timings: Mapping[str, Any] | None = None) -> TokenUsage | None:
    """Wire usage → disjoint harness counts (`inputTokens` excludes cache reads)."""
    usage = _section(usage)
    timings = _section(timings)
    prompt = _count(usage.get("prompt_tokens"))
    completion = _count(usage.get("completion_tokens"))
    if prompt is None and completion is None:
        # llama.cpp without include_usage: `timings` is all there is.
        processed, predicted = _count(timings.get("prompt_n")), _count(timings.get("predicted_n"))
        if processed is None and predicted is None:
            return None
        derived: TokenUsage = {"inputTokens": processed or 0, "outputTokens": predicted or 0}
        cache = _count(timings.get("cache_n"))
        if cache is not None:
            derived["cacheReadTokens"] = cache
        return derived
    cached = _count(_section(usage.get("prompt_tokens_details")).get("cached_tokens"))
    if cached is None:
        cached = _count(usage.get("prompt_cache_hit_tokens"))
    if cached is None:
        cached = _count(timings.get("cache_n"))
    out: TokenUsage = {"inputTokens": max(0, (prompt or 0) - (cached or 0)),
                       "outputTokens": completion or 0}
    if cached is not None:
        out["cacheReadTokens"] = cached
    reasoning = _count(_section(usage.get("completion_tokens_details")).get("reasoning_tokens"))
    if reasoning is not None:
        out["reasoningTokens"] = reasoning
    return out


def _arguments(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    # Some servers send the arguments as a JSON object instead of its text.
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class ChatStreamTranslator:
    """Feed parsed `data:` payloads in order; call `close()` at `[DONE]`.

    Shapes accepted:

    * reasoning as `delta.reasoning_content` (DeepSeek, llama.cpp) or `delta.reasoning`
      (vLLM ≥ 0.11, Ollama); the empty first reasoning delta of thinking mode never
      opens a block;
    * one reasoning and one text block per response, one tool-call block per wire
      tool-call `index`, except that a different non-empty `id` on an index that already
      has one starts a new call (Ollama emits parallel calls all at index 0);
    * `choices` missing, `[]` or `[null]`; `delta` missing; `finish_reason` absent;
    * usage on the finish chunk (DeepSeek) or on a trailing `choices: []` chunk (OpenAI,
      vLLM, llama.cpp), the last one winning, with llama.cpp `timings` as a fallback;
      nothing at all means "unknown", never zero.
    """

    def __init__(self, label: str = "model server", *, max_tokens: int | None = None) -> None:
        self._label = label
        self._cap = max_tokens  # the output cap the request sent (None: none was sent)
        self._writer = BlockWriter()
        self._text: OpenBlock | None = None
        self._reasoning: OpenBlock | None = None
        self._tools: dict[int, OpenBlock] = {}
        self._finish_reason: str | None = None
        self._usage: Mapping[str, Any] | None = None
        self._timings: Mapping[str, Any] | None = None
        self.finished = False
        """A `finish_reason` has arrived: the response is complete even without `[DONE]`."""

    def feed(self, payload: Any) -> list[StreamChunk]:
        if not isinstance(payload, Mapping):
            raise LlmError({"message": f"malformed stream payload: {str(payload)[:120]}",
                            "code": "MALFORMED_RESPONSE"})
        choices = payload.get("choices")
        if payload.get("error") is not None and not choices:
            raise LlmError(in_band_failure(payload["error"], self._label))
        out: list[StreamChunk] = []
        for choice in choices if isinstance(choices, list) else ():
            if isinstance(choice, Mapping):
                self._choice(choice, out)
        if isinstance(payload.get("usage"), Mapping):
            self._usage = payload["usage"]
        if isinstance(payload.get("timings"), Mapping):
            self._timings = payload["timings"]
        return out

    def close(self) -> list[StreamChunk]:
        """Block ends in opening order, usage if known, then the finish."""
        reason = map_finish_reason(self._finish_reason,
                                   has_tool_calls=self._writer.has_tool_calls)
        usage = map_usage(self._usage, self._timings)
        return self._writer.closing(usage, context_full(reason, usage, self._cap))

    # -- one choice ---------------------------------------------------------------------------

    def _choice(self, choice: Mapping[str, Any], out: list[StreamChunk]) -> None:
        delta = _section(choice.get("delta"))
        reasoning = delta.get("reasoning_content")
        if not (isinstance(reasoning, str) and reasoning):
            reasoning = delta.get("reasoning")
        if isinstance(reasoning, str) and reasoning:
            if self._reasoning is None:
                self._reasoning, start = self._writer.open("reasoning")
                out.append(start)
            out.append(self._writer.delta(self._reasoning, reasoning))
        content = delta.get("content")
        if isinstance(content, str) and content:
            if self._text is None:
                self._text, start = self._writer.open("text")
                out.append(start)
            out.append(self._writer.delta(self._text, content))
        calls = delta.get("tool_calls")
        for position, call in enumerate(calls if isinstance(calls, list) else ()):
            if isinstance(call, Mapping):
                self._tool_call(call, position, out)
        reason = choice.get("finish_reason")
        if isinstance(reason, str) and reason:
            self._finish_reason = reason
            self.finished = True

    def _tool_call(self, call: Mapping[str, Any], position: int, out: list[StreamChunk]) -> None:
        key = call.get("index")
        if type(key) is not int:
            key = position  # old Ollama sent no index
        call_id = call.get("id") if isinstance(call.get("id"), str) and call.get("id") else None
        function = _section(call.get("function"))
        name = function.get("name") if isinstance(function.get("name"), str) else None
        block = self._tools.get(key)
        if block is None or (call_id and block.call_id and call_id != block.call_id):
            block, start = self._writer.open("tool-call")
            self._tools[key] = block
            out.append(start)
        if call_id and not block.call_id:
            block.call_id = call_id
        if name and not block.name:
            block.name = name
        out.append(self._writer.tool_delta(block, _arguments(function.get("arguments"))))
