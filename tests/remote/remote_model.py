"""The model the runtime talks to in these tests: `FakeServer` with a responder that reads
the prompt.

The runtime sends chat-completions requests through its pi-ai adapter: the conversation,
plus, on its own first turn, a title request without tools. The responder answers a
title request with a short title, a request whose latest prompt says `SPAWN` (and that
is not already answering a tool result) with a `subagent` tool call, and anything else
with `WORDS` numbered words streamed `PAUSE` seconds apart. A prompt may change both with
`[words=N]` and `[pause=S]`, so a test can keep a reply streaming while it acts.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))

from fake_server import FakeServer, Reply, Seen, sse_reply

WORDS = 6
PAUSE = 0.05
CONTEXT_PREFIXES = ("Current runtime context", "Time sampled")


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return " ".join(p.get("text", "") for p in content or () if isinstance(p, dict))


def latest_prompt(body: dict[str, Any]) -> str:
    """The newest user message that is the person's (not the runtime's context notes)."""
    for message in reversed(body.get("messages") or ()):
        if message.get("role") == "user" and not _text(message).startswith(CONTEXT_PREFIXES):
            return _text(message)
    return ""


def word(n: int) -> str:
    """The n-th streamed word (1-based): `w1`, ` w2,` …, so every chunk is distinct."""
    return f"{' ' if n > 1 else ''}w{n},"


def _chunk(model: str, delta: dict[str, Any], finish: str | None = None) -> str:
    return "data: " + json.dumps({
        "id": "fake", "object": "chat.completion.chunk", "created": 1, "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}) + "\n\n"


def respond(seen: Seen) -> Reply:
    """The answer to one request (see the module docstring)."""
    body = seen.json
    model = str(body.get("model") or "deepseek-flash")
    usage = "data: " + json.dumps({"id": "fake", "object": "chat.completion.chunk",
                                   "created": 1, "model": model, "choices": [],
                                   "usage": {"prompt_tokens": 10, "completion_tokens": 6,
                                             "total_tokens": 16}}) + "\n\n"
    start = _chunk(model, {"role": "assistant", "content": ""})
    if not body.get("tools"):  # the runtime's title request
        text = start + _chunk(model, {"content": "Remote test"}) + _chunk(model, {}, "stop")
        return sse_reply(text + usage + "data: [DONE]\n\n")
    prompt = latest_prompt(body)
    messages = body.get("messages") or []
    answering_tool = bool(messages) and messages[-1].get("role") == "tool"
    if "SPAWN" in prompt and not answering_tool:
        call = {"tool_calls": [{"index": 0, "id": "call_spawn", "type": "function", "function": {
            "name": "subagent",
            "arguments": json.dumps({"description": "child task",
                                     "prompt": "count [words=4] [pause=0.05]"})}}]}
        text = start + _chunk(model, call) + _chunk(model, {}, "tool_calls")
        return sse_reply(text + usage + "data: [DONE]\n\n")
    count = int(m.group(1)) if (m := re.search(r"\[words=(\d+)\]", prompt)) else WORDS
    pause = float(m.group(1)) if (m := re.search(r"\[pause=([\d.]+)\]", prompt)) else PAUSE
    parts: list[bytes | float] = [start.encode()]
    for n in range(1, count + 1):
        parts += [pause, _chunk(model, {"content": word(n)}).encode()]
    parts.append((_chunk(model, {}, "stop") + usage + "data: [DONE]\n\n").encode())
    return Reply(200, parts, {"Content-Type": "text/event-stream"})


def model_server() -> FakeServer:
    """A fake model server answering every request with `respond`."""
    return FakeServer(responder=respond)
