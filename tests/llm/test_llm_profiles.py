"""Server variants (§6.4) over HTTP, and what each profile puts on the wire."""

from __future__ import annotations

import json

import pytest
from fake_server import FakeServer, data_lines, sse_reply
from llm_support import assemble, assistant, collect, failure_of, request, user
from transcripts import LLAMA_CPP, OLLAMA, T1, VLLM

from dsh_tui.harness.jsonvalue import freeze_json
from dsh_tui.harness.llm_types import LlmError
from dsh_tui.llm.deepseek import DeepSeekProvider
from dsh_tui.llm.openai_compat import OpenAICompatibleProvider


async def stream_body(body: str, **kwargs: object) -> tuple[list[dict[str, object]], FakeServer]:
    async with FakeServer([sse_reply(body)]) as server:
        generic = OpenAICompatibleProvider(server.base_url, **kwargs)  # type: ignore[arg-type]
        chunks = await collect(generic.stream(request(model="m")))
    return chunks, server


async def test_vllm_reasoning_field_and_separate_usage_chunk() -> None:
    answer = '{"id":"chatcmpl-a0f2b9846aad1c45","object":"chat.completion.chunk","created":' \
             '1774305659,"model":"m","choices":[{"index":0,"delta":{"content":"Yes."},' \
             '"logprobs":null,"finish_reason":"stop"}]}'
    chunks, _ = await stream_body(data_lines([VLLM[0], answer, VLLM[1]]))
    assert chunks == [
        {"type": "block-start", "index": 0, "blockType": "reasoning"},
        {"type": "reasoning-delta", "index": 0, "text": " need"},
        {"type": "block-start", "index": 1, "blockType": "text"},
        {"type": "text-delta", "index": 1, "text": "Yes."},
        {"type": "block-end", "index": 0, "block": {"type": "reasoning", "text": " need"}},
        {"type": "block-end", "index": 1, "block": {"type": "text", "text": "Yes."}},
        {"type": "usage", "usage": {"inputTokens": 10, "outputTokens": 5}},
        {"type": "finish", "reason": {"kind": "stop"}},
    ]


async def test_ollama_parallel_calls_sharing_index_zero_become_two_calls() -> None:
    finish = '{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}'
    chunks, _ = await stream_body(data_lines([*OLLAMA, finish]))
    assert [c for c in chunks if c["type"] == "block-start"] == [
        {"type": "block-start", "index": 0, "blockType": "reasoning"},
        {"type": "block-start", "index": 1, "blockType": "tool-call"},
        {"type": "block-start", "index": 2, "blockType": "tool-call"}]
    assert assemble(chunks).blocks() == [
        {"type": "reasoning", "text": "We"},
        {"type": "tool-call", "id": "call_a", "name": "write_file", "arguments": '{"path":"a.txt"}'},
        {"type": "tool-call", "id": "call_b", "name": "write_file", "arguments": '{"path":"b.txt"}'},
    ]
    assert chunks[-1] == {"type": "finish", "reason": {"kind": "tool-calls"}}
    assert not any(c["type"] == "usage" for c in chunks)  # none reported: unknown, not zero


async def test_llama_cpp_usage_with_timings_on_an_empty_choices_chunk() -> None:
    text = '{"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}'
    chunks, _ = await stream_body(data_lines([text, *LLAMA_CPP]))
    assert chunks[-2:] == [
        {"type": "usage", "usage": {"inputTokens": 250, "outputTokens": 61,
                                    "cacheReadTokens": 1100}},
        {"type": "finish", "reason": {"kind": "stop"}}]


async def test_llama_cpp_timings_alone_give_the_usage() -> None:
    text = '{"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}],' \
           '"timings":{"cache_n":1100,"prompt_n":250,"predicted_n":61}}'
    chunks, _ = await stream_body(data_lines([text]))
    assert chunks[-2]["usage"] == {"inputTokens": 250, "outputTokens": 61, "cacheReadTokens": 1100}


