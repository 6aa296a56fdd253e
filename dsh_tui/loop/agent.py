"""LoopAgent: the one concrete Agent — a turn/step driver over one session.

Phases: idle, maintenance (status stays idle) and running. A waking send while
idle opens the turn, writes `turn/start` and claims the inbox before it
returns; the rest of the turn runs as a task in the agent's initiator scope.
Every boundary checks the turn's cancel signal, and every turn that opened is
closed with exactly one `turn/end`, whatever happens in between.
"""

from __future__ import annotations

import asyncio
import logging
import math
import uuid
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from dsh_tui.harness import (
    AgentOptions,
    BlockAssembler,
    Inbox,
    LlmError,
    Session,
    UserMessage,
)
from dsh_tui.harness.agent import USER_CAUSE
from dsh_tui.harness.eager import start_eager
from dsh_tui.harness.events import agent_events
from dsh_tui.harness.holds import DEFAULT_HOLD_LIMIT, HoldBook, InboxHold
from dsh_tui.harness.inbox import InboxTarget
from dsh_tui.harness.llm_types import failure_of, make_failure
from dsh_tui.harness.session import canonical_header
from dsh_tui.harness.signal import Cancelled, CancelSignal

from .prompt import Assembly
from .router import PreparedCall
from .tools import ToolExecutor

if TYPE_CHECKING:
    from .runtime import LoopRuntime

log = logging.getLogger("dsh_tui.loop.agent")



class _Phase:
    __slots__ = ("abort", "kind", "last_turn", "step", "stop_after", "turn", "wake_requested")

    def __init__(self, kind: str, *, abort: CancelSignal | None = None, last_turn: int = 0,
                 turn: int = 0, step: int = 0) -> None:
        self.kind = kind
        self.abort = abort
        self.last_turn = last_turn
        self.turn = turn
        self.step = step
        self.wake_requested = False
        self.stop_after: Mapping[str, Any] | None = None
        """The cause of a soft stop asked for (`stop_after_step`), until the driver exits."""


def _is_disposed(reason: Any) -> bool:
    return isinstance(reason, Mapping) and reason.get("kind") == "disposed"


def _header_equals(a: Mapping[str, Any] | None, b: Mapping[str, Any]) -> bool:
    if a is None:
        return False
    from dsh_tui.harness.jsonvalue import json_equal

    return json_equal(canonical_header(a), canonical_header(b))


def _request_proposal(header: Mapping[str, Any]) -> dict[str, Any]:
    config = dict(header.get("config") or {})
    defaults = header.get("adapterDefaults") or {}
    if defaults.get("reasoningEffort") is True:
        config.pop("reasoningEffort", None)
    if defaults.get("maxTokens") is True:
        config.pop("maxTokens", None)
    return config


