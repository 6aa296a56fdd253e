"""Drafts: the composer's unsent text belongs to the agent it was typed for.

A selection change puts the composer's text away as the old agent's draft and shows the
new agent's (`state/drafts.py`). The drafts are saved with the workspace a second after
typing pauses (never mid-word: a save is a file replaced and fsynced), at a selection
change and when the app exits, so a crash loses at most the last second of typing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Protocol

from ..state.drafts import Drafts
from ..state.workspace import workspace_of
from ..widgets.composer import Composer
from .seams import Panes, Screenside, Selection, World

SAVE_AFTER_S = 1.0
"""Typing paused this long: the drafts are saved."""


class Host(World, Panes, Selection, Screenside, Protocol):
    """What keeping drafts needs of the screen."""


class DraftKeeper:
    """The drafts of every agent, the composer showing the selected one's."""

    def __init__(self, host: Host) -> None:
        self.host = host
        self.drafts = Drafts()
        self.on_change: list[Callable[[], None]] = []
        """Called when whether some draft holds text may have changed."""
        self._timer: asyncio.TimerHandle | None = None
        self._composer: Composer | None = None

    @property
    def composer(self) -> Composer:
        """The composer, kept once found: when the app closes, the screen's panes are gone
        from the DOM before the app's unmount saves, but the widget still holds its text."""
        if self._composer is None:
            self._composer = self.host.composer
        return self._composer

    def restore(self, saved: Mapping[str, str]) -> None:
        """A reopened workspace's drafts: the selected agent's goes into the composer
        (unless something was typed there already)."""
        self.drafts = Drafts(saved)
        composer = self.composer
        selected = self.host.selected_id
        if selected is not None and not composer.text:
            composer.show_draft(self.drafts.get(selected))
        self._changed()

    def switched(self, old: str | None, new: str | None) -> None:
        """The selection moves from `old` to `new`: the composer's text stays with `old`,
        and shows `new`'s draft. With nothing selected before, what the composer holds
        (typed before the first selection, or the draft of an agent just disposed) stays
        in it unless `new` has a draft of its own."""
        if self.host.read_only:
            return
        composer = self.composer
        if old is not None:
            self.drafts.put(old, composer.text)
        text = self.drafts.get(new)
        if old is not None or text:
            composer.show_draft(text)
        self.save(take_composer=False)  # the composer shows `new`'s now, not `old`'s

    def edited(self) -> None:
        """The composer's text changed: it is the selected agent's draft; saved once
        typing pauses."""
        if self.host.read_only:
            return
        self.drafts.put(self.host.selected_id, self.composer.text)
        if self._timer is not None:
            self._timer.cancel()
        self._timer = asyncio.get_running_loop().call_later(
            SAVE_AFTER_S, self.host.call_later, self.save)
        self._changed()

    def save(self, take_composer: bool = True) -> None:
        """Save the drafts with the workspace now (if they changed), the composer's text
        first taken as the selected agent's (`take_composer` False: they hold it already)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        host = self.host
        if host.read_only:
            return
        if take_composer:
            self.drafts.put(host.selected_id, self.composer.text)
        workspace = workspace_of(host.ctx)
        if workspace is None or not self.drafts.dirty:
            return
        self.drafts.keep_only(agent.id for agent in host.ctx.agents.list())
        workspace.save_drafts(self.drafts.snapshot())
        self.drafts.dirty = False
        self._changed()

    def holds_text(self) -> bool:
        """Some agent has unsent text (the composer's included)."""
        return self.drafts.holds_text()

    def _changed(self) -> None:
        for listener in self.on_change:
            listener()
