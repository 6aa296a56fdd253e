"""The inbox rules the screen applies for a person: move, re-file, undo, put back, deliver.

Each rule is a plain function over the public Inbox calls (`move`, `replace`, `splice`)
and the state layer's records (tombstones, unsent offers), so the ordering rules the
person relies on (each stated on its function) are tested without a screen. The screen
decides *whether* a rule may run (read-only, nothing selected) and says what happened;
these functions only do it and report.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from dsh_tui.harness.agent import Agent
from dsh_tui.harness.inbox import InboxTarget
from dsh_tui.harness.messages import UserMessage
from dsh_tui.harness.surface import InboxSurface

from .inbox_rows import Tombstone
from .lanes import LANE_TARGET, LANES, with_lane
from .unsent import Unsent


def pending_count(inbox: InboxSurface) -> int:
    """Everything waiting in both lists."""
    return len(inbox.next_turn) + len(inbox.next_step)


def list_of(inbox: InboxSurface, target: str) -> tuple[UserMessage, ...]:
    """The pending list `target` names (next-turn or next-step)."""
    return inbox.next_turn if target == "next-turn" else inbox.next_step


def move_destination(inbox: InboxSurface, target: str, index: int, delta: int) -> int | None:
    """Where the item at `index` of `target` goes when moved by `delta` places within its
    list; None when that would leave the list (the move is refused, nothing changes).
    A move keeps the id and never leaves the item's list."""
    destination = index + delta
    return destination if 0 <= destination < len(list_of(inbox, target)) else None


def next_lane(lane: str, target: str) -> str:
    """The lane after `lane` in the cycle follow-up → steer → inject → follow-up; a badge
    that is not a lane (context, message) counts as the lane its list implies."""
    current = lane if lane in LANES else ("follow-up" if target == "next-turn" else "steer")
    return LANES[(LANES.index(current) + 1) % len(LANES)]


def index_of(inbox: InboxSurface, target: str, message_id: str) -> int | None:
    """The index of pending `message_id` in `target`, or None."""
    for index, message in enumerate(list_of(inbox, target)):
        if message.id == message_id:
            return index
    return None


def refile(inbox: InboxSurface, message: UserMessage, lane: str, target: InboxTarget,
           new_lane: str | None = None) -> str:
    """Re-file `message` (pending in `target`, badged `lane`) into `new_lane` (default:
    the next lane in the cycle); returns that lane. Same id; a change of list keeps its
    index (clamped to the new list's end): follow-up lives in next-turn, steer and inject
    in next-step, so cycling an item through the lanes brings it back where it was."""
    new_lane = new_lane if new_lane in LANES else next_lane(lane, target)
    new_target: InboxTarget = "next-turn" if LANE_TARGET[new_lane] == "next-turn" \
        else "next-step"
    updated = UserMessage.from_json({**message.to_json(),
                                     "source": with_lane(message.source, new_lane)})
    if new_target != target:
        index = index_of(inbox, target, message.id)
        destination = len(list_of(inbox, new_target))
        inbox.move(message.id, new_target,
                   destination if index is None else min(index, destination))
    inbox.replace(message.id, updated)
    return new_lane


def undo_choice(tombstones: Sequence[Tombstone],
                highlighted: Tombstone | None = None) -> list[Tombstone]:
    """What undo restores: the highlighted discarded item, else the last discarded batch
    (one removal, one clear or one cancel that discarded). Empty: nothing to undo."""
    if highlighted is not None and highlighted.kind == "discarded":
        return [highlighted]
    discarded = [t for t in tombstones if t.kind == "discarded"]
    if not discarded:
        return []
    last = max(t.batch for t in discarded)
    return [t for t in discarded if t.batch == last]


@dataclass
class Restored:
    """What a put-back did: the tombstones or messages restored, and the errors met."""

    restored: list[Tombstone] = field(default_factory=list)
    count: int = 0
    errors: list[tuple[str, int, Exception]] = field(default_factory=list)
    """(what: a message id or a list name, how many messages, the error) per failure."""


def undo(inbox: InboxSurface, chosen: Sequence[Tombstone]) -> Restored:
    """Put each chosen tombstone's message back where it was (its index in its list),
    lowest index first per list so the original order returns. A failed splice is
    reported and the rest still go back."""
    done = Restored()
    for tombstone in sorted(chosen, key=lambda t: (t.target, t.index)):
        target: InboxTarget = "next-turn" if tombstone.target == "next-turn" else "next-step"
        try:
            inbox.splice(target, tombstone.index, 0, [tombstone.message])
        except Exception as error:
            done.errors.append((str(tombstone.message.id), 1, error))
            continue
        done.restored.append(tombstone)
        done.count += 1
    return done


def put_back(inbox: InboxSurface, offered: Sequence[Unsent]) -> Restored:
    """Insert claimed-never-sent messages at the head of their lists, oldest first, as
    one splice per list (same ids and text)."""
    done = Restored()
    for target in ("next-step", "next-turn"):
        batch = [UserMessage.from_json(u.message) for u in offered if u.target == target]
        if not batch:
            continue
        try:
            inbox.splice(target, 0, 0, batch)
        except Exception as error:
            done.errors.append((target, len(batch), error))
            continue
        done.count += len(batch)
    return done


def deliver_kept(agent: Agent) -> int:
    """Wake an idle agent on the work it kept (after a stop), in the order it waits;
    returns how many items were pending. Raises what `wake` raises."""
    count = pending_count(agent.inbox)
    agent.wake()
    return count