class LoopAgent:
    """An agent driven by the loop: `send`/`followup`/`steer`/`inject`, `cancel`, `when_idle`."""

    def __init__(self, runtime: LoopRuntime, session: Session, options: AgentOptions) -> None:
        self.id = session.id
        self.options = options
        self.session = session
        self._runtime = runtime
        self._events = agent_events(runtime.ctx, self)
        self.inbox = Inbox(session, self)
        self._phase = _Phase("idle", last_turn=session.last_turn())
        self.ctx = runtime.ctx.derive(self)
        self._activity_done: asyncio.Future[None] | None = None
        self._request_header_logged = False
        self._stream_task: asyncio.Task[Any] | None = None
        self._holds = HoldBook(self._hold_ended)
        self._hold_changed: asyncio.Event | None = None

    # -- inbox notifications (called by Inbox after the projection changed) -------------------

    def inserted(self, message: UserMessage) -> None:
        self._events.emit("agent/inbox/inserted", {"message": message})
        self._poke_holds()  # a move may take a held item out of the claim's reach

    def discarded(self, message: UserMessage) -> None:
        self._events.emit("agent/inbox/discarded", {"message": message})
        self._poke_holds()

    def claimed(self, message: UserMessage, turn: int) -> None:
        self._events.emit("agent/inbox/claimed", {"message": message, "turn": turn})

    # -- edit holds (§3.8) ----------------------------------------------------------------------

    @property
    def holds(self) -> tuple[InboxHold, ...]:
        """Active edit holds, oldest first."""
        return self._holds.active

    def hold(self, message_id: str, *, limit: float | None = None) -> InboxHold | None:
        """Hold the claim that would take pending `message_id` until the hold is released
        (or has lapsed `limit` seconds after the driver began waiting on it). None, with
        nothing held, when the id is not pending. Emits `agent/inbox/held`."""
        message = self.inbox.get(message_id)
        if message is None:
            return None
        hold = self._holds.place(message_id, DEFAULT_HOLD_LIMIT if limit is None else limit)
        self._events.emit("agent/inbox/held", {"message": message, "hold": hold})
        self._poke_holds()  # a driver already waiting on another hold now waits on this too
        return hold

    def _hold_ended(self, hold: InboxHold, reason: str) -> None:
        self._events.emit("agent/inbox/released", {"message_id": hold.message_id,
                                                   "hold": hold, "reason": reason})
        self._poke_holds()

    def _poke_holds(self) -> None:
        changed = self._hold_changed
        if changed is not None:
            changed.set()

    def _claim_ids(self, target: InboxTarget) -> list[str]:
        """The ids the claim of `target` would take now (§2.3)."""
        ids = [message.id for message in self.inbox.next_step]
        if target == "next-turn" and self.inbox.next_turn:
            ids.append(self.inbox.next_turn[0].id)
        return ids

    async def _wait_for_holds(self, signal: CancelSignal, target: InboxTarget, turn: int,
                              step: int) -> None:
        """Wait at this boundary while a hold names an item the claim would take: until
        each such hold is released, has lapsed, or no longer blocks (its item left the
        claim's reach); a cancel ends the wait. Durable `inbox/hold-wait` and
        `inbox/hold-end` bracket it, so the wait is visible live and in a stored log."""
        book = self._holds
        blocking = book.blocking(self._claim_ids(target))
        if not blocking:
            return
        book.begin_wait(blocking)
        clock = book.clock
        began = clock()
        remaining = min(hold.remaining(began) or 0.0 for hold in blocking)
        self.session.append("inbox/hold-wait", {
            "turn": turn, "step": step, "held": sorted({h.message_id for h in blocking}),
            "limitMs": int(remaining * 1000)}, ignorable=True)
        reason = "released"
        changed = self._hold_changed = asyncio.Event()
        remove = signal.add_listener(lambda _reason: changed.set())
        try:
            while True:
                signal.throw_if_aborted()
                lapsed = book.lapse_due()
                blocking_now = book.blocking(self._claim_ids(target))
                if not blocking_now:
                    # what ended the wait: a lapse, a release, or the item leaving the
                    # claim's reach (moved or removed) while its hold stays
                    reason = "lapsed" if lapsed else "released" if not any(
                        hold.active for hold in blocking) else "unblocked"
                    break
                blocking = blocking_now
                book.begin_wait(blocking)  # a newly held item joins the countdown
                wait = min(hold.remaining() or 0.0 for hold in blocking)
                changed.clear()
                try:
                    await asyncio.wait_for(changed.wait(), timeout=wait + 0.001)
                except TimeoutError:
                    pass
        except BaseException:
            reason = "aborted"
            raise
        finally:
            remove()
            if self._hold_changed is changed:
                self._hold_changed = None
            waited = max(0, int((clock() - began) * 1000))
            try:
                self.session.append("inbox/hold-end", {"turn": turn, "step": step,
                                                       "reason": reason, "waitedMs": waited},
                                    ignorable=True)
            except Exception:
                if reason != "aborted":
                    raise

    # -- state --------------------------------------------------------------------------------

    @property
    def status(self) -> str:
        return "running" if self._phase.kind == "running" else "idle"

    @property
    def current_turn(self) -> int:
        phase = self._phase
        return phase.turn if phase.kind == "running" else phase.last_turn

    @property
    def current_step(self) -> int:
        return self._phase.step if self._phase.kind == "running" else 0

    @property
    def phase(self) -> str:
        return self._phase.kind

    def _set_phase(self, phase: _Phase) -> None:
        before = self.status
        self._phase = phase
        after = self.status
        if after != before:
            self._events.emit("agent/status", {"status": after})

    # -- sending ------------------------------------------------------------------------------

    def send(self, message: UserMessage | Mapping[str, Any], target: InboxTarget,
             wakeup: bool) -> None:
        phase = self._phase
        waking_after_abort = bool(wakeup and phase.kind != "idle" and phase.abort is not None
                                  and phase.abort.aborted)
        resolved: InboxTarget = "next-turn" if waking_after_abort else target
        self.inbox.splice(resolved, math.inf, 0, [message])
        if wakeup:
            self._wake_driver(waking_after_abort)

    def followup(self, message: UserMessage | Mapping[str, Any]) -> None:
        self.send(message, "next-turn", True)

    def steer(self, message: UserMessage | Mapping[str, Any]) -> None:
        self.send(message, "next-step", True)

    def inject(self, message: UserMessage | Mapping[str, Any]) -> None:
        self.send(message, "next-step", False)

    def wake(self) -> bool:
        """Run what is already pending (e.g. kept by `cancel(keep_inbox=True)`), in order.

        The same wake a waking send performs, without adding a message: idle starts a
        turn, maintenance latches, a live driver claims at its next boundary anyway.
        Returns False (and does nothing) when nothing is pending.
        """
        if not self.inbox.has_pending:
            return False
        self._wake_driver()
        return True

    def cancel(self, cause: Mapping[str, Any] | None = None, *, keep_inbox: bool = False) -> None:
        cause = dict(USER_CAUSE) if cause is None else cause  # a fresh object per cancel
        if not keep_inbox:
            self.inbox.clear()
            if self._phase.kind != "idle":
                self._phase.wake_requested = False
        phase = self._phase
        if phase.kind != "idle" and phase.abort is not None:
            phase.abort.abort(cause)

    def stop_after_step(self, cause: Mapping[str, Any] | None = None) -> bool:
        """Stop at the next step boundary (docs/contract.md §3.8): the step in progress
        finishes, nothing more is claimed, pending work stays. False when not running."""
        phase = self._phase
        if phase.kind != "running" or phase.abort is None or phase.abort.aborted:
            return False
        if phase.stop_after is None:
            phase.stop_after = dict(USER_CAUSE) if cause is None else cause
        return True

    async def when_idle(self) -> None:
        while True:
            activity = self._activity_done
            if activity is None:
                return
            if not activity.done():
                await asyncio.shield(activity)
            if activity is self._activity_done:
                return

    def run_maintenance(self, task: Callable[[CancelSignal], Awaitable[Any]]) -> Awaitable[Any]:
        if self._phase.kind != "idle":
            raise RuntimeError(f'agent "{self.id}" already has active work')
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()
        maintenance = _Phase("maintenance", abort=CancelSignal(), last_turn=self._phase.last_turn)
        self._set_phase(maintenance)
        self._activity_done = done
        try:
            awaitable = task(maintenance.abort)  # type: ignore[arg-type]
        except BaseException as error:
            self._end_maintenance(maintenance, done)
            failed: asyncio.Future[Any] = loop.create_future()
            failed.set_exception(error)
            return failed

        async def finish() -> Any:
            try:
                return await awaitable
            finally:
                self._end_maintenance(maintenance, done)

        # Eager, like a JavaScript async function: an `async def` task body runs up to
        # its first suspension before run_maintenance returns.
        return start_eager(finish())

    def _end_maintenance(self, maintenance: _Phase, done: asyncio.Future[None]) -> None:
        self._set_phase(_Phase("idle", last_turn=maintenance.last_turn))
        if maintenance.wake_requested and self.inbox.has_pending:
            self._wake_driver()
        if not done.done():
            done.set_result(None)

    def _wake_driver(self, wake_after_abort: bool = False) -> None:
        phase = self._phase
        if phase.kind != "idle":
            reason = phase.abort.reason if phase.abort is not None else None
            if not _is_disposed(reason) and (phase.kind == "maintenance" or wake_after_abort):
                phase.wake_requested = True
            return
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._activity_done = done
        self._set_phase(_Phase("running", abort=CancelSignal(), turn=phase.last_turn))
        try:
            self._runtime.ctx.registry.initiator.run(self, lambda: self._kick(done), eager=True)
        except BaseException:
            # the initiator scope is closed (teardown): nothing can run any more
            if self._phase.kind == "running":
                self._set_phase(_Phase("idle", last_turn=self._phase.turn))
            if not done.done():
                done.set_result(None)
            raise

    # -- the driver ---------------------------------------------------------------------------

    async def _kick(self, done: asyncio.Future[None]) -> None:
        try:
            while await self._turn():
                pass
        except (Exception, asyncio.CancelledError):
            pass  # reported already (agent/error) or an expected cancellation
        finally:
            phase = self._phase
            if phase.kind == "running":
                wake = phase.wake_requested
                self._set_phase(_Phase("idle", last_turn=phase.turn))
                if wake and self.inbox.has_pending:
                    self._wake_driver()
            if not done.done():
                done.set_result(None)

    def _raise_reported(self, error: BaseException) -> None:
        phase = self._phase
        turn = phase.turn if phase.kind == "running" else phase.last_turn
        step = phase.step if phase.kind == "running" else 0
        self._events.emit("agent/error", {"turn": turn, "step": step, "error": error})
        raise error

    async def _turn(self) -> bool:
        phase = self._phase
        if phase.kind != "running" or phase.abort is None:
            self._raise_reported(RuntimeError(f'agent "{self.id}": turn without driver'))
        signal = phase.abort
        assert signal is not None
        signal.throw_if_aborted()
        turn = phase.turn + 1
        try:
            self.session.append("turn/start", {"turn": turn})
        except Exception as error:
            self._raise_reported(error)
        phase.turn = turn
        turn_ends: dict[str, Any] | None = None
        target: InboxTarget = "next-turn"
        try:
            while True:
                signal.throw_if_aborted()
                step = phase.step + 1
                decision = await self._pre_step(signal, target, turn, step)
                if decision is None:
                    turn_ends = {"kind": "blocked"}
                    return False
                messages, assembly = decision
                if turn_ends is not None and not messages:
                    break
                if phase.step == 0 and not messages:
                    turn_ends = {"kind": "completed"}
                    return False
                signal.throw_if_aborted()
                self.session.append("step/start", {"turn": turn, "step": step})
                phase.step = step
                try:
                    for message in messages:
                        self.session.append("user/message", message.to_json(), surface_op="append")
                    step_end = await self._step(signal, turn, step, assembly)
                    if turn_ends is None or turn_ends.get("kind") != "max-tokens":
                        turn_ends = step_end
                finally:
                    self.session.append("step/end", {"turn": turn, "step": step})
                signal.throw_if_aborted()
                if phase.stop_after is not None:
                    if turn_ends is not None and not self.inbox.next_step:
                        break  # the turn ends here anyway: as it would have, not aborted
                    signal.abort(phase.stop_after)  # the boundary: claim nothing more
                    signal.throw_if_aborted()
                if turn_ends is not None and not self.inbox.next_step:
                    await self._events.serial("agent/turn-stopping",
                                              {"turn": turn, "signal": signal})
                    signal.throw_if_aborted()
                if turn_ends is not None and not self.inbox.next_step:
                    break
                target = "next-step"
        except BaseException as error:
            if signal.aborted:
                turn_ends = {"kind": "aborted", "reason": signal.reason}
                raise
            if isinstance(error, asyncio.CancelledError):
                signal.abort({"kind": "disposed"})
                turn_ends = {"kind": "aborted", "reason": signal.reason}
                raise
            turn_ends = {"kind": "error", "error": failure_of(error)}
            self._raise_reported(error)
        finally:
            try:
                self.session.append("turn/end", {"turn": turn, "reason": turn_ends})
            except Exception as error:
                self._raise_reported(error)
        if not self.inbox.has_pending or phase.stop_after is not None:
            return False  # a soft stop keeps the queued prompts for the next waking send
        phase.abort = CancelSignal()
        phase.wake_requested = False
        phase.step = 0
        return True

    async def _pre_step(self, signal: CancelSignal, target: InboxTarget, turn: int, step: int
                        ) -> tuple[list[UserMessage], Assembly] | None:
        if self._holds.active:
            await self._wait_for_holds(signal, target, turn, step)
            signal.throw_if_aborted()
        claimed = self.inbox.claim(target, turn)
        # A real suspension, as JavaScript's `await` always is: the synchronous prefix of
        # a waking send ends here, right after the claim.
        await asyncio.sleep(0)
        assembly = await self._runtime.prompt.assemble(self, signal)
        signal.throw_if_aborted()
        offered = tuple(claimed)
        decision = await self._events.waterfall(
            "agent/pre-step", {"messages": offered, "turn": turn, "step": step, "signal": signal},
            lambda: {"kind": "enter", "messages": list(offered)})
        signal.throw_if_aborted()
        if not isinstance(decision, Mapping):
            raise TypeError("agent/pre-step must return {'kind': 'enter'|'reject', ...}")
        if decision.get("kind") == "reject":
            return None
        if decision.get("kind") != "enter":
            raise TypeError(f"unknown agent/pre-step decision {decision.get('kind')!r}")
        messages = [UserMessage.from_json(m) for m in decision.get("messages") or ()]
        return messages, assembly

    async def _step(self, signal: CancelSignal, turn: int, step: int, assembly: Assembly
                    ) -> dict[str, Any] | None:
        signal.throw_if_aborted()
        while True:
            history = self.session.derive_messages()
            request, prepared = await self._build_request(turn, step, assembly, history, signal)
            assembler = BlockAssembler()
            chunk_seqs: list[int] = []
            stream = self._runtime.router.stream(request, prepared)
            try:
                signal.throw_if_aborted()
                await self._consume(stream, signal, turn, step, assembler, chunk_seqs)
                signal.throw_if_aborted()
            except BaseException:
                if signal.aborted:
                    content = assembler.interrupted_blocks()
                    if content:
                        data: dict[str, Any] = {
                            "turn": turn, "step": step,
                            "message": self._assistant_message(content, request),
                            "interrupted": True}
                        if assembler.usage is not None:
                            data["usage"] = assembler.usage
                        self.session.append("assistant/message", data, surface_op="append",
                                            source_event_seqs=chunk_seqs)
                raise
            finally:
                await stream.aclose()
            finish = assembler.finish
            if finish.get("kind") in ("error", "aborted"):
                failure = finish.get("failure") or make_failure("model request failed", "UNKNOWN")
                action = await self._events.waterfall(
                    "agent/request-error",
                    {"turn": turn, "step": step, "provider": request.get("provider"),
                     "failure": failure,
                     "retry_policy": prepared.retry_policy if prepared is not None else None,
                     "signal": signal},
                    lambda: None)
                signal.throw_if_aborted()
                if isinstance(action, Mapping) and action.get("kind") == "retry":
                    continue
                raise LlmError(failure)
            message = self._assistant_message(assembler.blocks(), request,
                                              assembler.replay_state)
            data = {"turn": turn, "step": step, "message": message}
            if assembler.usage is not None:
                data["usage"] = assembler.usage
            self.session.append("assistant/message", data, surface_op="append",
                                source_event_seqs=chunk_seqs)
            if finish.get("kind") == "max-tokens":
                # The turn ends as the step did; `limit: "context"` (a reply cut because the
                # context filled, not by an output cap) travels on into `turn/end`.
                return {"kind": "max-tokens", **({"limit": finish["limit"]}
                                                 if isinstance(finish.get("limit"), str) else {})}
            calls = [block for block in message["content"] if block.get("type") == "tool-call"]
            if not calls:
                return {"kind": "completed"}
            executor = ToolExecutor(
                agent=self, root_ctx=self._runtime.ctx, registry=self._runtime.tools,
                max_parallel=self._runtime.max_parallel_tool_calls, turn=turn, step=step,
                signal=signal,
                accept_context=lambda m: self.inbox.splice("next-step", math.inf, 0, [m]))
            concluded = await executor.run(calls)
            return {"kind": "completed"} if concluded else None

    async def _consume(self, stream: Any, signal: CancelSignal, turn: int, step: int,
                       assembler: BlockAssembler, chunk_seqs: list[int]) -> None:
        """Log and assemble every chunk; a cancel interrupts even a provider stuck in a read."""
        task = asyncio.current_task()
        waiting = False
        requested = False

        def interrupt(_reason: Any) -> None:
            nonlocal requested
            if waiting and not requested and task is not None:
                requested = True
                task.cancel()

        remove = signal.add_listener(interrupt)
        append = self.session.append
        push = assembler.push
        try:
            while True:
                waiting = True
                try:
                    chunk = await stream.__anext__()
                except StopAsyncIteration:
                    return
                except asyncio.CancelledError:
                    if requested:
                        raise Cancelled(signal.reason) from None
                    raise
                finally:
                    waiting = False
                    if requested and task is not None:
                        task.uncancel()
                        requested = False
                signal.throw_if_aborted()
                chunk_seqs.append(append("assistant/chunk",
                                         {"turn": turn, "step": step, "chunk": chunk}).seq)
                push(chunk)
        finally:
            remove()

    def _assistant_message(self, content: list[dict[str, Any]], request: Mapping[str, Any],
                           replay_state: Any = None) -> dict[str, Any]:
        source: dict[str, Any] = {"kind": "model", "provider": request.get("provider"),
                                  "model": request.get("model")}
        if replay_state is not None:
            source["replayState"] = replay_state
        return {"role": "assistant", "content": content, "source": source,
                "id": str(uuid.uuid4())}

    async def _build_request(self, turn: int, step: int, assembly: Assembly,
                             history: list[dict[str, Any]], signal: CancelSignal
                             ) -> tuple[dict[str, Any], PreparedCall | None]:
        session = self.session
        persisted = session.request_header()
        persisted_config = (persisted or {}).get("config") or {}
        options = self.options
        route = {"provider": options.provider or "", "model": options.model or ""}
        if self._request_header_logged and persisted is not None:
            seed = _request_proposal(persisted)
        else:
            seed = dict(route)
            same_route = persisted_config.get("provider") == route["provider"] and \
                persisted_config.get("model") == route["model"]
            defaults = (persisted or {}).get("adapterDefaults") or {}
            effort = persisted_config.get("reasoningEffort") if same_route and \
                defaults.get("reasoningEffort") is not True else None
            effort = effort or options.reasoning_effort
            if effort is not None:
                seed["reasoningEffort"] = effort
            if options.temperature is not None:
                seed["temperature"] = options.temperature
            if options.max_tokens is not None:
                seed["maxTokens"] = options.max_tokens
        from types import MappingProxyType

        frozen_seed = MappingProxyType(seed)
        proposed = await self._events.waterfall("agent/request",
                                                {"turn": turn, "step": step, "signal": signal},
                                                lambda: frozen_seed)
        signal.throw_if_aborted()
        proposed = dict(proposed or {})
        if not proposed.get("provider") or not proposed.get("model"):
            raise RuntimeError(
                f'agent "{self.id}" has no provider/model: set AgentOptions.provider and '
                "AgentOptions.model or supply both via the agent/request waterfall")
        prepared: PreparedCall | None = None
        config = proposed
        try:
            prepared = self._runtime.router.prepare(proposed)
            config = prepared.config
        except LlmError as error:
            if error.code != "NO_ADAPTER":
                raise
        signal.throw_if_aborted()
        header: dict[str, Any] = {"config": config}
        if prepared is not None and any(v is True for v in prepared.adapter_defaults.values()):
            header["adapterDefaults"] = {k: True for k, v in prepared.adapter_defaults.items()
                                         if v is True}
        if assembly.system:
            header["system"] = assembly.system
        if assembly.tools:
            header["tools"] = assembly.tools
        header = canonical_header(header)
        baseline = session.request_header()
        if not self._request_header_logged:
            session.append("request/header", {"header": header,
                                              "reason": "initial" if baseline is None else "resume"})
            self._request_header_logged = True
        elif not _header_equals(baseline, header):
            session.append("request/header", {"header": header, "reason": "change"})
        context: dict[str, Any] = {"provider": config["provider"], "model": config["model"]}
        if prepared is not None and prepared.context_window is not None:
            context["contextWindow"] = prepared.context_window
        previous = session.request_context()
        if previous is None or previous.get("provider") != context["provider"] or \
                previous.get("model") != context["model"] or \
                previous.get("contextWindow") != context.get("contextWindow"):
            session.append("request/context", context)
        signal.throw_if_aborted()
        request: dict[str, Any] = {**header["config"], "messages": history}
        if header.get("system"):
            request["system"] = header["system"]
        if header.get("tools"):
            request["tools"] = header["tools"]
        request["sessionId"] = session.id
        request["signal"] = signal
        return request, prepared

    def __repr__(self) -> str:
        return f"LoopAgent({self.id!r}, status={self.status})"
