"""Live reply frames (`agent/assistant-stream`) as the chunk events the transcript folds.

An agent of this process logs every stream chunk as a durable `assistant/chunk`, so its
transcript streams from the log. An agent in a dsh runtime does not: the runtime stores
the chunks inside the finished `assistant/message` and streams them live as frames
(`start {turn, step}`, `chunk {chunk}`, `end {outcome}`). This turns each frame into the
same `assistant/chunk` shape, not durable (no seq of its own), so the transcript shows a
remote reply token by token and the durable message that follows completes it exactly as
it completes a local one (docs/contract.md §12).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

ABANDONED = {"kind": "error", "failure": {"message": "the runtime abandoned this reply"}}


@dataclass(frozen=True, slots=True)
class LiveChunk:
    """A chunk the runtime streamed: shaped like a durable `assistant/chunk`, seq -1."""

    type: str
    time: int | None
    data: Mapping[str, Any]
    seq: int = -1
    ignorable: bool = True


class LiveStream:
    """Remembers each attempt's turn and step from its `start`; folds frames into chunks."""

    def __init__(self) -> None:
        self._attempts: dict[str, tuple[Any, Any]] = {}

    def chunk_of(self, frame: Mapping[str, Any]) -> LiveChunk | None:
        """The chunk event a frame stands for (None: a frame that shows nothing)."""
        attempt = str(frame.get("attemptId"))
        kind = frame.get("type")
        if kind == "start":
            self._attempts[attempt] = (frame.get("turn"), frame.get("step"))
            return None
        turn, step = self._attempts.get(attempt, (None, None))
        time = frame.get("time") if type(frame.get("time")) is int else None
        if kind == "chunk" and isinstance(frame.get("chunk"), Mapping):
            return LiveChunk("assistant/chunk", time,
                             {"turn": turn, "step": step, "chunk": frame["chunk"]})
        if kind == "end":
            self._attempts.pop(attempt, None)
            outcome = frame.get("outcome")
            if isinstance(outcome, Mapping) and outcome.get("kind") == "abandoned":
                return LiveChunk("assistant/chunk", time, {
                    "turn": turn, "step": step, "chunk": {"type": "finish", "reason": ABANDONED}})
        return None
