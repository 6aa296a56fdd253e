"""Step breakpoints: stop an agent before its next step and show what that step will send.

An armed agent's `agent/pre-step` waterfall (the public hook the driver awaits before
every step, with the claimed batch in hand) waits for the person: continue sends the
batch on, with the person's edits; skip rejects the step. What each answer does to the
turn is on `Breakpoints`. A pause belongs to its agent: the app shows it in that agent's
panel only. The listener awaits a future the UI resolves; it never blocks the event
loop, and the UI side only records the pause and schedules its screen.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

CONTINUE = "continue"
SKIP = "skip"
ABORTED = "aborted"


@dataclass
class Pause:
    """One agent stopped before a step: what the step would send, and how it ends."""

    agent: Any
    turn: int
    step: int
    messages: tuple[Any, ...]
    decided: asyncio.Future[str] = field(repr=False,
                                         default_factory=lambda: asyncio.get_running_loop()
                                         .create_future())

    edited: dict[str, Any] = field(default_factory=dict)
    """Message id → the edited message (same id, new text) to send instead."""

    @property
    def batch(self) -> tuple[Any, ...]:
        """The messages as they will be sent: the claimed batch with the person's edits."""
        return tuple(self.edited.get(m.id, m) for m in self.messages)

    def edit(self, message_id: str, text: str) -> bool:
        """Change the text a message of the batch will be sent with; False once decided."""
        if not self.open:
            return False
        for message in self.messages:
            if message.id == message_id:
                self.edited[message_id] = message.with_text(text)
                return True
        return False

    def resolve(self, decision: str) -> None:
        """The person's answer (continue, skip, disarm); the first one wins, later clicks are ignored."""
        if not self.decided.done():
            self.decided.set_result(decision)

    @property
    def open(self) -> bool:
        """Still waiting for an answer (the panel shows it only while open)."""
        return not self.decided.done()


class Breakpoints:
    """The armed agents (by id) and the pauses in progress, over one world's events.

    Continue sends the batch on with the person's edits (the waterfall's `enter` carries
    the messages to record, docs/contract.md C-28); skip rejects the step (the turn ends
    `blocked`, the claimed messages go with it, as docs/contract.md §6.3 says; the inbox
    pane then offers them back). A cancel or a disposal while paused lets the driver go
    on to its own abort.
    """

    def __init__(self, ctx: Any, on_pause: Callable[[Pause], None],
                 on_resume: Callable[[Pause], None]) -> None:
        self.armed: set[str] = set()
        self.paused: dict[str, Pause] = {}
        self._on_pause = on_pause
        self._on_resume = on_resume
        self._off = ctx.on("agent/pre-step", self._pre_step)

    def close(self) -> None:
        """Stop listening; a paused agent stays where it is, its step unsent.

        The app closes its breakpoints when its screen goes, which is how a quit
        starts: the quit then stops saving and disposes the world in memory, and that
        disposal's abort ends each pause. Continuing here would send a batch the
        person was still reviewing (a model request, maybe a tool run) on the way
        out; left undecided, the log ends as a `kill -9` there leaves it, and resume
        puts the claimed batch back at the head of its lane.
        """
        self._off()
        self.armed.clear()
        self._on_pause = self._on_resume = _nobody

    def toggle(self, agent_id: str) -> bool:
        """Arm or disarm an agent; returns whether it is armed now."""
        if agent_id in self.armed:
            self.disarm(agent_id)
            return False
        self.armed.add(agent_id)
        return True

    def disarm(self, agent_id: str) -> None:
        """No more pauses for this agent; a pause already shown still waits for its answer."""
        self.armed.discard(agent_id)

    def is_armed(self, agent_id: str) -> bool:
        """Whether the agent stops before its next step (the tree marks it ◆)."""
        return agent_id in self.armed

    async def _pre_step(self, payload: Mapping[str, Any],
                        downstream: Callable[[], Awaitable[Any]]) -> Any:
        agent = payload["agent"]
        if agent.id not in self.armed or agent.id in self.paused:
            return await downstream()
        pause = Pause(agent, int(payload.get("turn") or 0), int(payload.get("step") or 0),
                      tuple(payload.get("messages") or ()))
        signal = payload.get("signal")
        remove = signal.add_listener(lambda _reason: pause.resolve(ABORTED)) \
            if signal is not None else (lambda: None)
        self.paused[agent.id] = pause
        try:
            self._on_pause(pause)
            decision = await pause.decided
        finally:
            remove()
            self.paused.pop(agent.id, None)
            self._on_resume(pause)
        if decision == SKIP:
            return {"kind": "reject"}
        result = await downstream()
        if pause.edited and isinstance(result, Mapping) and result.get("kind") == "enter":
            result = {**result, "messages": [_edited(m, pause.edited)
                                             for m in result.get("messages") or ()]}
        return result


def _nobody(pause: Pause) -> None:
    """No screen any more: a pause that starts or ends after close() is told to nobody."""


def _edited(message: Any, edited: Mapping[str, Any]) -> Any:
    message_id = message.get("id") if isinstance(message, Mapping) else \
        getattr(message, "id", None)
    return edited.get(message_id, message) if isinstance(message_id, str) else message
