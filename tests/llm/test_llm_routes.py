"""Routes from the config file, end to end over real HTTP on 127.0.0.1.

Each test writes a `[routes.NAME]` table as a person would, builds the adapter the way
the app does (`compose.route_provider`) and runs a real agent turn against the fake
server, then reads what actually went over the wire: every route setting must reach
the request body (or, for timeouts, bound the wait), and a reply cut by a full context
must not be reported as an output cap.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from fake_server import FakeServer, Reply, data_lines, json_reply, sse_reply
from llm_support import collect, failure_of, request

from dsh_tui.compose import build_context, route_provider
from dsh_tui.harness import CreateAgentOptions, user_message
from dsh_tui.harness.persistence import JsonlPersistence
from dsh_tui.llm.deepseek import REASONING_EFFORTS
from dsh_tui.ui.state.config import parse_config
from dsh_tui.ui.state.routes import DEEPSEEK_EFFORTS, Route

KEY = "sk-route-key-7f3a9c1e5b2d4068"
LOCAL_KEY = "local-secret-4b8e2f6a1c9d"

REPLY = data_lines([
    {"choices": [{"index": 0, "delta": {"content": "ok"}, "finish_reason": "stop"}],
     "usage": {"prompt_tokens": 12, "completion_tokens": 1}}])


def route_of(toml: str, name: str, base_url: str) -> Route:
    config = parse_config(toml.replace("BASE", base_url), Path("config.toml"))
    return config.routes[name]


async def one_turn(route: Route, server: FakeServer, env: dict[str, str],
                   tmp_path: Path | None = None) -> list[Any]:
    """One real agent turn on `route`; returns the session's events."""
    provider = route_provider(route, env=env)
    persistence = JsonlPersistence(tmp_path) if tmp_path is not None else None
    ctx = build_context(providers={route.name: provider}, persistence=persistence, tools=[],
                        retry=False, system_prompt=None)
    handle = await ctx.agents.create(CreateAgentOptions(
        session_id=f"on-{route.name}", agent_options=route.agent_options()))
    agent = handle.agent
    agent.followup(user_message("hi", id="m1"))
    await asyncio.wait_for(agent.when_idle(), 10)
    events = list(agent.session.events)
    if persistence is not None:
        await ctx.sessions.flush(agent.session)
    await handle.dispose()
    await provider.aclose()  # type: ignore[attr-defined]
    return events


def test_the_ui_knows_deepseeks_efforts() -> None:
    assert DEEPSEEK_EFFORTS == REASONING_EFFORTS


async def test_a_local_route_puts_every_setting_in_the_request_body() -> None:
    toml = '''
[routes.local]
provider = "openai-compatible"
base_url = "BASE/v1"
model = "qwen3-8b"
max_tokens = 512
temperature = 0.3
reasoning_effort = "low"
api_key_env = "LOCAL_LLM_KEY"
'''
    async with FakeServer([sse_reply(REPLY)]) as server:
        route = route_of(toml, "local", server.base_url)
        events = await one_turn(route, server, {"LOCAL_LLM_KEY": LOCAL_KEY,
                                                "OPENAI_API_KEY": "not-this-one"})
    [seen] = server.requests
    assert seen.path == "/v1/chat/completions"
    body = seen.json
    assert body["model"] == "qwen3-8b"
    assert body["max_tokens"] == 512
    assert body["temperature"] == 0.3
    assert body["reasoning_effort"] == "low"  # llama.cpp, Ollama and vLLM read this name
    assert seen.headers["authorization"] == f"Bearer {LOCAL_KEY}"
    header = next(e.data["header"] for e in events if e.type == "request/header")
    assert header["config"] == {"provider": "local", "model": "qwen3-8b", "maxTokens": 512,
                                "temperature": 0.3, "reasoningEffort": "low"}
    assert [e.data["reason"] for e in events if e.type == "turn/end"] == [{"kind": "completed"}]


async def test_a_local_route_without_api_key_env_sends_no_key() -> None:
    toml = '[routes.llama]\nbase_url = "BASE/v1"\nmodel = "smollm2"\nreasoning_effort = "off"\n'
    async with FakeServer([sse_reply(REPLY)]) as server:
        route = route_of(toml, "llama", server.base_url)
        await one_turn(route, server, {"OPENAI_API_KEY": "sk-meant-for-openai"})
    [seen] = server.requests
    assert "authorization" not in seen.headers  # an OpenAI key is not sent to a local server
    assert seen.json["reasoning_effort"] == "none"  # llama.cpp: "none" disables thinking
    assert "max_tokens" not in seen.json and "temperature" not in seen.json


