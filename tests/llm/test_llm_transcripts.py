"""Real HTTP against the loopback fake server: the §6 transcripts, chunk for chunk."""

from __future__ import annotations

import json

import pytest
from fake_server import FakeServer, Reply, data_lines, sse_reply
from llm_support import assemble, assistant, collect, request, tool_result, user
from transcripts import T1, T2, T3, T3_FOLLOW_UP

from dsh_tui.llm.deepseek import DeepSeekProvider

KEY = "sk-test-0123456789"

WEATHER = "call_00_Xq7Lm2Pa9RtV4sWn8KcY3301"
TIME = "call_01_Bf5Hj1Qd6ZuE0gTr2NmA7745"


def provider(server: FakeServer, **kwargs: object) -> DeepSeekProvider:
    return DeepSeekProvider(api_key=KEY, base_url=server.base_url, **kwargs)  # type: ignore[arg-type]


def text_deltas(index: int, *texts: str, kind: str = "text-delta") -> list[dict[str, object]]:
    return [{"type": kind, "index": index, "text": t} for t in texts]


T1_CHUNKS = [
    {"type": "block-start", "index": 0, "blockType": "text"},
    *text_deltas(0, "Hello", "!", " How", " can", " I", " help", " you", " today", "?"),
    {"type": "block-end", "index": 0,
     "block": {"type": "text", "text": "Hello! How can I help you today?"}},
    {"type": "usage", "usage": {"inputTokens": 11, "outputTokens": 9, "cacheReadTokens": 0}},
    {"type": "finish", "reason": {"kind": "stop"}},
]

T2_CHUNKS = [
    {"type": "block-start", "index": 0, "blockType": "reasoning"},
    *text_deltas(0, "Compare", " 9.11", " and", " 9.8", ":", " 9.8", " =", " 9.80", ",", " and",
                 " 0.80", " >", " 0.11", ".", kind="reasoning-delta"),
    {"type": "block-start", "index": 1, "blockType": "text"},
    *text_deltas(1, "9.8", " is", " greater", "."),
    {"type": "block-end", "index": 0, "block": {
        "type": "reasoning", "text": "Compare 9.11 and 9.8: 9.8 = 9.80, and 0.80 > 0.11."}},
    {"type": "block-end", "index": 1, "block": {"type": "text", "text": "9.8 is greater."}},
    {"type": "usage", "usage": {"inputTokens": 10, "outputTokens": 22, "cacheReadTokens": 1280,
                                "reasoningTokens": 17}},
    {"type": "finish", "reason": {"kind": "stop"}},
]


def tool_deltas(index: int, call_id: str, name: str, *fragments: str) -> list[dict[str, object]]:
    return [{"type": "tool-call-delta", "index": index, "id": call_id, "name": name,
             "argumentsDelta": f} for f in fragments]


T3_CHUNKS = [
    {"type": "block-start", "index": 0, "blockType": "reasoning"},
    *text_deltas(0, "Need", " weather", " and", " local", " time", " for", " Paris", ".", " Call",
                 " both", " tools", ".", kind="reasoning-delta"),
    {"type": "block-start", "index": 1, "blockType": "tool-call"},
    *tool_deltas(1, WEATHER, "get_weather", "", '{"', "city", '":', ' "', "Paris", '"}'),
    {"type": "block-start", "index": 2, "blockType": "tool-call"},
    *tool_deltas(2, TIME, "get_local_time", "", '{"', "timezone", '":', ' "', "Europe", "/Paris",
                 '"}'),
    {"type": "block-end", "index": 0, "block": {
        "type": "reasoning", "text": "Need weather and local time for Paris. Call both tools."}},
    {"type": "block-end", "index": 1, "block": {
        "type": "tool-call", "id": WEATHER, "name": "get_weather",
        "arguments": '{"city": "Paris"}'}},
    {"type": "block-end", "index": 2, "block": {
        "type": "tool-call", "id": TIME, "name": "get_local_time",
        "arguments": '{"timezone": "Europe/Paris"}'}},
    {"type": "usage", "usage": {"inputTokens": 28, "outputTokens": 61, "cacheReadTokens": 384,
                                "reasoningTokens": 14}},
    {"type": "finish", "reason": {"kind": "tool-calls"}},
]


@pytest.mark.parametrize(("transcript", "expected"), [
    (T1, T1_CHUNKS), (T2, T2_CHUNKS), (T3, T3_CHUNKS)], ids=["T1", "T2", "T3"])
@pytest.mark.parametrize("split", [None, 1, 7, 64], ids=["events", "1B", "7B", "64B"])
async def test_transcript_replays_to_the_exact_chunk_sequence(
        transcript: str, expected: list[dict[str, object]], split: int | None) -> None:
    async with FakeServer([sse_reply(transcript, split=split)]) as server:
        chunks = await collect(provider(server).stream(request()))
    assert chunks == expected


