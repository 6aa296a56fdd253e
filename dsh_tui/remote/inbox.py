"""A runtime agent's inbox: the runtime's pending items, plus what this client has not sent yet.

The two lists are rebuilt from the durable `agent/inbox/spliced` events exactly as the
runtime folds them (its `inbox` projection). Editing goes through the runtime's queue
API (`session/updateQueue`: edit, remove, promote to steer), which answers later, so an
edit returns at once and its durable splice arrives through the stream; when the runtime
refuses (the item was claimed meanwhile) the agent says so in one line and keeps the
person's text. Messages this client is sending, or failed to send, wait in a local outbox
shown at the end of their list, so nothing typed disappears before the runtime has it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from dsh_tui.harness.inbox import InboxTarget
from dsh_tui.harness.messages import UserMessage

if TYPE_CHECKING:
    from .agent import RemoteAgent


class UnavailableError(RuntimeError):
    """A gesture the runtime's API does not offer; the message is the one-line reason."""


REORDER = "the dsh runtime's queue API cannot reorder queued items"
PUT_BACK = "the dsh runtime's queue API cannot put an item back at a position"


@dataclass
class Outgoing:
    """A message on its way to the runtime (`sending`) or refused by it (`unsent`)."""

    message: UserMessage
    target: InboxTarget
    state: Literal["sending", "unsent"] = "sending"
    error: str = ""


class RemoteInbox:
    """The `InboxSurface` of a runtime agent (see the module docstring)."""

    def __init__(self, agent: RemoteAgent) -> None:
        self._agent = agent
        self._lists: dict[str, list[UserMessage]] = {"next-turn": [], "next-step": []}
        self.outbox: list[Outgoing] = []

    # -- reading -----------------------------------------------------------------------------

    def _with_outbox(self, target: str) -> tuple[UserMessage, ...]:
        held = self._lists[target]
        waiting = [o.message for o in self.outbox if o.target == target]
        return tuple(held + waiting) if waiting else tuple(held)

    @property
    def next_turn(self) -> tuple[UserMessage, ...]:
        """Pending prompts (the runtime's, then this client's outbox), oldest first."""
        return self._with_outbox("next-turn")

    @property
    def next_step(self) -> tuple[UserMessage, ...]:
        """Pending steering (the runtime's, then this client's outbox), oldest first."""
        return self._with_outbox("next-step")

    @property
    def has_pending(self) -> bool:
        """Whether either list (or the outbox) holds anything."""
        return bool(self._lists["next-turn"] or self._lists["next-step"] or self.outbox)

    def get(self, message_id: str) -> UserMessage | None:
        """The pending message with this id (the runtime's or the outbox's), else None."""
        found = self.runtime_item(message_id)
        if found is not None:
            return found[1]
        outgoing = self.outgoing(message_id)
        return outgoing.message if outgoing is not None else None

    def runtime_pending(self, target: str) -> tuple[UserMessage, ...]:
        """What the runtime itself holds pending in `target` (the outbox left out)."""
        return tuple(self._lists.get(target, ()))

    def runtime_item(self, message_id: str) -> tuple[InboxTarget, UserMessage] | None:
        """(list, message) of an item the runtime holds pending."""
        for target in ("next-turn", "next-step"):
            for message in self._lists[target]:
                if message.id == message_id:
                    return ("next-turn" if target == "next-turn" else "next-step"), message
        return None

    def outgoing(self, message_id: str) -> Outgoing | None:
        """The outbox entry of a message this client has not delivered yet."""
        return next((o for o in self.outbox if o.message.id == message_id), None)

    # -- the durable fold (the agent calls this between the event and its notifications) ------

    def apply_splice(self, data: Any) -> tuple[list[UserMessage], list[UserMessage]]:
        """Apply one durable splice; returns (removed, inserted). An invalid splice (a list
        or range the runtime would not write) changes nothing and returns nothing."""
        if not isinstance(data, Mapping):
            return [], []
        items = self._lists.get(str(data.get("target")))
        start, count = data.get("start", 0), data.get("removedCount", 0)
        if items is None or type(start) is not int or type(count) is not int \
                or not 0 <= start <= len(items) or count < 0:
            return [], []
        inserted: list[UserMessage] = []
        for record in data.get("inserted") or ():
            try:
                inserted.append(UserMessage.from_json(record))
            except (TypeError, ValueError):
                continue
        removed = items[start:start + count]
        items[start:start + count] = inserted
        for message in inserted:  # this client's message reached the runtime: out of the outbox
            request = message.source.get("rpcId")
            if isinstance(request, str):
                self.outbox = [o for o in self.outbox if o.message.id != request]
        return removed, inserted

    # -- edits --------------------------------------------------------------------------------

    def replace(self, message_id: str, new: UserMessage) -> bool:
        """Edit a pending item's text (same id). False when it is not pending (claimed). An
        outbox item changes here; a runtime item is edited by the runtime (text only)."""
        outgoing = self.outgoing(message_id)
        if outgoing is not None:
            outgoing.message = UserMessage(message_id, new.content, outgoing.message.source)
            self._agent.inbox_changed()
            return True
        found = self.runtime_item(message_id)
        if found is None:
            return False
        if new.text == found[1].text:
            return True  # only the badge changed: the runtime keeps no lanes
        self._agent.edit_item(message_id, new.text, found[0])
        return True

    def remove(self, message_id: str) -> bool:
        """Drop a pending item (an outbox one here, a runtime one by the runtime); False
        when it is not pending."""
        outgoing = self.outgoing(message_id)
        if outgoing is not None:
            self.outbox.remove(outgoing)
            self._agent.inbox_changed()
            return True
        if self.runtime_item(message_id) is None:
            return False
        self._agent.remove_item(message_id)
        return True

    def clear(self) -> None:
        """Drop everything pending: the outbox here, each runtime item by the runtime."""
        self.outbox.clear()
        for message in (*self._lists["next-step"], *self._lists["next-turn"]):
            self._agent.remove_item(message.id)
        self._agent.inbox_changed()

    def move(self, message_id: str, target: InboxTarget, index: int) -> bool:
        """Only one move exists remotely: a queued follow-up into the steer lane while the
        agent runs (`promote to steer`). Anything else raises UnavailableError."""
        found = self.runtime_item(message_id)
        if found is None:
            if self.outgoing(message_id) is not None:
                raise UnavailableError("this message has not reached the runtime yet")
            return False
        source, _message = found
        if source == target:
            raise UnavailableError(REORDER)
        if source != "next-turn":
            raise UnavailableError("the dsh runtime can only promote a queued follow-up to "
                                   "steer, not move steering back")
        reason = self._agent.capabilities.reason("promote_to_steer")
        if reason is None and self._agent.status != "running":
            reason = "the dsh runtime promotes to steer only while the agent runs"
        if reason is not None:
            raise UnavailableError(reason)
        self._agent.promote_item(message_id)
        return True

    def append(self, target: InboxTarget, message: UserMessage) -> None:
        """Refused: the runtime queues only through a send (followup or steer)."""
        raise UnavailableError(PUT_BACK)

    def prepend(self, target: InboxTarget, message: UserMessage) -> None:
        """Refused: the runtime cannot put an item at the head of a list."""
        raise UnavailableError(PUT_BACK)

    def splice(self, target: InboxTarget, start: int, delete_count: int,
               inserted: Iterable[UserMessage] = ()) -> list[UserMessage]:
        """Refused: the runtime's queue API has no general splice."""
        raise UnavailableError(PUT_BACK)
