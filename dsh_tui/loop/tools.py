"""Tools the loop offers a model, and how one step's tool calls are executed.

Calls run as bounded parallel pools (only calls whose tool says it is safe to
overlap) or as exclusive barriers; whatever the overlap, `tool/call` records
are written when a call starts and `tool/result` records (with the contexts a
result adds) in model order. A cancel stops new starts, lets started calls
finish, and records a synthetic aborted result for every call never started.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dsh_tui.harness import UserMessage, error_chain
from dsh_tui.harness.events import agent_events
from dsh_tui.harness.signal import Cancelled, CancelSignal

if TYPE_CHECKING:
    from dsh_tui.harness import Context, Session

log = logging.getLogger("dsh_tui.loop.tools")

DEFAULT_MAX_PARALLEL_TOOL_CALLS = 10
ABORTED_BEFORE_DISPATCH = "ABORTED_BEFORE_DISPATCH"


@dataclass(eq=False)
class ToolCall:
    """One call as a tool body sees it."""

    call_id: str
    name: str
    arguments: Any  # parsed JSON ('' -> {}; invalid JSON -> the raw string)
    raw_arguments: str
    agent: Any
    signal: CancelSignal
    ctx: Context
    turn: int
    step: int
    deferred_contexts: list[UserMessage] = field(default_factory=list)

    def defer_context(self, message: UserMessage) -> None:
        """Queue context for the next step (added to `next-step` after this result)."""
        self.deferred_contexts.append(UserMessage.from_json(message))


@dataclass
class ToolOutput:
    """What a tool body returns (a plain str or list of blocks is also accepted)."""

    content: list[dict[str, Any]]
    is_error: bool = False
    error: dict[str, str] | None = None  # {name, code}, recorded on tool/result
    meta: Any = None
    additional_contexts: list[UserMessage] = field(default_factory=list)
    concludes_turn: bool = False

    @staticmethod
    def text(text: str, *, is_error: bool = False, **kwargs: Any) -> ToolOutput:
        return ToolOutput([{"type": "text", "text": text}], is_error=is_error, **kwargs)


ToolBody = Callable[[ToolCall], Awaitable[Any] | Any]


@dataclass(eq=False)
class Tool:
    """A tool definition: schema for the model, body for the loop."""

    name: str
    description: str
    parameters: dict[str, Any]
    run: ToolBody
    concurrency_safe: bool | Callable[[Any], bool] = False

    def schema(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "parameters": self.parameters}

    def is_parallel(self, arguments: Any) -> bool:
        safe = self.concurrency_safe
        if callable(safe):
            try:
                return safe(arguments) is True
            except Exception:
                return False
        return safe is True


def tool(name: str, description: str, parameters: Mapping[str, Any] | None = None, *,
         concurrency_safe: bool = False) -> Callable[[ToolBody], Tool]:
    """Decorator: turn an (async) function of a ToolCall into a Tool."""

    def wrap(body: ToolBody) -> Tool:
        return Tool(name, description, dict(parameters or {"type": "object", "properties": {}}),
                    body, concurrency_safe)

    return wrap


class ToolRegistry:
    """The tools of one world: global ones plus tools scoped to one agent."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: list[tuple[Tool, Any]] = []
        for item in tools:
            self.add(item)

    def add(self, item: Tool, *, agent: Any = None) -> Callable[[], None]:
        entry = (item, agent)
        self._tools.append(entry)

        def remove() -> None:
            if entry in self._tools:
                self._tools.remove(entry)

        return remove

    def visible(self, agent: Any) -> list[Tool]:
        """Tools the agent sees; a scoped tool overrides a global one of the same name."""
        chosen: dict[str, Tool] = {}
        for item, scope in self._tools:
            if scope is None and item.name not in chosen:
                chosen[item.name] = item
        for item, scope in self._tools:
            if scope is agent and agent is not None:
                chosen[item.name] = item
        return list(chosen.values())

    def find(self, agent: Any, name: str) -> Tool | None:
        for item in self.visible(agent):
            if item.name == name:
                return item
        return None


def parse_arguments(raw: str) -> Any:
    if not raw:
        return {}
    try:
        return json.loads(raw)
    except (ValueError, TypeError):
        return raw


