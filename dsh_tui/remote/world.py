"""Attaching to a dsh runtime: its sessions as the agents of one world, kept live.

`attach(endpoint)` exchanges the launch token, opens the socket, lists every session
(`session/list`) and follows each (`follow.py`); an agent is announced on the world's
registry once its log is complete, a sub-agent under its parent (after it). New sessions
are found from the runtime's `session/control` stream (any session it reports that is
not followed yet) and from a parent's `subagent/catalog` events. `ctx.agents.create`
makes a session (`session/create`); the rest of the UI's gestures are the agents'
(`agent.py`). Closing the world's root scope closes the socket and the HTTP client.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Coroutine, Mapping
from typing import Any

import aiohttp

from dsh_tui.harness import CreateAgentOptions, ResumeAgentOptions, new_world
from dsh_tui.harness.agent import Agent, AgentHandle
from dsh_tui.harness.connection import (
    CONNECTION_EVENT,
    CONNECTION_SERVICE,
    NOTICE_EVENT,
    Connection,
    Notice,
)
from dsh_tui.harness.context import Context

from .agent import ROOT_REFUSED, RemoteAgent
from .endpoint import Endpoint
from .follow import Follower
from .inbox import UnavailableError
from .mux import Mux, Stream
from .wire import RemoteError, RpcClient

log = logging.getLogger("dsh_tui.remote")

REMOTE_SERVICE = "dsh_tui.remote"
"""`ctx.services` key of the `RemoteWorld` behind an attached context."""

NOTICES_KEPT = 200


class RemoteHandle:
    """What `create` returns: the agent, and `dispose`, which stops watching it (the
    runtime keeps the session; there is no remote disposal)."""

    def __init__(self, world: RemoteWorld, agent: RemoteAgent) -> None:
        self.world = world
        self.agent: Agent = agent

    def dispose(self) -> Awaitable[None]:
        """Stop following the session and take it off this world's registry."""
        return self.world.forget(self.agent.id)


class RemoteFactory:
    """The registry's factory in an attached world: `create` makes a runtime session."""

    def __init__(self, world: RemoteWorld) -> None:
        self.world = world

    async def create(self, options: CreateAgentOptions, owner_ctx: Context) -> AgentHandle:
        """A new root session (`session/create`); a child cannot be made from outside."""
        if owner_ctx.agent is not None:
            raise UnavailableError(ROOT_REFUSED["spawn_child"])
        meta = options.meta or {}
        agent = await self.world.create_session(options.session_id, str(meta.get("cwd") or "")
                                                or None)
        if options.setup is not None:
            result = options.setup(agent.ctx)
            if asyncio.iscoroutine(result) or isinstance(result, asyncio.Future):
                await result
        return RemoteHandle(self.world, agent)

    async def resume(self, options: ResumeAgentOptions, owner_ctx: Context) -> AgentHandle:
        """Every runtime session is already followed: resume hands back its agent."""
        agent = self.world.agents.get(options.resume_session_id)
        if agent is None:
            raise RemoteError("session/not-found",
                              f"the runtime has no session {options.resume_session_id!r}")
        return RemoteHandle(self.world, agent)


