"""Shared fixtures of the harness-core conformance suite (docs/contract.md §1–§8).

Everything here goes through the public surface: `build_context` from the
composition root, `ctx.agents` / `ctx.sessions` / `ctx.on`, the agent handle and
the scripted model. Waiting is event-driven (`when_idle`, listeners) or a
bounded loop of `asyncio.sleep(0)`; nothing asserts on wall-clock time. The
`bounded()` guard only turns a hang into a test failure instead of a stuck run.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest

from dsh_tui.compose import build_context
from dsh_tui.harness import AgentOptions, CreateAgentOptions, user_message
from dsh_tui.llm.scripted import ScriptedModel
from dsh_tui.loop import Tool

# A safety net against hangs (a failing test must fail, not stall the run);
# never used to assert on durations.
HANG_GUARD_S = 5.0


async def bounded(awaitable: Awaitable[Any], what: str = "operation") -> Any:
    try:
        return await asyncio.wait_for(asyncio.ensure_future(awaitable), HANG_GUARD_S)
    except TimeoutError:
        pytest.fail(f"{what} did not settle (hang)")


async def until(predicate: Callable[[], bool], what: str = "condition",
                ticks: int = 5000) -> None:
    """Yield to the loop (sleep(0)) until `predicate()` holds, at most `ticks` times."""
    for _ in range(ticks):
        if predicate():
            return
        await asyncio.sleep(0)
    if predicate():
        return
    pytest.fail(f"{what} not reached after {ticks} loop ticks")


async def settle(ticks: int = 50) -> None:
    """Let already-scheduled callbacks run (used only before asserting that nothing happened)."""
    for _ in range(ticks):
        await asyncio.sleep(0)


def m(text: str, **source: Any) -> Any:
    """`m(t)` of the scenarios (docs/contract.md §8): a new UserMessage, source {kind:'user'} unless given."""
    return user_message(text, source=source or None)


def ctx_msg(text: str, plugin: str = "test") -> Any:
    return user_message(text, source={"kind": "plugin", "plugin": plugin})


def types(agent_or_session: Any) -> list[str]:
    session = getattr(agent_or_session, "session", agent_or_session)
    return [e.type for e in session.events]


def events_of(agent_or_session: Any, *kinds: str) -> list[Any]:
    session = getattr(agent_or_session, "session", agent_or_session)
    return [e for e in session.events if e.type in kinds]


def filtered(agent: Any, *kinds: str) -> list[str]:
    return [e.type for e in events_of(agent, *kinds)]


def block_text(content: Iterable[Mapping[str, Any]]) -> str:
    return "".join(b.get("text", "") for b in content if b.get("type") == "text")


def user_texts(agent: Any) -> list[str]:
    """Texts of every recorded `user/message` (what actually ran)."""
    return [block_text(e.data["content"]) for e in events_of(agent, "user/message")]


def turn_reasons(agent: Any) -> list[Any]:
    return [e.data["reason"] for e in events_of(agent, "turn/end")]


def splices(agent_or_session: Any) -> list[dict[str, Any]]:
    return [e.data for e in events_of(agent_or_session, "agent/inbox/spliced")]


def canceled_splices(agent: Any) -> list[dict[str, Any]]:
    return [d for d in splices(agent) if d.get("outcome") == "canceled"]


def request_text(request: Mapping[str, Any]) -> str:
    return json.dumps(request["messages"], ensure_ascii=False, default=str)


def request_texts(request: Mapping[str, Any]) -> list[str]:
    """Every text block (any role, including tool results' inner text) of a request."""
    out: list[str] = []

    def walk(content: Iterable[Mapping[str, Any]]) -> None:
        for block in content:
            if block.get("type") == "text":
                out.append(block["text"])
            elif block.get("type") == "tool-result":
                walk(block.get("content") or [])

    for message in request["messages"]:
        walk(message.get("content") or [])
    return out


def text_deltas(agent: Any) -> list[Any]:
    return [e for e in events_of(agent, "assistant/chunk")
            if e.data["chunk"].get("type") == "text-delta"]


class Recorder:
    """Records live notifications (and session events) in one ordered list."""

    def __init__(self, ctx: Any) -> None:
        self.ctx = ctx
        self.log: list[tuple[Any, ...]] = []
        self._offs: list[Callable[[], None]] = []

    def status(self, agent: Any = None) -> Recorder:
        def on(payload: Mapping[str, Any]) -> None:
            if agent is None or payload["agent"] is agent:
                self.log.append(("status", payload["status"]))
        self._offs.append(self.ctx.on("agent/status", on))
        return self

    def inbox(self, agent: Any = None) -> Recorder:
        for kind in ("inserted", "discarded", "claimed"):
            def on(payload: Mapping[str, Any], kind: str = kind) -> None:
                if agent is not None and payload["agent"] is not agent:
                    return
                if kind == "claimed":
                    self.log.append((kind, payload["message"], payload["turn"]))
                else:
                    self.log.append((kind, payload["message"]))
            self._offs.append(self.ctx.on(f"agent/inbox/{kind}", on))
        return self

    def session(self, *kinds: str, agent: Any = None) -> Recorder:
        def on(session: Any, event: Any) -> None:
            if agent is not None and session is not agent.session:
                return
            if not kinds or event.type in kinds:
                self.log.append(("session", event.type))
        self._offs.append(self.ctx.on("session/event", on))
        return self

    def of(self, kind: str) -> list[Any]:
        out = []
        for entry in self.log:
            if entry[0] == kind:
                out.append(entry[1] if len(entry) == 2 else entry[1:])
        return out

    def statuses(self) -> list[str]:
        return self.of("status")

    def close(self) -> None:
        for off in self._offs:
            off()


@dataclass
class World:
    """One composed root context with a scripted model and the agents made on it."""

    ctx: Any
    model: ScriptedModel
    handles: list[Any] = field(default_factory=list)

    async def create(self, session_id: str = "a1", *, provider: str | None = "mock",
                     model: str | None = "mock", max_tokens: int | None = None,
                     options: AgentOptions | None = None, through: Any = None,
                     **create_kwargs: Any) -> Any:
        agent_options = options if options is not None else AgentOptions(
            provider=provider, model=model, max_tokens=max_tokens)
        ctx = through if through is not None else self.ctx
        handle = await ctx.agents.create(CreateAgentOptions(
            session_id=session_id, agent_options=agent_options, **create_kwargs))
        self.handles.append(handle)
        return handle

    async def agent(self, session_id: str = "a1", **kwargs: Any) -> Any:
        return (await self.create(session_id, **kwargs)).agent


WorldFactory = Callable[..., World]


def compose(script: Iterable[Any] = (), *, tools: Iterable[Tool] = (), retry: bool = False,
            persistence: Any = None, model: Any = None, **kwargs: Any) -> World:
    """A world whose 'mock' provider is a ScriptedModel of `script` (or the given `model`)."""
    model = model if model is not None else ScriptedModel(list(script))
    ctx = build_context(providers={"mock": model}, tools=list(tools), retry=retry,
                        system_prompt=None, persistence=persistence, **kwargs)
    return World(ctx, model)


@pytest.fixture
async def make_world():
    """Factory: `make_world(script, tools=[...])` -> World; disposes every agent afterwards."""
    worlds: list[World] = []

    def factory(script: Iterable[Any] = (), **kwargs: Any) -> World:
        world = compose(script, **kwargs)
        worlds.append(world)
        return world

    yield factory
    for world in worlds:
        for handle in reversed(world.handles):
            try:
                await asyncio.wait_for(handle.dispose(), HANG_GUARD_S)
            except Exception:  # teardown of a test that already failed
                pass


def tool(name: str, run: Callable[[Any], Any], *, concurrency_safe: bool = False,
         description: str = "") -> Tool:
    return Tool(name, description or f"test tool {name}", {"type": "object", "properties": {}},
                run, concurrency_safe=concurrency_safe)


class ChunkModel:
    """A provider streaming exact chunk lists (one entry per request) for chunk-level scenarios.

    An entry is a list of chunks; with `hang=True` the stream then waits for the request's
    signal and raises, like upstream's `hangAfter` mock entries.
    """

    name = "chunks"

    def __init__(self, entries: Iterable[tuple[list[dict[str, Any]], bool]]) -> None:
        self.entries = list(entries)
        self.requests: list[dict[str, Any]] = []

    async def stream(self, request: Mapping[str, Any]):
        self.requests.append(dict(request))
        chunks, hang_after = self.entries[len(self.requests) - 1]
        for chunk in chunks:
            yield chunk
            await asyncio.sleep(0)
        if hang_after:
            reason = await request["signal"].wait()
            from dsh_tui.harness import Cancelled
            raise Cancelled(reason)


def find_nones(value: Any, path: str = "data") -> list[str]:
    """Paths of every None inside a JSON value (optional fields must be absent, never null)."""
    if value is None:
        return [path]
    if isinstance(value, Mapping):
        return [p for k, v in value.items() for p in find_nones(v, f"{path}.{k}")]
    if isinstance(value, (list, tuple)):
        return [p for i, v in enumerate(value) for p in find_nones(v, f"{path}[{i}]")]
    return []
