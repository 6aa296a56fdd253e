"""The composition root: the one place that wires harness, loop, models and persistence.

The CLI, the tests and the benchmarks all build their world here, so what a
test exercises is what a user runs.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from dsh_tui.harness import Context, new_world
from dsh_tui.harness.llm_types import LlmProvider
from dsh_tui.loop import LlmRouter, LoopFactory, LoopRuntime, SystemPrompt, Tool, ToolRegistry
from dsh_tui.loop.builtin_tools import builtin_tools

BASE_PROMPT = """You are an agent running inside dsh-tui, a terminal workspace where a person \
watches and steers several agents at once. Answer in Markdown. Be concise and concrete. \
You can delegate a self-contained subtask to a sub-agent with spawn_agent; you own the \
sub-agents you start and can message them with send_to_agent. Messages that arrive while \
you work may steer you: follow the latest instruction."""


STOP_SAVING = "dsh_tui.persistence.detach"
"""`ctx.services` key of the persistence's `detach()`: write what is pending, stop saving."""


def stop_saving(ctx: Context) -> None:
    """Write and fsync every pending record, then stop persisting this world: nothing the
    world does afterwards (a cancel, a disposal) reaches a session file. Idempotent."""
    detach = ctx.services.get(STOP_SAVING)
    if detach is not None:
        detach()


async def leave(ctx: Context) -> None:
    """Quit is not dispose. Leaving the app (ctrl+q, SIGTERM, SIGHUP) stops saving first,
    then tears the world down in memory only: no disposal's discard (an `agent/inbox/spliced`
    with `outcome: "canceled"`) is ever written, every inbox is on disk as the person left
    it, and a turn still running is closed as `interrupted` by the next `--resume`, which
    is exactly what a `kill -9` at that instant leaves. Throwing work away is explicit
    (ctrl+l, X, dispose) and happens while the app runs."""
    from dsh_tui.ui.state.world import dispose_all

    stop_saving(ctx)
    await dispose_all(ctx)
    await ctx.scope.dispose()


def default_providers(*, demo_speed: float = 1.0, base_url: str | None = None,
                      env: Mapping[str, str] | None = None,
                      routes: Iterable[Any] = ()) -> dict[str, LlmProvider]:
    """The built-in providers: demo always; deepseek when a key is in the environment;
    openai-compatible when a base URL is given; then one adapter per configured route
    (`dsh_tui.ui.state.routes.Route`), registered under the route's name."""
    from dsh_tui.llm.demo import DemoModel

    env = os.environ if env is None else env
    providers: dict[str, LlmProvider] = {"demo": DemoModel(speed=demo_speed)}
    key = env.get("DEEPSEEK_API_KEY")
    if key:
        from dsh_tui.llm.deepseek import DeepSeekProvider

        providers["deepseek"] = DeepSeekProvider(
            api_key=key, base_url=env.get("DEEPSEEK_BASE_URL") or "https://api.deepseek.com")
    if base_url:
        from dsh_tui.llm.openai_compat import OpenAICompatibleProvider

        providers["openai-compatible"] = OpenAICompatibleProvider(
            base_url=base_url, api_key=env.get("OPENAI_API_KEY") or None)
    for route in routes:
        providers[route.name] = route_provider(route, env=env, demo_speed=demo_speed)
    return providers


def route_provider(route: Any, *, env: Mapping[str, str] | None = None,
                   demo_speed: float = 1.0) -> LlmProvider:
    """The adapter for one route: its server, its timeouts, and the key read from the
    environment variable the route names (the key goes no further than the adapter, whose
    `Secret` and `SecretFilter` keep it out of reprs, logs, errors and streamed text)."""
    env = os.environ if env is None else env
    if route.provider == "demo":
        from dsh_tui.llm.demo import DemoModel

        return DemoModel(speed=demo_speed)
    key = env.get(route.key_env) if route.key_env else None
    if route.provider == "deepseek":
        from dsh_tui.llm.deepseek import DeepSeekProvider

        return DeepSeekProvider(
            api_key=key or None, default_model=route.model or "deepseek-v4-flash",
            base_url=route.base_url or env.get("DEEPSEEK_BASE_URL") or "https://api.deepseek.com",
            **route.timeouts())
    from dsh_tui.llm.openai_compat import OpenAICompatibleProvider

    return OpenAICompatibleProvider(base_url=route.base_url, api_key=key or None,
                                    default_model=route.model, **route.timeouts())


def build_context(
    providers: Mapping[str, LlmProvider] | None = None,
    persistence: Any = None,
    tools: Iterable[Tool] | None = None,
    retry: bool = True,
    *,
    workspace: str | os.PathLike[str] | None = None,
    system_prompt: str | None = BASE_PROMPT,
    max_parallel_tool_calls: int = 10,
    demo_speed: float = 1.0,
) -> Context:
    """A root Context with the loop's factory installed on `ctx.agents`.

    providers: name -> adapter (default: the built-in ones); persistence: None keeps
    sessions in memory; tools: None gives the built-in tools; retry: install upstream's
    default retry policy on `agent/request-error`.
    """
    ctx = new_world()
    router = LlmRouter(providers if providers is not None else
                       default_providers(demo_speed=demo_speed))
    registry = ToolRegistry(tools if tools is not None else builtin_tools(workspace))
    prompt = SystemPrompt(registry)
    if system_prompt and tools is None:
        prompt.section("base", system_prompt)
    runtime = LoopRuntime(ctx, router, registry, prompt,
                          max_parallel_tool_calls=max_parallel_tool_calls)
    ctx.services.update(loop=runtime, router=router, tools=registry, prompt=prompt)
    LoopFactory(runtime).install()
    if persistence is not None:
        ctx.services[STOP_SAVING] = persistence.attach(ctx)
    if retry:
        from dsh_tui.llm.retry import install_retry_policy

        install_retry_policy(ctx)
    return ctx


def open_log(path: str | os.PathLike[str], tail_bytes: int | None = None) -> Context:
    """A read-only Context with one idle agent showing the session log at `path`.

    A plain log bigger than `tail_bytes` (a page, 1 MB by default) is opened by its last
    page and read a page at a time as the person scrolls (`persistence/pages.py`), so a
    gigabyte log opens in a moment and is never held in memory; the transcript says how
    much lies before and after what is loaded.
    """
    from dsh_tui.harness.persistence.pages import PAGE_BYTES, open_pages
    from dsh_tui.harness.readonly import register_log_agent

    header, events, pages = open_pages(Path(path), tail_bytes or PAGE_BYTES)
    ctx = new_world(read_only=True)
    register_log_agent(ctx, header, events, pages=pages)
    return ctx


async def attach_world(endpoint: Any, *, cwd: str | None = None,
                       route: tuple[str, str] | None = None, wait: float = 15.0) -> Context:
    """The world of a running dsh runtime (`dsh-tui attach`): its sessions as agents, kept
    live over its web API (`dsh_tui.remote`). `route` (provider, model) is selected on the
    sessions this client creates. Closing the context's root scope (`leave`) closes the
    connection. Raises `dsh_tui.remote.RemoteError` (one line, no token) when the runtime
    cannot be reached or refuses the token."""
    from dsh_tui.remote import attach

    world = await attach(endpoint, cwd=cwd, route=route, wait=wait)
    return world.ctx
