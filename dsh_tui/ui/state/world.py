"""UI-side helpers over the public registry calls: create, resume, and remember handles.

`ctx.agents.create` hands the creator an `AgentHandle`, and disposing an agent
needs that handle; the registry has no "dispose by id". So whoever creates an
agent the person may later dispose (the CLI, this app) files its handle in a
`HandleBook` kept in `ctx.services`, and the app disposes through it.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from dsh_tui.harness import AgentOptions, CreateAgentOptions, ResumeAgentOptions
from dsh_tui.harness.agent import Agent, AgentHandle, Setup
from dsh_tui.harness.surface import ContextSurface

if TYPE_CHECKING:
    from dsh_tui.harness.context import Context

SERVICE_KEY = "dsh_tui.ui.handles"


class HandleBook:
    """Agent id → the handle that can dispose it."""

    def __init__(self) -> None:
        self._handles: dict[str, AgentHandle] = {}

    @classmethod
    def of(cls, ctx: ContextSurface) -> HandleBook:
        """The book kept in this world's services (made on first use)."""
        services = ctx.services
        book = services.get(SERVICE_KEY)
        if not isinstance(book, HandleBook):
            book = services[SERVICE_KEY] = cls()
        return book

    def remember(self, handle: AgentHandle) -> AgentHandle:
        self._handles[handle.agent.id] = handle
        return handle

    def get(self, agent_id: str) -> AgentHandle | None:
        return self._handles.get(agent_id)

    def forget(self, agent_id: str) -> None:
        self._handles.pop(agent_id, None)

    def __len__(self) -> int:
        return len(self._handles)

    async def dispose_all(self) -> None:
        """Dispose every agent this book holds. Disposal discards inboxes: on the way out
        of the app the world stops saving first (`dsh_tui.compose.leave`), so this only
        frees memory and never writes a discard to a session file."""
        for handle in list(self._handles.values())[::-1]:
            try:
                await handle.dispose()
            except Exception:
                pass
        self._handles.clear()


def new_agent_id(prefix: str = "agent") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def _title_setup(title: str | None) -> Setup | None:
    if not title:
        return None

    def setup(child_ctx: Context) -> None:
        # The display name is the session's latest `session/title` (the same record the
        # spawn_agent tool writes), so it survives a restart and shows in `dsh-tui view`.
        child_ctx.agent.session.append("session/title", {"title": title, "messageSeqs": [],
                                                         "source": {"kind": "user"}})

    return setup


async def create_agent(agents_ctx: ContextSurface, *, provider: str | None, model: str | None,
                       title: str | None = None, session_id: str | None = None,
                       meta: Mapping[str, Any] | None = None,
                       options: AgentOptions | None = None) -> AgentHandle:
    """Create an agent through `agents_ctx.agents` (an agent's ctx makes an owned child)
    and file its handle; returns the handle. `options` (a route's, with its sampling
    settings) wins over `provider`/`model`."""
    handle = await agents_ctx.agents.create(CreateAgentOptions(
        session_id=session_id or new_agent_id(),
        agent_options=options or AgentOptions(provider=provider, model=model),
        meta=dict(meta) if meta else None, setup=_title_setup(title)))
    return HandleBook.of(agents_ctx).remember(handle)


async def spawn_child(parent: Agent, *, title: str,
                      options: AgentOptions | None = None) -> AgentHandle:
    """An owned child of `parent` on `options`' route (default: the parent's, with its
    sampling settings), recorded as a sub-agent."""
    header = parent.session.header
    depth = int(header.get("delegationDepth", 0) or 0) + 1
    meta: dict[str, Any] = {"parentSession": parent.id, "origin": "subagent",
                            "delegationDepth": depth}
    if header.get("cwd"):
        meta["cwd"] = header["cwd"]
    options = options or parent.options
    return await create_agent(parent.ctx, provider=options.provider, model=options.model,
                              title=title, session_id=f"{parent.id}.child-{uuid.uuid4().hex[:6]}",
                              meta=meta, options=replace(options, extra=dict(options.extra)))


def _children_of(headers: list[Mapping[str, Any]], session_id: str) -> list[str]:
    return [str(h["id"]) for h in headers
            if h.get("parentSession") == session_id and h.get("origin") == "subagent"
            and h.get("id")]


async def resume_tree(ctx: ContextSurface, session_id: str,
                      headers: list[Mapping[str, Any]],
                      skip: frozenset[str] | set[str] = frozenset()) -> AgentHandle:
    """Resume `session_id` as a root, then its sub-agent sessions as its owned children
    (through the parent's `agent.ctx.agents`), at any depth, except those in `skip` (and
    theirs): children the person disposed. Returns the root handle."""
    book = HandleBook.of(ctx)
    handle = book.remember(await ctx.agents.resume(ResumeAgentOptions(
        resume_session_id=session_id)))
    pending = [(handle.agent, child) for child in _children_of(headers, session_id)]
    while pending:
        parent, child_id = pending.pop(0)
        if child_id in skip or parent.ctx.agents.get(child_id) is not None:
            continue
        child = book.remember(await parent.ctx.agents.resume(ResumeAgentOptions(
            resume_session_id=child_id)))
        pending.extend((child.agent, grand) for grand in _children_of(headers, child_id))
    return handle
