"""What one agent is doing, folded from its session events: the facts a tree row shows.

The tree tells twenty agents apart by their current turn, step and tool, how long they
have been in their state, how their last turn ended (and whether it was the person's
turn), and the tokens they spent, per route so a cost is never priced on the wrong one.
`AgentView.catch_up` feeds every event here beside the transcript; `apply` is a dict
lookup for the events it ignores (stream chunks are most of them), so twenty streaming
agents cost nothing here. Turn ends logged before the app adopted the agent (a resumed
session's history) are told apart (`live`), so reopening a workspace flags nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .cost import Tokens
from .lanes import source_label
from .text import visible_label

FINISHED = frozenset({"completed", "max-tokens"})
"""Turn ends that mean the agent did what it was asked (as far as it goes)."""


def _count(usage: Mapping[str, Any], key: str) -> int:
    value = usage.get(key)
    return value if type(value) is int and value >= 0 else 0


class Activity:
    """One agent's current step, tool and state time, its last outcome, its tokens."""

    __slots__ = ("by_person", "ended", "ended_at", "ended_by_person", "ended_turn",
                 "live_from", "since", "spent", "step", "tool", "turn", "version")

    def __init__(self, live_from: float = 0.0) -> None:
        self.live_from = live_from
        """Wall-clock ms the app adopted the agent: earlier turn ends are its history."""
        self.turn = 0
        self.step = 0
        self.tool = ""
        """The tool the current step called last (shown while the step runs)."""
        self.since: int | None = None
        """Event time (ms) the agent's current state began: its turn's start or end."""
        self.by_person = False
        """The open turn entered a message the person sent (not a parent's or a tool's)."""
        self.ended: str | None = None
        """How the last turn ended (`completed`, `error`, `aborted`, `blocked`, …)."""
        self.ended_turn = 0
        self.ended_at: int | None = None
        self.ended_by_person = False
        self.spent: dict[str, Tokens] = {}
        """Tokens by route name (the provider each reply names), in first-use order."""
        self.version = 0
        """Grows whenever a fact a row shows changed."""

    @property
    def tokens(self) -> Tokens:
        """Every token the agent spent, all routes together."""
        total = Tokens()
        for tokens in self.spent.values():
            total = total + tokens
        return total

    @property
    def ended_live(self) -> bool:
        """The last turn ended while this app was watching (not in a reopened log). Event
        times are whole ms: one in the very ms the app adopted the agent is live too."""
        return self.ended_at is not None and self.ended_at >= int(self.live_from)

    def apply(self, event: Any) -> None:
        """Fold one session event (any object with type, time and data)."""
        handler = _HANDLERS.get(event.type)
        if handler is None:
            return
        data = event.data
        handler(self, event, data if isinstance(data, Mapping) else {})
        self.version += 1

    def _turn_start(self, event: Any, data: Mapping[str, Any]) -> None:
        turn = data.get("turn")
        self.turn = turn if type(turn) is int else self.turn + 1
        self.step = 0
        self.tool = ""
        self.by_person = False
        self.since = _time(event)

    def _turn_end(self, event: Any, data: Mapping[str, Any]) -> None:
        reason = data.get("reason")
        kind = reason.get("kind") if isinstance(reason, Mapping) else None
        turn = data.get("turn")
        self.ended = str(kind) if isinstance(kind, str) else "unknown"
        self.ended_turn = turn if type(turn) is int else self.turn
        self.ended_at = _time(event)
        self.ended_by_person = self.by_person
        self.since = self.ended_at
        self.step = 0
        self.tool = ""

    def _step_start(self, event: Any, data: Mapping[str, Any]) -> None:
        step = data.get("step")
        self.step = step if type(step) is int else self.step + 1
        self.tool = ""

    def _user_message(self, event: Any, data: Mapping[str, Any]) -> None:
        source = data.get("source")
        if source_label(source if isinstance(source, Mapping) else None) == "you":
            self.by_person = True

    def _tool_call(self, event: Any, data: Mapping[str, Any]) -> None:
        name = data.get("name")
        if isinstance(name, str) and name:
            self.tool = visible_label(name)

    def _assistant_message(self, event: Any, data: Mapping[str, Any]) -> None:
        usage = data.get("usage")
        if not isinstance(usage, Mapping):
            return
        message = data.get("message")
        source = message.get("source") if isinstance(message, Mapping) else None
        provider = source.get("provider") if isinstance(source, Mapping) else None
        route = provider if isinstance(provider, str) else ""
        spent = Tokens(_count(usage, "inputTokens") + _count(usage, "cacheWriteTokens"),
                       _count(usage, "cacheReadTokens"), _count(usage, "outputTokens"))
        self.spent[route] = self.spent.get(route, Tokens()) + spent


def _time(event: Any) -> int | None:
    value = getattr(event, "time", None)
    return value if type(value) is int else None


_HANDLERS: dict[str, Any] = {
    "turn/start": Activity._turn_start,
    "turn/end": Activity._turn_end,
    "step/start": Activity._step_start,
    "user/message": Activity._user_message,
    "tool/call": Activity._tool_call,
    "assistant/message": Activity._assistant_message,
}