async def test_request_line_headers_and_body_of_a_plain_call() -> None:
    async with FakeServer([sse_reply(T1)], deepseek_key=KEY) as server:
        await collect(provider(server).stream(request(user("Hi"), reasoningEffort="off")))
    seen = server.requests[0]
    assert (seen.method, seen.path) == ("POST", "/chat/completions")
    assert seen.headers["authorization"] == f"Bearer {KEY}"
    assert seen.headers["content-type"] == "application/json"
    assert seen.headers["accept"] == "text/event-stream"
    assert seen.headers["user-agent"].startswith("dsh-tui/")
    assert seen.json == {"model": "deepseek-flash", "messages": [{"role": "user", "content": "Hi"}],
                         "stream": True, "stream_options": {"include_usage": True},
                         "thinking": {"type": "disabled"}}


T3_TOOLS = [
    {"name": "get_weather", "description": "Current weather",
     "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                    "required": ["city"]}},
    {"name": "get_local_time", "description": "Local time",
     "parameters": {"type": "object", "properties": {"timezone": {"type": "string"}},
                    "required": ["timezone"]}},
]


async def test_t3_follow_up_request_is_the_documented_body_and_passes_strict_validation() -> None:
    prompt = user("What's the weather and local time in Paris?")
    async with FakeServer([sse_reply(T3), sse_reply(T1)], deepseek_key=KEY) as server:
        ds = provider(server)
        first = await collect(ds.stream(request(prompt, reasoningEffort="high", maxTokens=8192,
                                                tools=T3_TOOLS)))
        history = [prompt, assistant(*assemble(first).blocks()),
                   tool_result(WEATHER, "Sunny, 22°C"), tool_result(TIME, "14:05")]
        second = await collect(ds.stream(request(*history, reasoningEffort="high",
                                                 maxTokens=8192, tools=T3_TOOLS)))
    assert server.requests[1].json == json.loads(T3_FOLLOW_UP)
    assert second[-1] == {"type": "finish", "reason": {"kind": "stop"}}


async def test_strict_server_rejects_a_history_without_reasoning_passback() -> None:
    # The same history from a profile that never replays reasoning: the live API's 400.
    from dsh_tui.llm.openai_compat import OpenAICompatibleProvider

    history = [user("q"), assistant({"type": "reasoning", "text": "think"},
                                    {"type": "tool-call", "id": WEATHER, "name": "get_weather",
                                     "arguments": "{}"}), tool_result(WEATHER, "")]
    async with FakeServer([sse_reply(T1)], deepseek_key=KEY) as server:
        generic = OpenAICompatibleProvider(server.base_url, KEY, reasoning_field=None)
        chunks = await collect(generic.stream(request(*history)))
        ok = await collect(provider(server).stream(request(*history)))
    assert chunks[-1]["reason"]["failure"] == {
        "message": "The `reasoning_content` in the thinking mode must be passed back to the API.",
        "code": "INVALID_REQUEST", "status": 400}
    assert server.requests[0].json["messages"][2] == {"role": "tool", "tool_call_id": WEATHER,
                                                      "content": "(no output)"}
    assert ok == T1_CHUNKS


async def test_keep_alive_comments_between_events_are_ignored() -> None:
    body = T1.replace("\n\ndata:", "\n\n: keep-alive\n\ndata:")
    async with FakeServer([sse_reply(body, pause=0.001)]) as server:
        assert await collect(provider(server).stream(request())) == T1_CHUNKS


async def test_u2028_and_friends_inside_content_survive() -> None:
    text = "line\u2028separator\u2029para\x85next\x0bvt — 22°C 日本"
    body = data_lines([{"choices": [{"index": 0, "delta": {"content": text}}]},
                       {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}])
    for split in (None, 1):
        async with FakeServer([sse_reply(body, split=split)]) as server:
            chunks = await collect(provider(server).stream(request()))
        assert assemble(chunks).blocks() == [{"type": "text", "text": text}]


async def test_crlf_framing_data_without_space_and_data_after_done() -> None:
    lines = data_lines([{"choices": [{"delta": {"content": "a"}}]},
                        {"choices": [{"delta": {"content": "b"}, "finish_reason": "stop"}]}])
    body = lines.replace("data: ", "data:").replace("\n", "\r\n") + "data: {not json}\r\n\r\n"
    async with FakeServer([sse_reply(body.encode(), split=3)]) as server:
        chunks = await collect(provider(server).stream(request()))
    assert assemble(chunks).blocks() == [{"type": "text", "text": "ab"}]
    assert chunks[-1] == {"type": "finish", "reason": {"kind": "stop"}}


async def test_multi_line_data_event_is_one_payload() -> None:
    body = 'data: {"choices":[{"delta":\ndata: {"content":"x"},"finish_reason":"stop"}]}\n\n' \
           "data: [DONE]\n\n"
    async with FakeServer([sse_reply(body)]) as server:
        chunks = await collect(provider(server).stream(request()))
    assert assemble(chunks).blocks() == [{"type": "text", "text": "x"}]


async def test_non_chunked_close_delimited_body_works() -> None:
    async with FakeServer([Reply(200, [T1.encode()], chunked=False)]) as server:
        assert await collect(provider(server).stream(request())) == T1_CHUNKS
