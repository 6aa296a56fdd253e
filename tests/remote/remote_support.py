"""Small helpers the runtime tests share: bounded waits, attaching, reading what was seen."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from remote_runtime import ROUTE

from dsh_tui.harness import CreateAgentOptions
from dsh_tui.remote import RemoteAgent, RemoteWorld, attach, parse_endpoint
from dsh_tui.remote.stream import expand


async def wait_for(check: Callable[[], Any], what: str, timeout: float = 30.0,
                   state: Callable[[], Any] | None = None,
                   pump: Callable[[], Awaitable[None]] | None = None) -> Any:
    """Poll `check` until it is truthy (returns its value); fail after `timeout` seconds,
    saying `state()` when given. `pump` replaces the pause between checks (an app's)."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            seen = f"; state: {state()}" if state is not None else ""
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}{seen}")
        await (pump() if pump is not None else asyncio.sleep(0.02))


def describe(agent: RemoteAgent) -> str:
    """An agent's status, pending items and last events, for a failed wait."""
    tail = [(e.seq, e.type, str(e.data)[:80]) for e in agent.session.events[-8:]]
    return (f"{agent.id} {agent.status} turn={agent.current_turn} "
            f"next-turn={texts(agent.inbox.next_turn)} next-step={texts(agent.inbox.next_step)} "
            f"tail={tail}")


async def attached(running: Any) -> RemoteWorld:
    """A client attached to the shared runtime, creating sessions on the test route."""
    return await attach(parse_endpoint(running.line), cwd=str(running.process.work),
                        route=ROUTE)


async def new_agent(world: RemoteWorld, prefix: str = "t") -> RemoteAgent:
    """A fresh runtime session of this test, as an agent of `world`."""
    handle = await world.ctx.agents.create(
        CreateAgentOptions(session_id=f"{prefix}-{uuid.uuid4().hex[:8]}"))
    agent = handle.agent
    assert isinstance(agent, RemoteAgent)
    return agent


class Frames:
    """Every `agent/assistant-stream` frame the world passed on, per agent, in order."""

    def __init__(self, world: RemoteWorld) -> None:
        self.seen: list[tuple[str, dict[str, Any]]] = []
        world.ctx.on("agent/assistant-stream",
                     lambda payload: self.seen.append((payload["agent"].id,
                                                       dict(payload["frame"]))))

    def of(self, agent_id: str) -> list[dict[str, Any]]:
        return [frame for who, frame in self.seen if who == agent_id]

    def streaming(self, agent: RemoteAgent, step: int | None = None) -> bool:
        """Whether a reply of `agent` is streaming now (a chunk after the last start, of
        `step` when given, and no end yet)."""
        frames = self.of(agent.id)
        starts = [i for i, f in enumerate(frames) if f["type"] == "start"
                  and (step is None or f.get("step") == step)]
        if not starts:
            return False
        attempt = frames[starts[-1]]["attemptId"]
        after = [f for f in frames[starts[-1]:] if f.get("attemptId") == attempt]
        return any(f["type"] == "chunk" for f in after) and \
            not any(f["type"] == "end" for f in after)

    def chunks_by_attempt(self, agent_id: str) -> dict[str, list[dict[str, Any]]]:
        out: dict[str, list[dict[str, Any]]] = {}
        for frame in self.of(agent_id):
            if frame["type"] == "chunk":
                out.setdefault(str(frame["attemptId"]), []).append(dict(frame["chunk"]))
        return out

    def committed(self, agent_id: str) -> dict[int, str]:
        """seq of the durable record each attempt committed → its attempt id."""
        return {f["outcome"]["seq"]: str(f["attemptId"]) for f in self.of(agent_id)
                if f["type"] == "end" and isinstance(f.get("outcome"), dict)
                and f["outcome"].get("kind") == "committed"}


def stored_chunks(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The chunks a stored `assistant/message` (or attempt) says were streamed."""
    return [chunk for _time, chunk in expand((record.get("data") or {}).get("stream"))]


def texts(messages: Any) -> list[str]:
    return [m.text for m in messages]


def events_of(agent: RemoteAgent, kind: str) -> list[Any]:
    return [e for e in agent.session.events if e.type == kind]
