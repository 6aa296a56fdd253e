"""One runtime session as an `Agent`: its log, inbox, status and the gestures the API allows.

Everything the UI reads is folded from the durable events the follow stream admits, in
the order §1.6.10 promises: the `session/event` first, then the inbox lists change, then
`agent/inbox/*` notifications (a pure deletion is a claim, a `canceled` one a discard,
an item removed and put back under the same id an edit). `status` is `running` while a
turn is open in the log. Sends and edits are RPCs: they return at once, run one at a time
per agent in the order they were made, and a refusal is one `world/notice` line, with
the person's text kept in the outbox (`inbox.py`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from dsh_tui.harness.agent import AgentOptions, AgentStatus, CancelCause
from dsh_tui.harness.capabilities import Capabilities
from dsh_tui.harness.events import agent_events
from dsh_tui.harness.holds import InboxHold
from dsh_tui.harness.inbox import InboxTarget
from dsh_tui.harness.messages import UserMessage
from dsh_tui.harness.session import SessionEvent

from .inbox import PUT_BACK, REORDER, Outgoing, RemoteInbox, UnavailableError
from .session import RemoteSession
from .wire import RemoteError

if TYPE_CHECKING:
    from dsh_tui.harness.context import Context
    from dsh_tui.harness.signal import CancelSignal

    from .world import RemoteWorld

ASSISTANT_STREAM = "agent/assistant-stream"
"""Live, not durable: `{frame}` with the runtime's `start` / `chunk` / `end` frame of the
reply being streamed (docs/contract.md §12)."""

INJECT = "the dsh runtime has no way to queue context without waking the agent"
STOP_AFTER_STEP = "the dsh runtime has no stop at a step boundary: stop it now instead"
HOLD = "the dsh runtime cannot hold a queued item while it is edited"
ROOT_REFUSED: Mapping[str, str] = MappingProxyType({
    "inject": INJECT,
    "breakpoint": "the dsh runtime runs its steps itself: nothing can hold one before it "
                  "is sent",
    "reorder_item": REORDER,
    "undo_discard": PUT_BACK,
    "restore_unsent": PUT_BACK,
    "spawn_child": "the dsh runtime starts sub-agents only from its model's tool calls",
    "dispose": "the dsh runtime keeps its sessions: dsh-tui only watches them",
    "stop_after_step": STOP_AFTER_STEP,
    "hold_item": HOLD,
})
CHILD_REFUSED: Mapping[str, str] = MappingProxyType({
    **ROOT_REFUSED,
    "rename": "the dsh runtime keeps a sub-agent's name with its parent (it refuses a rename "
              "from outside)",
})
ONE_SHOT = "a one-shot sub-agent takes no further messages"


def text_content(message: UserMessage) -> list[dict[str, str]]:
    """The message's text blocks as the runtime's prompt content."""
    return [{"type": "text", "text": str(block.get("text", ""))}
            for block in message.content if block.get("type") == "text"]


class RemoteAgent:
    """A runtime session as an `Agent` (see the module docstring)."""

    read_only = False

    def __init__(self, world: RemoteWorld, header: Mapping[str, Any], *,
                 parent_id: str | None = None, mode: str | None = None) -> None:
        self.world = world
        self.session = RemoteSession(header, rename=self._rename)
        self.id = self.session.id
        self.inbox = RemoteInbox(self)
        self.options = AgentOptions()
        self.parent_id = parent_id
        self.mode = mode
        """A sub-agent's catalog mode (`continuable`, `one-shot`, …); None for a root."""
        self.ctx: Context = world.ctx.derive(self)
        self._events = agent_events(world.ctx, self)
        self.status: AgentStatus = "idle"
        self.current_turn = 0
        self.current_step = 0
        self.title = ""
        self._idle = asyncio.Event()
        self._idle.set()
        self._lock = asyncio.Lock()
        self._early: list[Mapping[str, Any]] | None = []
        refused = dict(CHILD_REFUSED if parent_id else ROOT_REFUSED)
        if parent_id and mode not in (None, "continuable", "unknown"):
            refused.update(followup=ONE_SHOT, steer=ONE_SHOT, deliver_kept=ONE_SHOT)
        self.capabilities = Capabilities(MappingProxyType(refused))

    @property
    def name(self) -> str:
        """How notices name the agent: its title, else the start of its id."""
        return self.title or self.id[:20]

    # -- the durable fold ---------------------------------------------------------------------

    def admit(self, record: Mapping[str, Any]) -> SessionEvent:
        """Hold the runtime's next event and tell listeners what changed (module docstring)."""
        event = self.session.admit(record)
        bus = self.world.ctx.bus
        bus.emit_contained("session/event", self, self.session, event)
        data = event.data if isinstance(event.data, Mapping) else {}
        kind = event.type
        if kind == "agent/inbox/spliced":
            self._spliced(data)
        elif kind == "turn/start":
            turn = data.get("turn")
            self.current_turn = turn if type(turn) is int else self.current_turn + 1
            self.current_step = 0
            self._set_status("running")
        elif kind == "step/start":
            step = data.get("step")
            self.current_step = step if type(step) is int else self.current_step + 1
        elif kind == "step/end":
            self.current_step = 0
        elif kind == "turn/end":
            self.current_step = 0
            reason = data.get("reason")
            drains = isinstance(reason, Mapping) and reason.get("kind") == "completed" \
                and bool(self.inbox.runtime_pending("next-turn"))
            if not drains:  # a completed turn with prompts queued goes on to the next one
                self._set_status("idle")
        elif kind == "subagent/catalog":
            self.world.child_seen(self, data)
        elif kind == "session/title" and isinstance(data.get("title"), str):
            self.title = data["title"].strip()
        elif kind == "request/header":
            header = data.get("header")
            config = header.get("config") if isinstance(header, Mapping) else None
            if isinstance(config, Mapping):
                self.options.provider = str(config.get("provider") or "") or None
                self.options.model = str(config.get("model") or "") or None
        return event

    def _spliced(self, data: Mapping[str, Any]) -> None:
        removed, inserted = self.inbox.apply_splice(data)
        kept = {m.id for m in inserted}
        canceled = data.get("outcome") == "canceled"
        for message in removed:
            if message.id in kept:
                continue  # an edit: same id, new text
            if canceled:
                self._events.emit("agent/inbox/discarded", {"message": message})
            else:
                self._events.emit("agent/inbox/claimed",
                                  {"message": message, "turn": self.current_turn})
        for message in inserted:
            self._events.emit("agent/inbox/inserted", {"message": message})

    def _set_status(self, status: AgentStatus) -> None:
        if status == self.status:
            return
        self.status = status
        if status == "idle":
            self._idle.set()
        else:
            self._idle.clear()
        self._events.emit("agent/status", {"status": status})

    def stream(self, frame: Mapping[str, Any]) -> None:
        """Pass one live assistant-stream frame on (`agent/assistant-stream`); until the
        agent is shown (announced) frames wait, so a reply already streaming when the
        session is found is shown from its first chunk."""
        if self._early is not None:
            self._early.append(frame)
            return
        self._events.emit(ASSISTANT_STREAM, {"frame": frame})

    def shown(self) -> None:
        """The world announced this agent: pass on the frames that waited for it."""
        early, self._early = self._early, None
        for frame in early or ():
            self._events.emit(ASSISTANT_STREAM, {"frame": frame})

    def inbox_changed(self, message: UserMessage | None = None, removed: bool = False) -> None:
        """The outbox changed here (no durable event will say so): tell the listeners."""
        if message is not None:
            self._events.emit("agent/inbox/discarded" if removed else "agent/inbox/inserted",
                              {"message": message})

    # -- sending --------------------------------------------------------------------------------

    def send(self, message: UserMessage, target: InboxTarget, wakeup: bool) -> None:
        """Queue `message` with the runtime: `next-turn` is a follow-up, `next-step` a steer.
        A non-waking send (inject) does not exist remotely and raises UnavailableError.
        The message waits in the outbox until the runtime's durable splice names it."""
        gesture = "followup" if target == "next-turn" else "steer"
        reason = INJECT if not wakeup else self.capabilities.reason(gesture)
        if reason is not None:
            raise UnavailableError(reason)
        outgoing = Outgoing(message, target)
        self.inbox.outbox.append(outgoing)
        self.inbox_changed(message)
        self._run(lambda: self._deliver(outgoing), None)

    def followup(self, message: UserMessage) -> None:
        """Queue a prompt (`session/prompt` mode `queue`, or the parent's delivery)."""
        self.send(message, "next-turn", True)

    def steer(self, message: UserMessage) -> None:
        """Steer the running turn (`session/prompt` mode `steer`)."""
        self.send(message, "next-step", True)

    def inject(self, message: UserMessage) -> None:
        """Refused: the runtime cannot queue context without waking the agent."""
        raise UnavailableError(INJECT)

    async def _deliver(self, outgoing: Outgoing) -> None:
        message = outgoing.message
        mode = "queue" if outgoing.target == "next-turn" else "steer"
        try:
            if self.parent_id:
                await self.world.rpc.call("subagents/prompt", {"request": {
                    "requestId": message.id, "parentSessionId": self.parent_id,
                    "childSessionId": self.id, "mode": "continuable", "delivery": mode,
                    "content": text_content(message)}})
            else:
                await self.world.rpc.call("session/prompt", {"request": {
                    "requestId": message.id, "sessionId": self.id, "mode": mode,
                    "content": text_content(message)}})
        except RemoteError as error:
            if self.inbox.outgoing(message.id) is outgoing:
                outgoing.state, outgoing.error = "unsent", str(error)
                self.inbox_changed(message)
            self.world.notice(f"Could not send to {self.name}: {error}. Your message is kept "
                              "in its inbox, unsent: enter on an empty composer sends it "
                              "again.", self.id)

    def wake(self) -> bool:
        """Send again what the runtime refused (the outbox's unsent messages, in order).
        The runtime has no wake of its own: kept items run when it next gets a message."""
        unsent = [o for o in self.inbox.outbox if o.state == "unsent"]
        for outgoing in unsent:
            outgoing.state, outgoing.error = "sending", ""
            self._run(lambda o=outgoing: self._deliver(o), None)  # type: ignore[misc]
        if unsent:
            return True
        if self.inbox.has_pending:
            raise UnavailableError("the dsh runtime runs kept items only when it gets a "
                                   "message: send one and they run first")
        return False

    # -- queue edits ----------------------------------------------------------------------------

    def edit_item(self, message_id: str, text: str, target: InboxTarget) -> None:
        """Ask the runtime to replace a queued item's text (same id)."""
        def failed(error: RemoteError) -> None:
            lost = UserMessage.from_json({"id": f"{message_id}-edit", "role": "user",
                                          "content": [{"type": "text", "text": text}],
                                          "source": {"kind": "user"}})
            self.inbox.outbox.append(Outgoing(lost, target, "unsent", str(error)))
            self.inbox_changed(lost)
            self.world.notice(f"#{message_id[:6]} of {self.name} was not edited: {error}. "
                              "Your edited text is kept in its inbox, unsent.", self.id)

        self._run(lambda: self.world.rpc.call("session/updateQueue", {"request": {
            "sessionId": self.id, "itemId": message_id,
            "action": {"kind": "edit", "content": [{"type": "text", "text": text}]}}}), failed)

    def remove_item(self, message_id: str) -> None:
        """Ask the runtime to drop a queued item."""
        self._queue_action(message_id, {"kind": "remove"}, "removed")

    def promote_item(self, message_id: str) -> None:
        """Ask the runtime to move a queued follow-up into the running turn as steering."""
        self._queue_action(message_id, {"kind": "steer"}, "promoted to steer")

    def _queue_action(self, message_id: str, action: dict[str, Any], done: str) -> None:
        def failed(error: RemoteError) -> None:
            self.world.notice(f"#{message_id[:6]} of {self.name} was not {done}: {error}",
                              self.id)

        self._run(lambda: self.world.rpc.call("session/updateQueue", {"request": {
            "sessionId": self.id, "itemId": message_id, "action": action}}), failed)

    # -- stopping -------------------------------------------------------------------------------

    def cancel(self, cause: CancelCause | None = None, *, keep_inbox: bool = False) -> None:
        """Stop the running turn (`session/cancel`, which keeps the queue; a sub-agent is
        interrupted through its parent). Without `keep_inbox` each queued item is then
        removed, one `remove` at a time, since the runtime has no cancel that drops them."""
        if not keep_inbox and (reason := self.capabilities.reason("cancel_clear")):
            raise UnavailableError(reason)

        def failed(error: RemoteError) -> None:
            self.world.notice(f"Could not stop {self.name}: {error}", self.id)

        if self.status == "running":
            if self.parent_id:
                self._run(lambda: self.world.rpc.call("subagents/interruptByParent", {
                    "childSessionId": self.id, "parentSessionId": self.parent_id,
                    "mode": "continuable" if self.mode in (None, "unknown") else self.mode}),
                    failed)
            else:
                self._run(lambda: self.world.rpc.call("session/cancel", {
                    "request": {"sessionId": self.id}}), failed)
        if not keep_inbox:
            self.inbox.clear()

    def stop_after_step(self, cause: CancelCause | None = None) -> bool:
        """Refused: the runtime has no stop at a step boundary (a cancel stops it now)."""
        raise UnavailableError(STOP_AFTER_STEP)

    @property
    def holds(self) -> tuple[InboxHold, ...]:
        """Always empty: the runtime's queue API has no edit holds."""
        return ()

    def hold(self, message_id: str, *, limit: float | None = None) -> InboxHold | None:
        """Refused: the runtime cannot hold the claim of a queued item while it is edited;
        an edit that comes after the claim is refused by the runtime and said (module
        docstring)."""
        raise UnavailableError(HOLD)

    async def when_idle(self) -> None:
        """Resolve once no turn is open in the log."""
        await self._idle.wait()

    def run_maintenance(self, task: Callable[[CancelSignal], Awaitable[Any]]) -> Awaitable[Any]:
        """Refused: maintenance runs inside the runtime, not here."""
        raise UnavailableError("maintenance runs inside the dsh runtime, not in dsh-tui")

    def _rename(self, title: str) -> None:
        reason = self.capabilities.reason("rename")
        if reason is not None:
            raise UnavailableError(reason)

        def failed(error: RemoteError) -> None:
            self.world.notice(f"Could not rename {self.name}: {error}", self.id)

        self._run(lambda: self.world.rpc.call("session/rename", {"request": {
            "sessionId": self.id, "title": title}}), failed)

    # -- one RPC at a time, in order ------------------------------------------------------------

    def _run(self, call: Callable[[], Awaitable[Any]],
             failed: Callable[[RemoteError], None] | None) -> None:
        async def serial() -> None:
            async with self._lock:
                try:
                    await call()
                except RemoteError as error:
                    if failed is not None:
                        failed(error)

        self.world.spawn(serial())

    def __repr__(self) -> str:
        return f"RemoteAgent({self.id!r}, status={self.status!r})"