class RemoteWorld:
    """One attached runtime (see the module docstring)."""

    def __init__(self, endpoint: Endpoint, *, cwd: str | None = None,
                 route: tuple[str, str] | None = None) -> None:
        self.endpoint = endpoint
        self.cwd = cwd
        self.route = route
        """(provider, model) selected on every session this client creates."""
        self.ctx = new_world()
        self.connection = Connection(endpoint.where, "connected")
        self.ctx.services[CONNECTION_SERVICE] = self.connection
        self.ctx.services[REMOTE_SERVICE] = self
        self.agents: dict[str, RemoteAgent] = {}
        self.followers: dict[str, Follower] = {}
        self.notices: list[Notice] = []
        self._announced: dict[str, asyncio.Event] = {}
        self._detach: dict[str, Any] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._http: aiohttp.ClientSession | None = None
        self._rpc: RpcClient | None = None
        self._mux: Mux | None = None
        self._refreshing: asyncio.Task[None] | None = None
        self._closed = False

    @property
    def rpc(self) -> RpcClient:
        """The unary client (set by `attach`)."""
        assert self._rpc is not None, "attach() first"
        return self._rpc

    @property
    def mux(self) -> Mux:
        """The socket (set by `attach`)."""
        assert self._mux is not None, "attach() first"
        return self._mux

    # -- attach and close -----------------------------------------------------------------------

    async def attach(self, wait: float = 15.0) -> Context:
        """Connect, list and follow every session; returns the world's root context once
        every session listed now is shown (or `wait` seconds passed). Raises RemoteError."""
        self._http = aiohttp.ClientSession()
        try:
            self._rpc = RpcClient(self._http, self.endpoint)
            await self._rpc.connect()
            self._mux = Mux(self._http, self.endpoint, self._on_state)
            await self._mux.start()
        except BaseException:
            await self._http.close()
            raise
        self.ctx.registry.set_factory(RemoteFactory(self))
        self.ctx.effect(self.close)
        self.mux.open(Stream("session/control", lambda: {}, self._on_control))
        await self.refresh()
        await self.settled(wait)
        return self.ctx

    async def settled(self, wait: float) -> bool:
        """Wait (bounded) until every followed session is shown; False on timeout."""
        pending = [self._announced[a].wait() for a in list(self.agents)]
        if not pending:
            return True
        try:
            await asyncio.wait_for(asyncio.gather(*pending), wait)
        except TimeoutError:
            return False
        return True

    async def close(self) -> None:
        """Stop following, close the socket and the HTTP client; idempotent."""
        if self._closed:
            return
        self._closed = True
        for follower in self.followers.values():
            follower.stop()
        if self._mux is not None:
            await self._mux.close()
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(BaseException):
                await task
        if self._http is not None:
            await self._http.close()

    # -- sessions -------------------------------------------------------------------------------

    async def refresh(self) -> None:
        """List the runtime's sessions and follow those not followed yet (parents first)."""
        value = await self.rpc.call("session/list", {"_request": {}})
        items = [i for i in (value or {}).get("items") or () if isinstance(i, Mapping)
                 and isinstance(i.get("sessionId"), str)]
        by_id = {i["sessionId"]: i for i in items}

        def depth(item: Mapping[str, Any]) -> int:
            seen, count, parent = set(), 0, item.get("parentSessionId")
            while isinstance(parent, str) and parent in by_id and parent not in seen:
                seen.add(parent)
                count += 1
                parent = by_id[parent].get("parentSessionId")
            return count

        for item in sorted(items, key=lambda i: (depth(i), i.get("updatedAt") or 0)):
            parent = item.get("parentSessionId")
            self.follow(item["sessionId"], parent if isinstance(parent, str) else None,
                        header={"id": item["sessionId"], "cwd": item.get("cwd")})

    def follow(self, session_id: str, parent_id: str | None = None, mode: str | None = None,
               header: Mapping[str, Any] | None = None) -> RemoteAgent:
        """Follow a session (once): the agent is announced when its log is complete."""
        known = self.agents.get(session_id)
        if known is not None:
            return known
        if parent_id is not None and parent_id not in self.agents:
            parent_id = None  # an orphan shows as a root, never lost
        agent = RemoteAgent(self, {k: v for k, v in (header or {"id": session_id}).items()
                                   if v is not None}, parent_id=parent_id, mode=mode)
        self.agents[session_id] = agent
        self._announced[session_id] = asyncio.Event()
        address: dict[str, Any] = {"kind": "session", "sessionId": session_id}
        if parent_id is not None:
            address = {"kind": "subagent", "parentSessionId": parent_id,
                       "childSessionId": session_id, "mode": "unknown"}
        follower = Follower(self, agent, address)
        self.followers[session_id] = follower
        follower.start()
        self.spawn(self._announce_when_open(agent, follower))
        return agent

    async def _announce_when_open(self, agent: RemoteAgent, follower: Follower) -> None:
        await follower.opened.wait()
        owner = self.agents.get(agent.parent_id) if agent.parent_id else None
        if owner is not None:
            await self._announced[owner.id].wait()
        if self._closed or self.agents.get(agent.id) is not agent:
            return
        registry = self.ctx.registry
        try:
            self._detach[agent.id] = registry.enter(agent, owner)
            registry.announce(agent)
        except Exception as error:
            log.warning("could not show remote session %s: %s", agent.id, error)
        agent.shown()
        self._announced[agent.id].set()

    def child_seen(self, parent: RemoteAgent, data: Mapping[str, Any]) -> None:
        """A parent's `subagent/catalog` event names a child: follow it under the parent."""
        child = data.get("childId")
        if isinstance(child, str) and child not in self.agents:
            mode = data.get("mode")
            self.follow(child, parent.id, str(mode) if isinstance(mode, str) else None,
                        header={"id": child, "parentSession": parent.id})

    async def create_session(self, session_id: str | None, cwd: str | None) -> RemoteAgent:
        """`session/create` (the runtime may answer another id), the route if one is set,
        and the new session followed and shown."""
        request: dict[str, Any] = {}
        if cwd or self.cwd:
            request["cwd"] = cwd or self.cwd
        if session_id:
            request["sessionId"] = session_id
        value = await self.rpc.call("session/create", {"request": request})
        created = str((value or {}).get("sessionId") or session_id)
        if self.route is not None:
            provider, model = self.route
            await self.rpc.call("session/selectModel", {"request": {
                "sessionId": created, "provider": provider, "model": model}})
        agent = self.follow(created, header={"id": created, "cwd": request.get("cwd")})
        await self._announced[created].wait()
        return agent

    def forget(self, session_id: str) -> Awaitable[None]:
        """Stop following a session and take its agent (and sub-agents) off the registry."""
        for child in [a for a in self.agents.values() if a.parent_id == session_id]:
            self.forget(child.id)
        follower = self.followers.pop(session_id, None)
        if follower is not None:
            follower.stop()
        agent = self.agents.pop(session_id, None)
        self._announced.pop(session_id, None)
        detach = self._detach.pop(session_id, None)
        if detach is not None and agent is not None:
            detach()
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        done.set_result(None)
        return done

    # -- the runtime's control stream -----------------------------------------------------------

    def _on_control(self, value: Any) -> None:
        if not isinstance(value, Mapping):
            return
        unknown = False
        if value.get("type") == "baseline":
            projections = (value.get("value") or {}).get("projections") or {}
            unknown = any(s not in self.agents for s in projections)
        elif value.get("type") == "projection":
            unknown = value.get("sessionId") not in self.agents
        if unknown and (self._refreshing is None or self._refreshing.done()):
            self._refreshing = self.spawn(self._refresh_soon())

    async def _refresh_soon(self) -> None:
        await asyncio.sleep(0.05)  # a burst of frames for one new session: one listing
        try:
            await self.refresh()
        except RemoteError as error:
            self.notice(f"Could not list the runtime's sessions: {error}")

    # -- what the person must see ---------------------------------------------------------------

    def _on_state(self, state: str, detail: str) -> None:
        if state not in ("connected", "reconnecting", "closed"):
            return
        self.connection.state = state  # type: ignore[assignment]
        self.connection.detail = detail
        self.ctx.emit(CONNECTION_EVENT, self.connection)

    def notice(self, text: str, agent_id: str | None = None) -> None:
        """Say one line to the person (`world/notice`); the token is never in it."""
        notice = Notice(self.endpoint.redact(text), "error", agent_id)
        self.notices.append(notice)
        del self.notices[:-NOTICES_KEPT]
        log.info("%s", notice.text)
        self.ctx.emit(NOTICE_EVENT, notice)

    def spawn(self, work: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        """Run `work` as a task this world cancels on close; a failure is logged."""
        task = asyncio.ensure_future(work)
        self._tasks.add(task)

        def done(finished: asyncio.Task[Any]) -> None:
            self._tasks.discard(finished)
            if not finished.cancelled() and finished.exception() is not None:
                log.warning("remote task failed: %s", finished.exception())

        task.add_done_callback(done)
        return task


async def attach(endpoint: Endpoint, *, cwd: str | None = None,
                 route: tuple[str, str] | None = None, wait: float = 15.0) -> RemoteWorld:
    """Attach to the runtime at `endpoint`: a `RemoteWorld` whose `ctx` the app shows."""
    world = RemoteWorld(endpoint, cwd=cwd, route=route)
    await world.attach(wait)
    return world