@pytest.mark.parametrize(("effort", "fields"), [
    ("high", {"thinking": {"type": "enabled"}, "reasoning_effort": "high"}),
    ("off", {"thinking": {"type": "disabled"}}),
])
async def test_a_deepseek_route_reaches_the_body_the_deepseek_way(
        effort: str, fields: dict[str, Any]) -> None:
    toml = f'''
[routes.ds]
provider = "deepseek"
base_url = "BASE"
model = "deepseek-v4-pro"
max_tokens = 32000
temperature = 1.3
reasoning_effort = "{effort}"
api_key_env = "MY_DEEPSEEK_KEY"
'''
    async with FakeServer([sse_reply(REPLY)], deepseek_key=KEY) as server:
        route = route_of(toml, "ds", server.base_url)
        events = await one_turn(route, server, {"MY_DEEPSEEK_KEY": KEY})
    [seen] = server.requests
    body = seen.json
    assert seen.path == "/chat/completions"
    assert body["model"] == "deepseek-v4-pro"
    assert body["max_tokens"] == 32000  # the route's cap, not the adapter's 256,000 default
    assert body["temperature"] == 1.3
    assert {k: body.get(k) for k in fields} == fields
    if effort == "off":
        assert "reasoning_effort" not in body  # DeepSeek is never sent "off"
    header = next(e.data["header"] for e in events if e.type == "request/header")
    assert "adapterDefaults" not in header  # the person chose both, the adapter did not
    assert [e.data["reason"]["kind"] for e in events if e.type == "turn/end"] == ["completed"]


async def test_route_timeouts_bound_the_waits() -> None:
    toml = '''
[routes.slow]
base_url = "BASE/v1"
model = "m"
connect_timeout = 2.5
first_byte_timeout = 0.3
read_timeout = 0.4
idle_timeout = 7
'''
    silent = Reply(200, [b'data: {"choices":[{"delta":{"content":"a"}}]}\n\n', 1.5],
                   {"Content-Type": "text/event-stream"}, ending="hang")
    async with FakeServer([Reply(200, [], head_delay=1.5), silent]) as server:
        route = route_of(toml, "slow", server.base_url)
        provider: Any = route_provider(route, env={})
        assert provider.timeout.connect == 2.5 and provider.idle_timeout == 7
        first = failure_of(await collect(provider.stream(request(model="m"))))
        second = failure_of(await collect(provider.stream(request(model="m"))))
        await provider.aclose()
    assert (first["code"], first["message"]) == (
        "TIMEOUT", "OpenAI-compatible server sent no response for 0.3s")
    assert (second["code"], second["message"]) == (
        "TIMEOUT", "OpenAI-compatible server sent nothing more for 0.4s")


def length_reply(completion_tokens: int, prompt_tokens: int = 203) -> Reply:
    """What llama.cpp's llama-server sent when a reply stopped at a limit (measured: the
    realserver build, SmolLM2-135M, `-c 256`): `length` on an empty delta, then usage on a
    `choices: []` chunk. Without a cap the context filled at 203 + 53 = 256 tokens; with
    `max_tokens: 8` it stopped at 8; the same `length` both times."""
    return sse_reply(data_lines([
        {"choices": [{"index": 0, "delta": {"content": "1, 2, 3, 4"}}]},
        {"choices": [{"finish_reason": "length", "index": 0, "delta": {}}]},
        {"choices": [], "usage": {"completion_tokens": completion_tokens,
                                  "prompt_tokens": prompt_tokens,
                                  "total_tokens": prompt_tokens + completion_tokens,
                                  "prompt_tokens_details": {"cached_tokens": 202}},
         "timings": {"cache_n": 202, "prompt_n": 1}}]))


@pytest.mark.parametrize(("cap", "produced", "reason"), [
    (None, 53, {"kind": "max-tokens", "limit": "context"}),   # no cap: only the context
    (4000, 53, {"kind": "max-tokens", "limit": "context"}),   # cut before the cap
    (8, 8, {"kind": "max-tokens"}),                            # the cap itself
], ids=["no-cap", "under-cap", "at-cap"])
async def test_a_full_context_is_not_reported_as_the_output_cap(
        tmp_path: Path, cap: int | None, produced: int, reason: dict[str, Any]) -> None:
    toml = '[routes.llama]\nbase_url = "BASE/v1"\nmodel = "smollm2"\n'
    if cap is not None:
        toml += f"max_tokens = {cap}\n"
    async with FakeServer([length_reply(produced)]) as server:
        route = route_of(toml, "llama", server.base_url)
        events = await one_turn(route, server, {}, tmp_path)
    assert server.requests[0].json.get("max_tokens") == cap
    finish = [e.data["chunk"]["reason"] for e in events
              if e.type == "assistant/chunk" and e.data["chunk"]["type"] == "finish"]
    assert finish == [reason]
    assert [e.data["reason"] for e in events if e.type == "turn/end"] == [reason]
    # On disk too, in the shape upstream reads: kind max-tokens, the limit an extension.
    log = next(tmp_path.rglob("*.jsonl")).read_text(encoding="utf-8")
    assert ('"limit":"context"' in log) == ("limit" in reason)


