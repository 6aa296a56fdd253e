"""DemoModel: the embedded default model — no key, no network.

It streams like a real adapter (same chunk protocol, block order, usage, one finish) at a
human-watchable pace, so a newcomer sees the app work; the pacing is on `DemoModel`. What
it says comes from `dsh_tui.llm.demo_script`, a pure function of the seed and the request,
so a given history always gets the same reply. Cancellation is prompt: every pause races
the request's signal, and an abort ends the stream with an `aborted` finish.
"""

from __future__ import annotations

import asyncio
import json
import math
import random
import re
from collections.abc import AsyncIterator, Mapping
from typing import Any

from dsh_tui.harness.llm_types import LlmRequest, StreamChunk, make_failure
from dsh_tui.harness.signal import CancelSignal

from .blocks import BlockKind, BlockWriter, failed_finish
from .demo_script import ReplyPlan, plan_reply

CHUNKS_PER_SECOND = 40.0
FIRST_TOKEN_DELAY = 0.35  # seconds at speed 1.0: long enough to see "thinking…"
MIN_SLEEP = 0.001  # below this a pause is skipped (only a yield to the loop)
CONTEXT_WINDOW = 128_000

_WORD = re.compile(r"\S+\s*|\s+")
_PIECE_SIZES = (1, 1, 1, 2, 2, 3, 4)


def word_pieces(text: str, rng: random.Random) -> list[str]:
    """Split text into deltas of 1–4 words, whitespace kept, so joining gives it back."""
    words = _WORD.findall(text)
    pieces: list[str] = []
    position = 0
    while position < len(words):
        size = rng.choice(_PIECE_SIZES)
        pieces.append("".join(words[position:position + size]))
        position += size
    return pieces


class DemoModel:
    """`demo`: a simulated model that reasons, writes Markdown, calls tools and spawns helpers.

    Word-sized deltas, 1–4 words each, about 40 a second at `speed=1.0`, after a short
    "time to first token". `speed` multiplies the rate; `speed=0` (or anything absurdly
    fast) streams without sleeping but still yields to the event loop between chunks.
    """

    name = "demo"
    models = ("demo",)
    default_model = "demo"
    retry_policy = None

    def __init__(self, speed: float = 1.0, seed: int = 0) -> None:
        if not math.isfinite(speed) or speed < 0:
            raise ValueError("speed must be a finite number >= 0")
        self.speed = speed
        self.seed = seed

    def __repr__(self) -> str:
        return f"DemoModel(speed={self.speed!r}, seed={self.seed!r})"

    def context_window(self, model: str) -> int | None:
        return CONTEXT_WINDOW

    def prepare(self, config: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, bool]]:
        resolved = dict(config)
        if not resolved.get("model"):
            resolved["model"] = self.default_model
        return resolved, {}

    def plan(self, request: Mapping[str, Any]) -> ReplyPlan:
        """The reply this request gets (exposed so tests and tools can inspect it)."""
        return plan_reply(self.seed, list(request.get("messages") or ()), request.get("tools"),
                          request.get("system"))

    def _delay(self, seconds: float) -> float:
        if self.speed == 0:
            return 0.0
        delay = seconds / self.speed
        return delay if delay >= MIN_SLEEP else 0.0

    async def stream(self, request: LlmRequest) -> AsyncIterator[StreamChunk]:
        signal: CancelSignal | None = request.get("signal")
        plan = self.plan(request)
        rng = random.Random(f"{self.seed}:{plan.call_id}:{len(plan.text)}")
        writer = BlockWriter()
        if not await self._pause(FIRST_TOKEN_DELAY, signal):
            yield _aborted()
            return
        sections: list[tuple[BlockKind, str]] = [("reasoning", plan.reasoning),
                                                 ("text", plan.text)]
        for kind, text in sections:
            if not text:
                continue
            block, start = writer.open(kind)
            yield start
            for piece in word_pieces(text, rng):
                if not await self._pause(1.0 / CHUNKS_PER_SECOND, signal):
                    yield _aborted()
                    return
                yield writer.delta(block, piece)
        if plan.tool is not None:
            block, start = writer.open("tool-call")
            block.call_id, block.name = plan.call_id, plan.tool.name
            yield start
            arguments = _json(plan.tool.arguments)
            for piece in (arguments[i:i + 24] for i in range(0, len(arguments), 24)):
                if not await self._pause(1.0 / CHUNKS_PER_SECOND, signal):
                    yield _aborted()
                    return
                yield writer.tool_delta(block, piece)
        reason = {"kind": "tool-calls"} if plan.tool is not None else {"kind": "stop"}
        for chunk in writer.closing(_usage(request, writer), reason):
            yield chunk

    async def _pause(self, seconds: float, signal: CancelSignal | None) -> bool:
        """Wait (scaled by speed); False if the signal aborted first."""
        delay = self._delay(seconds)
        if signal is None:
            await asyncio.sleep(delay)
            return True
        if signal.aborted:
            return False
        if delay == 0.0:
            await asyncio.sleep(0)
            return not signal.aborted
        try:
            await asyncio.wait_for(signal.wait(), delay)
        except TimeoutError:
            return True
        return False


def _json(arguments: Mapping[str, Any]) -> str:
    return json.dumps(arguments, ensure_ascii=False, separators=(",", ":"))


def _aborted() -> StreamChunk:
    return failed_finish(make_failure("demo model stopped: request aborted", "ABORTED"),
                         aborted=True)


def _usage(request: Mapping[str, Any], writer: BlockWriter) -> dict[str, int]:
    """Plausible token counts (about four characters a token), cached prefix included."""
    history = sum(len(str(m.get("content", ""))) for m in request.get("messages") or ())
    history += len(request.get("system") or "")
    prompt = max(1, history // 4)
    output = max(1, sum(len("".join(b.parts)) for b in writer.blocks) // 4)
    cached = prompt // 2 // 256 * 256  # half the history, in 256-token cache units
    usage = {"inputTokens": prompt - cached, "outputTokens": output}
    if cached:
        usage["cacheReadTokens"] = cached
    reasoning = sum(len("".join(b.parts)) for b in writer.blocks if b.kind == "reasoning") // 4
    if reasoning:
        usage["reasoningTokens"] = reasoning
    return usage
