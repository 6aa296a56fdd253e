"""ScriptedModel: a deterministic model for tests, one script entry per request.

Each entry is a reply built from the helpers below (or a callable that builds
one from the request). The model yields to the event loop between chunks, so
tests can interleave sends, steers and cancels with a stream in flight.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from dsh_tui.harness.llm_types import LlmError, make_failure
from dsh_tui.harness.signal import Cancelled


@dataclass
class Reply:
    """One scripted response: blocks to stream, then usage and a finish chunk."""

    parts: list[tuple[str, Any]] = field(default_factory=list)
    finish: dict[str, Any] | None = None
    usage: dict[str, int] | None = None
    hang: bool = False
    raise_error: BaseException | None = None

    def then(self, other: Reply) -> Reply:
        return Reply([*self.parts, *other.parts], other.finish or self.finish,
                     other.usage or self.usage, other.hang or self.hang,
                     other.raise_error or self.raise_error)


def text(s: str, *, then: Reply | None = None) -> Reply:
    """A text block streamed one delta per character."""
    reply = Reply([("text", s)])
    return reply.then(then) if then is not None else reply


def reasoning(s: str, *, then: Reply | None = None) -> Reply:
    """A reasoning block first; `then` (usually `text(...)`) follows in the same reply."""
    reply = Reply([("reasoning", s)])
    return reply.then(then) if then is not None else reply


def tool_call(call_id: str, name: str, args: Mapping[str, Any] | str | None = None, *,
              then: Reply | None = None) -> Reply:
    """A tool-call block (args sent as compact JSON text) ending with finish tool-calls."""
    raw = args if isinstance(args, str) else json.dumps(
        dict(args or {}), separators=(",", ":"), ensure_ascii=False)
    reply = Reply([("tool-call", (call_id, name, raw))])
    return reply.then(then) if then is not None else reply


def reply(*parts: Reply, finish: str | None = None) -> Reply:
    """Several parts in one response (e.g. text then two tool calls)."""
    out = Reply()
    for part in parts:
        out = out.then(part)
    if finish is not None:
        out.finish = {"kind": finish}
    return out


def max_tokens(part: Reply | None = None) -> Reply:
    """A response cut at the output ceiling (finish max-tokens)."""
    out = part if part is not None else Reply()
    return Reply(list(out.parts), {"kind": "max-tokens"}, out.usage)


def fail(code: str, message: str | None = None, *, status: int | None = None,
         retry_after_ms: float | None = None, after: Reply | None = None,
         kind: str = "error") -> Reply:
    """The stream ends with a terminal error finish (optionally after some output)."""
    failure = make_failure(message or f"scripted failure {code}", code, status=status,
                           retry_after_ms=retry_after_ms)
    base = after if after is not None else Reply()
    return Reply(list(base.parts), {"kind": kind, "failure": failure}, base.usage)


def raises(error: BaseException) -> Reply:
    """The provider raises instead of streaming (the seam turns it into an error finish)."""
    return Reply(raise_error=error)


def hang(partial: str = "partial") -> Reply:
    """Streams `partial`, then waits for the request's cancellation and raises."""
    return Reply([("text-open", partial)], hang=True)


def hang_in_tool_call(call_id: str, name: str, partial_arguments: str) -> Reply:
    """Streams the start of a tool call (arguments cut mid-JSON), then waits for the
    request's cancellation: a call interrupted before its arguments were complete."""
    return Reply([("tool-open", (call_id, name, partial_arguments))], hang=True)


ScriptEntry = Reply | Callable[[Mapping[str, Any]], Any]


class ScriptedModel:
    """A provider answering each request with the next script entry."""

    name = "scripted"

    def __init__(self, script: Iterable[ScriptEntry] = (), *, name: str = "scripted",
                 context_window: int | None = None) -> None:
        self.script: list[ScriptEntry] = list(script)
        self.requests: list[dict[str, Any]] = []
        self.name = name
        self._context_window = context_window

    def extend(self, entries: Iterable[ScriptEntry]) -> None:
        self.script.extend(entries)

    def context_window(self, model: str) -> int | None:
        return self._context_window

    async def stream(self, request: Mapping[str, Any]) -> AsyncIterator[dict[str, Any]]:
        number = len(self.requests) + 1
        recorded = dict(request)
        recorded.setdefault("system", "")
        recorded.setdefault("tools", [])
        self.requests.append(recorded)
        if number > len(self.script):
            raise LlmError(make_failure(
                f"scripted model has no entry for request {number} "
                f"(script has {len(self.script)})", "SCRIPT_EXHAUSTED"))
        entry = self.script[number - 1]
        planned = entry(request) if callable(entry) and not isinstance(entry, Reply) else entry
        if inspect.isawaitable(planned):
            planned = await planned
        if not isinstance(planned, Reply):
            raise TypeError(f"script entry {number} produced {type(planned).__name__}, not a Reply")
        if planned.raise_error is not None:
            raise planned.raise_error
        signal = request.get("signal")
        output_chars = 0
        saw_tool_call = False
        for index, (kind, value) in enumerate(planned.parts):
            if kind in ("text", "reasoning", "text-open"):
                block = "reasoning" if kind == "reasoning" else "text"
                yield {"type": "block-start", "index": index, "blockType": block}
                await asyncio.sleep(0)
                for ch in value:
                    yield {"type": f"{block}-delta", "index": index, "text": ch}
                    output_chars += 1
                    await asyncio.sleep(0)
                if kind == "text-open":
                    continue  # hang(): the block stays open
                yield {"type": "block-end", "index": index, "block": {"type": block, "text": value}}
            else:
                call_id, name, raw = value
                saw_tool_call = True
                yield {"type": "block-start", "index": index, "blockType": "tool-call"}
                await asyncio.sleep(0)
                yield {"type": "tool-call-delta", "index": index, "id": call_id, "name": name,
                       "argumentsDelta": raw}
                output_chars += len(raw)
                await asyncio.sleep(0)
                if kind == "tool-open":
                    continue  # hang_in_tool_call(): the call never completes
                yield {"type": "block-end", "index": index,
                       "block": {"type": "tool-call", "id": call_id, "name": name,
                                 "arguments": raw}}
            await asyncio.sleep(0)
        if planned.hang:
            if signal is None:
                await asyncio.Event().wait()
            reason = await signal.wait()
            raise Cancelled(reason)
        finish = planned.finish
        if finish is None or finish.get("kind") not in ("error", "aborted"):
            yield {"type": "usage", "usage": planned.usage or {"inputTokens": 10,
                                                                "outputTokens": output_chars}}
            await asyncio.sleep(0)
        if finish is None:
            finish = {"kind": "tool-calls" if saw_tool_call else "stop"}
        yield {"type": "finish", "reason": finish}
