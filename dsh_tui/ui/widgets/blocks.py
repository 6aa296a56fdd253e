"""Transcript blocks: one small widget per transcript item.

Every piece of user or model text goes through `visible()` and is placed in a
`Content` as plain text, never parsed as markup, so `[inject]`, `[bold]` and
`\\x1b[31m` appear exactly as they were written (the escape as ␛).
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any, ClassVar

from markdown_it import MarkdownIt
from textual import events
from textual.content import Content
from textual.geometry import Region
from textual.message import Message
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Markdown, Static
from textual.widgets.markdown import MarkdownBlock, MarkdownFence

from ..state.text import format_duration, last_line, one_line, short_id, visible, visible_label
from ..state.transcript import Item
from .repaint import OneLayout, called_by_mount

LANE_GLYPH = {"follow-up": "↵", "steer": "⚑", "inject": "✚", "context": "◇", "message": "•"}
LANE_STYLE = {"follow-up": "$lane-followup", "steer": "$lane-steer", "inject": "$lane-inject",
              "context": "$lane-context", "message": "$foreground"}
RESULT_PREVIEW_LINES = 4
RESULT_PREVIEW_WIDTH = 200
"""Characters of one result line a collapsed tool call shows; a longer line ends in `…`
(never cut silently: expanding the block shows it whole)."""
FULL_TEXT_LIMIT = 20_000
MARKDOWN_LIMIT = 20_000
"""Characters of one assistant block rendered as Markdown. Parsing and laying out a 5 MB
reply took 14 s on the event loop (keys and every other agent froze); past this, the
block shows its start and a note, and a click opens the whole text in a viewer that
only lays out the lines on screen."""
PARAGRAPH_LIMIT = 6_000
"""Characters of one paragraph (text between blank lines) rendered as Markdown. A
paragraph is wrapped whole on every frame that lays it out: 20,000 characters with no
blank line (one huge delta, a minified file, a 1 MB line) held the event loop ~60 ms
per frame on the 2-core VM (benchmarks/bench_huge.py); 6,000 keep it a few ms. The
reply is cut where its first paragraph passes this, with the same note and viewer."""

TAIL_SLACK = 6
"""Blank lines a streaming reply keeps in reserve below its text (fewer on a small screen). While it streams, the
reply's height is fixed (its text plus these lines): text that grows within it is drawn
where the reserve was, and nothing else on screen moves, so the frame repaints the lines
that changed. Without it, every frame that a streamed reply grew laid out and repainted
the whole transcript (its scrollbar and every visible line moved up), 20-100 ms on the
2-core VM: a key typed then, and every other callback of the loop, waited for it
(benchmarks/bench_keys.py, the soak's lag figures). The height grows by TAIL_SLACK lines at
a time, and is released (auto) when the reply is complete."""
RESERVE_EVERY = 0.1
"""Seconds between two checks of a streaming reply's text height against its reserve."""

_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")


def markdown_cut(raw: str) -> int:
    """Where the Markdown rendering of `raw` stops: its length, MARKDOWN_LIMIT, or the point
    where a paragraph first grows past PARAGRAPH_LIMIT. Growing `raw` never moves a cut
    already made, so a streamed reply keeps appending to what it shows."""
    limit = min(len(raw), MARKDOWN_LIMIT)
    start = 0
    for match in _PARAGRAPH_BREAK.finditer(raw, 0, limit):
        if match.start() - start > PARAGRAPH_LIMIT:
            return start + PARAGRAPH_LIMIT
        start = match.end()
    if limit - start > PARAGRAPH_LIMIT:
        return start + PARAGRAPH_LIMIT
    return limit


def lane_badge(lane: str) -> Content:
    """`⚑ steer` in the lane's colour: the same badge in the inbox and the transcript."""
    glyph = LANE_GLYPH.get(lane, "•")
    return Content.styled(f"{glyph} {lane}", f"bold {LANE_STYLE.get(lane, '$foreground')}")


def _cap(text: str, limit: int = FULL_TEXT_LIMIT) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n… ({len(text) - limit:,} more characters)"


def search_pattern(query: str | None) -> re.Pattern[str] | None:
    """The search's own rule (search.py): all lowercase matches any case, a capital is exact."""
    if not query:
        return None
    return re.compile(re.escape(query), 0 if query != query.lower() else re.IGNORECASE)


MATCH_STYLE = "bold reverse"


def marked(content: Content, query: str | None) -> Content:
    """`content` with every occurrence of the search query highlighted (the match itself,
    not the whole block)."""
    pattern = search_pattern(query)
    return content if pattern is None else content.highlight_regex(pattern, style=MATCH_STYLE)


class TranscriptBlock:
    """Mixin: a widget that shows one transcript item and can be refreshed from it."""

    item_index: int = -1
    shown_version: int = -1
    search: str | None = None
    _item: Item | None = None

    def show_item(self, item: Item) -> None:
        raise NotImplementedError

    async def built(self) -> None:
        """Wait until the block has built what it shows (mounted, it draws at once)."""

    def set_search(self, query: str | None) -> None:
        """Highlight `query` inside this block (None: no highlight)."""
        if query == self.search:
            return
        self.search = query
        if self._item is not None:
            self.show_item(self._item)


class ExpandableBlock(TranscriptBlock):
    """Mixin: a block shown collapsed or expanded; a click toggles it (the transcript's
    ctrl+r and ctrl+e toggle every reasoning or tool block through `toggle`)."""

    expanded: bool = False

    def toggle(self) -> None:
        self.expanded = not self.expanded
        if self._item is not None:
            self.show_item(self._item)

    def on_click(self, event: events.Click) -> None:
        event.stop()
        self.toggle()


class Separator(OneLayout, Widget, TranscriptBlock):
    """`── turn 3 ──`, `── turn 3 · completed · 4.1s ──`, or a dim `· step 2`."""

    def __init__(self, item: Item) -> None:
        super().__init__()
        self.item_index = item.index
        self._label = ""
        self._rule = True
        self.show_item(item)

    def show_item(self, item: Item) -> None:
        self.shown_version = item.version
        self.remove_class("-turn", "-end", "-warning", "-error")
        if item.kind == "turn":
            self._label, self._rule = f"turn {item.turn}", True
            self.add_class("-turn")
        elif item.kind == "turn-end":
            parts = [f"turn {item.turn}", item.text]
            if item.duration_ms is not None:
                parts.append(format_duration(item.duration_ms))
            self._label, self._rule = " · ".join(parts), True
            self.add_class("-end")
            if item.level in ("warning", "error"):
                self.add_class(f"-{item.level}")
        else:
            self._label, self._rule = f"· step {item.step}", False
        self.refresh()

    def render(self) -> Content:
        if not self._rule:
            return Content(self._label)
        head = f"── {self._label} "
        width = max(self.size.width, len(head) + 2)
        return Content(head + "─" * (width - len(head)))


class StaticBlock(OneLayout, Static, TranscriptBlock):
    """A block drawn as one `Static`, classed by its item (lane or level) and the search."""

    def __init__(self, item: Item) -> None:
        super().__init__()
        self.item_index = item.index
        self.show_item(item)

    def _take(self, item: Item, kind: str) -> None:
        """Remember `item` and set the block's classes: `-{kind}`, plus `-search-hit`
        while a search matches in it."""
        self._item = item
        self.shown_version = item.version
        self.set_classes([f"-{kind}"] + (["-search-hit"] if self.search else []))


class UserBlock(StaticBlock):
    """A user-role message with its lane and source badges and its short id."""

    def show_item(self, item: Item) -> None:
        self._take(item, item.lane)
        head = Content.assemble(
            lane_badge(item.lane), "  ", (item.source, "bold"), "  ",
            (f"#{short_id(item.message_id)}", "$text-muted"))
        self.update(head + "\n" + marked(Content(visible(_cap(item.current_text()))),
                                         self.search))


class ReasoningBlock(OneLayout, Static, ExpandableBlock):
    """Reasoning, collapsed by default; while it streams it shows its latest line.

    Click it (or press ctrl+r in the transcript) to expand or collapse.
    """

    def __init__(self, item: Item, expanded: bool = False) -> None:
        super().__init__()
        self.item_index = item.index
        self.expanded = expanded
        self._item = item
        self.show_item(item)

    def show_item(self, item: Item) -> None:
        self._item = item
        self.shown_version = item.version
        self.set_class(item.streaming, "-streaming")
        text = item.current_text()
        lines = text.count("\n") + 1 if text else 0
        self.set_class(not self.expanded, "-collapsed")
        if self.expanded:
            head = Content.styled("▾ reasoning", "bold")
            self.update(head + "\n" + marked(Content(visible(_cap(text))), self.search))
            return
        if item.streaming:
            head = Content.styled("▸ thinking… ", "bold")
            self.update(head + Content(last_line(text, 200)))
        else:
            head = Content.styled(f"▸ reasoning · {lines} line{'s' if lines != 1 else ''} ",
                                  "bold")
            self.update(head + marked(Content(one_line(text, 200)), self.search))


_LAID_OUT_ONCE: dict[type[MarkdownBlock], type[MarkdownBlock]] = {}


def laid_out_once(cls: type[MarkdownBlock]) -> type[MarkdownBlock]:
    """`cls` (a Markdown block: list, table, quote …) taking a measured size as
    `OneLayout` does; same name, so every style rule still applies."""
    sub = _LAID_OUT_ONCE.get(cls)
    if sub is None:
        sub = _LAID_OUT_ONCE[cls] = type(cls.__name__, (OneLayout, cls), {
            "__module__": cls.__module__, "__doc__": cls.__doc__})
    return sub


class PlainFence(OneLayout, MarkdownFence):
    """A code fence shown without syntax highlighting while its message still streams.

    Re-highlighting a growing fence on every append is quadratic (measured: 59 chunks/s
    instead of 1,065); the block is highlighted once, at the end.
    """

    @classmethod
    def highlight(cls, code: str, language: str, ansi: bool = False,
                  dark: bool = False) -> Content:
        return Content(code)


_PARSER: MarkdownIt | None = None


def shared_parser() -> MarkdownIt:
    """One Markdown parser for every reply. Textual builds a new `MarkdownIt("gfm-like")`
    for each `append` by default, about a millisecond each time, and a streaming reply
    appends up to 60 times a second; parsing keeps no state in the parser, so one serves
    all (its configuration is Textual's default)."""
    global _PARSER
    if _PARSER is None:
        _PARSER = MarkdownIt("gfm-like")
    return _PARSER


_Paragraph: type[MarkdownBlock] = Markdown.BLOCKS["paragraph_open"]
"""Textual's paragraph block (its class is not exported; `Markdown.BLOCKS` is public)."""


class GrowingParagraph(OneLayout, _Paragraph):  # type: ignore[misc,valid-type]
    """A reply's paragraph that asks for a layout only when its height changes.

    Textual's paragraph asks for a layout of the screen on every change of its text, and
    a streamed reply changes its last paragraph on every flush: each such frame then laid
    out every widget on the screen (10-40 ms on the 2-core VM, the frame a typed key
    waits behind: `benchmarks/bench_keys.py`). Text that grows within the lines the
    paragraph already has (most appends: a new line starts every dozen chunks or so)
    needs only its own lines drawn again."""

    def set_content(self, content: Content) -> None:
        width, height = self.size
        if not self.is_mounted or not width:
            super().set_content(content)
            return
        self._content = content
        self.update(content, layout=False)
        if self.get_content_height(self.size, self.size, width) != height:
            self.refresh(layout=True)  # a line more (or less): the reply is laid out again


class AssistantBlock(OneLayout, Markdown, TranscriptBlock):
    """The assistant's text as Markdown, streamed by appending what arrived since the last
    flush (several flushes' worth in one append when appends fall behind)."""

    def __init__(self, item: Item) -> None:
        self.item_index = item.index
        self.streaming = item.streaming
        self.full_length = 0
        self.shown_length = 0
        text = self._shown_text(item)
        super().__init__(text, open_links=False, parser_factory=shared_parser)
        self._shown = text
        self._pending: list[str] = []
        """Streamed text not appended yet (`_write` appends it in one go)."""
        self._writing = False
        self.shown_version = item.version
        self.set_class(self.streaming, "-streaming")
        self.reserved: int | None = None
        """The fixed height while streaming (text plus TAIL_SLACK); None: auto."""
        self._reserve_timer: Timer | None = None
        self._built = asyncio.Event()

    async def built(self) -> None:
        """Wait until the reply's paragraphs are mounted: Markdown parses its text in a
        thread and mounts the paragraphs after the reply itself is mounted."""
        await self._built.wait()

    def on_markdown_table_of_contents_updated(self) -> None:
        """Markdown's last word on an update: the paragraphs are mounted."""
        self._built.set()

    def on_mount(self) -> None:
        if self.streaming:
            self._reserve_timer = self.set_interval(RESERVE_EVERY, self._reserve_tick)

    def refresh(self, *regions: Region, repaint: bool = True, layout: bool = False,
                recompose: bool = False) -> AssistantBlock:
        """A paragraph mounted into the reply asks for a layout, not a repaint of the reply's
        own lines (its background and rule), which do not change (`called_by_mount`)."""
        if layout and repaint and not regions and not recompose and called_by_mount():
            repaint = False
        super().refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)
        return self

    def _reserve_tick(self) -> None:
        """The reserve's timer. While the person types it leaves the check to the appends
        (`_write`), whose frame lays the reply out anyway: a growth of the reserve from the
        timer is a layout of its own, at a moment a key may arrive."""
        keys_first = getattr(self.app, "keys_first", None)
        if keys_first is None or not keys_first.typing():
            self._reserve()

    def _reserve(self) -> None:
        """Grow the fixed height once the text comes within a line of it (see TAIL_SLACK)."""
        if not self.streaming or not self.is_attached:
            return
        size = self.scrollable_content_region.size
        if not size.width:
            return
        needed = self.arrange(size).total_region.bottom
        if self.reserved is None or needed + 1 > self.reserved:
            self.reserved = needed + self.slack
            self.styles.height = self.reserved + self.styles.gutter.height

    @property
    def slack(self) -> int:
        """TAIL_SLACK, or a sixth of the pane's height on a small screen (a 20-row terminal
        keeps two lines in reserve, not half of what it shows)."""
        pane = self.parent
        shown = pane.scrollable_content_region.height if isinstance(pane, Widget) else 0
        return max(1, min(TAIL_SLACK, shown // 6))

    def _release(self) -> None:
        """The reply is complete: its height is its text's again."""
        if self._reserve_timer is not None:
            self._reserve_timer.stop()
            self._reserve_timer = None
        if self.reserved is not None:
            self.reserved = None
            self.styles.height = None

    def get_block_class(self, block_name: str) -> type[MarkdownBlock]:
        if block_name == "fence" and self.streaming:
            return PlainFence
        if block_name == "paragraph_open":
            return GrowingParagraph
        return laid_out_once(super().get_block_class(block_name))

    def _shown_text(self, item: Item) -> str:
        """What the Markdown shows: all of it, or its first MARKDOWN_LIMIT characters (plus,
        once complete, a note saying how much more there is and how to see it)."""
        raw = item.current_text()
        self.full_length = len(raw)
        self.shown_length = cut = markdown_cut(raw)
        if cut == len(raw):
            return visible(raw)
        shown = visible(raw[:cut])
        if item.streaming:
            return shown
        return (f"{shown}\n\n*… {len(raw) - cut:,} more characters not shown "
                "here: click this reply to read all of it.*")

    @property
    def truncated(self) -> bool:
        return self.full_length > self.shown_length

    def on_click(self, event: events.Click) -> None:
        if self.truncated:
            event.stop()
            self.post_message(self.ShowAll(self.item_index))

    class ShowAll(Message):
        """The person asked for the whole text of a reply too long to render as Markdown."""

        def __init__(self, item_index: int) -> None:
            super().__init__()
            self.item_index = item_index

    def show_item(self, item: Item) -> None:
        self.shown_version = item.version
        text = self._shown_text(item)
        if item.streaming:
            if text.startswith(self._shown):
                delta = text[len(self._shown):]
                if delta:
                    self._shown = text
                    self._pending.append(delta)
                    if not self._writing:
                        self._writing = True
                        self.call_later(self._write)
            else:
                self._shown = text
                self._pending.clear()
                self.call_later(self._replace, text)
            return
        if self.streaming or text != self._shown:
            if self.streaming:
                self.streaming = False
                self._restyle_self(streaming=False)
                self._release()
            self._shown = text
            self.call_later(self._complete, text)

    def _restyle_self(self, streaming: bool) -> None:
        """Toggle `-streaming` restyling this block alone, not every Markdown block inside it
        (`set_class` restyles all descendants: each then drops its old component-style nodes,
        cyclic garbage that the paced collector only frees once everything is idle)."""
        self.set_class(streaming, "-streaming", update=False)
        if self.is_attached:
            self.app.stylesheet.update_nodes([self], animate=True)

    async def _write(self) -> None:
        """Append the streamed text that waits, then check the reserve, so a reply that
        outgrows it is laid out in the same frame as its new text."""
        try:
            while self._pending:
                text = "".join(self._pending)
                self._pending.clear()
                await self.append(text)
        finally:
            self._writing = False
        self._reserve()

    async def _replace(self, text: str) -> None:
        await self.update(text)

    async def _complete(self, text: str) -> None:
        source = self.source
        if "```" in text or "~~~" in text:
            await self.update(text)  # re-parse once: fences get their highlighting now
        elif source != text:
            if source and text.startswith(source):
                # The last deltas arrived with the end of the block: append them like the
                # stream did, instead of re-parsing and re-mounting every block of the reply.
                await self.append(text[len(source):])
            else:
                await self.update(text)

    def set_search(self, query: str | None) -> None:
        """Highlight the match in the rendered paragraphs, lists and quotes (code fences keep
        their highlighting; the block's left rule still marks it). Applied again after the
        next refresh: a block just mounted builds its paragraphs asynchronously."""
        self.search = query
        self._apply_search()
        if self.is_attached:
            self.call_after_refresh(self._apply_search)

    def _apply_search(self) -> None:
        pattern = search_pattern(self.search)
        for block in self.query(MarkdownBlock):
            content = getattr(block, "_content", None)
            if not isinstance(content, Content) or not content.plain:
                continue
            try:
                block.update(content if pattern is None else
                             content.highlight_regex(pattern, style=MATCH_STYLE))
            except Exception:
                continue  # a block kind that renders itself differently: left as it is

    def on_unmount(self) -> None:
        self._built.set()  # nobody waits for a reply that is gone
        if self._reserve_timer is not None:
            self._reserve_timer.stop()
            self._reserve_timer = None
        self._pending.clear()


class ToolBlock(OneLayout, Static, ExpandableBlock):
    """A tool call: name, arguments, how long it ran, and its result (click to expand)."""

    def __init__(self, item: Item) -> None:
        super().__init__()
        self.item_index = item.index
        self.expanded = False
        self._item = item
        self.show_item(item)

    def show_item(self, item: Item) -> None:
        self._item = item
        self.shown_version = item.version
        arguments = item.arguments or item.current_text()
        running = item.result is None and not item.interrupted
        self.set_class(item.is_error, "-error")
        self.set_class(running, "-running")
        if item.result is None and item.interrupted:
            ended = "aborted" if item.reason_kind == "aborted" else f"ended: {item.reason_kind}" \
                if item.reason_kind else "ended"
            status = Content.styled(f"■ no result · the turn {ended}", "$text-muted")
        elif running:
            status = Content.styled("… running" if not item.streaming else "… writing call",
                                    "$warning")
        elif item.is_error:
            status = Content.styled(f"✗ {format_duration(item.duration)}".rstrip(), "bold $error")
        else:
            status = Content.styled(f"✓ {format_duration(item.duration)}".rstrip(),
                                    "bold $success")
        head = Content.assemble(("λ ", "$secondary"), (visible_label(item.name or "tool"), "bold"),
                                " ", status)
        if self.expanded:
            body = [Content.styled("arguments", "$text-muted"), Content(visible(_cap(
                _pretty(arguments))))]
            if item.result is not None:
                body += [Content.styled("result", "$text-muted"),
                         Content(visible(_cap(item.result)))]
            self.update(marked(Content("\n").join([head, *body]), self.search))
            return
        lines = [head, Content.styled(_one_line_args(arguments), "$text-muted")]
        if item.result:
            preview = item.result.splitlines()[:RESULT_PREVIEW_LINES]
            cut = any(len(line) > RESULT_PREVIEW_WIDTH for line in preview)
            lines += [Content(visible(_preview_line(line))) for line in preview]
            extra = item.result.count("\n") + 1 - len(preview)
            if extra > 0:
                lines.append(Content.styled(f"… {extra} more line{'s' if extra != 1 else ''} "
                                            "(click to expand)", "$text-muted"))
            elif cut:
                lines.append(Content.styled("… (click to expand)", "$text-muted"))
        self.update(marked(Content("\n").join(lines), self.search))


def _preview_line(line: str) -> str:
    return line if len(line) <= RESULT_PREVIEW_WIDTH else line[: RESULT_PREVIEW_WIDTH - 1] + "…"


def _one_line_args(arguments: str, limit: int = 160) -> str:
    """Collapsed arguments on one line: JSON re-serialised compactly (a pretty-printed
    object no longer shows as a lone `{`), anything else with its lines joined."""
    try:
        text = json.dumps(json.loads(arguments), ensure_ascii=False, separators=(", ", ": "))
    except (ValueError, TypeError):
        text = " ".join(line.strip() for line in arguments.splitlines() if line.strip())
    return one_line(text, limit) or "{}"


def _pretty(arguments: str) -> str:
    try:
        return json.dumps(json.loads(arguments), indent=2, ensure_ascii=False)
    except (ValueError, TypeError):
        return arguments


class NoticeBlock(StaticBlock):
    """A note between items: a failed attempt, an interrupted reply, an unknown event."""

    def show_item(self, item: Item) -> None:
        self._take(item, item.level)
        prefix = "! " if item.level in ("warning", "error") else "· "
        self.update(marked(Content(prefix + visible(_cap(item.current_text()))), self.search))


BLOCKS: dict[str, type[Any]] = {
    "turn": Separator,
    "turn-end": Separator,
    "step": Separator,
    "user": UserBlock,
    "reasoning": ReasoningBlock,
    "text": AssistantBlock,
    "tool": ToolBlock,
    "notice": NoticeBlock,
}


def make_block(item: Item) -> Widget:
    return BLOCKS.get(item.kind, NoticeBlock)(item)


class NewerMarker(Static):
    """`▼ 1,234 later items — scroll down or click to load · end jumps to the latest`."""

    shown: int | None = None

    def set_count(self, count: int) -> None:
        if count == self.shown:
            return  # called on every flush while the window is detached
        self.shown = count
        self.update(Content(f"▼ {count:,} later item{'s' if count != 1 else ''} · scroll "
                            "down or click to load · end jumps to the latest"))


class OlderMarker(Static):
    """`▲ 1,234 earlier items — scroll up or click to load`."""

    count: ClassVar[int] = 0

    def set_count(self, count: int) -> None:
        self.update(Content(f"▲ {count:,} earlier item{'s' if count != 1 else ''} · "
                            "scroll up or click to load"))
