"""Receipts: where each message is in its life, derived from the log and the live holds.

pending → held → claimed (turn, step) → sent (request n) → answered; or discarded,
offered back, tombstoned. `ReceiptBook` folds session events through `InboxLogReader`
(live, resumed and stored logs read the same way) into one `Receipt` per message id with
its history; "held" comes from `agent.holds` (docs/contract.md §3.8) and the durable
`inbox/hold-wait` records, so the book stays a pure consumer of `ctx.agents`. No Textual.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .inbox_log import Fact, InboxLogReader

PENDING, HELD, CLAIMED, SENT, ANSWERED = "pending", "held", "claimed", "sent", "answered"
DISCARDED, OFFERED, TOMBSTONED = "discarded", "offered back", "tombstoned"
STATES: tuple[str, ...] = (PENDING, HELD, CLAIMED, SENT, ANSWERED, DISCARDED, OFFERED,
                           TOMBSTONED)


@dataclass(slots=True, eq=False)
class Receipt:
    """One message's life so far; `label()` is the short line the inbox and transcript show."""

    message_id: str
    state: str = PENDING
    lane: str = ""
    target: str | None = None
    index: int | None = None
    turn: int | None = None
    step: int | None = None
    request: int | None = None
    """The request of its step that first carried it to the model (1, or more after retries)."""
    request_number: int | None = None
    """That request's number among all the agent's answered requests."""
    claim_seq: int | None = None
    sent_seq: int | None = None
    """The `user/message` seq: where it entered the model's context (the transcript link)."""
    answer_seq: int | None = None
    detail: str = ""
    held: bool = False
    waiting: bool = False
    """The agent is waiting at a boundary for this item's edit (§3.8)."""
    hold_remaining: float | None = None
    history: list[Fact] = field(default_factory=list)

    @property
    def text(self) -> str:
        """The message's text as the log last had it ("" when no fact carried it)."""
        for fact in reversed(self.history):
            if fact.message_id == self.message_id and fact.text:
                return fact.text
        return ""

    @property
    def pending(self) -> bool:
        """Still in the inbox (pending or held)."""
        return self.state in (PENDING, HELD)

    def label(self) -> str:
        """`pending · next-turn 2`, `held · agent waits 42 s`, `sent · turn 3 step 2 ·
        request 1`, … (plain text; the caller sanitises nothing: ids are shortened)."""
        state = self.state
        where = _turn_step(self.turn, self.step)
        if state in (PENDING, HELD):
            place = f"{self.target} {self.index + 1}" if self.target and self.index is not None \
                else "pending"
            if state == PENDING:
                return f"pending · {place}"
            if self.waiting and self.hold_remaining is not None:
                return f"held · agent waits · {self.hold_remaining:.0f} s"
            return "held · " + ("agent waits" if self.waiting else "editing")
        if state == CLAIMED:
            return f"claimed · {where}"
        if state == SENT:
            if self.request is None:
                return f"sent · {where}" + (f" · {self.detail}" if self.detail
                                            else " · awaiting the model")
            return f"sent · {where} · request {self.request}" + \
                (f" · {self.detail}" if self.detail else "")
        if state == ANSWERED:
            return f"answered · {where}" + (f" · request {self.request}" if self.request
                                            and self.request > 1 else "")
        return f"{state} · {self.detail}" if self.detail else state

    def trail(self) -> str:
        """The way a sent message came, for its header in the transcript: `claimed turn 3
        step 2 → sent in request 1 → answered` (or `→ awaiting the model`, `→ answering`,
        `→ no answer: turn 3 aborted`); a message not sent has its `label()`."""
        state = self.state
        if state not in (CLAIMED, SENT, ANSWERED):
            return self.label()
        where = _turn_step(self.turn, self.step) if self.turn is not None else ""
        first = f"claimed {where}".rstrip() if self.claim_seq is not None else where
        parts = [first] if first else []
        if state == CLAIMED:
            return " → ".join(parts) or "claimed"
        parts.append(f"sent in request {self.request}" if self.request else "sent")
        if state == ANSWERED:
            parts.append("answered")
        elif self.detail:
            parts.append(self.detail)
        else:
            parts.append("awaiting the model" if self.request is None else "answering")
        return " → ".join(parts)


def _turn_step(turn: int | None, step: int | None) -> str:
    if turn is None:
        return "turn ?"
    return f"turn {turn}" + (f" step {step}" if step is not None else "")


