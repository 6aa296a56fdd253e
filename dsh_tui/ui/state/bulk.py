"""Acting on many agents at once: marks, broadcast, stops, a subtree's stop, bulk dispose.

The person marks agents (or takes a subtree) and acts once: one message to all in one
lane; stop them keeping their inboxes, now or after the step they are in (docs/contract.md
§3.7); stop a parent with its children keeping or discarding every inbox (a discard is
`cancel` clearing, tombstoned as today); dispose finished children. Each reports the
agents touched and skipped and one error per failing agent (the rest still go). Where the
contract can take it back, the batch is one entry of the session's inbox history
(`state/undo.py`): a broadcast unsends what is still pending, a discard puts every item
back in place. A stop or a disposal cannot be undone.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from dsh_tui.harness.agent import USER_CAUSE, Agent
from dsh_tui.harness.messages import UserMessage, user_message
from dsh_tui.harness.surface import AgentsSurface

from .inbox_edits import Edit, EditRefused, Inboxes, Item, Remove, item_of
from .lanes import LANES, source_for
from .text import short_id

SENDERS = {"follow-up": "followup", "steer": "steer", "inject": "inject"}


class Marks:
    """The marked agents, in the order they were marked."""

    def __init__(self) -> None:
        self._ids: dict[str, None] = {}
        self.version = 0

    def __contains__(self, agent_id: object) -> bool:
        return agent_id in self._ids

    def __len__(self) -> int:
        return len(self._ids)

    @property
    def ids(self) -> list[str]:
        """The marked ids, oldest mark first."""
        return list(self._ids)

    def toggle(self, agent_id: str) -> bool:
        """Mark or unmark; returns whether it is marked now."""
        self.version += 1
        if agent_id in self._ids:
            del self._ids[agent_id]
            return False
        self._ids[agent_id] = None
        return True

    def set(self, agent_ids: Iterable[str]) -> None:
        """Mark exactly these (e.g. a whole subtree)."""
        self._ids = dict.fromkeys(agent_ids)
        self.version += 1

    def clear(self) -> None:
        """Unmark everything."""
        if self._ids:
            self._ids = {}
            self.version += 1

    def prune(self, live: Iterable[str]) -> None:
        """Forget marks of agents that are gone."""
        alive = set(live)
        gone = [agent_id for agent_id in self._ids if agent_id not in alive]
        for agent_id in gone:
            del self._ids[agent_id]
        if gone:
            self.version += 1


@dataclass
class BulkResult:
    """What one bulk action did: agents touched and skipped, errors, and its undo."""

    touched: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    errors: list[tuple[str, Exception]] = field(default_factory=list)
    edit: Edit | None = None
    """The history entry that takes the whole action back as far as the contract allows
    (already done: the screen records it). None: nothing of it can be taken back."""

    def say(self, done: str, skipped_why: str = "", after: str = "") -> str:
        """One line for the person: `Stopped 3 agents, keeping their inboxes (2 were not
        running).` (`after` follows the count)."""
        count = len(self.touched)
        line = f"{done} {count} agent{'s' if count != 1 else ''}{after}"
        if self.skipped and skipped_why:
            line += f" ({len(self.skipped)} {skipped_why})"
        if self.errors:
            agent_id, error = self.errors[0]
            line += f"; {len(self.errors)} failed ({agent_id}: {error})"
        return line + "."


def _plural(count: int, word: str, words: str = "") -> str:
    return f"{count} {word if count == 1 else words or word + 's'}"


class Broadcast(Edit):
    """A broadcast as one history entry. Undo takes back the copies still pending (a
    claimed copy has gone to its model and stays sent; with none pending the undo is
    refused); redo sends those copies again, same ids, through the same lane (a steer or
    a follow-up wakes its agent as the broadcast did)."""

    def __init__(self, sent: list[tuple[Agent, UserMessage, str]]) -> None:
        self.sent = sent
        self.agents = tuple(dict.fromkeys(agent.id for agent, _, _ in sent))
        self.name = f"broadcast to {_plural(len(self.agents), 'agent')}"
        self.unsent = list(sent)
        """The copies the last undo took back (all of them before any undo)."""

    def revert(self, inboxes: Inboxes) -> None:
        """Remove every copy still pending."""
        pending = [(agent, message, lane) for agent, message, lane in self.sent
                   if (inbox := inboxes(agent.id)) is not None
                   and inbox.get(message.id) is not None]
        if not pending:
            raise EditRefused("every copy had already gone to its model")
        for agent, message, _ in pending:
            inbox = inboxes(agent.id)
            if inbox is not None:
                inbox.remove(message.id)
        self.unsent = pending
        left = len(self.sent) - len(pending)
        self.detail = f"{_plural(len(pending), 'copy', 'copies')} unsent, " \
            f"{left} already sent" if left else ""

    def apply(self, inboxes: Inboxes) -> None:
        """Send again what the last undo took back."""
        for agent, message, _ in self.unsent:
            inbox = inboxes(agent.id)
            if inbox is None:
                raise EditRefused(f"agent {agent.id} is gone")
            if inbox.get(message.id) is not None:
                raise EditRefused(f"#{short_id(message.id)} is already pending")
        for agent, message, lane in self.unsent:
            getattr(agent, SENDERS[lane])(message)
        left = len(self.sent) - len(self.unsent)
        self.detail = f"{_plural(len(self.unsent), 'copy', 'copies')} sent again" if left else ""


def subtree(agents: AgentsSurface, root: Agent) -> list[Agent]:
    """`root` and every agent it owns, at any depth, parents before their children."""
    out = [root]
    index = 0
    while index < len(out):
        out.extend(agents.children_of(out[index]))
        index += 1
    return out


def broadcast(targets: Sequence[Agent], text: str, lane: str) -> BulkResult:
    """Send `text` to every target in `lane` (one message each, its own id); its `edit`
    (`Broadcast`) takes back the copies still pending."""
    if lane not in LANES:
        raise ValueError(f"unknown lane {lane!r}")
    result = BulkResult()
    sent: list[tuple[Agent, UserMessage, str]] = []
    for agent in targets:
        message = user_message(text, source=source_for(lane))
        try:
            getattr(agent, SENDERS[lane])(message)
        except Exception as error:
            result.errors.append((agent.id, error))
            continue
        result.touched.append(agent.id)
        sent.append((agent, message, lane))
    result.edit = Broadcast(sent) if sent else None
    return result


def stop(targets: Sequence[Agent], *, after_step: bool = False) -> BulkResult:
    """Stop every running target keeping its inbox: now (`cancel(keep_inbox=True)`), or
    at its next step boundary (`stop_after_step`). Idle targets are skipped."""
    result = BulkResult()
    for agent in targets:
        if agent.status != "running":
            result.skipped.append(agent.id)
            continue
        try:
            if after_step:
                if not agent.stop_after_step():
                    result.skipped.append(agent.id)
                    continue
            else:
                agent.cancel(dict(USER_CAUSE), keep_inbox=True)
        except Exception as error:
            result.errors.append((agent.id, error))
            continue
        result.touched.append(agent.id)
    return result


def _pending(agent: Agent) -> list[Item]:
    """Everything pending in `agent`'s inbox, with its place (what undo puts back)."""
    inbox = agent.inbox
    return [item for message in (*inbox.next_step, *inbox.next_turn)
            if (item := item_of(inbox, agent.id, message.id)) is not None]


