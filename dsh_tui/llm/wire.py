"""Harness history → chat-completions `messages`, `tools` and sampling fields.

A server rejects a history that breaks its rules, so the rules (docs/contract.md §11,
item 2; upstream `serialize.ts`) are kept exactly; they are on `serialize_messages`.
Images have no wire form here (the app produces none), so they are refused up front with
`UNSUPPORTED_CONTENT` rather than silently dropped.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dsh_tui.harness.jsonvalue import thaw_json
from dsh_tui.harness.llm_types import LlmError, make_failure

NO_OUTPUT = "(no output)"


@dataclass(frozen=True, slots=True)
class ReasoningReplay:
    """How assistant reasoning goes back to the server."""

    field: str | None = "reasoning_content"  # None: never sent
    always: bool = False  # send the field (possibly "") on every assistant message


def _blocks(message: Mapping[str, Any]) -> Sequence[Mapping[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):  # tolerate a bare-string message
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, Mapping)] if isinstance(content, Sequence) else []


def _joined(blocks: Iterable[Mapping[str, Any]], kind: str) -> str:
    return "".join(str(b.get("text", "")) for b in blocks if b.get("type") == kind)


def _refuse_images(blocks: Iterable[Mapping[str, Any]]) -> None:
    for block in blocks:
        if block.get("type") == "image":
            raise LlmError(make_failure(
                "this chat-completions adapter does not support image content",
                "UNSUPPORTED_CONTENT"))
        if block.get("type") == "tool-result":
            _refuse_images(_blocks(block))


def serialize_assistant(message: Mapping[str, Any], replay: ReasoningReplay) -> dict[str, Any]:
    blocks = _blocks(message)
    wire: dict[str, Any] = {"role": "assistant", "content": _joined(blocks, "text")}
    reasoning = _joined(blocks, "reasoning")
    if replay.field is not None and (reasoning or replay.always):
        wire[replay.field] = reasoning
    calls = [{"id": str(b.get("id", "")), "type": "function",
              "function": {"name": str(b.get("name", "")), "arguments": str(b.get("arguments", ""))}}
             for b in blocks if b.get("type") == "tool-call"]
    if calls:
        wire["tool_calls"] = calls
    return wire


def serialize_messages(messages: Iterable[Mapping[str, Any]], *, system: str | None = None,
                       replay: ReasoningReplay = ReasoningReplay()) -> list[dict[str, Any]]:
    """The wire `messages` array: the system prompt first, then the history in order.

    * assistant `content` is always a string, `""` when the turn had no text, never
      null, which DeepSeek rejects for a reasoning-only turn;
    * reasoning is passed back under a configurable field; with thinking on it is sent
      on *every* assistant message (`""` when there was none), because live V4 rejected
      histories that lacked it even on turns without tool calls;
    * tool calls are replayed exactly (`id`, `type: "function"`, the raw argument text),
      and each `tool-result` block becomes its own `role: "tool"` message;
    * empty tool output is sent as `(no output)`: the message needs some content.
    """
    wire: list[dict[str, Any]] = []
    if system:
        wire.append({"role": "system", "content": system})
    for message in messages:
        blocks = _blocks(message)
        _refuse_images(blocks)
        role = message.get("role")
        if role == "assistant":
            wire.append(serialize_assistant(message, replay))
            continue
        if role == "system":
            wire.append({"role": "system", "content": _joined(blocks, "text")})
            continue
        results = [b for b in blocks if b.get("type") == "tool-result"]
        text = _joined(blocks, "text")
        if text or not results:
            wire.append({"role": "user", "content": text})
        for result in results:
            wire.append({"role": "tool", "tool_call_id": str(result.get("toolCallId", "")),
                         "content": _joined(_blocks(result), "text") or NO_OUTPUT})
    return wire


def serialize_tools(tools: Iterable[Mapping[str, Any]] | None) -> list[dict[str, Any]]:
    return [{"type": "function",
             "function": {"name": str(tool.get("name", "")),
                          "description": str(tool.get("description", "")),
                          "parameters": thaw_json(tool.get("parameters")
                                                  or {"type": "object", "properties": {}})}}
            for tool in tools or ()]


def sampling_fields(request: Mapping[str, Any], *, max_tokens_field: str = "max_tokens"
                    ) -> dict[str, Any]:
    """`temperature`, the output cap and `stop`, only when the request sets them."""
    out: dict[str, Any] = {}
    if request.get("temperature") is not None:
        out["temperature"] = request["temperature"]
    if request.get("maxTokens") is not None:
        out[max_tokens_field] = request["maxTokens"]
    if request.get("stop"):
        out["stop"] = list(request["stop"])
    return out
