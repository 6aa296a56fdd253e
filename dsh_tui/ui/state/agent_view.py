"""The per-agent view: everything the screen knows about one agent, kept current by the bridge."""

from __future__ import annotations

from typing import Any

from dsh_tui.harness.agent import Agent
from dsh_tui.harness.messages import UserMessage

from .inbox_rows import Tombstone
from .text import visible_label
from .transcript import TranscriptModel
from .unsent import UnsentTracker


class AgentView:
    """Everything the screen knows about one agent, kept current by the bridge."""

    def __init__(self, agent: Agent) -> None:
        self.agent = agent
        self.id: str = agent.id
        self.transcript = TranscriptModel()
        # Only a recorded log opened at its tail (`ReadOnlySession`) skips bytes.
        skipped = getattr(agent.session, "skipped_bytes", 0)
        if skipped:
            amount = f"{skipped / 1e6:,.0f} MB" if skipped >= 1e6 else f"{skipped:,} bytes"
            self.transcript.note(f"… {amount} earlier in this log are not loaded: the view "
                                 "shows the log's last part only", level="warning")
        self.applied = 0
        self.logged = 0
        self.tombstones: list[Tombstone] = []
        self.removed_pending: list[tuple[UserMessage, str, int]] = []
        self.claimed: dict[str, int | None] = {}
        self.unsent = UnsentTracker()
        self._seed = int(agent.session.header.get("seedLength", 0) or 0)
        self.disposed = False
        self.last_error: str | None = None

    @property
    def name(self) -> str:
        """The display name: the latest `session/title`, else the agent id."""
        return self.transcript.title or visible_label(self.id)

    @property
    def model(self) -> str:
        """The model name shown for the agent: its route's, else the last one the log names."""
        return str(self.agent.options.model or self.transcript.model_label or "")

    @property
    def route(self) -> str:
        """The agent's route (its provider name: a `[routes.NAME]` or a built-in one)."""
        return str(getattr(getattr(self.agent, "options", None), "provider", None) or "")

    @property
    def route_label(self) -> str:
        """`route · model`, or just the model when the route is named after it."""
        route, model = visible_label(self.route), visible_label(self.model)
        if not route or route == model:
            return model
        return f"{route} · {model}" if model else route

    def catch_up(self) -> list[Any]:
        """Apply session events appended since the last call; returns them (for the event log)."""
        events = self.agent.session.events
        count = len(events)
        if count <= self.applied:
            return []
        fresh = events[self.applied:count]
        apply = self.transcript.apply
        fold = self.unsent.apply
        for index, event in enumerate(fresh, self.applied):
            apply(event)
            if index >= self._seed:  # the seed is the parent's history, not this inbox
                fold(event)
        self.applied = count
        return list(fresh)
