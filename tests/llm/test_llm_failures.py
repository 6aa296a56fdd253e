"""Failure records: HTTP statuses, transport faults, broken streams, and the API key's secrecy."""

from __future__ import annotations

import email.utils
import logging
import socket
import time

import pytest
from fake_server import FakeServer, Reply, data_lines, json_reply, sse_reply
from llm_support import assemble, collect, failure_of, kinds, request
from transcripts import ERROR_400_CONTEXT, ERROR_401, ERROR_402, T1

from dsh_tui.llm.deepseek import DeepSeekProvider
from dsh_tui.llm.errors import http_error_code, retry_after_ms
from dsh_tui.llm.openai_compat import OpenAICompatibleProvider

KEY = "sk-live-SECRET-7f3a9c"


def provider(server: FakeServer, **kwargs: object) -> DeepSeekProvider:
    return DeepSeekProvider(api_key=KEY, base_url=server.base_url, **kwargs)  # type: ignore[arg-type]


async def fail_with(reply: Reply) -> dict[str, object]:
    async with FakeServer([reply]) as server:
        chunks = await collect(provider(server).stream(request()))
    assert kinds(chunks) == ["finish"]
    return failure_of(chunks)


@pytest.mark.parametrize(("status", "body", "headers", "expected"), [
    (401, ERROR_401, {}, {"message": "Authentication Fails, Your api key: ****here is invalid",
                          "code": "AUTH", "status": 401}),
    (402, ERROR_402, {}, {"message": "Insufficient Balance", "code": "QUOTA", "status": 402}),
    (400, ERROR_400_CONTEXT, {}, {"message": (
        "This model's maximum context length is 1048576 tokens. However, you requested 1060836 "
        "tokens (1060828 in the messages, 8 in the completion). Please reduce the length of the "
        "messages or completion."), "code": "CONTEXT_WINDOW_EXCEEDED", "status": 400}),
    (429, '{"error":{"message":"Rate limit reached (synthetic)","type":"rate_limit_error"}}',
     {"Retry-After": "2", "x-request-id": "req-42"},
     {"message": "Rate limit reached (synthetic)", "code": "RATE_LIMIT", "status": 429,
      "providerRetryAfterMs": 2000.0, "requestId": "req-42"}),
    (429, '{"error":{"message":"You exceeded your current quota","code":"insufficient_quota"}}',
     {}, {"message": "You exceeded your current quota", "code": "QUOTA", "status": 429}),
    (500, '{"error":{"message":"Internal error (synthetic)"}}',
     {"x-deepseek-request-id": "ds-9"},
     {"message": "Internal error (synthetic)", "code": "SERVER", "status": 500,
      "requestId": "ds-9"}),
    (503, "<html><body>Service Unavailable</body></html>", {},
     {"message": "DeepSeek API error (HTTP 503 Service Unavailable)", "code": "SERVER",
      "status": 503}),
    (422, '{"error":{"message":"Invalid parameter (synthetic)"}}', {},
     {"message": "Invalid parameter (synthetic)", "code": "INVALID_REQUEST", "status": 422}),
    (403, "", {}, {"message": "DeepSeek API error (HTTP 403 Forbidden)", "code": "AUTH",
                   "status": 403}),
    (404, '{"error":"model not found"}', {},
     {"message": "model not found", "code": "HTTP_404", "status": 404}),
    (413, '{"detail":"payload too large"}', {},
     {"message": "payload too large", "code": "INVALID_REQUEST", "status": 413}),
], ids=["401", "402", "400-context", "429", "429-quota", "500", "503-html", "422", "403", "404",
        "413"])
async def test_http_error_becomes_one_failure_record(status: int, body: str,
                                                     headers: dict[str, str],
                                                     expected: dict[str, object]) -> None:
    assert await fail_with(json_reply(status, body, headers)) == expected


async def test_retry_after_as_http_date() -> None:
    when = email.utils.formatdate(time.time() + 30, usegmt=True)
    failure = await fail_with(json_reply(429, "{}", {"Retry-After": when}))
    assert failure["code"] == "RATE_LIMIT"
    assert 25_000 < failure["providerRetryAfterMs"] <= 30_000  # type: ignore[operator]


