"""Issue 25 §3 over real HTTP on 127.0.0.1: what one reply may make the client hold.

A server that never ends a line, one that sends an event of endless `data:` lines, and a
gzip bomb each fail the attempt with one line (`RESPONSE_TOO_LARGE`, not retried) once a
bound of `StreamLimits` is passed, instead of growing memory until the process dies; the
agent's inbox is kept. A `Retry-After` of 5,000 digits is read as "very long", never shown
as Python's integer-limit message. A process stopped (SIGSTOP) for longer than the read
timeout keeps the reply that arrived meanwhile.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import signal
import sys
import zlib
from pathlib import Path
from typing import Any

from fake_server import FakeServer, Reply, data_lines, json_reply, sse_reply
from llm_support import collect, request

from dsh_tui.compose import build_context
from dsh_tui.harness import AgentOptions, CreateAgentOptions, user_message
from dsh_tui.harness.persistence import JsonlPersistence
from dsh_tui.llm.deepseek import DeepSeekProvider
from dsh_tui.llm.errors import retry_after_ms
from dsh_tui.llm.inflate import BodyDecoder
from dsh_tui.llm.retry import install_retry_policy
from dsh_tui.llm.sse import MIB, SseParser, SseTooLarge, StreamLimits

KEY = "sk-test"
SSE = {"Content-Type": "text/event-stream"}


def delta(content: str, finish: str | None = None) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": {"content": content}, "finish_reason": finish}]}


async def failure_of(reply: Reply, **options: Any) -> dict[str, Any]:
    async with FakeServer([reply]) as server:
        provider = DeepSeekProvider(api_key=KEY, base_url=server.base_url, read_timeout=3,
                                    first_byte_timeout=3, **options)
        try:
            chunks = await collect(provider.stream(request()))
        finally:
            await provider.aclose()
    finish = chunks[-1]
    assert finish["type"] == "finish" and finish["reason"]["kind"] == "error", finish
    failure: dict[str, Any] = finish["reason"]["failure"]
    assert "\n" not in failure["message"]
    return failure


async def test_a_line_that_never_ends_fails_at_the_default_line_bound() -> None:
    piece = b"x" * (64 * 1024)
    parts: list[bytes | float] = [b'data: {"choices": [{"delta": {"content": "']
    parts += [piece] * ((StreamLimits().line // len(piece)) + 8)
    failure = await failure_of(Reply(200, parts, SSE, ending="hang"))
    assert failure["code"] == "RESPONSE_TOO_LARGE"
    assert failure["message"] == ("DeepSeek sent an SSE line longer than 8 MiB; "
                                  "the rest was not read")


async def test_an_event_of_endless_data_lines_fails_at_the_event_bound() -> None:
    line = b"data: " + b"y" * 1000 + b"\n"
    failure = await failure_of(Reply(200, [line] * 200, SSE, ending="hang"),
                               limits=StreamLimits(event=64 * 1024))
    assert failure["code"] == "RESPONSE_TOO_LARGE"
    assert "an SSE event larger than 65,536 characters" in failure["message"]


def _bomb(plain: bytes, repeat: int) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    out = [packer.compress(plain) for _ in range(repeat)]
    return b"".join(out) + packer.flush()


async def test_a_gzip_bomb_stops_at_the_reply_bound_having_inflated_little() -> None:
    body = _bomb(b": keep-alive\n" * 80_000, 24)  # about 25 MB of comments, 24 KiB packed
    assert len(body) < 64 * 1024
    failure = await failure_of(
        Reply(200, [body], {**SSE, "Content-Encoding": "gzip"}, ending="hang"),
        limits=StreamLimits(reply=MIB))
    assert failure == {"message": "DeepSeek sent a reply larger than 1 MiB; the rest was "
                                  "not read", "code": "RESPONSE_TOO_LARGE"}


async def test_a_gzip_bomb_of_one_endless_line_stops_at_the_default_line_bound() -> None:
    body = _bomb(b"data: " + b"\0" * MIB, 64)
    failure = await failure_of(Reply(200, [body], {**SSE, "Content-Encoding": "gzip"},
                                     ending="hang"))
    assert failure["code"] == "RESPONSE_TOO_LARGE"


async def test_a_gzipped_answer_within_the_bounds_is_read_as_sent() -> None:
    answer = data_lines([delta("Hello, "), delta("world", "stop")]).encode()
    packed = gzip.compress(answer)
    async with FakeServer([Reply(200, [packed[:10], packed[10:]],
                                 {**SSE, "Content-Encoding": "gzip"})]) as server:
        provider = DeepSeekProvider(api_key=KEY, base_url=server.base_url)
        chunks = await collect(provider.stream(request()))
        await provider.aclose()
    assert server.requests[0].headers["accept-encoding"] == "gzip, deflate"
    assert "".join(c.get("text", "") for c in chunks if c["type"] == "text-delta") == \
        "Hello, world"
    assert chunks[-1] == {"type": "finish", "reason": {"kind": "stop"}}


async def test_an_encoding_that_was_not_offered_is_refused_in_one_line() -> None:
    failure = await failure_of(Reply(200, [b"\x00\x01"], {**SSE, "Content-Encoding": "br"}))
    assert failure["code"] == "MALFORMED_RESPONSE"
    assert "unsupported Content-Encoding 'br'" in failure["message"]


def test_the_body_decoder_inflates_in_bounded_pieces_across_gzip_members() -> None:
    plain = bytes(range(256)) * 4096
    decoder = BodyDecoder("gzip", piece=4096)
    pieces = list(decoder.feed(gzip.compress(plain) + gzip.compress(b"second member")))
    assert max(len(p) for p in pieces) <= 4096
    assert b"".join(pieces) == plain + b"second member"
    raw = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    deflated = raw.compress(b"raw deflate") + raw.flush()
    assert b"".join(BodyDecoder("deflate").feed(deflated)) == b"raw deflate"
    assert b"".join(BodyDecoder("deflate").feed(zlib.compress(b"zlib"))) == b"zlib"


def test_the_parser_keeps_working_after_a_long_line_split_over_many_reads() -> None:
    parser = SseParser(StreamLimits(line=100_000))
    items = []
    for _ in range(99):
        items += parser.feed(b"data: " if not items and _ == 0 else b"z" * 1000)
    items += parser.feed(b"\n\n")
    assert len(items) == 1 and len(items[0].data) == 98_000
    try:
        list(parser.feed(b"data: " + b"z" * 100_001))
    except SseTooLarge as error:
        assert "longer than 100,000 characters" in str(error)
    else:
        raise AssertionError("a line past the bound was accepted")


async def test_an_oversized_reply_ends_the_turn_once_and_keeps_the_inbox(
        tmp_path: Path) -> None:
    endless = Reply(200, [b"data: " + b"w" * 4096] * 64, SSE, ending="hang")
    async with FakeServer([endless, sse_reply(data_lines([delta("late", "stop")]))]) as server:
        provider = DeepSeekProvider(api_key=KEY, base_url=server.base_url,
                                    limits=StreamLimits(line=100_000))
        ctx = build_context(providers={"deepseek": provider}, retry=False,
                            persistence=JsonlPersistence(tmp_path))
        install_retry_policy(ctx)
        handle = await ctx.agents.create(CreateAgentOptions(
            session_id="big", agent_options=AgentOptions(provider="deepseek",
                                                        model="deepseek-flash")))
        agent = handle.agent
        try:
            agent.followup(user_message("first"))
            queued = user_message("queued behind it")
            agent.inbox.append("next-turn", queued)
            await asyncio.wait_for(agent.when_idle(), 20)
            events = list(agent.session.events)
            assert len(server.requests) == 1  # not retried: the same bytes would come again
            (end,) = [e.data["reason"] for e in events if e.type == "turn/end"]
            assert end["kind"] == "error"
            assert end["error"]["code"] == "RESPONSE_TOO_LARGE"
            assert [m.id for m in agent.inbox.next_turn] == [queued.id]
        finally:
            await handle.dispose()
            await ctx.scope.dispose()
            await provider.aclose()


# ---- Retry-After --------------------------------------------------------------------------


def test_a_retry_after_of_five_thousand_digits_is_a_very_long_wait_not_an_error() -> None:
    assert retry_after_ms("9" * 5000) == retry_after_ms("9" * 20)
    huge = retry_after_ms("9" * 5000)
    assert huge is not None and huge > 10**12
    assert retry_after_ms("0" * 5000 + "5") == 5000.0
    assert retry_after_ms("0" * 5000) is None


async def test_a_rate_limit_with_a_huge_retry_after_names_the_rate_limit(
        tmp_path: Path) -> None:
    reply = json_reply(429, {"error": {"message": "slow down", "type": "rate_limit"}},
                       {"Retry-After": "9" * 5000})
    failure = await failure_of(reply)
    assert failure["code"] == "RATE_LIMIT"
    assert "digits" not in failure["message"] and "slow down" in failure["message"]
    assert failure["providerRetryAfterMs"] > 10**12


# ---- a stalled process ------------------------------------------------------------------------


CHILD = Path(__file__).with_name("stall_child.py")


async def _stopped_while_the_reply_arrives(where: str) -> dict[str, Any]:
    """A child process streams a reply and is stopped (SIGSTOP) for three times its read
    timeout while the rest of the reply arrives: after its first event (`where="gap"`), or
    once the request is in and before the answer's first byte (`"first byte"`). A stopped
    process's loop wakes with the timer overdue in the same or an earlier pass than the one
    that finds the bytes readable, which no in-process stall reproduces."""
    first = data_lines([delta("first half, ")], done=False).encode()
    rest = data_lines([delta("second half", "stop")]).encode()
    gap = where == "gap"
    reply = Reply(200, [first, 0.2, rest] if gap else [first, rest], SSE,
                  head_delay=0.0 if gap else 0.2)
    async with FakeServer([reply]) as server:
        child = await asyncio.create_subprocess_exec(
            sys.executable, str(CHILD), server.base_url, "0.4",
            stdout=asyncio.subprocess.PIPE, stdin=asyncio.subprocess.DEVNULL)
        assert child.stdout is not None
        try:
            async with asyncio.timeout(30):
                if gap:
                    assert await child.stdout.readline() == b"FIRST\n"
                else:
                    while not server.requests:
                        await asyncio.sleep(0.005)
                os.kill(child.pid, signal.SIGSTOP)
                await asyncio.sleep(1.2)  # the stop itself: three read timeouts long
                os.kill(child.pid, signal.SIGCONT)
                lines = (await child.stdout.read()).decode().splitlines()
                await child.wait()
        finally:
            if child.returncode is None:
                child.kill()
                await child.wait()
    result: dict[str, Any] = json.loads(lines[-1])
    return result


async def test_a_stop_longer_than_the_read_timeout_keeps_the_reply_that_arrived_meanwhile(
        ) -> None:
    result = await _stopped_while_the_reply_arrives("gap")
    assert result["finish"] == {"type": "finish", "reason": {"kind": "stop"}}, result
    assert result["text"] == "first half, second half"


async def test_a_stop_before_the_first_byte_keeps_the_reply_that_arrived_meanwhile() -> None:
    result = await _stopped_while_the_reply_arrives("first byte")
    assert result["finish"] == {"type": "finish", "reason": {"kind": "stop"}}, result
    assert result["text"] == "first half, second half"
