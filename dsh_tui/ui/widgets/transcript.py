"""The transcript pane (`#transcript`): the selected agent's session, as it streams.

It shows a window of the agent's transcript model, never the whole of it: the
last `WINDOW` items are mounted when an agent is selected (so a 100,000-event
session paints as fast as a short one), older items are mounted a page at a time
when the person scrolls to the top, and the oldest widgets are pruned again once
they are far behind a tail that is being followed. Only the visible agent gets
widgets; every other agent's transcript stays in its plain-Python model.

A search match far back in a long session is shown by re-centring the window on
it (`reveal`): the window then ends before the model does ("detached"), new items
are counted on a marker instead of mounted, scrolling to the bottom mounts the
next page, and `end` goes back to the live tail.

Changes arrive through `request_sync()`, called by the app's flush (at most ~60
times a second); each sync is one render, counted in `render_count`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any, ClassVar
from weakref import WeakSet

from textual import events
from textual.binding import BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.geometry import Region, Size
from textual.widget import Widget
from textual.widgets import Static

from ..bindings import bind
from ..keys import key_name
from ..offscreen import release
from ..panekeys import PaneKeys
from ..state.agent_view import AgentView
from .blocks import (
    AssistantBlock,
    NewerMarker,
    OlderMarker,
    ReasoningBlock,
    ToolBlock,
    TranscriptBlock,
    make_block,
)
from .repaint import EdgeTitle, widgets_mounted


class EmptyHint(Static):
    """What an empty transcript says instead: how to send the first message."""


def empty_hint(view: AgentView, steer: str = "ctrl+s", inject: str = "ctrl+t") -> str:
    """What an empty transcript says: how to start, and (on the demo model only) the demo's
    own prompt; a real model gets no canned suggestion. `steer`/`inject`: the keys that
    work where the app runs (a browser keeps ctrl+t)."""
    if view.agent.ctx.read_only:
        return "This session is empty."
    demo = "demo" in (str(view.agent.options.provider or ""), view.model)
    first = ("Try \"compare two designs for a cache\": the demo model thinks, answers in "
             "Markdown and may hand work to a sub-agent, which appears under it in the tree.\n"
             if demo else "Ask for anything this agent's model and tools can do; sub-agents it "
             "starts appear under it in the tree.\n")
    return ("No messages yet. Type below and press enter.\n\n" + first +
            f"While it works, type more: enter queues a follow-up for the next turn, {steer} "
            f"steers the running turn, {inject} injects context. Queued messages wait in the "
            "inbox, where enter edits them.\nescape stops the agent and keeps its inbox; f1 lists "
            "every key.")


class Transcript(PaneKeys, VerticalScroll):
    """Follows the tail (Textual's anchor) unless the person scrolls up."""

    WINDOW = 30
    PAGE = 10
    """Items mounted by one `load older` (or `load newer`). Each page is laid out and first
    drawn in one frame, which the event loop (a typed key, every streaming agent) waits
    for: 30 at a time made frames of 80-120 ms CPU while reading back a long session; 10
    cut the soak's read-back lag p99 by about a third (benchmarks/bench_soak.py)."""
    MOUNT_SLICE = 5
    """Blocks of a page mounted per tick, hidden (`_mount_hidden`)."""
    SETTLE = 1 / 30
    BUILD_WAIT = 1.0
    HIGH_WATER = 60
    """Most blocks mounted at once: past it the farthest are unmounted (`_prune`,
    `_prune_newer`), whichever way the person scrolls. Every frame that lays the screen
    out arranges every mounted block, and each page read back is such a frame (or three):
    100 blocks, with their paragraphs, made it ~45 ms of CPU, 50 about 30."""
    LOW_WATER = 40
    TAIL_HIGH = 50
    """Most blocks mounted while the tail is followed: past it the oldest are unmounted
    down to TAIL_LOW. Every mounted block is laid out on each frame that streamed text
    grows, and keeps its rendered lines cached, so a short window at the tail is what
    keeps a person's keystrokes and the app's memory flat; scrolling up pages older blocks
    back in (up to HIGH_WATER)."""
    TAIL_LOW = 30
    NEAR = 20
    """A match at most this many items before the window is revealed by paging older items
    in; a farther one re-centres the window on it."""
    CONTEXT = 5
    """Items mounted before a revealed match, when the window is re-centred on it."""
    KEEP_DRAWN = 1
    """Pane heights above and below the shown part whose blocks keep their rendered lines;
    farther blocks drop them (`offscreen.release`) and render again if scrolled back to."""

    BINDINGS: ClassVar[list[BindingType]] = [
        bind("toggle_reasoning"),
        bind("toggle_tools"),
        bind("follow"),
        bind("load_older"),
        bind("search", action="screen.search"),
    ]

    HELP = "Scroll with the arrows or the mouse; the transcript follows new output until " \
           "you scroll up, and `end` follows it again. Typing here types into the composer."

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.view: AgentView | None = None
        self.blocks: dict[int, Widget] = {}
        self.first = 0
        self.end = 0
        self.render_count = 0
        self.expand_reasoning = False
        self._rebuild_pending = False
        self._rebuild_sliced = False
        self._sync_pending = False
        self._loading_page = False
        self._homing = False
        self._mounted_hidden: WeakSet[Widget] = WeakSet()
        """Blocks mounted by `_mount_hidden` (their mount's layout requests are dropped)."""
        """`home` is scrolling to the top: the scroll loads no page of its own."""
        self._windows = 0
        """Windows built so far (`_mount_window`): a page being mounted a slice at a time
        stops when the window it was joining is replaced under it."""
        self._marker: OlderMarker | None = None
        self._newer: NewerMarker | None = None
        self.detached = False
        """The window ends before the model does (a search revealed an old item)."""
        self.marked: int | None = None
        """The item index highlighted as the current search match."""
        self.search_query = ""
        """The search query highlighted inside the marked item."""
        self._hint: EmptyHint | None = None
        self._subtitle: str | None = None
        self.can_focus = True

    # -- requests (from the app's flush) -----------------------------------------------------

    def show(self, view: AgentView | None, *, sliced: bool = False) -> None:
        """Point the pane at another agent (or none): rebuilt from its model, tail first.
        `sliced`: the same agent's tail, built hidden behind what is shown (`end`)."""
        self._rebuild_sliced = sliced and view is self.view
        self.view = view
        self.marked = None
        self._rebuild_pending = True
        self._sync_soon()  # the person's own move: never waits for typing to pause

    def request_sync(self) -> None:
        """Show what changed in the model. While the person types this waits for a pause
        (at most `KeysFirst.max_hold`, then it runs right after a key's frame): the layout
        and drawing of streamed text is the frame a typed key would otherwise wait behind
        (`keysfirst.py`)."""
        if self._sync_pending:
            return
        keys_first = getattr(self.app, "keys_first", None)
        if keys_first is not None and keys_first.defer(self._sync_soon):
            return
        self._sync_soon()

    def _sync_soon(self) -> None:
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
        if self.detached:
            fresh = []
            if self._newer is not None:
                self._newer.set_count(len(items) - self.end)
        else:
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
                self.call_after_refresh(self.release_offscreen)
        self._prune()

    def release_offscreen(self) -> int:
        """Drop the rendered lines of mounted blocks far out of sight; returns how many.

        Every line Textual draws of a block stays cached while the block is mounted, so
        blocks that scrolled up out of a followed tail held most of the app's memory per
        event (benchmarks/bench_soak.py). Run after new blocks are laid out: a released
        block is drawn again from its item's text when it is scrolled back into view."""
        height = self.scrollable_content_region.height
        if not height:
            return 0
        top = round(self.scroll_y) - height * self.KEEP_DRAWN
        bottom = round(self.scroll_y) + height * (1 + self.KEEP_DRAWN)
        dropped = 0
        for block in self.blocks.values():
            region = block.virtual_region
            if region.bottom < top or region.y > bottom:
                dropped += release(block)
        return dropped

    def _make(self, item: Any) -> Widget:
        block = make_block(item)
        if isinstance(block, ReasoningBlock) and self.expand_reasoning:
            block.toggle()
        if item.index == self.marked:
            block.add_class("-search-hit")
            if isinstance(block, TranscriptBlock):
                block.set_search(self.search_query or None)
        return block

    async def _rebuild(self) -> None:
        """The window at the live tail: the last `WINDOW` items, anchored."""
        self._rebuild_pending = False
        await self._mount_window(lambda count: (max(0, count - self.WINDOW), count),
                                 sliced=self._rebuild_sliced, follow=True)
        view = self.view
        if view is None:
            self._hint = EmptyHint(Content(
                f"No agent selected. {key_name(self.app, 'new_agent')} creates one."))
            await self.mount(self._hint)
            return
        if not self.blocks:
            hint = empty_hint(view, key_name(self.app, "steer"), key_name(self.app, "inject"))
            self._hint = EmptyHint(Content(hint))
            await self.mount(self._hint)
        self.anchor()

    async def _mount_window(self, bounds: Callable[[int], tuple[int, int]],
                            sliced: bool = False, follow: bool = False) -> None:
        """Replace every widget by items[first:end], with a marker for what lies on either
        side; a window that ends before the model does is detached from the tail.

        `bounds` maps the item count to (first, end). `sliced`: the new blocks are mounted
        hidden, a few per tick, while the old window stays on screen, then the old window
        goes and the new one is shown in one frame (`_swap_window`); else the old widgets
        go first (and `bounds` sees the model as it is once they are gone)."""
        self._windows += 1
        view = self.view
        if sliced and view is not None and self.children:
            await self._swap_window(view, bounds, follow)
            return
        await self.remove_children()
        self.blocks = {}
        self._marker = self._newer = None
        self._hint = None
        self.render_count += 1
        if view is None:
            self.first = self.end = 0
            self.detached = False
            return
        model = view.transcript
        model.drain()  # every block below is made from the items as they are now
        items = model.items
        first, end = bounds(len(items))
        self.first, self.end = first, end
        self.detached = end < len(items) or self._more_log(earlier=False)
        widgets: list[Widget] = []
        blocks: list[Widget] = []
        if first:
            self._marker = OlderMarker()
            self._marker.set_count(first)
            widgets.append(self._marker)
        for item in items[first:end]:
            block = self._make(item)
            self.blocks[item.index] = block
            blocks.append(block)
        if not sliced:
            widgets.extend(blocks)
        if self.detached:
            self._newer = NewerMarker()
            self._newer.set_count(len(items) - end)
            widgets.append(self._newer)
        await self.mount_all(widgets)
        if sliced and blocks and await self._mount_hidden(blocks, before=self._newer):
            self._show(blocks)

    async def _swap_window(self, view: AgentView, bounds: Callable[[int], tuple[int, int]],
                           follow: bool = False) -> None:
        """Build the window items[first:end] hidden behind the one shown, then swap them
        in one frame. Removing the old window, mounting the markers and showing the new
        blocks one after the other were each a layout of the screen (six or seven frames
        for a search step far back, 40-90 ms of CPU each with every agent streaming); the
        old window also stays readable, and syncing, while the new one is built."""
        window = self._windows
        model = view.transcript
        items = model.items
        first, end = bounds(len(items))
        made = {item.index: self._make(item) for item in items[first:end]}
        blocks = list(made.values())
        if not await self._mount_hidden(blocks, before=None):
            return  # (another window replaced this one meanwhile)
        if window != self._windows or self.view is not view:
            await self.remove_children(blocks)
            return
        items = model.items
        self._windows += 1  # a page still being mounted into the old window gives way
        old = [child for child in self.children if child not in made.values()]
        self.blocks = made
        self.first, self.end = first, end
        self.detached = end < len(items) or self._more_log(earlier=False)
        self._marker = self._newer = self._hint = None
        self.render_count += 1
        with self.app.batch_update():
            removed = self.remove_children(old)
            if first and blocks:
                self._marker = OlderMarker()
                self._marker.set_count(first)
                self.mount(self._marker, before=blocks[0])
            if self.detached:
                self._newer = NewerMarker()
                self._newer.set_count(len(items) - end)
                self.mount(self._newer)
            self._show(blocks)
            if follow:
                self.anchor()
            for index, block in made.items():  # what changed while they were built
                item = items[index]
                if isinstance(block, TranscriptBlock) and (
                        block.shown_version != item.version or item.chunks):
                    block.show_item(item)
        await removed
        if not self.detached:
            self._sync_soon()  # items that arrived while it was built

    def _prune(self, *, following: bool = True) -> None:
        """Drop the oldest widgets once far behind a tail that is being followed (or, with
        `following=False`, once a page of newer items made the window too long)."""
        high, low = (self.TAIL_HIGH, self.TAIL_LOW) if following else \
            (self.HIGH_WATER, self.LOW_WATER)
        if len(self.blocks) <= high or (following and (not self.following or
                                                       self._loading_page)):
            return  # (a page being mounted above is not pruned under its feet)
        cut = len(self.blocks) - low
        doomed: list[Widget] = []
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

    async def _prune_newer(self) -> None:
        """Scrolling up: drop the newest widgets once the window is too long, so a person
        reading back through a long session keeps at most HIGH_WATER blocks mounted. The
        window then ends before the model does (detached, as after a search): new output is
        counted on a marker, scrolling to the bottom mounts it again, `end` follows."""
        view = self.view
        if view is None or len(self.blocks) <= self.HIGH_WATER:
            return
        keep_from = self.first + self.LOW_WATER
        if self.marked is not None and self.marked >= keep_from:
            return  # the current search match stays mounted
        doomed = [self.blocks.pop(i) for i in range(keep_from, self.end) if i in self.blocks]
        if not doomed:
            return
        self.end = keep_from
        self.anchor(False)
        self.detached = True
        count = len(view.transcript.items) - self.end
        if self._newer is None:
            self._newer = NewerMarker()
            self._newer.set_count(count)
            await self.mount(self._newer, after=doomed[-1])
        else:
            self._newer.set_count(count)
        await self.remove_children(doomed)
        self._show_follow_state()

    # -- older items ---------------------------------------------------------------------------

    def _more_log(self, earlier: bool) -> bool:
        """A huge log in `view` has pages before (or after) the part loaded."""
        session = getattr(getattr(self.view, "agent", None), "session", None)
        return bool(getattr(session, "skipped_bytes" if earlier else "later_bytes", 0))

    async def _page_log(self, earlier: bool) -> None:
        """Past the top (or bottom) of a huge log's loaded pages: read the next page of the
        file and show the transcript where the new page meets the old one."""
        view = self.view
        if view is None or self._loading_page:
            return
        self._loading_page = True
        try:
            index = view.page(earlier)
            if index is None:
                return
            self.anchor(False)
            if earlier:
                await self._mount_window(lambda count: (max(0, index - self.PAGE),
                                                        min(count, index + self.WINDOW)))
            else:
                await self._mount_window(lambda count: (max(0, index - self.WINDOW),
                                                        min(count, index + self.PAGE)))
            block = self.blocks.get(index) or self.blocks.get(index - 1)
            if block is not None:
                self.call_after_refresh(self.scroll_to_widget, block, top=earlier,
                                        animate=False)
            self._show_follow_state()
        finally:
            self._loading_page = False

    async def load_older(self, keep_view: bool = True) -> None:
        """Mount the page of items before the first mounted one, keeping the view still
        (`keep_view=False`: the view goes to the top as the page is shown, showing it)."""
        view = self.view
        if view is not None and self.first == 0 and self._more_log(earlier=True):
            await self._page_log(earlier=True)
            return
        if view is None or self.first == 0 or self._loading_page:
            return
        anchor = self.blocks.get(self.first)
        if anchor is not None and anchor.parent is not self:
            return  # the window is being (re)built: its blocks are not mounted yet
        self._loading_page = True
        try:
            start = max(0, self.first - self.PAGE)
            widgets = []
            for item in view.transcript.items[start:self.first]:
                block = self._make(item)
                self.blocks[item.index] = block
                widgets.append(block)
            self.first = start
            if not await self._mount_hidden(widgets, before=anchor):
                return  # a search (or `end`) rebuilt the window meanwhile
            if not keep_view:
                self._scroll_top()  # (with the showing: one frame, the page at the top)
            self._show(widgets)
            if self._marker is not None:
                if self.first:
                    self._marker.set_count(self.first)
                else:
                    await self._marker.remove()
                    self._marker = None
            await self._prune_newer()
            if anchor is not None and keep_view:
                self.call_after_refresh(self.scroll_to_widget, anchor, top=True, animate=False)
        finally:
            self._loading_page = False

    async def _mount_hidden(self, widgets: list[Widget], before: Widget | None) -> bool:
        """Mount `widgets` hidden, a few per tick: composing a block and laying out its
        Markdown happen while nothing on screen changes; showing them is one frame.

        False when the window was rebuilt meanwhile (a search re-centred it, `end` went
        back to the tail: both run while a page is mounted): what was mounted is removed
        and nothing is to be shown."""
        window = self._windows
        for widget in widgets:  # (styled as it mounts, hidden from the start)
            # Hidden by its own style, not by a rule: showing it is then no restyle.
            widget.styles.display = "none"
            widget.add_class("-pending", update=False)  # (a mark, matched by no rule)
            self._mounted_hidden.add(widget)
        width = self._reply_width()
        for start in range(0, len(widgets), self.MOUNT_SLICE):
            if window != self._windows or (before is not None and before.parent is not self):
                await self.remove_children([w for w in widgets if w.parent is self])
                return False
            batch = widgets[start:start + self.MOUNT_SLICE]
            if before is not None:
                await self.mount_all(batch, before=before)
            else:
                await self.mount_all(batch)
            for widget in batch:
                if isinstance(widget, AssistantBlock):
                    widget.draw_ahead(width)
                if isinstance(widget, TranscriptBlock) and widget.is_attached:
                    # Bounded: a block removed before it ever ran (a rebuilt window) never
                    # says it is built; showing one before it is costs a frame, no more.
                    with contextlib.suppress(asyncio.TimeoutError):
                        await asyncio.wait_for(widget.built(), self.BUILD_WAIT)
        # A paragraph asks for a layout when it is built and again once mounted: give the
        # last ones a frame or two to have it done while hidden (else it is one more frame
        # after they are shown, nothing worse). Not call_after_refresh: this may run inside
        # the pane's (or the screen's) own handler, whose queue would run it after this.
        await asyncio.sleep(self.SETTLE)
        if window != self._windows:
            await self.remove_children([w for w in widgets if w.parent is self])
            return False
        return True

    def _show(self, widgets: list[Widget]) -> None:
        """Show blocks mounted hidden, all in the next frame.

        Nothing is restyled: the blocks were styled as they mounted, and hidden by their
        own `display` style, which is cleared (one layout, asked for by each block).
        Restyling them cost a style pass per block per page read back (and Textual's
        `remove_class` restyles a block's whole subtree: ~25 passes per page)."""
        with self.app.batch_update():
            for widget in widgets:
                if widget.has_class("-pending"):
                    widget.remove_class("-pending", update=False)
                    widget.styles.display = None

    def _reply_width(self) -> int:
        """The width a reply's lines are drawn at in this pane (that of a reply shown),
        0 if none is laid out yet."""
        for block in self.blocks.values():
            if isinstance(block, AssistantBlock) and block.size.width and \
                    not block.has_class("-pending"):
                return block.size.width
        return 0

    async def load_newer(self) -> None:
        """Mount the page of items after the last mounted one (a detached window only)."""
        view = self.view
        if view is None or not self.detached or self._loading_page:
            return
        if self.end >= len(view.transcript.items):
            await self._page_log(earlier=False)
            return
        self._loading_page = True
        try:
            items = view.transcript.items
            page = items[self.end:self.end + self.PAGE]
            widgets = []
            for item in page:
                block = self._make(item)
                self.blocks[item.index] = block
                widgets.append(block)
            self.end += len(page)
            if self._newer is not None:
                await self.mount_all(widgets, before=self._newer)
            if self.end >= len(items) and not self._more_log(earlier=False):
                self.detached = False
                if self._newer is not None:
                    await self._newer.remove()
                    self._newer = None
            elif self._newer is not None:
                self._newer.set_count(len(items) - self.end)
            self._prune(following=False)
        finally:
            self._loading_page = False

    # -- search ----------------------------------------------------------------------------

    def reveal(self, index: int) -> None:
        """Scroll item `index` into view and mark it, mounting it first if it is not.

        Queued behind the pane's own syncs and page loads (all run as callbacks of this
        widget, one at a time), so the window is never rebuilt under a sync's feet."""
        self.call_later(self._reveal, index)

    async def _reveal(self, index: int) -> None:
        view = self.view
        if view is None or not 0 <= index < len(view.transcript.items):
            return
        if self._rebuild_pending or self._sync_pending:
            await self._sync()
        if index < self.first and self.first - index <= self.NEAR:
            while index < self.first:
                before = self.first
                await self.load_older()
                if self.first == before:
                    break
        if not self.first <= index < self.end:
            await self._rebuild_around(index)
        self.mark(index)
        block = self.blocks.get(index)
        if block is not None:
            if self.max_scroll_y > 0:
                self.release_anchor()  # stay on the match while new output arrives
            self._show_follow_state()
            self.call_after_refresh(self.scroll_to_center, block, animate=False, immediate=True)

    def mark(self, index: int | None, query: str | None = None) -> None:
        """Mark one item as the current search match and highlight the query inside it
        (None: no mark)."""
        if query is not None:
            self.search_query = query
        if self.marked is not None and (old := self.blocks.get(self.marked)) is not None:
            old.remove_class("-search-hit")
            if isinstance(old, TranscriptBlock):
                old.set_search(None)
        self.marked = index
        if index is not None and (block := self.blocks.get(index)) is not None:
            block.add_class("-search-hit")
            if isinstance(block, TranscriptBlock):
                block.set_search(self.search_query or None)

    async def _rebuild_around(self, index: int) -> None:
        """A window that starts a few items before `index`, detached from the tail."""
        self.anchor(False)
        await self._mount_window(lambda count: (max(0, index - self.CONTEXT),
                                                min(count, index + self.PAGE)), sliced=True)

    border_title = EdgeTitle(bottom=False)
    border_subtitle = EdgeTitle(bottom=True)

    def refresh(self, *regions: Region, repaint: bool = True, layout: bool = False,
                recompose: bool = False) -> Transcript:
        """Blocks mounted into the pane ask for a layout, not a repaint of the pane itself:
        Textual's mount refreshes the parent with both, and the pane's own lines (blank, and
        its border) would all be drawn again, on every new item of a followed stream. Blocks
        mounted hidden (`_mount_hidden`) ask for nothing: showing them lays them out."""
        if layout and repaint and not regions and not recompose:
            mounted = widgets_mounted()
            if mounted is not None:
                if all(w.has_class("-pending") or w in self._mounted_hidden for w in mounted):
                    # Hidden (`_mount_hidden`): laid out once shown, not now. Textual's
                    # mount asks twice, the second time from the pane's queue, after the
                    # blocks may have been shown already (their showing asked for it).
                    return self
                repaint = False
        super().refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)
        return self

    def _size_updated(self, size: Size, virtual_size: Size, container_size: Size,
                      layout: bool = True) -> bool:
        """A reply that grows changes only the pane's virtual height: take it without
        Textual's repaint and second layout of the pane (setting `virtual_size` refreshes
        with layout=True, though this runs inside the layout that measured it, and the
        pane's own lines are blank). The scrollbar and the scroll position still follow."""
        if size == self._size and container_size == self._container_size \
                and virtual_size != self.virtual_size:
            self._layout_cache.clear()
            self.set_reactive(Widget.virtual_size, virtual_size)
            self._scroll_update(virtual_size)
            return True
        return super()._size_updated(size, virtual_size, container_size, layout)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if new_value <= 0 and old_value > 0 and (self.first > 0 or
                                                 self._more_log(earlier=True)):
            if not self._homing:  # `home` loads its own page: one, not two
                self.call_later(self.load_older)
        elif self.detached and new_value >= self.max_scroll_y and new_value > old_value:
            self.call_later(self.load_newer)
        self._show_follow_state()

    def _show_follow_state(self) -> None:
        subtitle = "" if self.following else "▼ new output below · end follows"
        if self.detached:
            subtitle = "▼ showing an earlier part · end returns to the latest"
        if getattr(self, "_subtitle", None) != subtitle:
            self._subtitle = subtitle
            self.border_subtitle = Content(subtitle)

    def watch_has_focus(self, _has_focus: bool) -> None:
        """Restyle the pane alone when it gains or loses focus: only its border depends on
        it (`#transcript:focus`). Textual restyles every descendant, up to a hundred blocks
        and their paragraphs: ~150 ms on the event loop for escape out of a search."""
        self.app.stylesheet.update_nodes([self], animate=True)

    @property
    def following(self) -> bool:
        return self._anchored and not self._anchor_released

    def on_assistant_block_show_all(self, message: AssistantBlock.ShowAll) -> None:
        """A reply too long for Markdown: open all of it in the full-text viewer."""
        message.stop()
        view = self.view
        if view is None or not 0 <= message.item_index < len(view.transcript.items):
            return
        from ..screens.full_text import FullTextScreen

        item = view.transcript.items[message.item_index]
        self.app.push_screen(FullTextScreen(f"Reply · {view.name}", item.current_text()))

    def on_click(self, event: events.Click) -> None:
        if isinstance(event.widget, OlderMarker):
            self.call_later(self.load_older)
        elif isinstance(event.widget, NewerMarker):
            self.call_later(self.load_newer)

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
        if self.detached:
            # back to the live tail: rebuilt from the end behind the part read, anchored
            self.show(self.view, sliced=True)
            return
        self.anchor()
        self._show_follow_state()

    async def action_load_older(self) -> None:
        """Show the page of items before the first: at the top of the pane, where `home`
        goes. (Scrolling past the top with the arrows or the mouse keeps the view still
        instead, `load_older()`: the person is reading there.)

        The view goes to the top in the frame that shows the page, not before it: going
        there first drew the top of the old window, a frame of its own, only to have the
        page drawn over it once mounted. With no page to show it goes there at once."""
        if self.first == 0 or self._loading_page or self.view is None:
            self._scroll_top()
        await self.load_older(keep_view=False)

    def _scroll_top(self) -> None:
        self._homing = True  # (reaching the top this way is not a scroll past it)
        try:
            self.scroll_home(animate=False, immediate=True)
        finally:
            self._homing = False