async def test_llama_cpp_prompt_over_the_context_is_context_window_exceeded() -> None:
    # llama.cpp's answer when the prompt alone does not fit (measured, `-c 256`).
    error = {"error": {"code": 400, "message": "request (343 tokens) exceeds the available "
                       "context size (256 tokens), try increasing it",
                       "type": "exceed_context_size_error", "n_prompt_tokens": 343,
                       "n_ctx": 256}}
    async with FakeServer([json_reply(400, error)]) as server:
        route = route_of('[routes.llama]\nbase_url = "BASE/v1"\nmodel = "m"\n', "llama",
                         server.base_url)
        provider: Any = route_provider(route, env={})
        failure = failure_of(await collect(provider.stream(request(model="m"))))
        await provider.aclose()
    assert failure["code"] == "CONTEXT_WINDOW_EXCEEDED"
    assert "(256 tokens)" in failure["message"] and failure["status"] == 400


async def test_a_route_key_echoed_by_the_server_never_reaches_the_log(tmp_path: Path) -> None:
    echo = data_lines([{"choices": [{"index": 0, "delta": {"content": f"your key is {LOCAL_KEY}"},
                                     "finish_reason": "stop"}]}])
    toml = '[routes.gw]\nbase_url = "BASE/v1"\nmodel = "m"\napi_key_env = "GW_KEY"\n'
    async with FakeServer([sse_reply(echo)]) as server:
        route = route_of(toml, "gw", server.base_url)
        events = await one_turn(route, server, {"GW_KEY": LOCAL_KEY}, tmp_path)
    assert server.requests[0].headers["authorization"] == f"Bearer {LOCAL_KEY}"
    log = next(tmp_path.rglob("*.jsonl")).read_text(encoding="utf-8")
    assert LOCAL_KEY not in log and LOCAL_KEY not in repr(events)
    assert "***" in log


class ServerThread:
    """A FakeServer on its own event loop in a thread, for a test that runs `cli.main`
    (which starts and ends its own loop)."""

    def __init__(self, replies: list[Reply]) -> None:
        import threading

        self.server = FakeServer(replies)
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)

    def __enter__(self) -> FakeServer:
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self.server.__aenter__(), self.loop).result(5)
        return self.server

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self.server.__aexit__(None, None, None),
                                         self.loop).result(5)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
        self.loop.close()


def test_route_flag_starts_the_app_on_that_route(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from dsh_tui import cli
    from dsh_tui.ui.app import DshApp

    seen: dict[str, Any] = {}

    async def scripted_run(self: DshApp, *args: Any, **kwargs: Any) -> None:
        async with self.run_test(size=(120, 36)) as pilot:
            await pilot.pause()
            [root] = self.ctx.agents.roots()
            seen["options"] = root.options
            seen["offered"] = list(self.config.routes)
            await pilot.press(*"hello", "enter")
            for _ in range(500):
                await pilot.pause(0.01)
                if root.status == "idle" and root.current_turn:
                    break
            seen["ends"] = [e.data["reason"] for e in root.session.events
                            if e.type == "turn/end"]

    monkeypatch.setattr(DshApp, "run_async", scripted_run)
    monkeypatch.setattr(cli, "_check_terminal", lambda: None)  # pytest's stdin is no tty
    monkeypatch.setenv("LOCAL_LLM_KEY", LOCAL_KEY)
    monkeypatch.delenv("DEEPSEEK_API_KEY", raising=False)
    with ServerThread([sse_reply(REPLY)]) as server:
        config = tmp_path / "config.toml"
        config.write_text(f'''demo_speed = 0
route = "ds"

[routes.ds]
provider = "deepseek"
model = "deepseek-v4-pro"
api_key_env = "NOT_SET_HERE"

[routes.local]
base_url = "{server.base_url}/v1"
model = "qwen3-8b"
max_tokens = 700
temperature = 0.2
api_key_env = "LOCAL_LLM_KEY"
''', encoding="utf-8")
        argv = ["--config", str(config), "--data-dir", str(tmp_path / "data")]
        assert cli.main([*argv, "--route", "local"]) == 0
    options = seen["options"]
    assert (options.provider, options.model, options.max_tokens, options.temperature) == (
        "local", "qwen3-8b", 700, 0.2)
    assert seen["offered"] == ["local", "ds", "demo"]
    [request_seen] = server.requests
    assert request_seen.json["max_tokens"] == 700 and request_seen.json["temperature"] == 0.2
    assert request_seen.headers["authorization"] == f"Bearer {LOCAL_KEY}"
    assert seen["ends"] == [{"kind": "completed"}]
    log = "".join(p.read_text() for p in (tmp_path / "data").rglob("*.jsonl"))
    assert '"provider":"local"' in log and LOCAL_KEY not in log


def test_the_readme_route_example_is_a_valid_config() -> None:
    import re

    readme = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    [example] = [block for block in re.findall(r"```toml\n(.*?)```", readme, re.S)
                 if "[routes." in block]
    config = parse_config(example, Path("README.md"))
    assert config.route == "deepseek"
    assert {name: r.provider for name, r in config.routes.items()} == {
        "deepseek": "deepseek", "local": "openai-compatible"}
    local = config.routes["local"]
    assert (local.max_tokens, local.temperature, local.first_byte_timeout) == (2048, 0.6, 120)
    prices = config.routes["deepseek"].prices
    assert prices is not None and (prices.input, prices.cached, prices.output) == (0.27, 0.07,
                                                                                   1.10)
    assert local.prices is None
