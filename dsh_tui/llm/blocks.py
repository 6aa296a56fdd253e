"""Harness-side block bookkeeping shared by every adapter that emits StreamChunks.

The chunk protocol has a fixed shape: blocks get indexes 0, 1, 2 … in the order
they open; deltas name their block; at the end every opened block gets exactly
one `block-end` carrying the fully assembled block (in opening order), then an
optional `usage`, then exactly one `finish`. Keeping that in one place means the
HTTP translator and the demo model cannot drift apart on it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from dsh_tui.harness.llm_types import ContentBlock, LlmFailure, StreamChunk, TokenUsage

BlockKind = Literal["text", "reasoning", "tool-call"]


@dataclass(slots=True)
class OpenBlock:
    """One block under assembly; `parts` are text (or argument) fragments."""

    index: int
    kind: BlockKind
    parts: list[str] = field(default_factory=list)
    call_id: str | None = None
    name: str | None = None

    def assembled(self) -> ContentBlock:
        text = "".join(self.parts)
        if self.kind == "tool-call":
            # A server that never sent an id still needs a stable, unique one: the
            # loop pairs the tool result with it and replays it on the next request.
            return {"type": "tool-call", "id": self.call_id or f"call_{self.index}",
                    "name": self.name or "", "arguments": text}
        return {"type": self.kind, "text": text}


class BlockWriter:
    """Allocates block indexes in opening order and produces the chunks for them."""

    __slots__ = ("blocks",)

    def __init__(self) -> None:
        self.blocks: list[OpenBlock] = []

    def open(self, kind: BlockKind) -> tuple[OpenBlock, StreamChunk]:
        block = OpenBlock(len(self.blocks), kind)
        self.blocks.append(block)
        return block, {"type": "block-start", "index": block.index, "blockType": kind}

    @staticmethod
    def delta(block: OpenBlock, text: str) -> StreamChunk:
        """A text or reasoning delta (recorded on the block)."""
        block.parts.append(text)
        kind = "reasoning-delta" if block.kind == "reasoning" else "text-delta"
        return {"type": kind, "index": block.index, "text": text}

    @staticmethod
    def tool_delta(block: OpenBlock, arguments: str) -> StreamChunk:
        """A tool-call delta; the id and name are repeated once known, as upstream does."""
        block.parts.append(arguments)
        chunk: StreamChunk = {"type": "tool-call-delta", "index": block.index,
                              "id": block.call_id or ""}
        if block.name:
            chunk["name"] = block.name
        chunk["argumentsDelta"] = arguments
        return chunk

    @property
    def has_tool_calls(self) -> bool:
        return any(block.kind == "tool-call" for block in self.blocks)

    def closing(self, usage: TokenUsage | None, reason: Mapping[str, Any]) -> list[StreamChunk]:
        """`block-end` per opened block in order, then usage (if known), then the finish.

        A `stop` with no block at all is a degenerate completion, reported as an
        `EMPTY_RESPONSE` error (retryable) instead of an empty assistant message.
        """
        out: list[StreamChunk] = [
            {"type": "block-end", "index": block.index, "block": block.assembled()}
            for block in self.blocks
        ]
        if usage is not None:
            out.append({"type": "usage", "usage": usage})
        if reason.get("kind") == "stop" and not self.blocks:
            reason = {"kind": "error", "failure": {
                "message": "model returned a completed response with no content",
                "code": "EMPTY_RESPONSE"}}
        out.append({"type": "finish", "reason": dict(reason)})
        return out


def failed_finish(failure: LlmFailure, *, aborted: bool) -> StreamChunk:
    """The terminal chunk of a failed call; `aborted` when the caller cancelled it."""
    kind = "aborted" if aborted or failure.get("code") == "ABORTED" else "error"
    return {"type": "finish", "reason": {"kind": kind, "failure": dict(failure)}}