@pytest.mark.parametrize("value", ["0", "-5", "soon", "1.5", "Mon, 01 Jan 2001 00:00:00 GMT", ""])
def test_unusable_retry_after_is_dropped(value: str) -> None:
    assert retry_after_ms(value) is None


def test_status_table_edges() -> None:
    assert http_error_code(402, {"message": "whatever"}) == "QUOTA"
    assert http_error_code(400, {"message": "Thinking mode does not support this tool_choice"}) \
        == "INVALID_REQUEST"
    assert http_error_code(418) == "HTTP_418"
    assert http_error_code(502) == "SERVER"


async def test_connection_refused_is_transport() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    ds = DeepSeekProvider(api_key=KEY, base_url=f"http://127.0.0.1:{port}")
    failure = failure_of(await collect(ds.stream(request())))
    assert failure["code"] == "TRANSPORT"
    assert f"127.0.0.1:{port}" in str(failure["message"])


HALF = data_lines([{"choices": [{"delta": {"content": "Hello"}}]},
                   {"choices": [{"delta": {"content": " wor"}}]}], done=False)


@pytest.mark.parametrize("ending", ["reset", "abort"])
async def test_connection_cut_mid_stream_keeps_the_deltas_then_fails_transport(
        ending: str) -> None:
    async with FakeServer([sse_reply(HALF, ending=ending)]) as server:
        chunks = await collect(provider(server).stream(request()))
    assert kinds(chunks) == ["block-start", "text-delta", "text-delta", "finish"]
    assert chunks[-1]["reason"]["kind"] == "error"
    assert failure_of(chunks)["code"] == "TRANSPORT"


async def test_clean_eof_without_finish_or_done_is_stream_closed() -> None:
    async with FakeServer([sse_reply(HALF), sse_reply("")]) as server:
        partial = await collect(provider(server).stream(request()))
        empty = await collect(provider(server).stream(request()))
    assert kinds(partial)[:-1] == ["block-start", "text-delta", "text-delta"]
    assert failure_of(partial)["code"] == "STREAM_CLOSED"
    assert failure_of(empty)["code"] == "STREAM_CLOSED"


async def test_eof_after_the_finish_chunk_completes_normally() -> None:
    body = T1[:T1.index("data: [DONE]")]
    async with FakeServer([sse_reply(body)]) as server:
        chunks = await collect(provider(server).stream(request()))
    assert assemble(chunks).blocks() == [{"type": "text",
                                          "text": "Hello! How can I help you today?"}]
    assert chunks[-2:] == [
        {"type": "usage", "usage": {"inputTokens": 11, "outputTokens": 9, "cacheReadTokens": 0}},
        {"type": "finish", "reason": {"kind": "stop"}}]


async def test_malformed_data_line_is_malformed_response() -> None:
    body = 'data: {"choices":[{"delta":{"content":"ok"}}]}\n\ndata: {"choices": [tru\n\n'
    async with FakeServer([sse_reply(body)]) as server:
        chunks = await collect(provider(server).stream(request()))
    assert kinds(chunks) == ["block-start", "text-delta", "finish"]
    failure = failure_of(chunks)
    assert failure["code"] == "MALFORMED_RESPONSE"
    assert failure["message"] == 'malformed SSE payload: {"choices": [tru'