async def test_tool_call_quirks_object_arguments_missing_id_and_stop_finish() -> None:
    payloads = [
        {"choices": [{"delta": {"tool_calls": [{"function": {"name": "ls",
                                                              "arguments": {"path": "."}}}]}}]},
        {"choices": [{"delta": {}, "finish_reason": "stop"}]},
    ]
    chunks, _ = await stream_body(data_lines(payloads))
    assert assemble(chunks).blocks() == [
        {"type": "tool-call", "id": "call_0", "name": "ls", "arguments": '{"path":"."}'}]
    assert chunks[-1] == {"type": "finish", "reason": {"kind": "tool-calls"}}


async def test_usage_last_one_wins_and_maps_deepseek_cache_fields() -> None:
    payloads = [
        {"choices": [{"delta": {"content": "x"}, "finish_reason": "stop"}],
         "usage": {"prompt_tokens": 1, "completion_tokens": 1}},
        {"choices": [], "usage": {"prompt_tokens": 100, "completion_tokens": 7,
                                  "prompt_cache_hit_tokens": 64}},
    ]
    chunks, _ = await stream_body(data_lines(payloads))
    assert chunks[-2]["usage"] == {"inputTokens": 36, "outputTokens": 7, "cacheReadTokens": 64}


# ---- request bodies ----------------------------------------------------------------------------


async def test_generic_profile_body_and_switches() -> None:
    tools = [{"name": "ls", "description": "list", "parameters": {"type": "object"}}]
    history = [user("q"), assistant({"type": "reasoning", "text": "r"},
                                    {"type": "text", "text": "a"}), user("again")]
    async with FakeServer([sse_reply(T1)]) as server:
        generic = OpenAICompatibleProvider(
            server.base_url, "k", reasoning_field="reasoning", max_tokens_field="max_completion_tokens",
            stream_usage=False, extra_body={"chat_template_kwargs": {"enable_thinking": False}},
            extra_headers={"X-Gateway": "1"})
        await collect(generic.stream(request(*history, model="qwen", system="be brief", tools=tools,
                                             reasoningEffort="off", temperature=0.2,
                                             maxTokens=64, stop=["END"])))
    seen = server.requests[0]
    assert seen.headers["x-gateway"] == "1"
    assert seen.json == {
        "model": "qwen",
        "messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": "q"},
                     {"role": "assistant", "content": "a", "reasoning": "r"},
                     {"role": "user", "content": "again"}],
        "stream": True, "reasoning_effort": "none",
        "tools": [{"type": "function", "function": {"name": "ls", "description": "list",
                                                     "parameters": {"type": "object"}}}],
        "temperature": 0.2, "max_completion_tokens": 64, "stop": ["END"],
        "chat_template_kwargs": {"enable_thinking": False}}


def ds() -> DeepSeekProvider:
    return DeepSeekProvider(api_key="k", base_url="http://127.0.0.1:9")


@pytest.mark.parametrize(("fields", "expected"), [
    ({}, {}),
    ({"reasoningEffort": "off"}, {"thinking": {"type": "disabled"}}),
    ({"reasoningEffort": "low"}, {"thinking": {"type": "enabled"}, "reasoning_effort": "low"}),
    ({"reasoningEffort": "max"}, {"thinking": {"type": "enabled"}, "reasoning_effort": "max"}),
    ({"reasoningEffort": "high", "purpose": "session-title"}, {"thinking": {"type": "disabled"}}),
])
def test_deepseek_thinking_fields(fields: dict[str, str], expected: dict[str, object]) -> None:
    body = ds().build_body(request(**fields))
    assert {k: body[k] for k in ("thinking", "reasoning_effort") if k in body} == expected


def test_deepseek_replays_reasoning_on_every_assistant_message_only_with_thinking_on() -> None:
    history = [user("a"), assistant({"type": "text", "text": "plain"}), user("b")]
    on = ds().build_body(request(*history, reasoningEffort="high"))["messages"][1]
    off = ds().build_body(request(*history, reasoningEffort="off"))["messages"][1]
    default = ds().build_body(request(*history))["messages"][1]
    assert on == default == {"role": "assistant", "content": "plain", "reasoning_content": ""}
    assert off == {"role": "assistant", "content": "plain"}


