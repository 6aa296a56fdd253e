"""The loop runtime and its agent factory (what `ctx.agents.create/resume` delegate to)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from dsh_tui.harness import AgentOptions, Context, CreateAgentOptions, ResumeAgentOptions
from dsh_tui.harness.lifecycle import (
    AgentHandleImpl,
    FactoryOwnership,
    _race,
    prepare_agent,
    setup_and_publish,
)
from dsh_tui.harness.persistence.writer import ROUTE_TYPE
from dsh_tui.harness.signal import CancelSignal, any_signal

from .agent import LoopAgent
from .prompt import SystemPrompt
from .router import LlmRouter
from .tools import DEFAULT_MAX_PARALLEL_TOOL_CALLS, ToolRegistry

log = logging.getLogger("dsh_tui.loop.runtime")


class LoopRuntime:
    """Everything the loop's agents share: the world, models, tools, prompt."""

    def __init__(self, ctx: Context, router: LlmRouter, tools: ToolRegistry,
                 prompt: SystemPrompt | None = None, *,
                 max_parallel_tool_calls: int = DEFAULT_MAX_PARALLEL_TOOL_CALLS) -> None:
        if type(max_parallel_tool_calls) is not int or max_parallel_tool_calls < 1:
            raise ValueError("maxParallelToolCalls must be a positive integer")
        self.ctx = ctx
        self.router = router
        self.tools = tools
        self.prompt = prompt or SystemPrompt(tools)
        self.max_parallel_tool_calls = max_parallel_tool_calls
        self.ownership = FactoryOwnership()
        # The route of a resumed session whose log never recorded one (the CLI sets it).
        self.default_options: AgentOptions | None = None
        # Configured routes by name (the CLI sets them): a resumed session whose log names
        # one takes its current settings (max_tokens, temperature, reasoning_effort).
        self.routes: dict[str, AgentOptions] = {}

    def build(self, session: Any, options: AgentOptions) -> LoopAgent:
        return LoopAgent(self, session, options)


class LoopFactory:
    """The AgentFactory of the loop: builds LoopAgents through the shared lifecycle."""

    def __init__(self, runtime: LoopRuntime) -> None:
        self.runtime = runtime

    def install(self) -> Any:
        ctx = self.runtime.ctx
        off = ctx.registry.set_factory(self)
        ctx.effect(self.runtime.ownership.dispose)
        ctx.effect(off)
        return off

    async def create(self, options: CreateAgentOptions, owner_ctx: Context) -> AgentHandleImpl:
        runtime = self.runtime
        agent_options = options.agent_options or AgentOptions()
        session = runtime.ctx.sessions.prepare(options.session_id, seed=options.seed,
                                               meta=_meta(options.meta))
        return await self._publish(session, agent_options, owner_ctx, options, "startup")

    async def resume(self, options: ResumeAgentOptions, owner_ctx: Context) -> AgentHandleImpl:
        runtime = self.runtime
        persistence = runtime.ctx.registry.persistence
        session_id = options.resume_session_id
        if persistence is None:
            raise RuntimeError("cannot resume: session persistence is not configured")
        owner_abort = CancelSignal()
        unfollow = owner_ctx.effect(lambda: owner_abort.abort(RuntimeError(
            f'agent "{session_id}" setup aborted: owner disposed during setup')))
        fused = any_signal(options.signal, owner_abort, runtime.ownership.signal)
        try:
            import asyncio

            loaded = await _race(asyncio.to_thread(persistence.load, session_id), fused,
                                 session_id)
        finally:
            unfollow()
        if not runtime.ownership.is_active():
            raise RuntimeError("agent loop is not active")
        header, events = loaded
        session = runtime.ctx.sessions.prepare(session_id, seed=events, header=header,
                                               restore=True)
        # A log killed before its first request header was written names no route;
        # such a session resumes on the runtime's default (the app's current one)
        # rather than failing its next turn with "no provider/model".
        agent_options = options.agent_options or _options_from_log(session, runtime.routes) \
            or runtime.default_options or AgentOptions()
        return await self._publish(session, agent_options, owner_ctx, options, "resume")

    async def _publish(self, session: Any, agent_options: AgentOptions, owner_ctx: Context,
                       options: CreateAgentOptions | ResumeAgentOptions,
                       source: str) -> AgentHandleImpl:
        """The tail `create` and `resume` share (§4.4 steps 2-8): build a LoopAgent on
        `session` through the lifecycle, run the caller's setup, publish with `source`
        (`agent/session-start`)."""
        runtime = self.runtime
        prepared = prepare_agent(root_ctx=runtime.ctx, owner_ctx=owner_ctx,
                                 ownership=runtime.ownership, session=session,
                                 options=agent_options,
                                 build=lambda s: runtime.build(s, agent_options),
                                 caller_signal=options.signal)
        return await setup_and_publish(prepared, options.setup, source)


def _meta(meta: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if meta is None:
        return None
    return {key: value for key, value in dict(meta).items() if value is not None}


def _options_from_log(session: Any, routes: Mapping[str, AgentOptions] | None = None
                      ) -> AgentOptions | None:
    """The route a resumed session last used (its latest request header); a route that
    is still configured under that name comes back with its current settings."""
    header = session.request_header()
    if not header:
        return _options_from_route_record(session, routes)
    config = header.get("config") or {}
    provider = config.get("provider")
    if provider == "deepseek-official":
        provider = "deepseek"
    route = (routes or {}).get(str(provider))
    if route is not None:
        from dataclasses import replace

        return replace(route, model=config.get("model") or route.model,
                       extra=dict(route.extra))
    defaults = header.get("adapterDefaults") or {}
    temperature = config.get("temperature")
    return AgentOptions(
        provider=provider, model=config.get("model"),
        max_tokens=None if defaults.get("maxTokens") else config.get("maxTokens"),
        reasoning_effort=None if defaults.get("reasoningEffort") else
        config.get("reasoningEffort"),
        temperature=temperature if isinstance(temperature, int | float) and
        not isinstance(temperature, bool) else None)


def _options_from_route_record(session: Any, routes: Mapping[str, AgentOptions] | None
                               ) -> AgentOptions | None:
    """The route an agent was made on (`agent/route`), for a session that never sent a
    request: a named agent that comes back with its workspace keeps its route."""
    record = next((event.data for event in reversed(session.events)
                   if event.type == ROUTE_TYPE and isinstance(event.data, Mapping)), None)
    if record is None:
        return None
    provider, model = record.get("provider"), record.get("model")
    provider = str(provider) if isinstance(provider, str) and provider else None
    model = str(model) if isinstance(model, str) and model else None
    route = (routes or {}).get(str(provider))
    if route is not None:
        from dataclasses import replace

        return replace(route, model=model or route.model, extra=dict(route.extra))
    return AgentOptions(provider=provider, model=model) if provider else None
