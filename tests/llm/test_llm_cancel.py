"""The content watchdog and every way a caller can stop a stream; the server must see the close."""

from __future__ import annotations

import asyncio

import pytest
from fake_server import FakeServer, Reply, data_lines, sse_parts, sse_reply
from llm_support import assemble, collect, failure_of, kinds, request
from transcripts import T1

from dsh_tui.harness.signal import CancelSignal
from dsh_tui.llm.deepseek import DeepSeekProvider

KEY = "sk-test"
CLOSE_SEEN = 5.0  # generous bound for "the server saw the client hang up"

DELTAS = data_lines([{"choices": [{"delta": {"content": "one"}}]},
                     {"choices": [{"delta": {"content": " two"}}]}], done=False)


def provider(server: FakeServer, idle: float | None = 0.3) -> DeepSeekProvider:
    return DeepSeekProvider(api_key=KEY, base_url=server.base_url, idle_timeout=idle)


def stalled(body: str = DELTAS, *, keep_alive_every: float | None = None) -> Reply:
    parts = sse_parts(body)
    if keep_alive_every is not None:
        parts += [b": keep-alive\n\n", keep_alive_every] * 200
    return Reply(200, parts, ending="hang")


async def test_keep_alive_comments_do_not_feed_the_watchdog() -> None:
    async with FakeServer([stalled("", keep_alive_every=0.05)]) as server:
        chunks = await asyncio.wait_for(collect(provider(server).stream(request())), 10)
        await asyncio.wait_for(server.requests[0].closed.wait(), CLOSE_SEEN)
    assert failure_of(chunks) == {"message": "DeepSeek stream idle timeout: no content for 0.3s",
                                  "code": "TIMEOUT"}
    assert chunks[-1]["reason"]["kind"] == "error"


async def test_stall_mid_answer_keeps_the_deltas_then_times_out() -> None:
    async with FakeServer([stalled()]) as server:
        chunks = await asyncio.wait_for(collect(provider(server).stream(request())), 10)
        await asyncio.wait_for(server.requests[0].closed.wait(), CLOSE_SEEN)
    assert kinds(chunks) == ["block-start", "text-delta", "text-delta", "finish"]
    assert failure_of(chunks)["code"] == "TIMEOUT"


async def test_slow_first_byte_counts_against_the_watchdog() -> None:
    async with FakeServer([Reply(200, sse_parts(T1), head_delay=30)]) as server:
        chunks = await asyncio.wait_for(collect(provider(server).stream(request())), 10)
    assert failure_of(chunks)["code"] == "TIMEOUT"


async def test_steady_progress_outlasts_the_watchdog_interval() -> None:
    # Eight events 0.1 s apart: 0.8 s in total, but never 0.3 s without content.
    async with FakeServer([sse_reply(T1, pause=0.1)]) as server:
        chunks = await collect(provider(server).stream(request()))
    assert chunks[-1] == {"type": "finish", "reason": {"kind": "stop"}}


async def test_a_slow_consumer_is_not_a_stalled_server() -> None:
    # Events arrive 20 ms apart, so each read ends an event; the consumer then spends
    # longer than the watchdog interval on a chunk before asking for the next one.
    async with FakeServer([sse_reply(T1, pause=0.02)]) as server:
        chunks = []
        async for chunk in provider(server, idle=0.2).stream(request()):
            chunks.append(chunk)
            if chunk["type"] == "text-delta" and len(chunks) < 5:
                await asyncio.sleep(0.3)
    assert chunks[-1] == {"type": "finish", "reason": {"kind": "stop"}}


async def test_stall_after_the_finish_chunk_completes_the_answer() -> None:
    body = T1[:T1.index("data: [DONE]")]
    async with FakeServer([Reply(200, sse_parts(body), ending="hang")]) as server:
        chunks = await asyncio.wait_for(collect(provider(server).stream(request())), 10)
    assert chunks[-1] == {"type": "finish", "reason": {"kind": "stop"}}
    assert assemble(chunks).blocks()[0]["text"] == "Hello! How can I help you today?"


