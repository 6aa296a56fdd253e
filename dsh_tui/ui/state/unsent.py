"""Claimed, never sent: messages a turn took from the inbox but never gave to a model.

The core contract says a claimed batch belongs to its turn: a cancel, a pre-step reject
(a breakpoint's skip) or a failure before the step starts ends the turn and the batch is
gone. The app keeps the person's promise as a pure consumer of the session log:
`UnsentTracker` replays the inbox splices and turn records, O(1) per event, and knows
which claimed messages a finished turn never recorded. The inbox pane offers them back;
putting one back is an ordinary splice at the head of its lane (same id, same text).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .text import reason_text


@dataclass(frozen=True, slots=True)
class Unsent:
    """One claimed message whose turn ended before it reached a model."""

    message: Mapping[str, Any]  # the message as claimed (JSON: id, content, source)
    target: str  # the lane list it was claimed from: next-step | next-turn
    turn: int | None
    reason: str  # how the turn ended, in words ("aborted · cancelled by you")

    @property
    def id(self) -> str:
        """The message id: the same one it had in the inbox, so a put-back keeps it."""
        return str(self.message.get("id"))


class UnsentTracker:
    """Folds session events; `unsent` lists the claimed-never-sent messages, oldest first."""

    def __init__(self) -> None:
        self._lists: dict[str, list[str]] = {"next-turn": [], "next-step": []}
        self._pending: dict[str, Mapping[str, Any]] = {}
        self._turn: int | None = None
        self._claimed: dict[str, tuple[Mapping[str, Any], str, int | None]] = {}
        self._unsent: dict[str, Unsent] = {}
        self.dismissed: set[str] = set()
        self.version = 0
        """Grows whenever `unsent` changes (the inbox pane re-renders on a new version)."""

    @property
    def unsent(self) -> list[Unsent]:
        """What is offered back now: claimed by an ended turn, never sent, not dismissed."""
        return [u for key, u in self._unsent.items() if key not in self.dismissed]

    def dismiss(self, message_ids: set[str]) -> None:
        """Hide these from the offer (the person does not want them back)."""
        self.dismissed |= message_ids
        self.version += 1

    _KINDS = frozenset({"agent/inbox/spliced", "turn/start", "user/message", "turn/end"})

    def apply(self, event: Any) -> None:
        """Follow one session event: a claim records the batch, a sent `user/message` or a
        new turn settles it. Other events are skipped without reading their data."""
        kind = getattr(event, "type", None)
        if kind not in self._KINDS:
            return  # stream chunks and the rest: not even their data is read
        data = getattr(event, "data", None)
        if not isinstance(data, Mapping):
            return
        try:
            if kind == "agent/inbox/spliced":
                self._splice(data)
            elif kind == "turn/start":
                turn = data.get("turn")
                self._turn = turn if isinstance(turn, int) else None
                self._claimed = {}
            elif kind == "user/message":
                message_id = data.get("id")
                if isinstance(message_id, str):
                    self._claimed.pop(message_id, None)
                    self._forget(message_id)
            elif kind == "turn/end":
                self._end(data)
        except (TypeError, ValueError, KeyError, IndexError):
            pass  # a malformed record: the transcript shows it; nothing to offer from it

    def _splice(self, data: Mapping[str, Any]) -> None:
        target = data.get("target")
        if target not in self._lists:
            return
        ids = self._lists[str(target)]
        start = int(data.get("start", 0))
        removed = int(data.get("removedCount", 0) or 0)
        inserted = [m for m in data.get("inserted") or () if isinstance(m, Mapping)]
        leaving = ids[start:start + removed]
        ids[start:start + removed] = [str(m.get("id")) for m in inserted]
        claim = bool(removed) and not inserted and "outcome" not in data
        for message_id in leaving:
            message = self._pending.pop(message_id, None)
            if claim and message is not None:
                self._claimed[message_id] = (message, str(target), self._turn)
        for message in inserted:
            message_id = str(message.get("id"))
            self._pending[message_id] = message
            self._forget(message_id)  # pending again (put back, or re-queued on resume)

    def _end(self, data: Mapping[str, Any]) -> None:
        claimed, self._claimed = self._claimed, {}
        if not claimed:
            return
        _kind, words = reason_text(data.get("reason"))
        for message_id, (message, target, turn) in claimed.items():
            if message_id in self._pending:
                continue
            self._unsent[message_id] = Unsent(message, target, turn, words)
            self.dismissed.discard(message_id)
        self.version += 1

    def _forget(self, message_id: str) -> None:
        if self._unsent.pop(message_id, None) is not None:
            self.version += 1
