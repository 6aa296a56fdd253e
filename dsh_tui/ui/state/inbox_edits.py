"""Inbox edits a person can undo and redo: each one named, each a composition of the
public inbox operations (docs/contract.md §2.3), each knowing how to go back.

An edit captures what it needs when made, so a redo reproduces the very state the first
apply made, with the same ids. An apply or revert first checks that the items it touches
are where it expects, else raises `EditRefused` with nothing written, so a failed undo
never leaves half an edit behind (the rules are on `Edit`). Merge and split mark the
messages they make on their source, so a log read later can say what happened.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from dsh_tui.harness.inbox import InboxTarget
from dsh_tui.harness.messages import UserMessage, new_id
from dsh_tui.harness.surface import InboxSurface

from .inbox_rules import index_of, list_of
from .lanes import LANE_TARGET, lane_of, with_lane
from .text import short_id

Inboxes = Callable[[str], InboxSurface | None]
"""Agent id → its inbox (None once the agent is gone): `ctx.agents.get(id).inbox`."""

MERGE_SEPARATOR = "\n\n"


class EditRefused(RuntimeError):
    """An edit could not be applied or reverted as it stands; nothing was written."""


@dataclass(frozen=True, slots=True)
class Item:
    """A pending message and where it sits: agent, list, index."""

    agent: str
    message: UserMessage
    target: InboxTarget
    index: int

    @property
    def id(self) -> str:
        """The message id."""
        return self.message.id


def _inbox(inboxes: Inboxes, agent: str) -> InboxSurface:
    inbox = inboxes(agent)
    if inbox is None:
        raise EditRefused(f"agent {agent} is gone")
    return inbox


def _need_pending(inbox: InboxSurface, *ids: str) -> None:
    for message_id in ids:
        if inbox.get(message_id) is None:
            raise EditRefused(f"#{short_id(message_id)} is no longer pending "
                              "(claimed or removed)")


def _need_absent(inbox: InboxSurface, *ids: str) -> None:
    for message_id in ids:
        if inbox.get(message_id) is not None:
            raise EditRefused(f"#{short_id(message_id)} is already pending")


def _insert(inbox: InboxSurface, target: InboxTarget, index: int,
            messages: Sequence[UserMessage]) -> None:
    if messages:
        inbox.splice(target, min(index, len(list_of(inbox, target))), 0, list(messages))


class Edit:
    """One named, undoable inbox edit.

    An edit captures what it needs when it is made (messages, ids, places), so it can be
    applied, reverted and applied again with the same ids. Before writing anything an
    apply or revert checks that the items it touches are where it expects (pending, or
    not pending); if not (the agent claimed one meanwhile) it raises `EditRefused` with
    nothing written. Merge and split mark the messages they make (`mergedFrom`,
    `splitFrom`; `movedFrom`/`copiedFrom` across agents) on their source, so a log read
    later (the timeline, the receipts) can say what happened.
    """

    name: str = "edit"
    agents: tuple[str, ...] = ()
    """The agents whose inboxes it touches (the screen refreshes those)."""
    detail: str = ""
    """What the last apply or revert did when it was less than the whole edit (a
    broadcast some of whose copies had already gone to their models); "" otherwise."""

    def apply(self, inboxes: Inboxes) -> None:
        """Do it (or do it again, for a redo). Raises EditRefused, nothing written."""
        raise NotImplementedError

    def revert(self, inboxes: Inboxes) -> None:
        """Undo it. Raises EditRefused, nothing written."""
        raise NotImplementedError


@dataclass(eq=False)
class Remove(Edit):
    """Remove items (one, or a clear's worth); revert puts each back at its index."""

    items: list[Item]
    name: str = ""

    def __post_init__(self) -> None:
        self.agents = tuple(dict.fromkeys(item.agent for item in self.items))
        if not self.name:
            count = len(self.items)
            self.name = f"remove #{short_id(self.items[0].id)}" if count == 1 \
                else f"remove {count} items"

    def apply(self, inboxes: Inboxes) -> None:
        """Remove each item (all must be pending)."""
        for item in self.items:
            _need_pending(_inbox(inboxes, item.agent), item.id)
        for item in self.items:
            _inbox(inboxes, item.agent).remove(item.id)

    def revert(self, inboxes: Inboxes) -> None:
        """Insert each back at its index, lowest first per list."""
        for item in self.items:
            _need_absent(_inbox(inboxes, item.agent), item.id)
        for item in sorted(self.items, key=lambda i: (i.agent, i.target, i.index)):
            _insert(_inbox(inboxes, item.agent), item.target, item.index, [item.message])


@dataclass(eq=False)
class Replace(Edit):
    """Swap a pending message's text or source in place (same id): an edit of its text."""

    agent: str
    old: UserMessage
    new: UserMessage
    name: str = ""

    def __post_init__(self) -> None:
        self.agents = (self.agent,)
        self.name = self.name or f"edit #{short_id(self.old.id)}"

    def _swap(self, inboxes: Inboxes, to: UserMessage) -> None:
        inbox = _inbox(inboxes, self.agent)
        _need_pending(inbox, self.old.id)
        inbox.replace(self.old.id, to)

    def apply(self, inboxes: Inboxes) -> None:
        """Swap in the new message."""
        self._swap(inboxes, self.new)

    def revert(self, inboxes: Inboxes) -> None:
        """Swap the old message back."""
        self._swap(inboxes, self.old)


@dataclass(eq=False)
class Move(Edit):
    """Move an item to another place of its agent's inbox (same id, either list)."""

    item: Item
    target: InboxTarget
    index: int
    name: str = ""

    def __post_init__(self) -> None:
        self.agents = (self.item.agent,)
        if not self.name:
            where = "up" if self.target == self.item.target and self.index < self.item.index \
                else "down" if self.target == self.item.target \
                else f"to {self.target} {self.index + 1}"
            self.name = f"move #{short_id(self.item.id)} {where}"

    def apply(self, inboxes: Inboxes) -> None:
        """Move it to its new place."""
        inbox = _inbox(inboxes, self.item.agent)
        _need_pending(inbox, self.item.id)
        inbox.move(self.item.id, self.target, self.index)

    def revert(self, inboxes: Inboxes) -> None:
        """Move it back to where it was."""
        inbox = _inbox(inboxes, self.item.agent)
        _need_pending(inbox, self.item.id)
        inbox.move(self.item.id, self.item.target, self.item.index)


@dataclass(eq=False)
class Refile(Edit):
    """Re-file an item into another lane, keeping its index (clamped to the new list)."""

    item: Item
    lane: str
    name: str = ""

    def __post_init__(self) -> None:
        self.agents = (self.item.agent,)
        self.name = self.name or f"re-file #{short_id(self.item.id)} as {self.lane}"

    def apply(self, inboxes: Inboxes) -> None:
        """Put it in the new lane, keeping its index."""
        inbox = _inbox(inboxes, self.item.agent)
        _need_pending(inbox, self.item.id)
        target: InboxTarget = "next-turn" if LANE_TARGET[self.lane] == "next-turn" \
            else "next-step"
        current = inbox.get(self.item.id)
        assert current is not None
        updated = UserMessage.from_json({**current.to_json(),
                                         "source": with_lane(current.source, self.lane)})
        if target != self.item.target:
            source_index = index_of(inbox, self.item.target, self.item.id)
            length = len(list_of(inbox, target))
            index = length if source_index is None else min(source_index, length)
            inbox.move(self.item.id, target, index)
        inbox.replace(self.item.id, updated)

    def revert(self, inboxes: Inboxes) -> None:
        """Put it back in its old list and lane."""
        inbox = _inbox(inboxes, self.item.agent)
        _need_pending(inbox, self.item.id)
        if index_of(inbox, self.item.target, self.item.id) is None:
            inbox.move(self.item.id, self.item.target, self.item.index)
        inbox.replace(self.item.id, self.item.message)


@dataclass(eq=False)
class Merge(Edit):
    """Merge items of one list into the first of them (in inbox order): its text becomes
    theirs joined, in order; the others leave. One turn instead of several."""

    items: list[Item]
    name: str = ""
    merged: UserMessage | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        if len(self.items) < 2:
            raise EditRefused("merge needs at least two items")
        agents = {item.agent for item in self.items}
        targets = {item.target for item in self.items}
        if len(agents) != 1 or len(targets) != 1:
            raise EditRefused("merge takes items of one agent's one list (follow-ups with "
                              "follow-ups, steering with steering)")
        self.items = sorted(self.items, key=lambda i: i.index)
        self.agents = (self.items[0].agent,)
        first = self.items[0].message
        text = MERGE_SEPARATOR.join(item.message.text for item in self.items)
        source = dict(first.source)
        source["mergedFrom"] = [item.id for item in self.items]
        self.merged = UserMessage.from_json({**first.with_text(text).to_json(),
                                             "source": source})
        lane = lane_of(first.source, self.items[0].target)
        self.name = self.name or f"merge {len(self.items)} {lane}s into #{short_id(first.id)}"

    def apply(self, inboxes: Inboxes) -> None:
        """Replace the first with the merged text; remove the others."""
        inbox = _inbox(inboxes, self.agents[0])
        _need_pending(inbox, *(item.id for item in self.items))
        assert self.merged is not None
        inbox.replace(self.items[0].id, self.merged)
        for item in self.items[1:]:
            inbox.remove(item.id)

    def revert(self, inboxes: Inboxes) -> None:
        """Restore the first; insert the others back where they were."""
        inbox = _inbox(inboxes, self.agents[0])
        _need_pending(inbox, self.items[0].id)
        _need_absent(inbox, *(item.id for item in self.items[1:]))
        inbox.replace(self.items[0].id, self.items[0].message)
        for item in self.items[1:]:
            _insert(inbox, item.target, item.index, [item.message])


@dataclass(eq=False)
class Split(Edit):
    """Split an item at `cursor`: it keeps the text before, a new item right after it
    takes the rest (same lane and source, `splitFrom` naming the original)."""

    item: Item
    cursor: int
    name: str = ""
    head: UserMessage | None = field(default=None, init=False)
    tail: UserMessage | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        text = self.item.message.text
        before, after = text[:self.cursor].rstrip(), text[self.cursor:].lstrip()
        if not before or not after:
            raise EditRefused("split needs text on both sides of the cursor")
        self.agents = (self.item.agent,)
        self.head = self.item.message.with_text(before)
        source = dict(self.item.message.source)
        source.pop("mergedFrom", None)
        source["splitFrom"] = self.item.id
        self.tail = UserMessage.from_json({"id": new_id(), "role": "user",
                                           "content": [{"type": "text", "text": after}],
                                           "source": source})
        self.name = self.name or f"split #{short_id(self.item.id)}"

    def apply(self, inboxes: Inboxes) -> None:
        """Shorten the item; insert the rest right after it."""
        inbox = _inbox(inboxes, self.item.agent)
        assert self.head is not None and self.tail is not None
        _need_pending(inbox, self.item.id)
        _need_absent(inbox, self.tail.id)
        inbox.replace(self.item.id, self.head)
        now = item_of(inbox, self.item.agent, self.item.id)
        assert now is not None
        _insert(inbox, now.target, now.index + 1, [self.tail])

    def revert(self, inboxes: Inboxes) -> None:
        """Remove the tail; restore the whole text."""
        inbox = _inbox(inboxes, self.item.agent)
        assert self.tail is not None
        _need_pending(inbox, self.item.id, self.tail.id)
        inbox.remove(self.tail.id)
        inbox.replace(self.item.id, self.item.message)


@dataclass(eq=False)
class Transfer(Edit):
    """Move (same id) or copy (a new id) items to another agent's inbox, each to the end
    of the list its lane lives in; the source names where it came from."""

    items: list[Item]
    to_agent: str
    copy: bool = False
    to_name: str = ""
    name: str = ""
    sent: list[UserMessage] = field(default_factory=list, init=False)

    def __post_init__(self) -> None:
        if not self.items:
            raise EditRefused("nothing to move")
        if any(item.agent == self.to_agent for item in self.items):
            raise EditRefused("an item is already in that agent's inbox")
        self.items = sorted(self.items, key=lambda i: (i.agent, i.target, i.index))
        self.agents = tuple(dict.fromkeys([*(i.agent for i in self.items), self.to_agent]))
        key = "copiedFrom" if self.copy else "movedFrom"
        for item in self.items:
            source: dict[str, Any] = dict(item.message.source)
            source.pop("movedFrom", None)
            source.pop("copiedFrom", None)
            source[key] = {"agent": item.agent, "id": item.id}
            self.sent.append(UserMessage.from_json({
                **item.message.to_json(), "id": new_id() if self.copy else item.id,
                "source": source}))
        count = len(self.items)
        what = f"#{short_id(self.items[0].id)}" if count == 1 else f"{count} items"
        self.name = self.name or \
            f"{'copy' if self.copy else 'move'} {what} to {self.to_name or self.to_agent}"

    def apply(self, inboxes: Inboxes) -> None:
        """Send each to the other agent (and, for a move, take it out here)."""
        destination = _inbox(inboxes, self.to_agent)
        _need_absent(destination, *(m.id for m in self.sent))
        if not self.copy:
            for item in self.items:
                _need_pending(_inbox(inboxes, item.agent), item.id)
        for item, message in zip(self.items, self.sent, strict=True):
            if not self.copy:
                _inbox(inboxes, item.agent).remove(item.id)
            destination.append(item.target, message)

    def revert(self, inboxes: Inboxes) -> None:
        """Take them out of the other agent (and, for a move, put each back here)."""
        destination = _inbox(inboxes, self.to_agent)
        _need_pending(destination, *(m.id for m in self.sent))
        if not self.copy:
            for item in self.items:
                _need_absent(_inbox(inboxes, item.agent), item.id)
        for message in self.sent:
            destination.remove(message.id)
        if not self.copy:
            for item in self.items:
                _insert(_inbox(inboxes, item.agent), item.target, item.index, [item.message])


def item_of(inbox: InboxSurface, agent: str, message_id: str) -> Item | None:
    """The pending item `message_id` of `agent`, with its place; None when not pending."""
    for target in ("next-turn", "next-step"):
        index = index_of(inbox, target, message_id)
        if index is not None:
            found = list_of(inbox, target)[index]
            return Item(agent, found, "next-turn" if target == "next-turn" else "next-step",
                        index)
    return None


def transfer_targets(agents: Any, agent_id: str,
                     marked: Collection[str] = ()) -> list[tuple[str, str]]:
    """Where items of `agent_id` may be moved or copied, as (agent id, relation): its
    parent, its children, the marked agents, in that order; every other agent when it has
    none of those. `agents` is `ctx.agents` (`owner_of`, `children_of`, `get`, `list`)."""
    out: dict[str, str] = {}
    owner = agents.owner_of(agent_id)
    if owner is not None:
        out[owner.id] = "parent"
    me = agents.get(agent_id)
    for child in agents.children_of(me) if me is not None else ():
        out.setdefault(child.id, "child")
    for other in marked:
        if other != agent_id and agents.get(other) is not None:
            out.setdefault(other, "marked")
    if not out:
        for other in agents.list():
            if other.id != agent_id:
                out.setdefault(other.id, "agent")
    return list(out.items())