@pytest.mark.parametrize("effort", ["medium", "xhigh", "auto"])
def test_deepseek_rejects_unknown_efforts(effort: str) -> None:
    with pytest.raises(LlmError) as raised:
        ds().build_body(request(reasoningEffort=effort))
    assert raised.value.code == "UNSUPPORTED_REASONING_EFFORT"


def test_deepseek_deployment_with_thinking_disabled() -> None:
    pinned = DeepSeekProvider(api_key="k", thinking="disabled")
    assert pinned.build_body(request())["thinking"] == {"type": "disabled"}
    assert pinned.prepare({"provider": "deepseek", "model": "m"})[0]["reasoningEffort"] == "off"
    with pytest.raises(LlmError, match="thinking disabled"):
        pinned.build_body(request(reasoningEffort="high"))


def test_deepseek_prepare_materialises_defaults_and_marks_them() -> None:
    config, defaults = ds().prepare({"provider": "deepseek", "model": ""})
    assert config == {"provider": "deepseek", "model": "deepseek-v4-flash",
                      "reasoningEffort": "high", "maxTokens": 256_000}
    assert defaults == {"reasoningEffort": True, "maxTokens": True}
    config, defaults = ds().prepare({"provider": "deepseek", "model": "deepseek-v4-pro",
                                     "reasoningEffort": "max", "maxTokens": 100})
    assert defaults == {} and config["reasoningEffort"] == "max"


def test_context_windows() -> None:
    assert ds().context_window("deepseek-v4-flash") == 1_000_000
    assert ds().context_window("deepseek-v4-pro") == 1_000_000
    assert OpenAICompatibleProvider("http://x").context_window("m") is None
    assert OpenAICompatibleProvider("http://x", context_windows={"m": 8192}).context_window("m") \
        == 8192


async def test_deepseek_headers_for_session_compaction_and_user() -> None:
    async with FakeServer([sse_reply(T1)]) as server:
        provider = DeepSeekProvider(api_key="k", base_url=server.base_url + "/", user_id="anon-1")
        await collect(provider.stream(request(sessionId="s-1", purpose="compaction")))
    headers = server.requests[0].headers
    assert server.requests[0].path == "/chat/completions"
    assert (headers["x-deepseek-harness-session-id"], headers["x-deepseek-harness-compact"],
            headers["x-deepseek-harness-user-id"]) == ("s-1", "1", "anon-1")


async def test_images_are_refused_before_any_request() -> None:
    image = {"type": "image", "attachment": {"attachmentId": "a", "mediaType": "image/png",
                                             "bytes": 1, "width": 1, "height": 1}}
    message = {"id": "u", "role": "user", "content": [image], "source": {"kind": "user"}}
    async with FakeServer([sse_reply(T1)]) as server:
        chunks = await collect(DeepSeekProvider(api_key="k", base_url=server.base_url)
                               .stream(request(message)))
    assert failure_of(chunks)["code"] == "UNSUPPORTED_CONTENT"
    assert server.requests == []


def test_frozen_history_and_tool_schemas_serialise() -> None:
    tools = freeze_json([{"name": "t", "description": "d",
                          "parameters": {"type": "object", "properties": {"a": {"type": "string"}}}}])
    body = ds().build_body(request(freeze_json(user("hi")), tools=tools))
    assert body["messages"] == [{"role": "user", "content": "hi"}]
    assert body["tools"][0]["function"]["parameters"]["properties"] == {"a": {"type": "string"}}
    json.dumps(body)  # plain JSON, no frozen mappings left


def test_base_url_without_a_scheme_is_refused_at_construction() -> None:
    with pytest.raises(ValueError, match="http:// or https://"):
        OpenAICompatibleProvider("localhost:8000/v1")