def _normalise_output(value: Any) -> ToolOutput:
    if isinstance(value, ToolOutput):
        return value
    if value is None:
        return ToolOutput([])
    if isinstance(value, str):
        return ToolOutput.text(value)
    if isinstance(value, Mapping) and "type" in value:
        return ToolOutput([dict(value)])
    if isinstance(value, Sequence) and all(isinstance(b, Mapping) for b in value):
        return ToolOutput([dict(b) for b in value])
    return ToolOutput.text(json.dumps(value, ensure_ascii=False, default=str))


def tool_result_message(call_id: str, content: list[dict[str, Any]], is_error: bool
                        ) -> dict[str, Any]:
    return {
        "source": {"kind": "tool", "callId": call_id},
        "content": [{"type": "tool-result", "toolCallId": call_id, "content": content,
                     "isError": bool(is_error)}],
        "role": "user",
        "id": str(uuid.uuid4()),
    }


class ToolExecutor:
    """Runs one step's calls for one agent (pre/post hooks, pool, ordered commits)."""

    def __init__(self, *, agent: Any, root_ctx: Context, registry: ToolRegistry,
                 max_parallel: int, turn: int, step: int, signal: CancelSignal,
                 accept_context: Callable[[UserMessage], None]) -> None:
        self.agent = agent
        self.session: Session = agent.session
        self.root_ctx = root_ctx
        self.registry = registry
        self.max_parallel = max(1, max_parallel)
        self.turn = turn
        self.step = step
        self.signal = signal
        self.accept_context = accept_context
        self.events = agent_events(root_ctx, agent)

    def _append_call(self, block: Mapping[str, Any]) -> int:
        return self.session.append("tool/call", {
            "turn": self.turn, "step": self.step, "callId": block["id"], "name": block["name"],
            "arguments": block["arguments"]}).seq

    def _append_result(self, block: Mapping[str, Any], output: ToolOutput, call_seq: int) -> None:
        data: dict[str, Any] = {
            "turn": self.turn, "step": self.step,
            "message": tool_result_message(block["id"], output.content, output.is_error)}
        if output.error:
            data["error"] = dict(output.error)
        if output.meta is not None:
            data["meta"] = output.meta
        self.session.append("tool/result", data, surface_op="append",
                            source_event_seqs=[call_seq])

    def _append_skipped(self, block: Mapping[str, Any]) -> None:
        seq = self._append_call(block)
        self._append_result(block, ToolOutput.text(
            "Error: tool call aborted before dispatch", is_error=True,
            error={"name": "AbortError", "code": ABORTED_BEFORE_DISPATCH}), seq)

    def _make_call(self, block: Mapping[str, Any]) -> ToolCall:
        raw = block.get("arguments", "")
        return ToolCall(call_id=block["id"], name=block["name"], arguments=parse_arguments(raw),
                        raw_arguments=raw, agent=self.agent, signal=self.signal,
                        ctx=self.agent.ctx, turn=self.turn, step=self.step)

    def _is_parallel(self, call: ToolCall) -> bool:
        found = self.registry.find(self.agent, call.name)
        return found is not None and found.is_parallel(call.arguments)

    async def run(self, blocks: Sequence[Mapping[str, Any]]) -> bool:
        """Execute `blocks` in model order; returns True when a result concluded the turn."""
        calls = [self._make_call(block) for block in blocks]
        concluded = False
        index = 0
        while index < len(calls):
            parallel = self._is_parallel(calls[index])
            group = [index]
            if parallel:
                probe = index + 1
                while probe < len(calls) and self._is_parallel(calls[probe]):
                    group.append(probe)
                    probe += 1
            started, group_concluded, aborted = await self._run_group(
                [(blocks[i], calls[i]) for i in group])
            concluded = concluded or group_concluded
            index += started
            if aborted:
                for block in blocks[index:]:
                    self._append_skipped(block)
                return concluded
        return concluded

    async def _run_group(self, group: list[tuple[Mapping[str, Any], ToolCall]]
                         ) -> tuple[int, bool, bool]:
        slots: list[ToolOutput | None] = [None] * len(group)
        call_seqs = [-1] * len(group)
        in_flight: dict[asyncio.Future[Any], int] = {}
        next_to_start = 0
        committed = 0
        aborted = self.signal.aborted
        concluded = False

        def commit_ready() -> None:
            nonlocal committed, concluded
            while committed < len(group) and slots[committed] is not None:
                block, call = group[committed]
                output = slots[committed]
                assert output is not None
                self._append_result(block, output, call_seqs[committed])
                for context in [*output.additional_contexts, *call.deferred_contexts]:
                    self.accept_context(context)
                concluded = concluded or output.concludes_turn
                committed += 1

        try:
            while True:
                while not aborted and next_to_start < len(group) and \
                        len(in_flight) < self.max_parallel:
                    position = next_to_start
                    block, call = group[position]
                    call_seqs[position] = self._append_call(block)
                    next_to_start += 1
                    future = asyncio.ensure_future(self._execute(call))
                    in_flight[future] = position
                    if len(group) == 1 or not self._is_parallel(call):
                        break  # an exclusive call runs alone
                    if self.signal.aborted:
                        aborted = True
                if not in_flight:
                    break
                done, _ = await asyncio.wait(in_flight, return_when=asyncio.FIRST_COMPLETED)
                for future in done:
                    position = in_flight.pop(future)
                    slots[position] = future.result()
                commit_ready()
                if self.signal.aborted:
                    aborted = True
        except BaseException:
            if in_flight:
                await asyncio.wait(in_flight)
            raise
        if aborted:
            for block, _call in group[next_to_start:]:
                self._append_skipped(block)
            return len(group), concluded, True
        return next_to_start, concluded, False

    async def _execute(self, call: ToolCall) -> ToolOutput:
        """One call through the pre-execute gate, the body and the post-execute waterfall."""
        started = time.monotonic()
        fields = {"call": call, "name": call.name, "arguments": call.arguments,
                  "turn": call.turn, "step": call.step, "signal": call.signal}
        try:
            decision = await self.events.waterfall("tools/pre-execute", fields,
                                                   lambda: {"kind": "allow"})
            if isinstance(decision, Mapping) and decision.get("kind") == "deny":
                reason = str(decision.get("reason") or "denied by policy")
                output = ToolOutput.text(f"Error: {reason}", is_error=True,
                                         error={"name": "ToolDeniedError", "code": "DENIED"})
            else:
                output = await self._run_body(call)
            result_fields = {**fields, "result": output}
            post = await self.events.waterfall("tools/post-execute", result_fields,
                                               lambda: {"kind": "accept"})
            output = _apply_post_decision(output, post)
        except Cancelled:
            output = ToolOutput.text("Error: tool call aborted", is_error=True,
                                     error={"name": "AbortError", "code": "ABORTED"})
        except Exception as error:  # a broken hook must not crash the turn
            output = ToolOutput.text(f"Error: {error_chain(error)}", is_error=True,
                                     error={"name": type(error).__name__, "code": "TOOL_ERROR"})
        log.debug("tool %s (%s) took %.3fs", call.name, call.call_id, time.monotonic() - started)
        return output

    async def _run_body(self, call: ToolCall) -> ToolOutput:
        found = self.registry.find(self.agent, call.name)
        if found is None:
            known = ", ".join(sorted(t.name for t in self.registry.visible(self.agent))) or "none"
            return ToolOutput.text(f'Error: unknown tool "{call.name}" (available: {known})',
                                   is_error=True,
                                   error={"name": "ToolNotFoundError", "code": "UNKNOWN_TOOL"})
        try:
            result = found.run(call)
            if inspect.isawaitable(result):
                result = await result
            return _normalise_output(result)
        except Cancelled:
            raise
        except (ValueError, TypeError, KeyError) as error:
            return ToolOutput.text(f"Error: {error_chain(error)}", is_error=True,
                                   error={"name": type(error).__name__, "code": "INVALID_ARGS"})
        except Exception as error:
            return ToolOutput.text(f"Error: {error_chain(error)}", is_error=True,
                                   error={"name": type(error).__name__, "code": "TOOL_ERROR"})


def _apply_post_decision(output: ToolOutput, decision: Any) -> ToolOutput:
    if not isinstance(decision, Mapping):
        return output
    extra = [UserMessage.from_json(m) for m in decision.get("additionalContexts") or ()]
    if decision.get("kind") == "block":
        feedback = list(decision.get("feedback") or [{"type": "text", "text": "blocked"}])
        return ToolOutput(feedback, is_error=True, error={"name": "ToolBlockedError",
                                                          "code": "BLOCKED"},
                          additional_contexts=[*output.additional_contexts, *extra])
    if decision.get("content") is not None:
        output = ToolOutput(list(decision["content"]), output.is_error, output.error, output.meta,
                            list(output.additional_contexts), output.concludes_turn)
    if extra:
        output.additional_contexts = [*output.additional_contexts, *extra]
    return output
