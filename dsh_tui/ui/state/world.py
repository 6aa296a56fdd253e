"""UI-side helpers over the public registry calls: create, spawn, resume, dispose all.

Disposing needs no handle: `ctx.agents.dispose(id)` disposes any live agent the way its
creator's handle would, so the app and `leave` dispose through the registry.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from dsh_tui.harness import AgentOptions, CreateAgentOptions, ResumeAgentOptions
from dsh_tui.harness.agent import Agent, AgentHandle, Setup
from dsh_tui.harness.names import child_session_id
from dsh_tui.harness.persistence.listing import creation_order
from dsh_tui.harness.persistence.writer import ROUTE_TYPE
from dsh_tui.harness.surface import ContextSurface

if TYPE_CHECKING:
    from dsh_tui.harness.context import Context


async def dispose_all(ctx: ContextSurface) -> None:
    """Dispose every live agent of this world: each root through `ctx.agents.dispose`,
    newest first (owned children go with their owner). Disposal discards inboxes: on the
    way out of the app the world stops saving first (`dsh_tui.compose.leave`), so this only
    frees memory and never writes a discard to a session file."""
    for root in ctx.agents.roots()[::-1]:
        done = ctx.agents.dispose(root.id)
        if done is None:
            continue  # registered without a disposer: its scope goes with the world's
        try:
            await done
        except Exception:
            pass  # leaving: one agent's failed teardown must not keep the others alive


def new_agent_id(prefix: str = "agent") -> str:
    """A fresh id (`agent-1a2b3c4d`): the agent's and its session's, unique enough for one data dir."""
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def _title_setup(title: str | None, options: AgentOptions) -> Setup | None:
    if not title:
        return None
    route = {key: value for key, value in (("provider", options.provider),
                                           ("model", options.model)) if value}

    def setup(child_ctx: Context) -> None:
        # The display name is the session's latest `session/title` (the same record the
        # spawn_agent tool writes), so it survives a restart and shows in `dsh-tui view`.
        # The route goes first: an agent never sent a message has no `request/header`,
        # and a named agent comes back with its workspace (issue 25) on the route it had.
        session = child_ctx.agent.session
        if route:
            session.append(ROUTE_TYPE, route, ignorable=True)
        session.append("session/title", {"title": title, "messageSeqs": [],
                                         "source": {"kind": "user"}})

    return setup


async def create_agent(agents_ctx: ContextSurface, *, provider: str | None, model: str | None,
                       title: str | None = None, session_id: str | None = None,
                       meta: Mapping[str, Any] | None = None,
                       options: AgentOptions | None = None) -> AgentHandle:
    """Create an agent through `agents_ctx.agents` (an agent's ctx makes an owned child)
    and file its handle; returns the handle. `options` (a route's, with its sampling
    settings) wins over `provider`/`model`."""
    agent_options = options or AgentOptions(provider=provider, model=model)
    handle = await agents_ctx.agents.create(CreateAgentOptions(
        session_id=session_id or new_agent_id(), agent_options=agent_options,
        meta=dict(meta) if meta else None, setup=_title_setup(title, agent_options)))
    return handle


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
                              title=title, session_id=child_session_id(parent.id, "child"),
                              meta=meta, options=replace(options, extra=dict(options.extra)))


def _children_of(headers: list[Mapping[str, Any]], session_id: str) -> list[str]:
    """`session_id`'s sub-agent sessions in the order they were made (listings put the
    newest first), so the tree reopens as it was left."""
    children = [h for h in headers
                if h.get("parentSession") == session_id and h.get("origin") == "subagent"
                and h.get("id")]
    children.sort(key=creation_order)
    return [str(h["id"]) for h in children]


async def resume_tree(ctx: ContextSurface, session_id: str,
                      headers: list[Mapping[str, Any]],
                      skip: frozenset[str] | set[str] = frozenset()) -> AgentHandle:
    """Resume `session_id` as a root, then its sub-agent sessions as its owned children
    (through the parent's `agent.ctx.agents`), at any depth, except those in `skip` (and
    theirs): children the person disposed. Returns the root handle."""
    handle = await ctx.agents.resume(ResumeAgentOptions(resume_session_id=session_id))
    pending = [(handle.agent, child) for child in _children_of(headers, session_id)]
    while pending:
        parent, child_id = pending.pop(0)
        if child_id in skip or parent.ctx.agents.get(child_id) is not None:
            continue
        child = await parent.ctx.agents.resume(ResumeAgentOptions(resume_session_id=child_id))
        pending.extend((child.agent, grand) for grand in _children_of(headers, child_id))
    return handle