async def test_no_watchdog_when_disabled() -> None:
    async with FakeServer([Reply(200, [*sse_parts(DELTAS), 0.5, *sse_parts("data: [DONE]\n\n")])
                           ]) as server:
        chunks = await collect(provider(server, idle=None).stream(request()))
    assert assemble(chunks).blocks() == [{"type": "text", "text": "one two"}]


# ---- the caller stops the stream ----------------------------------------------------------


async def test_signal_abort_mid_stream_ends_with_aborted_and_closes_the_connection() -> None:
    signal = CancelSignal()
    async with FakeServer([stalled()]) as server:
        chunks = []
        async for chunk in provider(server, idle=None).stream(request(signal=signal)):
            chunks.append(chunk)
            if chunk["type"] == "text-delta":
                asyncio.get_running_loop().call_later(0.05, signal.abort, {"kind": "user"})
        await asyncio.wait_for(server.requests[0].closed.wait(), CLOSE_SEEN)
    assert kinds(chunks) == ["block-start", "text-delta", "text-delta", "finish"]
    assert chunks[-1] == {"type": "finish", "reason": {"kind": "aborted", "failure": {
        "message": "DeepSeek request aborted by caller", "code": "ABORTED"}}}


async def test_signal_abort_while_waiting_for_headers() -> None:
    signal = CancelSignal()
    async with FakeServer([Reply(200, sse_parts(T1), head_delay=30)]) as server:

        async def abort_once_the_request_is_in() -> None:
            # A fixed delay raced the connection on a loaded machine (the abort came before
            # the server saw a request): wait for the request, then for the headers a while.
            while not server.requests:
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.05)
            signal.abort({"kind": "user"})

        aborter = asyncio.create_task(abort_once_the_request_is_in())
        chunks = await asyncio.wait_for(
            collect(provider(server, idle=None).stream(request(signal=signal))), 10)
        await aborter
        await asyncio.wait_for(server.requests[0].closed.wait(), CLOSE_SEEN)
    assert failure_of(chunks)["code"] == "ABORTED"
    assert chunks[-1]["reason"]["kind"] == "aborted"


async def test_already_aborted_signal_sends_nothing() -> None:
    signal = CancelSignal()
    signal.abort({"kind": "user"})
    async with FakeServer([sse_reply(T1)]) as server:
        chunks = await collect(provider(server).stream(request(signal=signal)))
    assert kinds(chunks) == ["finish"] and chunks[0]["reason"]["kind"] == "aborted"
    assert server.requests == []


async def test_aclose_mid_stream_closes_the_connection() -> None:
    async with FakeServer([stalled()]) as server:
        stream = provider(server, idle=None).stream(request())
        assert (await anext(stream))["type"] == "block-start"
        await stream.aclose()
        await asyncio.wait_for(server.requests[0].closed.wait(), CLOSE_SEEN)


async def test_task_cancel_mid_stream_propagates_and_closes_the_connection() -> None:
    seen_delta = asyncio.Event()

    async def consume(ds: DeepSeekProvider) -> None:
        async for chunk in ds.stream(request()):
            if chunk["type"] == "text-delta":
                seen_delta.set()

    async with FakeServer([stalled()]) as server:
        task = asyncio.ensure_future(consume(provider(server, idle=None)))
        await asyncio.wait_for(seen_delta.wait(), CLOSE_SEEN)
        await asyncio.sleep(0.05)  # the stream is now blocked reading the hung server
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.wait_for(server.requests[0].closed.wait(), CLOSE_SEEN)


async def test_a_shared_client_is_used_and_left_open() -> None:
    import httpx

    async with httpx.AsyncClient() as client, FakeServer([sse_reply(T1), sse_reply(T1)]) as server:
        ds = DeepSeekProvider(api_key=KEY, base_url=server.base_url, client=client)
        for _ in range(2):
            assert (await collect(ds.stream(request())))[-1]["reason"] == {"kind": "stop"}
        await ds.aclose()
        assert not client.is_closed
    assert len(server.requests) == 2