class ReceiptBook:
    """Folds one agent's events into receipts; `apply` per event, `settle` when quiet."""

    def __init__(self, seed_length: int = 0, reader: InboxLogReader | None = None) -> None:
        self.reader = reader if reader is not None else InboxLogReader(seed_length)
        """The reading of the log this book folds (shared with the timeline when the
        caller folds the facts itself: `inbox_reading.InboxReading`)."""
        self._receipts: dict[str, Receipt] = {}
        self._awaiting_request: list[Receipt] = []
        self._awaiting_answer: list[Receipt] = []
        self._claimed: list[Receipt] = []
        self._waiting: dict[str, tuple[int, int | None]] = {}  # id -> (time ms, limit ms)
        self._left: dict[str, None] = {}
        """Ids that left the inbox (claimed, sent, removed, merged), oldest leaving first."""
        self.version = 0
        """Grows whenever a receipt changes (a view re-renders on a new version)."""
        self._changed: set[str] = set()
        """Ids whose receipt changed since the last `drain_changed` (the transcript shows
        the receipts of sent messages: only theirs are drawn again)."""

    # -- reading ------------------------------------------------------------------------------

    def get(self, message_id: str) -> Receipt | None:
        """The receipt of `message_id` as the log has it (no live hold overlay)."""
        return self._receipts.get(message_id)

    def __len__(self) -> int:
        return len(self._receipts)

    def receipt(self, message_id: str, holds: Iterable[Any] = (),
                now_ms: int | None = None) -> Receipt | None:
        """The receipt with the live overlay: `held` when an active hold (`agent.holds`)
        names a pending item, with the agent's wait and its countdown when it waits."""
        found = self._receipts.get(message_id)
        if found is None:
            return None
        found.held = found.waiting = False
        found.hold_remaining = None
        if found.state in (PENDING, HELD):
            active = [h for h in holds if getattr(h, "message_id", None) == message_id]
            found.state = HELD if active else PENDING
            if active:
                found.held = True
                found.waiting = message_id in self._waiting
                remaining = [r for r in (h.remaining() for h in active) if r is not None]
                if found.waiting and remaining:
                    found.hold_remaining = min(remaining)
                elif found.waiting and now_ms is not None:
                    began, limit = self._waiting[message_id]
                    if limit is not None:
                        found.hold_remaining = max(0.0, (began + limit - now_ms) / 1000)
            if found.target is not None:
                where = self.reader.position(message_id)
                if where is not None:
                    found.target, found.index = where
        return found

    @property
    def waiting_on(self) -> tuple[str, ...]:
        """Ids a boundary waits on now, per the log (`inbox/hold-wait` without its end)."""
        return tuple(self._waiting)

    def recent(self, count: int) -> list[Receipt]:
        """The `count` messages that left the inbox last, newest first (still pending ones
        are not listed: a put-back or an undo brings an item back to its list)."""
        out: list[Receipt] = []
        for message_id in reversed(self._left):
            if len(out) >= count:
                break
            found = self._receipts.get(message_id)
            if found is not None and not found.pending:
                out.append(found)
        return out

    def drain_changed(self) -> set[str]:
        """Ids whose receipt changed since the last call."""
        changed, self._changed = self._changed, set()
        return changed

    def all(self) -> list[Receipt]:
        """Every receipt, in the order their messages first appeared."""
        return list(self._receipts.values())

    def dismiss(self, message_ids: Iterable[str]) -> None:
        """Offers the person turned down: their receipts become tombstoned."""
        for message_id in message_ids:
            found = self._receipts.get(message_id)
            if found is not None and found.state == OFFERED:
                found.state = TOMBSTONED
                self._changed.add(message_id)
                self.version += 1

    # -- folding ------------------------------------------------------------------------------

    def apply(self, event: Any) -> None:
        """Fold one session event."""
        for fact in self.reader.apply(event):
            self.fold(fact)

    def apply_all(self, events: Iterable[Any]) -> ReceiptBook:
        """Fold a whole log (then settle); returns self."""
        for event in events:
            self.apply(event)
        self.settle()
        return self

    def settle(self) -> None:
        """Resolve the reader's held-back removal (a claim) now."""
        for fact in self.reader.settle():
            self.fold(fact)

    def _receipt(self, fact: Fact) -> Receipt:
        message_id = fact.message_id or ""
        found = self._receipts.get(message_id)
        if found is None:
            found = self._receipts[message_id] = Receipt(message_id)
        found.history.append(fact)
        if fact.lane:
            found.lane = fact.lane
        self._changed.add(message_id)
        return found

    def fold(self, fact: Fact) -> None:
        """Apply one fact (the reader's output) to the receipts."""
        kind = fact.kind
        if kind == "move" and fact.related:  # a swap: the other item moved too
            other = self._receipts.get(fact.related[0])
            if other is not None and other.state == PENDING:
                other.history.append(fact)
        if kind in ("remove", "merge", "claim", "sent") and fact.message_id is not None:
            self._left.pop(fact.message_id, None)
            self._left[fact.message_id] = None
        if kind in ("insert", "edit", "refile", "move", "split", "put-back"):
            if fact.message_id is not None:
                self._left.pop(fact.message_id, None)
            found = self._receipt(fact)
            found.state, found.target, found.index = PENDING, fact.target, fact.index
            found.turn = found.step = found.request = found.request_number = None
            found.claim_seq = found.sent_seq = found.answer_seq = None
            found.detail = ""
        elif kind in ("remove", "merge"):
            found = self._receipt(fact)
            found.state, found.target, found.index = DISCARDED, None, None
            found.detail = fact.why if kind == "merge" else (
                "cleared (a clear, or a stop that cleared)" if fact.detail == "clear"
                else "half moved: a crash cut the move" if fact.detail == "half move"
                else "removed")
        elif kind == "claim":
            found = self._receipt(fact)
            found.state, found.target, found.index = CLAIMED, None, None
            found.turn, found.step, found.claim_seq = fact.turn, fact.step, fact.seq
            self._claimed.append(found)
        elif kind == "sent":
            found = self._receipt(fact)
            found.state, found.target, found.index = SENT, None, None
            found.turn, found.step, found.sent_seq = fact.turn, fact.step, fact.seq
            found.detail = ""
            self._awaiting_request.append(found)
        elif kind == "request":
            self._requested(fact)
        elif kind == "reply":
            self._replied(fact)
        elif kind == "turn-end":
            self._turn_ended(fact)
        elif kind == "hold-wait":
            for message_id in fact.related:
                self._waiting[message_id] = (fact.time, fact.amount)
        elif kind == "hold-end":
            self._waiting.clear()
        else:
            return
        self.version += 1

    def _requested(self, fact: Fact) -> None:
        if "failed" in fact.detail:
            return  # a failed attempt carried nothing to the model; a retry may
        number = self.reader.requests
        attempt = fact.amount or 1
        for found in self._awaiting_request:
            if found.state == SENT and found.request is None:
                found.request, found.request_number = attempt, number
                if found.step is None:  # upstream records the message before its step
                    found.turn, found.step = found.turn or fact.turn, fact.step
                found.history.append(fact)
                self._changed.add(found.message_id)
                self._awaiting_answer.append(found)
        self._awaiting_request = []

    def _replied(self, fact: Fact) -> None:
        if fact.detail == "interrupted":
            return
        # a log that keeps no stream chunks (the runtime's) shows no request: the reply is
        # the evidence the request reached the model
        for found in [*self._awaiting_answer, *self._awaiting_request]:
            if found.state == SENT:
                found.state, found.answer_seq = ANSWERED, fact.seq
                if found.step is None:
                    found.turn, found.step = found.turn or fact.turn, fact.step
                found.history.append(fact)
                self._changed.add(found.message_id)
        self._awaiting_answer, self._awaiting_request = [], []

    def _turn_ended(self, fact: Fact) -> None:
        for found in self._claimed:
            if found.state == CLAIMED:
                found.state, found.detail = OFFERED, f"turn {fact.turn} {fact.detail}"
                found.history.append(fact)
                self._changed.add(found.message_id)
        self._claimed = []
        for found in [*self._awaiting_request, *self._awaiting_answer]:
            if found.state == SENT:
                found.detail = f"no answer: turn {fact.turn} {fact.detail}"
                self._changed.add(found.message_id)
        self._awaiting_request, self._awaiting_answer = [], []
        self._waiting.clear()


def receipts_of(events: Sequence[Any], seed_length: int = 0) -> ReceiptBook:
    """A settled book over a whole log (a stored one, or a live one read back)."""
    return ReceiptBook(seed_length).apply_all(events)

