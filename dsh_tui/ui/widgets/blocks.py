"""Transcript blocks: one small widget per transcript item.

Every piece of user or model text goes through `visible()` and is placed in a
`Content` as plain text, never parsed as markup, so `[inject]`, `[bold]` and
`\\x1b[31m` appear exactly as they were written (the escape as ␛).
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any, ClassVar, cast

from markdown_it import MarkdownIt
from rich.segment import Segment
from rich.style import Style as RichStyle
from textual import events
from textual.content import Content
from textual.geometry import Region, Size
from textual.message import Message
from textual.selection import Selection
from textual.strip import Strip
from textual.style import Style
from textual.widget import Widget
from textual.widgets import Static

from ..markdown_lines import Look, Part, code_content, parse, render_part, reparse_tail
from ..state.text import format_duration, last_line, one_line, short_id, visible, visible_label
from ..state.transcript import Item
from .line_selection import lines_text, selected_line
from .repaint import OneLayout

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
"""Blank lines a streaming reply keeps in reserve below its text (fewer on a small screen).
While it streams, the reply's height is its text plus these lines: text that grows within
it is drawn where the reserve was, and nothing else on screen moves, so the frame repaints
the lines that changed, with no layout of the screen. Without it, every frame that a
streamed reply grew by a line laid out and repainted the whole transcript (its scrollbar
and every visible line moved up): a key typed then, and every other callback of the loop,
waited for it (benchmarks/bench_keys.py, the soak's lag figures). The height grows by
TAIL_SLACK lines at a time (`AssistantBlock.get_content_height`), and is the text's again
when the reply is complete."""

_NO_STYLE = RichStyle()

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


_PARSER: MarkdownIt | None = None


def shared_parser() -> MarkdownIt:
    """One Markdown parser for every reply (Textual's configuration, "gfm-like"); parsing
    keeps no state in the parser, so one serves all."""
    global _PARSER
    if _PARSER is None:
        _PARSER = MarkdownIt("gfm-like")
    return _PARSER


@lru_cache(maxsize=64)
def highlighted(code: str, language: str) -> Content:
    """A closed fence's code, highlighted once: the theme's variables in its styles are
    resolved when it is drawn, so one result serves every theme."""
    return code_content(code, language)


class AssistantBlock(OneLayout, Widget, TranscriptBlock):
    """The assistant's text as Markdown, drawn by this one widget line by line.

    No child widgets: the text is parsed into its top-level blocks (`markdown_lines`), and
    each block's lines are rendered once per width and kept (`Part.cache`). A streamed
    append parses again only from the last block on, so only that block is rendered
    again; text that grows within the lines already shown is drawn without a layout of
    the screen, a new line is one layout (or none, within the streaming reserve).

    Why one widget: a Textual `Markdown` mounted a widget for every paragraph, list item,
    bullet, fence and table cell, and every frame that laid out the screen walked them all
    (benchmarks/bench_keys.py: the frame a typed key waits behind), and a pruned reply
    left all of them as cyclic garbage for the paced collector (ui/state/gcpacing.py).
    """

    can_focus = False

    def __init__(self, item: Item) -> None:
        super().__init__()
        self.item_index = item.index
        self.streaming = item.streaming
        self.full_length = 0
        self.shown_length = 0
        self.source = self._shown_text(item)
        """The Markdown text shown (what `visible` made of the reply, maybe cut)."""
        self._parts: list[Part] = parse(shared_parser(), self.source)
        self._rows: list[Strip] | None = None
        """Every line drawn at `_rows_key`'s width (None: to build from the parts' caches)."""
        self._rows_key: tuple[Any, ...] | None = None
        self._part_rows: list[int] = []
        """The first row of each part in `_rows`."""
        self._counted: tuple[tuple[Any, ...], int] | None = None
        """(key, how many lines) of the last lines drawn: kept when they are released."""
        self.shown_version = item.version
        self.set_class(self.streaming, "-streaming")
        self.reserved: int | None = None
        """The height kept while streaming (lines plus the slack); None: the text's."""
        self._reserved_width = 0

    async def built(self) -> None:
        """The reply draws from its text at once: nothing to wait for (kept for callers
        that wait for a block before showing it)."""

    # -- what is shown -----------------------------------------------------------------------

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
            if text == self.source:
                return
            kept = len(self._parts) - 1
            if text.startswith(self.source):
                self._parts = reparse_tail(shared_parser(), self._parts, text)
            else:
                kept = 0
                self._parts = parse(shared_parser(), text)
            self.source = text
            self._changed(max(0, kept))
            return
        if not self.streaming and text == self.source:
            return
        if self.streaming:
            self.streaming = False
            self._restyle_self(streaming=False)
        self.source = text
        self._parts = parse(shared_parser(), text)  # once, whole: fences highlighted now
        self.reserved = None
        self._changed(0, layout=True)

    def _restyle_self(self, streaming: bool) -> None:
        """Toggle `-streaming` restyling this block alone (its border colour)."""
        self.set_class(streaming, "-streaming", update=False)
        if self.is_attached:
            self.app.stylesheet.update_nodes([self], animate=True)

    def set_search(self, query: str | None) -> None:
        """Highlight the matches of `query` in the reply's text, code included."""
        if query == self.search:
            return
        self.search = query
        self._forget_lines()
        self.refresh()

    # -- lines ------------------------------------------------------------------------------

    def _look(self, part_index: int) -> Look:
        dark = self.app.current_theme.dark if self.is_attached else True
        open_code = self.streaming and part_index == len(self._parts) - 1
        return Look(dark=dark, search=search_pattern(self.search), plain_code=open_code,
                    match_style=MATCH_STYLE)

    def _strips(self, part_index: int, width: int, base: Style, theme: str) -> list[Strip]:
        """One part's lines at `width`, from its cache when its look is the same (the lines
        carry resolved colours: the theme and the reply's own style are part of it)."""
        part = self._parts[part_index]
        look = self._look(part_index)
        key = (width, look, base, theme)
        if part.cache is not None and part.cache[0] == key:
            return cast(list[Strip], part.cache[1])
        get_style = self._get_style
        blank = base.rich_style
        strips = []
        for line in render_part(part, width, look, highlighted):
            if line.cell_length > width:
                line = line.truncate(width)
            segments = [Segment(text, style.rich_style)
                        for text, style in line.render(base, end="", parse_style=get_style)]
            strips.append(Strip(segments, line.cell_length).extend_cell_length(width, blank))
        part.cache = (key, strips)
        return strips

    def _key(self, width: int) -> tuple[Any, ...]:
        """What the drawn lines depend on besides the text: width, the reply's style, theme."""
        return (width, self.visual_style, self.app.theme if self.is_attached else "")

    def _line_count(self, width: int) -> int:
        """How many lines the reply has at `width`, without drawing them when they were
        counted already: a layout measures every reply in the pane (a resize, a pane that
        grew, a block that changed), and drawing a released reply's lines there only to
        count them filled again the caches `release_lines` emptied, for every reply far out
        of sight (`ui/offscreen.py`), until the next release."""
        key = self._key(width)
        if self._counted is not None and self._counted[0] == key:
            return self._counted[1]
        return len(self._lines(width))

    def _lines(self, width: int) -> list[Strip]:
        """Every line of the reply at `width`: the parts' lines with the blank lines between
        them (margins: `markdown_lines.MARGINS`)."""
        key = self._key(width)
        base = key[1]
        if self._rows is not None and self._rows_key == key:
            return self._rows
        rows: list[Strip] = []
        starts: list[int] = []
        blank = Strip.blank(width, base.rich_style)
        below = 0
        for index, part in enumerate(self._parts):
            above, after = part.margins
            if index:
                rows.extend([blank] * max(above, below))
            starts.append(len(rows))
            rows.extend(self._strips(index, width, base, key[2]))
            below = after
        self._rows, self._rows_key, self._part_rows = rows, key, starts
        self._counted = (key, len(rows))
        return rows

    def draw_ahead(self, width: int) -> None:
        """Draw the reply's lines at `width` now, while it is mounted hidden (a page read
        back, `Transcript._mount_hidden`): the frame that shows it then only places it,
        where rendering its Markdown made that frame (every streaming agent and a typed
        key wait for it) longer by every reply of the page."""
        if width > 0 and self.is_attached:
            self._lines(width)

    def _forget_lines(self) -> None:
        """The text or its look changed: every line must be drawn (and counted) again."""
        self._drop_lines()
        self._counted = None

    def _drop_lines(self) -> None:
        self._rows = None
        for part in self._parts:
            part.cache = None

    def release_lines(self) -> int:
        """Drop every drawn line (`ui/offscreen.py`, for a block far out of sight); the next
        frame that shows the reply renders them again, the same. Their count is kept: the
        reply's height is the same until its text changes. Returns how many."""
        held = self.held_lines()
        self._drop_lines()
        return held

    def held_lines(self) -> int:
        """Lines this reply keeps drawn in its own caches."""
        return sum(len(part.cache[1]) for part in self._parts if part.cache is not None) + \
            len(self._rows or ())

    @property
    def text_height(self) -> int:
        """Lines of text the reply has at its width (without the streaming reserve)."""
        return self._line_count(self.size.width) if self.size.width else 0

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        rows = self._lines(width)
        if 0 <= y < len(rows):
            selection = self.text_selection
            style = self.screen.get_component_rich_style("screen--selection") \
                if selection is not None else _NO_STYLE
            return selected_line(rows[y], y, selection, style)
        return Strip.blank(width, self.visual_style.rich_style)

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        """The selected part of the reply as drawn (a drag over it, a double click): its
        lines as the screen shows them, so what is copied is what was highlighted."""
        width = self.size.width
        if not width:
            return None
        return selection.extract(lines_text(self._lines(width))), "\n"

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        """The text's lines, or while streaming the reserve (see TAIL_SLACK, `reserve_for`)."""
        if not width:
            return 0
        needed = self._line_count(width)
        if not self.streaming:
            self.reserved = None
            return needed
        self.reserved = self.reserve_for(needed)
        self._reserved_width = width
        return self.reserved

    def reserve_for(self, lines: int) -> int:
        """The streaming height of a reply of `lines` lines: a multiple of the slack, with
        at least half the slack (plus one) of blank lines below the text and at most
        one and a half. It grows by `slack` lines at a time and depends only on the text,
        not on when the reply was laid out (a snapshot, a pane that shrank meanwhile)."""
        slack = self.slack
        return ((lines + slack // 2) // slack + 1) * slack

    def get_content_width(self, container: Size, viewport: Size) -> int:
        return container.width

    @property
    def slack(self) -> int:
        """TAIL_SLACK, or an eighth of the terminal's height on a small one (a 20-row
        terminal keeps two lines in reserve, not half of what the pane shows). Read from
        the terminal, not the pane: the pane's height changes while the reply streams
        (a queued message, a notice), and the reserve, once taken, is kept."""
        rows = self.app.size.height if self.is_attached else TAIL_SLACK * 8
        return max(1, min(TAIL_SLACK, rows // 8))

    def _changed(self, first_part: int, layout: bool = False) -> None:
        """The parts from `first_part` on changed: draw their lines again, and lay the
        reply out only if its height changes (past the reserve while streaming)."""
        width = self.size.width
        self._counted = None
        if not width or not self.is_mounted:
            self._rows = None
            self.refresh(layout=True)
            return
        before = len(self._rows) if self._rows is not None and self._rows_key is not None \
            and self._rows_key[0] == width else None
        self._rows = None
        rows = self._lines(width)
        height = self.size.height
        if layout or before is None:
            self.refresh(layout=True)
        elif self.streaming and self.reserved is not None and self._reserved_width == width \
                and self.reserve_for(len(rows)) == self.reserved:
            first = self._part_rows[first_part] if first_part < len(self._part_rows) \
                else len(rows)
            first = max(0, first - 1)  # the gap above a new part
            self.refresh(Region(0, first, width, max(1, height - first)))
        elif len(rows) == before and not self.streaming:
            first = self._part_rows[first_part] if first_part < len(self._part_rows) else 0
            self.refresh(Region(0, first, width, max(1, len(rows) - first)))
        else:
            self.refresh(layout=True)


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
