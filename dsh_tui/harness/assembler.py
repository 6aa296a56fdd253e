"""Chunk stream → assistant content: the one canonical assembly algorithm.

The loop logs every raw chunk and feeds this at the same time; the UI uses the
same class to show a message that is still streaming, so what is shown while
streaming and what is recorded at the end cannot disagree.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .llm_types import ContentBlock, FinishReason, TokenUsage


class _Partial:
    __slots__ = ("arguments", "block", "block_type", "call_id", "name", "parts")

    def __init__(self, block_type: str) -> None:
        self.block_type = block_type
        self.parts: list[str] = []
        self.call_id: str | None = None
        self.name: str | None = None
        self.arguments: list[str] = []
        self.block: Mapping[str, Any] | None = None  # set by block-end: authoritative


class BlockAssembler:
    """Tolerant of delta-only protocols; deltas after a block-end are ignored."""

    def __init__(self) -> None:
        self._partials: dict[int, _Partial] = {}
        self._order: list[int] = []
        self._usage: TokenUsage | None = None
        self._finish: FinishReason | None = None
        self._replay_state: Any = None

    def _ensure(self, index: int, block_type: str) -> _Partial:
        partial = self._partials.get(index)
        if partial is None:
            partial = _Partial(block_type)
            self._partials[index] = partial
            self._order.append(index)
        return partial

    def push(self, chunk: Mapping[str, Any]) -> None:
        """Feed one stream chunk (§1.5); deltas for a block after its `block-end` are ignored,
        since the block-end's block is authoritative. Raises on an unknown chunk type."""
        kind = chunk.get("type")
        if kind == "block-start":
            self._ensure(chunk["index"], chunk.get("blockType", "text"))
        elif kind in ("text-delta", "reasoning-delta"):
            partial = self._ensure(chunk["index"], "text" if kind == "text-delta" else "reasoning")
            if partial.block is None:
                partial.parts.append(chunk.get("text", ""))
        elif kind == "tool-call-delta":
            partial = self._ensure(chunk["index"], "tool-call")
            if partial.block is None:
                partial.call_id = chunk.get("id")
                if chunk.get("name"):
                    partial.name = chunk["name"]
                partial.arguments.append(chunk.get("argumentsDelta", ""))
        elif kind == "block-end":
            block = chunk["block"]
            partial = self._ensure(chunk["index"], block.get("type", "text"))
            if partial.block is None:
                partial.block = block
        elif kind == "usage":
            self._usage = chunk.get("usage")
        elif kind == "finish":
            self._finish = chunk.get("reason")
            self._replay_state = chunk.get("replayState")
        else:
            raise ValueError(f"unknown stream chunk type {kind!r}")

    @staticmethod
    def _assemble(partial: _Partial, index: int) -> ContentBlock:
        if partial.block is not None:
            return dict(partial.block)
        if partial.block_type in ("text", "reasoning"):
            return {"type": partial.block_type, "text": "".join(partial.parts)}
        if partial.block_type == "tool-call":
            return {
                "type": "tool-call",
                "id": partial.call_id or f"call-{index}",
                "name": partial.name or "",
                "arguments": "".join(partial.arguments),
            }
        raise ValueError(f'cannot assemble incomplete block of type "{partial.block_type}"')

    def _assembled(self) -> tuple[list[ContentBlock], Any]:
        every = [self._assemble(self._partials[i], i) for i in self._order]
        keep = None
        if self.finish.get("kind") == "max-tokens":
            keep = [block.get("type") != "tool-call" for block in every]
        blocks = every if keep is None else [b for b, k in zip(every, keep, strict=True) if k]
        envelope = self._replay_state
        if not isinstance(envelope, Mapping) or envelope.get("blocks") is None:
            return blocks, envelope
        entries = envelope["blocks"]
        if len(entries) != len(every):
            return blocks, None
        if keep is None or len(blocks) == len(every):
            return blocks, envelope
        pruned = {"response": envelope.get("response"),
                  "blocks": [e for e, k in zip(entries, keep, strict=True) if k]}
        return blocks, pruned

    def blocks(self) -> list[ContentBlock]:
        """The assembled content so far, in first-seen order; after a `max-tokens` finish the
        tool calls are dropped (they never run, §6.4)."""
        return self._assembled()[0]

    def interrupted_blocks(self) -> list[ContentBlock]:
        """Visible text/reasoning so far (non-blank), for an interrupted message."""
        kept = []
        for index in self._order:
            partial = self._partials[index]
            kind = partial.block.get("type") if partial.block is not None else partial.block_type
            if kind not in ("text", "reasoning"):
                continue
            block = self._assemble(partial, index)
            if str(block.get("text", "")).strip():
                kept.append(block)
        return kept

    @property
    def usage(self) -> TokenUsage | None:
        """The last `usage` chunk's usage, or None when the provider sent none."""
        return self._usage

    @property
    def finish(self) -> FinishReason:
        """The finish reason; a stream that ended without `finish` counts as a normal stop."""
        return self._finish if self._finish is not None else {"kind": "stop"}

    @property
    def finished(self) -> bool:
        """Whether a `finish` chunk arrived."""
        return self._finish is not None

    @property
    def replay_state(self) -> Any:
        """The provider's `replayState` from the finish chunk, pruned like the blocks (None if
        it no longer lines up); kept on the message's source so the next request replays it."""
        return self._assembled()[1]

    def text_so_far(self, kind: str = "text") -> str:
        """Joined text of every `kind` block seen so far (for live display)."""
        out = []
        for index in self._order:
            partial = self._partials[index]
            if partial.block is not None:
                if partial.block.get("type") == kind:
                    out.append(str(partial.block.get("text", "")))
            elif partial.block_type == kind:
                out.append("".join(partial.parts))
        return "".join(out)
