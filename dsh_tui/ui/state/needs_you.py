"""Which agents need the person, oldest first: the count always on screen, and the order
the jump key visits them in.

Paused at a breakpoint or idle with work kept: these wait for an action. A turn that
failed, was blocked, or finished a turn the person started (a sub-agent's turn for its
parent is the parent's business): these wait only to be seen, and looking at the agent
clears them (its row still says how the turn ended). Outcomes from before the app
adopted the agent (a reopened workspace) are history. The screen feeds `update` at each
flush and `looked_at` when the selection settles; nothing here reads a clock or a widget.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .activity import FINISHED, Activity

PAUSED, FAILED, BLOCKED, KEPT, FINISHED_UNSEEN = "paused", "failed", "blocked", "kept", \
    "finished"
REASONS = (PAUSED, FAILED, BLOCKED, KEPT, FINISHED_UNSEEN)
"""Every reason, most urgent first (an agent shows its most urgent one)."""
GLYPHS = {PAUSED: "◆", FAILED: "✗", BLOCKED: "⊘", KEPT: "‖", FINISHED_UNSEEN: "✓"}
SEEN = frozenset({FAILED, BLOCKED, FINISHED_UNSEEN})
"""Reasons that looking at the agent clears (the others wait for an action)."""


@dataclass(frozen=True, slots=True)
class Facts:
    """What the needs-you rule reads about one agent at one flush."""

    agent_id: str
    running: bool
    pending: bool
    paused_since: float | None = None
    """Wall-clock ms the agent stopped at its breakpoint (None: not paused)."""
    ended: str | None = None
    ended_turn: int = 0
    ended_at: float | None = None
    ended_by_person: bool = False
    ended_live: bool = False


def facts_of(agent_id: str, status: str, pending: bool, activity: Activity,
             paused_since: float | None = None) -> Facts:
    """The facts of an agent from its status, inbox and activity (and its pause)."""
    return Facts(agent_id, status == "running", pending, paused_since, activity.ended,
                 activity.ended_turn, activity.ended_at, activity.ended_by_person,
                 activity.ended_live)


@dataclass(frozen=True, slots=True)
class Need:
    """One agent that needs the person: why, and since when (wall-clock ms)."""

    agent_id: str
    reason: str
    since: float
    order: int
    """Tie-breaker: the order the agents first needed the person in."""

    @property
    def glyph(self) -> str:
        """The reason's mark (◆ paused, ✗ failed, ⊘ blocked, ‖ kept, ✓ finished)."""
        return GLYPHS[self.reason]


def reason_of(facts: Facts, seen_turn: int) -> str | None:
    """The most urgent reason `facts` needs the person, or None. `seen_turn`: the last
    turn whose ending the person has seen."""
    if facts.paused_since is not None:
        return PAUSED
    if facts.running:
        return None
    unseen = facts.ended_live and facts.ended_turn > seen_turn
    if unseen and facts.ended == "error":
        return FAILED
    if unseen and facts.ended == "blocked":
        return BLOCKED
    if facts.pending:
        return KEPT
    if unseen and facts.ended in FINISHED and facts.ended_by_person:
        return FINISHED_UNSEEN
    return None


class NeedsYou:
    """The agents that need the person, kept current from flushes and looks."""

    def __init__(self) -> None:
        self._needs: dict[str, Need] = {}
        self._seen: dict[str, int] = {}
        self._counter = 0
        self.selected: str | None = None
        """The agent the person is looking at: its outcomes are seen as they happen."""
        self.version = 0
        """Grows whenever the set, a reason or the order changed (the indicator redraws)."""

    def __len__(self) -> int:
        return len(self._needs)

    def __contains__(self, agent_id: object) -> bool:
        return agent_id in self._needs

    def get(self, agent_id: str) -> Need | None:
        """Why `agent_id` needs the person, or None."""
        return self._needs.get(agent_id)

    def update(self, facts: Facts, now: float) -> Need | None:
        """Re-judge one agent; returns its Need when it has just started needing the person
        (the moment a bell would ring), else None."""
        agent_id = facts.agent_id
        if agent_id == self.selected:
            self._seen[agent_id] = max(self._seen.get(agent_id, 0), facts.ended_turn)
        reason = reason_of(facts, self._seen.get(agent_id, 0))
        before = self._needs.get(agent_id)
        if reason is None:
            if before is not None:
                del self._needs[agent_id]
                self.version += 1
            return None
        if before is not None and before.reason == reason:
            return None
        since = facts.paused_since if reason == PAUSED and facts.paused_since is not None \
            else facts.ended_at if reason in SEEN and facts.ended_at is not None else now
        if before is not None:
            since = min(since, before.since)  # still needing: its place in line is kept
            order = before.order
        else:
            self._counter += 1
            order = self._counter
        need = Need(agent_id, reason, since, order)
        self._needs[agent_id] = need
        self.version += 1
        return need if before is None else None

    def looked_at(self, facts: Facts) -> None:
        """The person is looking at this agent now: its outcomes so far are seen."""
        self.selected = facts.agent_id
        self.update(facts, facts.ended_at or 0.0)

    def forget(self, agent_ids: Iterable[str]) -> None:
        """These agents are gone (disposed)."""
        for agent_id in agent_ids:
            self._seen.pop(agent_id, None)
            if self._needs.pop(agent_id, None) is not None:
                self.version += 1
            if self.selected == agent_id:
                self.selected = None

    def ordered(self) -> list[Need]:
        """Every need, oldest first."""
        return sorted(self._needs.values(), key=lambda need: (need.since, need.order))

    def next_after(self, current: str | None) -> str | None:
        """The agent the jump key goes to: the oldest need after `current` in that order
        (wrapping round), the oldest when `current` needs nothing; None when none does."""
        ordered = [need.agent_id for need in self.ordered()]
        if not ordered:
            return None
        if current in ordered:
            return ordered[(ordered.index(current) + 1) % len(ordered)]
        return ordered[0]

    def counts(self) -> dict[str, int]:
        """How many agents need the person for each reason (only reasons present)."""
        out: dict[str, int] = {}
        for need in self._needs.values():
            out[need.reason] = out.get(need.reason, 0) + 1
        return {reason: out[reason] for reason in REASONS if reason in out}

    def summary(self) -> str:
        """`3 need you · ◆2 ✗1`, or "" when nobody does (the indicator's text)."""
        if not self._needs:
            return ""
        counts = " ".join(f"{GLYPHS[r]}{n}" for r, n in self.counts().items())
        return f"{len(self._needs)} need{'s' if len(self._needs) == 1 else ''} you · {counts}"
