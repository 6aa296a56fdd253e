"""The tools every loop agent gets: sub-agents, messaging them, and read-only workspace access.

Nothing here writes files or runs commands: a model can delegate and read,
never change the user's machine without the user.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dsh_tui.harness import (
    AgentOptions,
    CreateAgentOptions,
    fold_consumed_work,
    message_text,
    user_message,
)
from dsh_tui.harness.names import child_session_id, claim_name
from dsh_tui.harness.persistence.errors import SessionLogError

from .tools import Tool, ToolCall, ToolOutput

MAX_READ_BYTES = 200_000
MAX_LIST_ENTRIES = 500


def last_answer(events: Any) -> str:
    """The text of the last non-interrupted assistant message in `events`."""
    for event in reversed(list(events)):
        if event.type == "assistant/message" and not event.data.get("interrupted"):
            text = message_text(event.data.get("message") or {})
            if text.strip():
                return text
    return ""


def set_title(session: Any, title: str) -> None:
    session.append("session/title", {"title": title, "messageSeqs": [],
                                     "source": {"kind": "user"}})


def _argument(call: ToolCall, name: str, kind: type, default: Any = ...) -> Any:
    args = call.arguments if isinstance(call.arguments, Mapping) else {}
    if name not in args:
        if default is ...:
            raise ValueError(f'missing required argument "{name}"')
        return default
    value = args[name]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ValueError(f'argument "{name}" must be a {kind.__name__}')
    return value


def _outcome_text(child: Any, boundary: int) -> tuple[str, bool]:
    events = child.session.events[boundary:]
    outcome = fold_consumed_work(events)
    end = outcome.get("end")
    answer = last_answer(events)
    reason = (end.data.get("reason") or {}) if end is not None else {}
    kind = reason.get("kind")
    if kind == "error":
        error = reason.get("error") or {}
        return f"Sub-agent {child.id} failed: {error.get('message', 'unknown error')}", True
    if kind == "aborted":
        cause = (reason.get("reason") or {}).get("kind", "unknown")
        prefix = f"Sub-agent {child.id} was cancelled ({cause})"
        return (f"{prefix}. Partial answer:\n{answer}" if answer else prefix + "."), True
    if kind == "blocked":
        return f"Sub-agent {child.id} was blocked before it could work.", True
    if outcome.get("dropped_unrun"):
        answer += "\n(note: some queued work was cancelled before it ran)"
    return answer or f"Sub-agent {child.id} finished without an answer.", False


def _log_problem(ctx: Any, child: Any) -> str | None:
    """Why `child`'s log cannot be created (None: it is on disk, or nothing persists). Asked
    before the task is sent, so the model hears of a child that could not be saved as a
    failed spawn; the child is then forgotten, not left to fail every write."""
    persistence = getattr(ctx.registry, "persistence", None)
    create = getattr(persistence, "create_log", None)
    if create is None:
        return None
    try:
        create(child.session)
    except (OSError, SessionLogError) as error:
        forget = getattr(persistence, "forget", None)
        if forget is not None:
            forget(child.session)
        return getattr(error, "strerror", None) or str(error)
    return None


async def spawn_agent(call: ToolCall) -> ToolOutput:
    task = _argument(call, "task", str)
    if not task.strip():
        raise ValueError('argument "task" must not be empty')
    name = _argument(call, "name", str, "")
    parent = call.agent
    header = parent.session.header
    depth = int(header.get("delegationDepth", 0) or 0) + 1
    child_id = child_session_id(parent.id, name)
    meta: dict[str, Any] = {"parentSession": parent.id, "origin": "subagent",
                            "delegationDepth": depth}
    if header.get("cwd"):
        meta["cwd"] = header["cwd"]
    options = parent.options
    child_options = AgentOptions(provider=options.provider, model=options.model,
                                 max_tokens=options.max_tokens,
                                 reasoning_effort=options.reasoning_effort,
                                 temperature=options.temperature)
    # Unique in the workspace and never a disposed agent's: "researcher", "researcher 2"…
    title = claim_name(parent.ctx, name or (task if len(task) <= 40 else task[:39] + "…"),
                       child_id)

    def setup(child_ctx: Any) -> None:
        set_title(child_ctx.agent.session, title)

    handle = await parent.ctx.agents.create(CreateAgentOptions(
        session_id=child_id, agent_options=child_options, meta=meta, signal=call.signal,
        setup=setup))
    child = handle.agent
    problem = _log_problem(parent.ctx, child)
    if problem is not None:
        await handle.dispose()
        return ToolOutput.text(f"Error: sub-agent {title!r} was not started: its session log "
                               f"cannot be saved ({problem})", is_error=True)
    boundary = child.session.seq
    # Stopping the parent stops the child, never empties its inbox: what the person queued
    # for it stays pending (only ctrl+l, a removal, a clear and dispose throw work away).
    remove = call.signal.add_listener(lambda _reason: child.cancel({"kind": "parent"},
                                                                   keep_inbox=True))
    try:
        child.followup(user_message(task, source={"kind": "plugin", "plugin": "spawn_agent",
                                                  "form": "relay"}))
        await child.when_idle()
    finally:
        remove()
    text, failed = _outcome_text(child, boundary)
    return ToolOutput.text(text, is_error=failed, meta={"agentId": child.id})


async def send_to_agent(call: ToolCall) -> ToolOutput:
    agent_id = _argument(call, "agent_id", str)
    text = _argument(call, "message", str)
    mode = _argument(call, "mode", str, "followup")
    wait = _argument(call, "wait", bool, mode != "inject")
    registry = call.ctx.agents
    target = registry.get(agent_id)
    if target is None or not registry.is_owned_by(agent_id, call.agent):
        owned = [a.id for a in registry.children_of(call.agent)]
        return ToolOutput.text(f'Error: "{agent_id}" is not an agent you own '
                               f"(yours: {', '.join(owned) or 'none'})", is_error=True)
    source = {"kind": "plugin", "plugin": "send_to_agent", "form": "relay"}
    message = user_message(text, source=source)
    boundary = target.session.seq
    if mode == "followup":
        target.followup(message)
    elif mode == "steer":
        target.steer(message)
    elif mode == "inject":
        target.inject(message)
    else:
        raise ValueError('argument "mode" must be "followup", "steer" or "inject"')
    if not wait:
        return ToolOutput.text(f"Queued a {mode} for {agent_id}.")
    remove = call.signal.add_listener(lambda _reason: target.cancel({"kind": "parent"},
                                                                     keep_inbox=True))
    try:
        await target.when_idle()
    finally:
        remove()
    answer, failed = _outcome_text(target, boundary)
    return ToolOutput.text(answer, is_error=failed)


async def list_agents(call: ToolCall) -> ToolOutput:
    registry = call.ctx.agents
    rows = []
    for agent in registry.children_of(call.agent):
        rows.append({"id": agent.id, "status": agent.status,
                     "pendingNextTurn": len(agent.inbox.next_turn),
                     "pendingNextStep": len(agent.inbox.next_step)})
    return ToolOutput.text(json.dumps({"self": call.agent.id, "children": rows}, indent=1))


class Workspace:
    """A directory the read-only tools are confined to (symlinks resolved)."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root).resolve()

    def resolve(self, relative: str) -> Path:
        candidate = (self.root / relative).resolve()
        if candidate != self.root and self.root not in candidate.parents:
            raise ValueError(f'path "{relative}" is outside the working directory')
        return candidate

    def tools(self) -> list[Tool]:
        async def read_file(call: ToolCall) -> ToolOutput:
            path = self.resolve(_argument(call, "path", str))
            if not path.is_file():
                return ToolOutput.text(f'Error: "{path.relative_to(self.root)}" is not a file',
                                       is_error=True)
            data = path.read_bytes()[:MAX_READ_BYTES + 1]
            if b"\0" in data[:8192]:
                return ToolOutput.text(f"Error: {path.name} looks binary; not shown",
                                       is_error=True)
            text = data[:MAX_READ_BYTES].decode("utf-8", errors="replace")
            if len(data) > MAX_READ_BYTES:
                text += f"\n… (truncated at {MAX_READ_BYTES} bytes)"
            return ToolOutput.text(text)

        async def list_dir(call: ToolCall) -> ToolOutput:
            path = self.resolve(_argument(call, "path", str, "."))
            if not path.is_dir():
                return ToolOutput.text("Error: not a directory", is_error=True)
            entries = sorted(path.iterdir(), key=lambda p: (not p.is_dir(), p.name.lower()))
            lines = [f"{p.name}/" if p.is_dir() else p.name for p in entries[:MAX_LIST_ENTRIES]]
            if len(entries) > MAX_LIST_ENTRIES:
                lines.append(f"… {len(entries) - MAX_LIST_ENTRIES} more")
            return ToolOutput.text("\n".join(lines) or "(empty)")

        path_schema = {"type": "object", "properties": {
            "path": {"type": "string", "description": "Path relative to the working directory"}},
            "required": ["path"]}
        return [
            Tool("read_file", "Read a UTF-8 text file inside the working directory.",
                 path_schema, read_file, concurrency_safe=True),
            Tool("list_dir", "List a directory inside the working directory.",
                 {"type": "object", "properties": {"path": {"type": "string"}}}, list_dir,
                 concurrency_safe=True),
        ]


def agent_tools() -> list[Tool]:
    return [
        Tool("spawn_agent",
             "Start a sub-agent you own, give it a task, wait for it and return its answer.",
             {"type": "object", "properties": {
                 "task": {"type": "string", "description": "What the sub-agent should do"},
                 "name": {"type": "string", "description": "A short name for the sub-agent"}},
              "required": ["task"]},
             spawn_agent, concurrency_safe=True),
        Tool("send_to_agent",
             "Send a follow-up, steering or injected context to an agent you own.",
             {"type": "object", "properties": {
                 "agent_id": {"type": "string"},
                 "message": {"type": "string"},
                 "mode": {"type": "string", "enum": ["followup", "steer", "inject"]},
                 "wait": {"type": "boolean"}},
              "required": ["agent_id", "message"]},
             send_to_agent),
        Tool("list_agents", "List the agents you own with their status and pending work.",
             {"type": "object", "properties": {}}, list_agents, concurrency_safe=True),
    ]


def builtin_tools(workspace: str | os.PathLike[str] | None = None) -> list[Tool]:
    return [*agent_tools(), *Workspace(workspace or os.getcwd()).tools()]
