"""The transcript pane (`#transcript`): the selected agent's session, as it streams.

It shows a window of the agent's transcript model, never the whole of it: the
last `WINDOW` items are mounted when an agent is selected (so a 100,000-event
session paints as fast as a short one), older items are mounted a page at a time
when the person scrolls to the top, and the oldest widgets are pruned again once
they are far behind a tail that is being followed. Only the visible agent gets
widgets; every other agent's transcript stays in its plain-Python model.

Changes arrive through `request_sync()`, called by the app's flush (at most ~60
times a second); each sync is one render, counted in `render_count`.
"""

from __future__ import annotations

from typing import Any, ClassVar

from textual import events
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widget import Widget
from textual.widgets import Static

from ..models import AgentView
from .blocks import OlderMarker, ReasoningBlock, ToolBlock, TranscriptBlock, make_block


class EmptyHint(Static):
    DEFAULT_CSS = """
    EmptyHint { color: $text-muted; padding: 1 2; }
    """


class Transcript(VerticalScroll):
    """Follows the tail (Textual's anchor) unless the person scrolls up."""

    WINDOW = 30
    PAGE = 30
    HIGH_WATER = 320
    LOW_WATER = 200

    DEFAULT_CSS = """
    Transcript { padding: 0 1; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "toggle_reasoning", "Reasoning", id="toggle_reasoning"),
        Binding("t", "toggle_tools", "Tool details", show=False, id="toggle_tools"),
        Binding("end", "follow", "Follow", show=False, id="follow"),
        Binding("home", "load_older", "Older", show=False, id="load_older"),
    ]

    HELP = "Scroll with the arrows or the mouse; the transcript follows new output until " \
           "you scroll up, and `end` follows it again."

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.view: AgentView | None = None
        self.blocks: dict[int, Widget] = {}
        self.first = 0
        self.end = 0
        self.render_count = 0
        self.expand_reasoning = False
        self._rebuild_pending = False
        self._sync_pending = False
        self._loading_older = False
        self._marker: OlderMarker | None = None
        self._hint: EmptyHint | None = None
        self._subtitle: str | None = None
        self.can_focus = True

    # -- requests (from the app's flush) -----------------------------------------------------

    def show(self, view: AgentView | None) -> None:
        """Point the pane at another agent (or none): rebuilt from its model, tail first."""
        self.view = view
        self._rebuild_pending = True
        self.request_sync()

    def request_sync(self) -> None:
        if not self._sync_pending:
            self._sync_pending = True
            self.call_later(self._sync)

    # -- syncing -------------------------------------------------------------------------------

    async def _sync(self) -> None:
        self._sync_pending = False
        if self._rebuild_pending:
            await self._rebuild()
            return
        view = self.view
        if view is None:
            return
        model = view.transcript
        dirty = model.drain()
        items = model.items
        fresh = items[self.end:]
        if not dirty and not fresh:
            return
        self.render_count += 1
        with self.app.batch_update():
            for index in sorted(dirty):
                if index >= self.end:
                    continue
                block = self.blocks.get(index)
                if block is not None:
                    item = items[index]
                    if isinstance(block, TranscriptBlock) and (
                            block.shown_version != item.version or item.chunks):
                        block.show_item(item)
            if fresh:
                widgets = [self._make(item) for item in fresh]
                self.end = len(items)
                for widget in widgets:
                    self.blocks[widget.item_index] = widget  # type: ignore[attr-defined]
                if self._hint is not None:
                    await self._hint.remove()
                    self._hint = None
                await self.mount_all(widgets)
        self._prune()

    def _make(self, item: Any) -> Widget:
        block = make_block(item)
        if isinstance(block, ReasoningBlock) and self.expand_reasoning:
            block.toggle()
        return block

    async def _rebuild(self) -> None:
        self._rebuild_pending = False
        await self.remove_children()
        self.blocks = {}
        self._marker = None
        self._hint = None
        view = self.view
        self.render_count += 1
        if view is None:
            self.first = self.end = 0
            self._hint = EmptyHint(Content("No agent selected. ctrl+n creates one."))
            await self.mount(self._hint)
            return
        model = view.transcript
        model.drain()
        items = model.items
        count = len(items)
        self.first = max(0, count - self.WINDOW)
        self.end = count
        widgets: list[Widget] = []
        if self.first:
            self._marker = OlderMarker()
            self._marker.set_count(self.first)
            widgets.append(self._marker)
        for item in items[self.first:]:
            block = self._make(item)
            self.blocks[item.index] = block
            widgets.append(block)
        if not items:
            hint = ("This session is empty." if getattr(view.agent.ctx, "read_only", False) else
                    "No messages yet. Type below and press enter.\n\n"
                    "Try \"compare two designs for a cache\": the agent thinks, answers in "
                    "Markdown and may hand work to a sub-agent, which appears under it in "
                    "the tree.\nWhile it works, type more: enter queues a follow-up for the "
                    "next turn, ctrl+s steers the running turn, ctrl+t injects context. "
                    "Queued messages wait in the inbox on the right, where e edits them.\n"
                    "escape stops the agent and keeps its inbox; f1 lists every key.")
            self._hint = EmptyHint(Content(hint))
            widgets.append(self._hint)
        await self.mount_all(widgets)
        self.anchor()

    def _prune(self) -> None:
        """Drop the oldest widgets once far behind a tail that is being followed."""
        if len(self.blocks) <= self.HIGH_WATER or not self.following:
            return
        cut = len(self.blocks) - self.LOW_WATER
        doomed = []
        index = self.first
        while len(doomed) < cut and index < self.end:
            block = self.blocks.get(index)
            if block is not None:
                doomed.append(self.blocks.pop(index))
            index += 1
        if not doomed:
            return
        self.first = index
        for block in doomed:
            block.remove()
        if self._marker is None:
            self._marker = OlderMarker()
            self.mount(self._marker, before=0)
        self._marker.set_count(self.first)

    # -- older items ---------------------------------------------------------------------------

    async def load_older(self) -> None:
        """Mount the page of items before the first mounted one, keeping the view still."""
        view = self.view
        if view is None or self.first == 0 or self._loading_older:
            return
        self._loading_older = True
        try:
            anchor = self.blocks.get(self.first)
            start = max(0, self.first - self.PAGE)
            widgets = []
            for item in view.transcript.items[start:self.first]:
                block = self._make(item)
                self.blocks[item.index] = block
                widgets.append(block)
            self.first = start
            if anchor is not None:
                await self.mount_all(widgets, before=anchor)
            else:
                await self.mount_all(widgets)
            if self._marker is not None:
                if self.first:
                    self._marker.set_count(self.first)
                else:
                    await self._marker.remove()
                    self._marker = None
            if anchor is not None:
                self.call_after_refresh(self.scroll_to_widget, anchor, top=True, animate=False)
        finally:
            self._loading_older = False

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if new_value <= 0 and old_value > 0 and self.first > 0:
            self.call_later(self.load_older)
        self._show_follow_state()

    def _show_follow_state(self) -> None:
        subtitle = "" if self.following else "▼ new output below · end follows"
        if getattr(self, "_subtitle", None) != subtitle:
            self._subtitle = subtitle
            self.border_subtitle = Content(subtitle)

    @property
    def following(self) -> bool:
        return self._anchored and not self._anchor_released

    def on_click(self, event: events.Click) -> None:
        if isinstance(event.widget, OlderMarker):
            self.call_later(self.load_older)

    # -- actions -------------------------------------------------------------------------------

    def action_toggle_reasoning(self) -> None:
        self.expand_reasoning = not self.expand_reasoning
        for block in self.blocks.values():
            if isinstance(block, ReasoningBlock) and block.expanded != self.expand_reasoning:
                block.toggle()

    def action_toggle_tools(self) -> None:
        tools = [b for b in self.blocks.values() if isinstance(b, ToolBlock)]
        expand = not any(b.expanded for b in tools)
        for block in tools:
            if block.expanded != expand:
                block.toggle()

    def action_follow(self) -> None:
        self.anchor()
        self._show_follow_state()

    async def action_load_older(self) -> None:
        self.scroll_home(animate=False)
        await self.load_older()
