"""The inbox: the durable projection of an agent's pending work.

Two ordered lists (`next-turn` prompts, `next-step` steering and context). Every
change is one normalised splice that is written to the session *before* the
projection changes, so the log alone can rebuild the inbox after a crash.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any, Literal, Protocol, cast

from .messages import UserMessage
from .session import Session

InboxTarget = Literal["next-turn", "next-step"]
TARGETS: tuple[InboxTarget, InboxTarget] = ("next-turn", "next-step")


class InboxError(ValueError):
    """An inbox operation refused (invalid splice, an id already pending); nothing was
    written or changed."""


class InboxNotifications(Protocol):
    """Who hears the inbox change (the agent forwards these as `agent/inbox/*` events).
    They are called after the durable splice and after the lists changed (docs/contract.md
    §1.6.10), so a listener reads the inbox as it now is."""

    def inserted(self, message: UserMessage) -> None:
        """A message entered a list (an append, a replace's successor, a move's arrival)."""

    def discarded(self, message: UserMessage) -> None:
        """A public operation removed a pending message (never called for a claim)."""

    def claimed(self, message: UserMessage, turn: int) -> None:
        """The loop took the message for `turn`; it is no longer pending."""


class _Silent:
    def inserted(self, message: UserMessage) -> None:
        pass

    def discarded(self, message: UserMessage) -> None:
        pass

    def claimed(self, message: UserMessage, turn: int) -> None:
        pass


def _normalise_index(value: Any, length: int) -> int:
    if isinstance(value, float):
        if math.isnan(value):
            return 0
        if math.isinf(value):
            return length if value > 0 else 0
    number = int(value)  # truncates toward zero
    if number < 0:
        return max(length + number, 0)
    return min(number, length)


def _normalise_count(value: Any, available: int) -> int:
    if isinstance(value, float):
        if math.isnan(value):
            return 0
        if math.isinf(value):
            return available if value > 0 else 0
    return min(max(int(value), 0), available)


def _check_target(target: str) -> InboxTarget:
    if target not in TARGETS:
        raise InboxError(f'inbox target must be "next-turn" or "next-step", got {target!r}')
    return target


class Inbox:
    """`agent.inbox`: read `next_turn` / `next_step`, mutate through the public operations."""

    def __init__(self, session: Session, notifications: InboxNotifications | None = None) -> None:
        self.session = session
        self.notifications: InboxNotifications = notifications or _Silent()
        self._lists: dict[str, list[UserMessage]] = {"next-turn": [], "next-step": []}
        self._ids: dict[str, list[str]] = {"next-turn": [], "next-step": []}
        self._where: dict[str, str] = {}
        self._snapshots: dict[str, tuple[UserMessage, ...] | None] = {"next-turn": (),
                                                                     "next-step": ()}
        start = session.header.get("seedLength", 0) or 0
        for event in session.events[start:]:
            if event.type != "agent/inbox/spliced":
                continue
            try:
                data = event.data
                inserted = [UserMessage.from_json(m) for m in data.get("inserted", [])]
                self._validate(data["target"], data["start"], data.get("removedCount", 0),
                               inserted)
                self._apply(data["target"], data["start"], data.get("removedCount", 0), inserted)
            except Exception as error:
                raise InboxError(
                    f"invalid persisted inbox splice at session seq {event.seq}") from error

    # -- views --------------------------------------------------------------------------------

    def _snapshot(self, target: str) -> tuple[UserMessage, ...]:
        snap = self._snapshots[target]
        if snap is None:
            snap = self._snapshots[target] = tuple(self._lists[target])
        return snap

    @property
    def next_turn(self) -> tuple[UserMessage, ...]:
        """Pending prompts, oldest first: each opens a turn of its own. A snapshot (a tuple
        made once per change), safe to hold while the inbox changes."""
        return self._snapshot("next-turn")

    @property
    def next_step(self) -> tuple[UserMessage, ...]:
        """Pending steering and context for the nearest step boundary, oldest first; the
        next claim takes all of it (a snapshot, like `next_turn`)."""
        return self._snapshot("next-step")

    @property
    def has_pending(self) -> bool:
        """Whether either list holds anything (what a wake and a latch replay check)."""
        return bool(self._lists["next-turn"]) or bool(self._lists["next-step"])

    def __len__(self) -> int:
        return len(self._lists["next-turn"]) + len(self._lists["next-step"])

    def locate(self, message_id: str) -> tuple[InboxTarget, int] | None:
        """Where a pending id sits: (target, index), `next-turn` searched first."""
        target = self._where.get(message_id)
        if target is None:
            return None
        return cast(InboxTarget, target), self._ids[target].index(message_id)

    def get(self, message_id: str) -> UserMessage | None:
        """The pending message with this id, or None once claimed or removed."""
        found = self.locate(message_id)
        return self._lists[found[0]][found[1]] if found else None

    # -- public operations --------------------------------------------------------------------

    def append(self, target: InboxTarget, message: UserMessage | Mapping[str, Any]) -> None:
        """Queue `message` at the end of `target`: one `+` splice, then `inserted`. Raises
        (nothing written) when its id is already pending in either list."""
        target = _check_target(target)
        self._mutate(target, len(self._lists[target]), 0, [message], True)

    def prepend(self, target: InboxTarget, message: UserMessage | Mapping[str, Any]) -> None:
        """Queue `message` at the head of `target`: it goes before everything pending there
        (one `+` splice at 0, then `inserted`)."""
        self._mutate(_check_target(target), 0, 0, [message], True)

    def splice(self, target: InboxTarget, start: int | float, delete_count: int | float,
               inserted: Iterable[UserMessage | Mapping[str, Any]] = ()) -> list[UserMessage]:
        """The general form: remove `delete_count` items at `start` and insert `inserted`
        there, in one durable splice (`outcome: canceled` when anything is removed); then
        `discarded` per removed item and `inserted` per new one. Returns the removed."""
        return self._mutate(_check_target(target), start, delete_count, list(inserted), True)

    def replace(self, message_id: str, new: UserMessage | Mapping[str, Any]) -> bool:
        """Swap a pending message in place (same position; an edit keeps its id). False,
        with nothing written, when the id is no longer pending (the loop claimed it: the
        UI then offers to send the text as new). Logged as canceled + inserted."""
        found = self.locate(message_id)
        if found is None:
            return False
        self._mutate(found[0], found[1], 1, [new], True)
        return True

    def remove(self, message_id: str) -> bool:
        """Drop a pending message (`outcome: canceled`, then `discarded`). False when it is
        no longer pending: a claimed message cannot be taken back."""
        found = self.locate(message_id)
        if found is None:
            return False
        self._mutate(found[0], found[1], 1, [], True)
        return True

    def clear(self) -> None:
        """Drop everything pending: `next-step` first, then `next-turn` (two splices, each
        skipped when its list is empty), `discarded` for each item in that order."""
        self._mutate("next-step", 0, len(self._lists["next-step"]), [], True)
        self._mutate("next-turn", 0, len(self._lists["next-turn"]), [], True)

    def move(self, message_id: str, target: InboxTarget, index: int) -> bool:
        """Move a pending item (same id) to `index` of `target` (as if removed, then inserted).

        Two durable splices, within a lane as between lanes: a removal and an insertion,
        both without `outcome` (nothing is discarded), so a move costs the same whatever
        the distance (one splice rewriting the range between the two places copied up to
        the whole list into the log: 12 ms a move in a 10,000-item inbox). A crash between
        the two leaves a removal that the loader's repair puts back where it was
        (`persistence.requeue`), so no cut of the log loses the item. Notifies
        `inserted(message)` once; never `discarded`. Moving an item to where it is
        already logs nothing.
        """
        target = _check_target(target)
        found = self.locate(message_id)
        if found is None:
            return False
        source, position = found
        message = self._lists[source][position]
        if source == target:
            final = _normalise_index(index, len(self._lists[target]) - 1)
            if final == position:
                return True
        else:
            final = _normalise_index(index, len(self._lists[target]))
        self._record(source, position, 1, [])
        self._record(target, final, 0, [message])
        self.notifications.inserted(message)
        return True

    def _record(self, target: InboxTarget, start: int, removed: int,
                inserted: list[UserMessage]) -> None:
        """One splice without outcome and without notifications (a move's parts)."""
        self._validate(target, start, removed, inserted)
        record: dict[str, Any] = {"target": target, "start": start}
        if removed:
            record["removedCount"] = removed
        record["inserted"] = inserted
        event = self.session.append("agent/inbox/spliced", record)
        self._apply(target, start, removed,
                    [UserMessage.from_json(m) for m in event.data["inserted"]])

    def claim(self, target: InboxTarget, turn: int) -> list[UserMessage]:
        """Loop-internal: take all of `next-step` (+ the first prompt for a turn start)."""
        claimed = self._mutate("next-step", 0, len(self._lists["next-step"]), [], False)
        if target == "next-turn":
            claimed.extend(self._mutate("next-turn", 0, 1, [], False))
        for message in claimed:
            self.notifications.claimed(message, turn)
        return claimed

    # -- the single primitive -----------------------------------------------------------------

    def _mutate(self, target: InboxTarget, start: Any, delete_count: Any,
                inserted: list[UserMessage | Mapping[str, Any]],
                discard_removed: bool) -> list[UserMessage]:
        items = self._lists[target]
        actual_start = _normalise_index(start, len(items))
        actual_delete = _normalise_count(delete_count, len(items) - actual_start)
        if actual_delete == 0 and not inserted:
            return []
        messages = [UserMessage.from_json(m) for m in inserted]
        self._validate(target, actual_start, actual_delete, messages)
        record: dict[str, Any] = {"target": target, "start": actual_start}
        if actual_delete:
            record["removedCount"] = actual_delete
        record["inserted"] = messages
        if discard_removed and actual_delete:
            record["outcome"] = "canceled"
        event = self.session.append("agent/inbox/spliced", record)
        stored = [UserMessage.from_json(m) for m in event.data["inserted"]]
        removed = self._apply(target, actual_start, actual_delete, stored)
        if discard_removed:
            for message in removed:
                self.notifications.discarded(message)
        for message in stored:
            self.notifications.inserted(message)
        return removed

    def _validate(self, target: str, start: Any, removed_count: Any,
                  inserted: list[UserMessage]) -> None:
        items = self._lists.get(target)
        if items is None or type(start) is not int or type(removed_count) is not int or \
                start < 0 or start > len(items) or removed_count < 0 or \
                start + removed_count > len(items):
            raise InboxError("invalid inbox splice")
        if not inserted:
            return
        leaving = set(self._ids[target][start:start + removed_count]) if removed_count else ()
        seen: set[str] = set()
        for message in inserted:
            message_id = message.id
            if message_id in seen or (message_id in self._where and message_id not in leaving):
                raise InboxError(f'message "{message_id}" is already pending')
            seen.add(message_id)

    def _apply(self, target: str, start: int, removed_count: int,
               inserted: list[UserMessage]) -> list[UserMessage]:
        items = self._lists[target]
        ids = self._ids[target]
        removed = items[start:start + removed_count]
        items[start:start + removed_count] = inserted
        ids[start:start + removed_count] = [m.id for m in inserted]
        for message in removed:
            self._where.pop(message.id, None)
        for message in inserted:
            self._where[message.id] = target
        self._snapshots[target] = None
        return removed
