"""Small builders for harness messages and a chunk collector shared by the llm tests."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any

from dsh_tui.harness.assembler import BlockAssembler


def user(text: str, *, kind: str = "user", message_id: str = "u1") -> dict[str, Any]:
    source: dict[str, Any] = {"kind": kind}
    if kind == "plugin":
        source["plugin"] = "notes"
    return {"id": message_id, "role": "user", "content": [{"type": "text", "text": text}],
            "source": source}


def assistant(*blocks: Mapping[str, Any]) -> dict[str, Any]:
    return {"id": "a1", "role": "assistant", "content": [dict(b) for b in blocks],
            "source": {"kind": "model", "provider": "deepseek", "model": "deepseek-flash"}}


def tool_result(call_id: str, text: str, *, is_error: bool = False) -> dict[str, Any]:
    return {"id": f"r-{call_id}", "role": "user",
            "content": [{"type": "tool-result", "toolCallId": call_id,
                         "content": [{"type": "text", "text": text}] if text else [],
                         "isError": is_error}],
            "source": {"kind": "tool", "callId": call_id}}


def request(*messages: Mapping[str, Any], **fields: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"provider": "deepseek", "model": "deepseek-flash",
                           "messages": list(messages) or [user("hi")]}
    out.update(fields)
    return out


async def collect(stream: AsyncIterator[dict[str, Any]]) -> list[dict[str, Any]]:
    return [chunk async for chunk in stream]


def assemble(chunks: list[dict[str, Any]]) -> BlockAssembler:
    assembler = BlockAssembler()
    for chunk in chunks:
        assembler.push(chunk)
    return assembler


def failure_of(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    """The failure of a stream that must have ended with an error or aborted finish."""
    last = chunks[-1]
    assert last["type"] == "finish", last
    assert last["reason"]["kind"] in ("error", "aborted"), last
    assert sum(c["type"] == "finish" for c in chunks) == 1
    return last["reason"]["failure"]


def kinds(chunks: list[dict[str, Any]]) -> list[str]:
    return [chunk["type"] for chunk in chunks]