@pytest.mark.parametrize(("payloads", "expected"), [
    ([{"choices": [None]}, {"choices": [{"delta": {"content": "x"}, "finish_reason": "stop"}]}],
     {"kind": "stop"}),
    ([{"choices": [{"delta": {"content": "x"}, "finish_reason": "length"}]}],
     {"kind": "max-tokens", "limit": "context"}),  # no cap was sent: the context filled
    ([{"choices": [{"delta": {"content": "x"}, "finish_reason": "content_filter"}]}],
     {"kind": "stop", "finishReason": "content_filter"}),
    ([{"choices": [{"delta": {"content": "x"}, "finish_reason": "eos_token_PWN"}]}],
     {"kind": "stop", "finishReason": "eos_token_PWN"}),
    ([{"choices": [{"delta": {}, "finish_reason": "insufficient_system_resource"}]}],
     {"kind": "error", "failure": {"message": "model stopped: insufficient_system_resource",
                                   "code": "INSUFFICIENT_SYSTEM_RESOURCE"}}),
    ([{"choices": [{"delta": {"role": "assistant", "content": ""}, "finish_reason": "stop"}]}],
     {"kind": "error", "failure": {"message": "model returned a completed response with no "
                                              "content", "code": "EMPTY_RESPONSE"}}),
    ([{"choices": [{"delta": {"content": "x"}}]}], {"kind": "stop"}),  # [DONE] with no finish
], ids=["null-choice", "length", "content-filter", "unknown", "insufficient-resource", "empty",
        "no-finish"])
async def test_in_band_finish_reasons(payloads: list[dict[str, object]],
                                      expected: dict[str, object]) -> None:
    async with FakeServer([sse_reply(data_lines(payloads))]) as server:
        chunks = await collect(provider(server).stream(request()))
    assert chunks[-1] == {"type": "finish", "reason": expected}


async def test_in_band_error_event_fails_the_stream() -> None:
    body = data_lines([{"choices": [{"delta": {"content": "par"}}]},
                       {"error": {"message": "upstream model crashed", "type": "server_error"}}])
    async with FakeServer([sse_reply(body)]) as server:
        chunks = await collect(provider(server).stream(request()))
    assert failure_of(chunks) == {"message": "upstream model crashed", "code": "SERVER"}


async def test_success_with_wrong_content_type_still_streams() -> None:
    reply = sse_reply(T1)
    reply.headers["Content-Type"] = "application/json"
    async with FakeServer([reply]) as server:
        chunks = await collect(provider(server).stream(request()))
    assert chunks[-1] == {"type": "finish", "reason": {"kind": "stop"}}


# ---- the API key ------------------------------------------------------------------------------


async def test_api_key_never_leaks_into_failures_logs_or_reprs(
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    echo = '{"error":{"message":"bad key ' + KEY + ' rejected"}}'  # a gateway that echoes it
    failures = []
    async with FakeServer([json_reply(401, echo), sse_reply(HALF, ending="reset"),
                           sse_reply(T1)]) as server:
        ds = provider(server)
        for _ in range(3):
            chunks = await collect(ds.stream(request()))
            if chunks[-1]["reason"]["kind"] != "stop":
                failures.append(failure_of(chunks))
        shown = [repr(ds), str(ds), repr(vars(ds)), repr(server.requests[0].headers.keys())]
        failures.append(failure_of(await collect(
            DeepSeekProvider(api_key="sk bad key", base_url=server.base_url).stream(request()))))
        base_url = server.base_url
    assert [f["code"] for f in failures] == ["AUTH", "TRANSPORT", "INVALID_CREDENTIAL"]
    assert failures[0]["message"] == "bad key *** rejected"
    everything = [str(f) for f in failures] + shown + [r.getMessage() for r in caplog.records]
    assert caplog.records, "the adapter and httpx log something at DEBUG"
    for text in everything:
        assert KEY not in text
        assert "sk bad key" not in text
    assert repr(ds) == f"DeepSeekProvider(base_url={base_url!r}, api_key=<set>)"


async def test_missing_key_fails_before_any_request() -> None:
    async with FakeServer([sse_reply(T1)]) as server:
        for key in (None, "", "   "):
            ds = DeepSeekProvider(api_key=key, base_url=server.base_url)
            assert failure_of(await collect(ds.stream(request()))) == {
                "message": "no DeepSeek API key: set the DEEPSEEK_API_KEY environment variable",
                "code": "MISSING_CREDENTIAL"}
    assert server.requests == []


async def test_openai_compatible_without_key_sends_no_authorization() -> None:
    async with FakeServer([sse_reply(T1)]) as server:
        generic = OpenAICompatibleProvider(server.base_url)
        await collect(generic.stream(request()))
    assert "authorization" not in server.requests[0].headers
    assert generic.name == "openai-compatible"