def stop_tree(agents: AgentsSurface, root: Agent, *, keep: bool) -> BulkResult:
    """Stop `root` and everything it owns. `keep`: every inbox stays (paused, delivered
    later); else every inbox is cleared, durably and tombstoned, and its `edit` (a
    `Remove` of every item) puts each back at its place. An agent counts as touched when
    it was running or had work."""
    result = BulkResult()
    discarded: list[Item] = []
    for agent in subtree(agents, root):
        inbox = agent.inbox
        busy = agent.status == "running" or inbox.has_pending
        if not busy:
            result.skipped.append(agent.id)
            continue
        pending = [] if keep else _pending(agent)
        try:
            agent.cancel(dict(USER_CAUSE), keep_inbox=keep)
        except Exception as error:
            result.errors.append((agent.id, error))
            continue
        result.touched.append(agent.id)
        discarded.extend(pending)
    if discarded:
        owners = len({item.agent for item in discarded})
        result.edit = Remove(discarded, name=f"clear {_plural(len(discarded), 'item')} of "
                                             f"{_plural(owners, 'stopped agent')}")
    return result


def finished_children(agents: AgentsSurface, parents: Sequence[Agent],
                      finished: Callable[[Agent], bool]) -> list[Agent]:
    """The sub-agents below `parents` (at any depth) that `finished` says are done, each
    listed once, a child before none of its own (disposing a parent takes its children)."""
    out: list[Agent] = []
    taken: set[str] = set()
    for parent in parents:
        stack = list(agents.children_of(parent))
        while stack:
            child = stack.pop(0)
            if child.id in taken:
                continue
            if finished(child) and all(finished(c) for c in subtree(agents, child)):
                out.append(child)
                taken.update(c.id for c in subtree(agents, child))
                continue
            stack.extend(agents.children_of(child))
    return out


async def dispose_all(agents: AgentsSurface, targets: Sequence[Agent]) -> BulkResult:
    """Dispose each target through the registry (its children go with it). Not undoable
    here: the sessions stay on disk and can be resumed."""
    result = BulkResult()
    for agent in targets:
        done = agents.dispose(agent.id)
        if done is None:
            result.skipped.append(agent.id)
            continue
        try:
            await done
        except Exception as error:
            result.errors.append((agent.id, error))
            continue
        result.touched.append(agent.id)
    return result
