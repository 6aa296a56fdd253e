"""Issue 11 over real HTTP on 127.0.0.1: SSE edge cases and a canary API key that servers
echo back (in headers, error bodies, in-band errors and the streamed text itself) never
reaching the data dir, an export or the screen."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path
from typing import Any

import pytest
from fake_server import FakeServer, Reply, data_lines, json_reply, sse_reply
from llm_support import collect, kinds, request

from dsh_tui import cli
from dsh_tui.compose import build_context
from dsh_tui.harness import AgentOptions, CreateAgentOptions, user_message
from dsh_tui.harness.persistence import JsonlPersistence
from dsh_tui.llm.deepseek import DeepSeekProvider
from dsh_tui.llm.errors import SecretFilter
from dsh_tui.llm.retry import install_retry_policy

CANARY = "sk-canary-SECRET-5d1e"
FRAGMENT = b"SECRET-5d1e"  # what a partial leak would still show


def delta(content: str, finish: str | None = None) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": {"content": content}, "finish_reason": finish}]}


# ---- SSE per the specification ----------------------------------------------------------------


async def stream_of(transcript: str) -> list[dict[str, Any]]:
    async with FakeServer([sse_reply(transcript, split=7)]) as server:
        provider = DeepSeekProvider(api_key=CANARY, base_url=server.base_url)
        try:
            return await collect(provider.stream(request()))
        finally:
            await provider.aclose()


def text_of(chunks: list[dict[str, Any]]) -> str:
    return "".join(c.get("text", "") for c in chunks if c["type"] == "text-delta")


async def test_empty_data_lines_comments_and_keep_alives_are_ignored() -> None:
    transcript = (": keep-alive\n\n" "data:\n\n" "data: \n\n" + data_lines([delta("Hel")], done=False)
                  + ":\n\ndata:\n\n" + data_lines([delta("lo", "stop")]))
    chunks = await stream_of(transcript)
    assert text_of(chunks) == "Hello"
    assert chunks[-1] == {"type": "finish", "reason": {"kind": "stop"}}


async def test_an_unknown_finish_reason_keeps_the_text_and_names_the_reason() -> None:
    chunks = await stream_of(data_lines([delta("partial "), delta("answer", "eos_flux")]))
    assert text_of(chunks) == "partial answer"
    assert chunks[-1] == {"type": "finish",
                          "reason": {"kind": "stop", "finishReason": "eos_flux"}}


async def test_an_unknown_finish_reason_ends_the_turn_with_the_message_kept(
        tmp_path: Path) -> None:
    async with FakeServer([sse_reply(data_lines([delta("kept text", "weird_stop")]))]) as server:
        provider = DeepSeekProvider(api_key=CANARY, base_url=server.base_url)
        events = await _one_turn(provider, tmp_path, "hi")
        await provider.aclose()
    messages = [e.data["message"] for e in events if e.type == "assistant/message"]
    assert [b["text"] for b in messages[-1]["content"]] == ["kept text"]
    assert [e.data["reason"]["kind"] for e in events if e.type == "turn/end"] == ["completed"]
    from dsh_tui.ui.state.transcript import TranscriptModel

    model = TranscriptModel()
    model.apply_all(events)
    notices = [i.text for i in model.items if i.kind == "notice"]
    assert any("weird_stop" in n and "stopped early" in n for n in notices)


# ---- the canary key ---------------------------------------------------------------------------


class _Sleeps:
    async def __call__(self, seconds: float) -> None:
        await asyncio.sleep(0)


async def _one_turn(provider: Any, data: Path, text: str, ctx: Any = None) -> list[Any]:
    ctx = ctx or build_context(providers={"deepseek": provider}, retry=False,
                               persistence=JsonlPersistence(data))
    install_retry_policy(ctx, sleep=_Sleeps(), random=lambda: 0.5)
    handle = await ctx.agents.create(CreateAgentOptions(
        session_id="canary", agent_options=AgentOptions(provider="deepseek",
                                                        model="deepseek-flash")))
    try:
        handle.agent.followup(user_message(text))
        await asyncio.sleep(0)
        await asyncio.wait_for(handle.agent.when_idle(), 20)
        return list(handle.agent.session.events)
    finally:
        await handle.dispose()
        await ctx.scope.dispose()


def _echoing_replies() -> list[Reply]:
    """Servers that reflect the key everywhere a response can carry text."""
    echo = {"x-request-id": f"Bearer {CANARY}", "x-debug": CANARY}
    spelled = [CANARY[i:i + 3] for i in range(0, len(CANARY), 3)]  # one event per 3 chars
    return [
        json_reply(500, {"error": {"message": f"bad key {CANARY}", "type": f"t-{CANARY}",
                                   "code": f"c-{CANARY}"}}, echo),
        json_reply(503, f"<html>upstream said Authorization: Bearer {CANARY}</html>", echo),
        Reply(200, [f'data: {{"error": {{"message": "in-band {CANARY}", "code": 500}}}}\n\n'
                    .encode()], {"Content-Type": "text/event-stream", **echo}),
        sse_reply(data_lines([{"choices": [{"delta": {"reasoning_content": f"I saw {CANARY}"}}]},
                              *[delta(part) for part in ["your key is ", *spelled]],
                              delta(" ok", "stop")])),
    ]


async def test_a_reflected_key_never_reaches_disk_exports_or_screen(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "data"
    async with FakeServer(_echoing_replies()) as server:
        provider = DeepSeekProvider(api_key=CANARY, base_url=server.base_url)
        ctx = build_context(providers={"deepseek": provider}, retry=False,
                            persistence=JsonlPersistence(data))
        events = await _one_turn(provider, data, "show me the key", ctx)
        server.push(json_reply(401, {"error": {"message": f"key {CANARY} is invalid"}},
                               {"x-request-id": CANARY}))
        await provider.aclose()
    assert len(server.requests) == 4
    retries = [e.data["failure"] for e in events if e.type == "llm/retry"]
    assert len(retries) == 3 and all("requestId" in f for f in retries)
    assert retries[0]["requestId"] == "Bearer ***"
    assert "bad key ***" in retries[0]["message"]
    final = [e for e in events if e.type == "assistant/message"][-1].data["message"]
    assert "***" in "".join(b.get("text", "") for b in final["content"])
    # the data dir, byte for byte
    files = [p for p in data.rglob("*") if p.is_file()]
    assert files
    for path in files:
        assert FRAGMENT not in path.read_bytes(), path
    # both exports
    for argv in (["export", "canary", "--data-dir", str(data)],
                 ["export", "canary", "--data-dir", str(data), "--format", "jsonl"]):
        assert cli.main(argv) == 0
        out = capsys.readouterr().out
        assert "your key is" in out and FRAGMENT.decode() not in out
    # the screen of `dsh-tui view` on that log
    from rich.console import Console

    from dsh_tui.compose import open_log
    from dsh_tui.ui.app import DshApp

    (log,) = [p for p in files if p.name.endswith(".jsonl")]
    app = DshApp(open_log(log))
    async with app.run_test(size=(150, 60)) as pilot:
        await pilot.pause()
        app.bridge.flush()
        await pilot.pause()
        await pilot.press("f2")
        await pilot.pause()
        buffer = io.StringIO()
        Console(file=buffer, force_terminal=True, width=150, height=60).print(
            app.screen._compositor.render_update(full=True))
    shown = buffer.getvalue()
    assert "your key is" in shown and FRAGMENT.decode() not in shown


def _filtered(pieces: list[str], end: str = "block-end") -> list[list[dict[str, Any]]]:
    """What the filter gives out for each chunk fed: the text deltas, then the end."""
    secrets = SecretFilter((CANARY,))
    fed = [secrets.feed({"type": "text-delta", "index": 0, "text": piece}) for piece in pieces]
    if end == "block-end":
        fed.append(secrets.feed({"type": "block-end", "index": 0,
                                 "block": {"type": "text", "text": "".join(pieces)}}))
    fed.append(secrets.feed({"type": "finish", "reason": {"kind": "stop"}}))
    return fed


def _released(fed: list[list[dict[str, Any]]]) -> str:
    return "".join(c["text"] for out in fed for c in out if c["type"] == "text-delta")


def test_the_filter_catches_a_key_however_the_deltas_split_it() -> None:
    text = f"a {CANARY} b {CANARY}{CANARY} task sk- {CANARY}"
    expected = text.replace(CANARY, "***")
    for step in range(1, 9):
        out = _filtered([text[start:start + step] for start in range(0, len(text), step)])
        assert _released(out) == expected
        assert kinds(out[-2])[-1] == "block-end" and out[-2][-1]["block"]["text"] == expected


def test_no_character_of_a_key_goes_out_at_any_split_position() -> None:
    # Every single cut and every pair of cuts through "… sk-canary-SECRET-5d1e …", with the
    # block ending by its block-end or only by the stream's finish: the released text is the
    # redacted text exactly.
    text = f"say sk {CANARY}s done"
    expected = text.replace(CANARY, "***")
    begin, stop = text.index(CANARY) - 1, text.index(CANARY) + len(CANARY) + 1
    for end in ("block-end", "finish"):
        for first in range(len(text) + 1):
            assert _released(_filtered([text[:first], text[first:]], end)) == expected
            for second in range(max(first, begin), stop + 1):
                pieces = [text[:first], text[first:second], text[second:]]
                out = _filtered(pieces, end)
                assert _released(out) == expected, pieces
                # and what was out after any chunk was the start of that: no key's first
                # characters went out ahead of a "***"
                for count in range(1, len(pieces) + 1):
                    assert expected.startswith(_released(out[:count])), pieces


def test_deltas_without_a_key_go_out_as_the_server_cut_them() -> None:
    text = "ask sk-canary- and sk-canary-SECRET-5d1 s"  # starts of the key, never the key
    for first in range(1, len(text)):
        for second in range(first + 1, len(text)):
            pieces = [text[:first], text[first:second], text[second:]]
            out = [c["text"] for fed in _filtered(pieces) for c in fed
                   if c["type"] == "text-delta"]
            assert out == pieces


# ---- bounded waiting --------------------------------------------------------------------------


def silent_reply(*parts: bytes) -> Reply:
    """Headers (and `parts`), then nothing until the client hangs up."""
    return Reply(200, list(parts), {"Content-Type": "text/event-stream"}, ending="hang")


async def test_headers_then_nothing_is_a_clear_error_after_a_bounded_number_of_attempts(
        tmp_path: Path) -> None:
    async with FakeServer([silent_reply() for _ in range(5)]) as server:
        provider = DeepSeekProvider(api_key=CANARY, base_url=server.base_url,
                                    first_byte_timeout=0.3, read_timeout=0.3)
        events = await _one_turn(provider, tmp_path, "anyone there?")
        await provider.aclose()
    assert len(server.requests) == 3  # silent_attempts, then no more retries
    retried = [e.data["failure"] for e in events if e.type == "llm/retry"]
    assert [f["code"] for f in retried] == ["TIMEOUT", "TIMEOUT"]
    assert retried[0]["message"] == "DeepSeek sent no response for 0.3s"
    (end,) = [e.data["reason"] for e in events if e.type == "turn/end"]
    assert end["kind"] == "error" and end["error"]["code"] == "NO_RESPONSE"
    assert "3 attempts in a row" in end["error"]["message"]


async def test_a_stream_that_stops_mid_answer_names_the_gap() -> None:
    first = data_lines([delta("half an ans")], done=False).encode()
    async with FakeServer([silent_reply(b": keep-alive\n\n", first)]) as server:
        provider = DeepSeekProvider(api_key=CANARY, base_url=server.base_url,
                                    first_byte_timeout=5, read_timeout=0.3)
        chunks = await collect(provider.stream(request()))
        await provider.aclose()
    assert text_of(chunks) == "half an ans"
    failure = chunks[-1]["reason"]["failure"]
    assert failure == {"message": "DeepSeek sent nothing more for 0.3s", "code": "TIMEOUT"}


async def test_content_resets_the_silent_count() -> None:
    answer = sse_reply(data_lines([delta("hi", "stop")]))
    async with FakeServer([silent_reply(), silent_reply(), answer, silent_reply(),
                           silent_reply()]) as server:
        provider = DeepSeekProvider(api_key=CANARY, base_url=server.base_url,
                                    first_byte_timeout=0.2)
        codes = []
        for _ in range(5):
            chunks = await collect(provider.stream(request()))
            reason = chunks[-1]["reason"]
            codes.append(reason.get("failure", {}).get("code", reason["kind"]))
        await provider.aclose()
    assert codes == ["TIMEOUT", "TIMEOUT", "stop", "TIMEOUT", "TIMEOUT"]


def test_the_default_bound_on_a_silent_server_is_well_under_two_minutes() -> None:
    from dsh_tui.llm.retry import RetryPolicy

    provider = DeepSeekProvider(api_key=CANARY)
    policy = RetryPolicy()
    waits = provider.silent_attempts * (provider.first_byte_timeout or 0)
    backoff = sum(policy.backoff_ms(n, 1.0) for n in range(1, provider.silent_attempts)) / 1000
    assert provider.timeout.connect == 10.0
    assert waits + backoff < 90  # README: "about 77 s"
