"""Each agent's unsent composer text (no Textual here).

There is one composer; what the person typed there belongs to the agent it was typed for.
Switching the selection keeps the text with that agent and shows the new agent's own; the
texts are saved with the workspace (`Workspace.save_drafts`), so they come back after a
quit, a reload or a crash. `dirty` says the texts changed since they were last saved.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping


class Drafts:
    """Agent id → unsent text (an empty text is no draft)."""

    def __init__(self, saved: Mapping[str, str] | None = None) -> None:
        self._texts: dict[str, str] = {k: v for k, v in (saved or {}).items() if v}
        self.dirty = False

    def get(self, agent_id: str | None) -> str:
        """`agent_id`'s draft ("" for none)."""
        return self._texts.get(agent_id, "") if agent_id else ""

    def put(self, agent_id: str | None, text: str) -> None:
        """`text` is `agent_id`'s draft now (empty: it has none)."""
        if not agent_id or self._texts.get(agent_id, "") == text:
            return
        if text:
            self._texts[agent_id] = text
        else:
            del self._texts[agent_id]
        self.dirty = True

    def keep_only(self, live: Iterable[str]) -> None:
        """Forget the drafts of agents no longer in the world (disposed ones)."""
        alive = set(live)
        gone = [agent_id for agent_id in self._texts if agent_id not in alive]
        for agent_id in gone:
            del self._texts[agent_id]
        self.dirty = self.dirty or bool(gone)

    def holds_text(self) -> bool:
        """Some agent has a draft with more than whitespace in it."""
        return any(text.strip() for text in self._texts.values())

    def snapshot(self) -> dict[str, str]:
        """Every draft, as saved: agent id → text."""
        return dict(self._texts)
