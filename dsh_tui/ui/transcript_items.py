"""Transcript items as drawn lines: what each kind of item shows, framed, at one width.

The transcript pane (`widgets/transcript.py`) draws only the lines on screen and asks
this module for an item's lines when one of them comes into view. Every piece of
user or model text goes through `visible()` and into a `Content` as plain text, never
markup, so `[inject]`, `[bold]` and `\\x1b[31m` appear exactly as written (the escape as
␛). A reply is Markdown (`markdown_lines`); while it streams only its last top-level
block is parsed and drawn again, and a fence still open is drawn plain (highlighted
once closed).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

from markdown_it import MarkdownIt
from rich.segment import Segment
from rich.style import Style as RichStyle
from textual.content import Content
from textual.strip import Strip
from textual.style import Style

from .badges import lane_badge, receipt_look
from .markdown_lines import Look, Part, code_content, parse, render_part, reparse_tail
from .state.text import format_duration, last_line, one_line, short_id, visible, visible_label
from .state.transcript import Item

MAX_BLOCK = 104
"""Widest a block is drawn (cells, frame included): prose keeps a readable measure on a
wide screen. Turn and step dividers take the whole width."""
RESULT_PREVIEW_LINES = 4
RESULT_PREVIEW_WIDTH = 200
"""Characters of one result line a collapsed tool call shows; a longer line ends in `…`
(never cut silently: expanding the call shows it whole)."""
FULL_TEXT_LIMIT = 20_000
MARKDOWN_LIMIT = 20_000
"""Characters of one reply rendered as Markdown; past this (or a paragraph past
PARAGRAPH_LIMIT) the reply shows its start and a note, and a click opens all of it in
the read-all viewer (`screens/full_text.py`). A paragraph is wrapped whole, so one huge
paragraph would cost its whole length on every redraw of the item."""
PARAGRAPH_LIMIT = 6_000
MATCH_STYLE = "bold reverse"

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


def is_cut(item: Item) -> bool:
    """Whether a reply shows only its start (a click on it opens the read-all viewer)."""
    if item.kind != "text":
        return False
    raw = item.current_text()
    return markdown_cut(raw) < len(raw)


def search_pattern(query: str | None) -> re.Pattern[str] | None:
    """The search's own rule (state/search.py): all lowercase matches any case, a capital
    is exact."""
    if not query:
        return None
    return re.compile(re.escape(query), 0 if query != query.lower() else re.IGNORECASE)


def marked(content: Content, query: str | None) -> Content:
    """`content` with every occurrence of the search query highlighted."""
    pattern = search_pattern(query)
    return content if pattern is None else content.highlight_regex(pattern, style=MATCH_STYLE)


def _cap(text: str, limit: int = FULL_TEXT_LIMIT) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n… ({len(text) - limit:,} more characters)"


@dataclass(frozen=True)
class ItemLook:
    """What an item's lines depend on besides its text and the width (a cache key)."""

    expanded: bool = False
    search: str | None = None
    """The query highlighted in it (the current search match only)."""
    theme: str = ""
    dark: bool = True


@dataclass(frozen=True)
class Frame:
    """How a block is framed: blank lines above it, a left border, its text style, padding
    (styles are the pane's component classes, see COMPONENT_CLASSES)."""

    margin: int = 1
    border: str = ""
    """The border's component class ('' for none): one `▌` cell left of the padding."""
    style: str = ""
    pad: int = 1
    full: bool = False
    """As wide as the pane (dividers), not MAX_BLOCK."""


SEARCH_HIT = "transcript--search-hit"
COMPONENT_CLASSES = frozenset({
    "transcript--turn", "transcript--end", "transcript--end-warning", "transcript--end-error",
    "transcript--step", "transcript--user", "transcript--lane-follow-up",
    "transcript--lane-steer", "transcript--lane-inject", "transcript--lane-context",
    "transcript--reasoning", "transcript--reasoning-streaming", "transcript--reply",
    "transcript--reply-streaming", "transcript--tool", "transcript--tool-error",
    "transcript--tool-running", "transcript--notice", "transcript--notice-warning",
    "transcript--notice-error", SEARCH_HIT, "transcript--hint",
})
"""The pane's component classes (widgets/transcript.tcss styles them): a frame names
them, and the pane resolves them as CSS does (`get_visual_style`: `auto` colours, alpha
over the pane's background, themes)."""


def frame_of(item: Item, look: ItemLook) -> Frame:
    """The frame of `item` (its kind, state, level), with the search's border if marked."""
    kind = item.kind
    if kind in ("turn", "turn-end", "step"):
        style = {"turn": "transcript--turn", "step": "transcript--step"}.get(
            kind, "transcript--end")
        if kind == "turn-end" and item.level in ("warning", "error"):
            style = f"transcript--end-{item.level}"
        frame = Frame(margin=0 if kind == "step" else 1, style=style, pad=0, full=True)
    elif kind == "user":
        lane = item.lane if item.lane in ("steer", "inject", "context") else "follow-up"
        frame = Frame(border=f"transcript--lane-{lane}", style="transcript--user")
    elif kind == "reasoning":
        frame = Frame(style="transcript--reasoning-streaming" if item.streaming
                      else "transcript--reasoning")
    elif kind == "text":
        frame = Frame(border="transcript--reply-streaming" if item.streaming
                      else "transcript--reply")
    elif kind == "tool":
        running = item.result is None and not item.interrupted
        frame = Frame(border="transcript--tool-error" if item.is_error
                      else "transcript--tool-running" if running else "transcript--tool")
    else:
        style = "transcript--notice" if item.level not in ("warning", "error") \
            else f"transcript--notice-{item.level}"
        frame = Frame(margin=0, style=style)
    if look.search is not None:
        frame = Frame(frame.margin, SEARCH_HIT, frame.style, max(frame.pad, 1), frame.full)
    return frame


class Row(NamedTuple):
    """One drawn line: the cells before the text (border, padding), the text padded to the
    block's inner width, and the cells after it (padding, the rest of the pane)."""

    lead: tuple[Segment, ...]
    body: Strip
    trail: tuple[Segment, ...]

    @property
    def text(self) -> str:
        """The line's text as a selection copies it (no frame, no trailing blanks)."""
        return self.body.text.rstrip()


class Painter:
    """Turns lines of `Content` into `Row`s at one pane width with the app's styles: a
    frame's component classes through `resolve` (the pane's `get_visual_style`), the
    styles inside a line (`$primary`, `bold` …) through `parse_style`."""

    def __init__(self, width: int, resolve: Callable[..., Style],
                 parse_style: Callable[[str], Style], theme: str = "",
                 dark: bool = True) -> None:
        self.width = width
        self.resolve = resolve
        self.base = resolve()
        self.parse_style = parse_style
        self.theme = theme
        self.dark = dark
        self._styles: dict[str, Style] = {}
        self._blank: Row | None = None
        self._empties: dict[tuple[int, Style], Strip] = {}
        self._blanks: dict[tuple[int, RichStyle | None], Strip] = {}
        self._edges: dict[Frame, tuple[tuple[Segment, ...], tuple[Segment, ...], Style]] = {}

    def style(self, text: str | Style) -> Style:
        """`text` parsed (cached: the same few frame styles come up on every item)."""
        if isinstance(text, Style):
            return text
        style = self._styles.get(text)
        if style is None:
            style = self._styles[text] = self.parse_style(text) if text else Style()
        return style

    def block_width(self, frame: Frame) -> int:
        return self.width if frame.full else min(self.width, MAX_BLOCK)

    def inner_width(self, frame: Frame) -> int:
        """Cells of text a line of a block framed so has."""
        return max(1, self.block_width(frame) - (1 if frame.border else 0) - 2 * frame.pad)

    def body(self, line: Content, width: int, style: Style) -> Strip:
        """`line` drawn on `style`, cut or padded to exactly `width` cells."""
        if line.cell_length > width:
            line = line.truncate(width)
        segments = [Segment(text, piece.rich_style)
                    for text, piece in line.render(style, end="", parse_style=self.style)]
        return Strip(segments, line.cell_length).extend_cell_length(width, style.rich_style)

    def empty(self, width: int, style: Style) -> Strip:
        """A line of `width` blank cells on `style` (one object per width and style)."""
        key = (width, style)
        strip = self._empties.get(key)
        if strip is None:
            strip = self._empties[key] = Strip.blank(width, style.rich_style)
        return strip

    def empty_like(self, body: Strip) -> Strip:
        """A blank line as wide as `body`, on the style its last cell has (a frame's)."""
        segments = list(body)
        style = segments[-1].style if segments else None
        key = (body.cell_length, style)
        strip = self._blanks.get(key)
        if strip is None:
            strip = self._blanks[key] = Strip.blank(body.cell_length, style)
        return strip

    def edges(self, frame: Frame) -> tuple[tuple[Segment, ...], tuple[Segment, ...], Style]:
        """(lead, trail, text style) of a block's lines (the same objects for every block
        framed alike: the pane knows a line it drew before by them)."""
        edges = self._edges.get(frame)
        if edges is None:
            edges = self._edges[frame] = self._make_edges(frame)
        return edges

    def _make_edges(self, frame: Frame) -> tuple[tuple[Segment, ...], tuple[Segment, ...],
                                                  Style]:
        style = self.resolve(frame.style) if frame.style else self.base
        lead: list[Segment] = []
        if frame.border:
            border = self.resolve(*(c for c in (frame.style, frame.border) if c))
            lead.append(Segment("█" if frame.border == SEARCH_HIT else "▌", border.rich_style))
        if frame.pad:
            lead.append(Segment(" " * frame.pad, style.rich_style))
        trail: list[Segment] = []
        if frame.pad:
            trail.append(Segment(" " * frame.pad, style.rich_style))
        rest = self.width - self.block_width(frame)
        if rest > 0:
            trail.append(Segment(" " * rest, self.base.rich_style))
        return tuple(lead), tuple(trail), style

    def blank(self) -> Row:
        """An empty line of the pane (the space above a block)."""
        if self._blank is None:
            self._blank = Row((), Strip.blank(self.width, self.base.rich_style), ())
        return self._blank

    def rows(self, frame: Frame, lines: list[Content]) -> list[Row]:
        """`lines` (each at most the inner width) framed."""
        lead, trail, style = self.edges(frame)
        width = self.inner_width(frame)
        framed = [self.blank()] * frame.margin
        framed.extend(Row(lead, self.body(line, width, style), trail) for line in lines)
        return framed


def wrap(content: Content, width: int) -> list[Content]:
    """`content` split at its newlines and word-wrapped to `width` cells."""
    return [line.rstrip() for line in content.expand_tabs(8).wrap(max(1, width))] or \
        [Content("")]


# -- what each kind of item says -----------------------------------------------------------

def divider_lines(item: Item, width: int) -> list[Content]:
    """`── turn 3 ──`, `── turn 3 · completed · 4.1s ──`, or a plain `· step 2`."""
    if item.kind == "step":
        return [Content(f"· step {item.step}")]
    label = f"turn {item.turn}"
    if item.kind == "turn-end":
        parts = [label, item.text]
        if item.duration_ms is not None:
            parts.append(format_duration(item.duration_ms))
        label = " · ".join(part for part in parts if part)
    head = f"── {visible_label(label)} "
    return [Content(head + "─" * max(2, width - len(head)))]


def user_head(item: Item) -> Content:
    """A message's header: lane and source badges, the short id, and its receipt (how it
    reached the model; a click on the header opens its history in the timeline)."""
    head = Content.assemble(lane_badge(item.lane), "  ", (visible_label(item.source), "bold"),
                            "  ", (f"#{short_id(item.message_id)}", "$text-muted"))
    stamp = item.receipt
    if stamp is not None:
        glyph, style = receipt_look(stamp.state)
        head += Content.assemble("  ", (f"{glyph} ", style),
                                 (visible_label(stamp.text), "$text-muted"))
    return head


def user_lines(item: Item, width: int, look: ItemLook) -> list[Content]:
    """The header (`user_head`), then the message."""
    body = marked(Content(visible(_cap(item.current_text()))), look.search)
    return [*wrap(user_head(item), width), *wrap(body, width)]


def reasoning_lines(item: Item, width: int, look: ItemLook) -> list[Content]:
    """Collapsed: one line (the latest line while it streams); expanded: all of it."""
    text = item.current_text()
    if look.expanded:
        body = marked(Content(visible(_cap(text))), look.search)
        return [Content.styled("▾ reasoning", "bold"), *wrap(body, width)]
    if item.streaming:
        line = Content.styled("▸ thinking… ", "bold") + Content(last_line(text, 200))
    else:
        count = text.count("\n") + 1 if text else 0
        head = Content.styled(f"▸ reasoning · {count} line{'s' if count != 1 else ''} ", "bold")
        line = head + marked(Content(one_line(text, 200)), look.search)
    return [line.truncate(width, ellipsis=True)]


def tool_lines(item: Item, width: int, look: ItemLook) -> list[Content]:
    """A tool call: name, status and time, its arguments and its result (all of both
    expanded; collapsed, one line of arguments and the first lines of the result)."""
    arguments = item.arguments or item.current_text()
    running = item.result is None and not item.interrupted
    if item.result is None and item.interrupted:
        ended = "aborted" if item.reason_kind == "aborted" else \
            f"ended: {item.reason_kind}" if item.reason_kind else "ended"
        status = Content.styled(f"■ no result · the turn {visible_label(ended)}", "$text-muted")
    elif running:
        status = Content.styled("… running" if not item.streaming else "… writing call",
                                "$warning")
    elif item.is_error:
        status = Content.styled(f"✗ {format_duration(item.duration)}".rstrip(), "bold $error")
    else:
        status = Content.styled(f"✓ {format_duration(item.duration)}".rstrip(), "bold $success")
    head = Content.assemble(("λ ", "$secondary"), (visible_label(item.name or "tool"), "bold"),
                            " ", status)
    if look.expanded:
        body = [Content.styled("arguments", "$text-muted"),
                Content(visible(_cap(_pretty(arguments))))]
        if item.result is not None:
            body += [Content.styled("result", "$text-muted"), Content(visible(_cap(item.result)))]
        content = Content("\n").join([head, *body])
    else:
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
        content = Content("\n").join(lines)
    return wrap(marked(content, look.search), width)


def notice_lines(item: Item, width: int, look: ItemLook) -> list[Content]:
    """A note between items: a failed attempt, an interrupted reply, an unknown event."""
    prefix = "! " if item.level in ("warning", "error") else "· "
    return wrap(marked(Content(prefix + visible(_cap(item.current_text()))), look.search),
                width)


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


# -- replies -------------------------------------------------------------------------------

_PARSER: MarkdownIt | None = None


def shared_parser() -> MarkdownIt:
    """One Markdown parser for every reply (Textual's configuration, "gfm-like")."""
    global _PARSER
    if _PARSER is None:
        _PARSER = MarkdownIt("gfm-like")
    return _PARSER


@lru_cache(maxsize=64)
def highlighted(code: str, language: str) -> Content:
    """A closed fence's code, highlighted once (theme variables resolve when drawn)."""
    return code_content(code, language)


def reply_source(item: Item) -> str:
    """What a reply's Markdown shows: all of it, or its start (plus, once complete, a
    note saying how much more there is and how to read it)."""
    raw = item.current_text()
    cut = markdown_cut(raw)
    if cut == len(raw):
        return visible(raw)
    shown = visible(raw[:cut])
    if item.streaming:
        return shown
    return (f"{shown}\n\n*… {len(raw) - cut:,} more characters not shown "
            "here: click this reply to read all of it.*")


class Reply:
    """A reply's Markdown as top-level blocks, each drawn once per width and look.

    A reply that streams keeps one of these: an append parses again from its last block
    on (`reparse_tail`) and only that block is drawn again. Once complete it is parsed
    whole, once, and its fences are highlighted."""

    def __init__(self, item: Item) -> None:
        self.streaming = item.streaming
        self.source = reply_source(item)
        self.parts: list[Part] = parse(shared_parser(), self.source)

    def update(self, item: Item) -> None:
        """Follow `item`'s text (parse its tail while it streams, all of it once done)."""
        source = reply_source(item)
        if item.streaming and self.streaming and source.startswith(self.source):
            if source != self.source:
                self.parts = reparse_tail(shared_parser(), self.parts, source)
        elif source != self.source or self.streaming != item.streaming:
            self.parts = parse(shared_parser(), source)
        self.source = source
        self.streaming = item.streaming

    def rows(self, painter: Painter, frame: Frame, look: ItemLook) -> list[Row]:
        """Every line, the blank lines between blocks included (`markdown_lines.MARGINS`)."""
        lead, trail, style = painter.edges(frame)
        width = painter.inner_width(frame)
        pattern = search_pattern(look.search)
        blank = Row(lead, painter.empty(width, style), trail)
        rows = [painter.blank()] * frame.margin
        below = 0
        last = len(self.parts) - 1
        for index, part in enumerate(self.parts):
            above, after = part.margins
            if index:
                rows.extend([blank] * max(above, below))
            key = (width, look, pattern, self.streaming and index == last, frame.style,
                   painter.theme, painter.base)
            if part.cache is None or part.cache[0] != key:
                part_look = Look(dark=look.dark, search=pattern, match_style=MATCH_STYLE,
                                 plain_code=self.streaming and index == last)
                body = [painter.body(line, width, style)
                        for line in render_part(part, width, part_look, highlighted)]
                part.cache = (key, body)
            rows.extend(Row(lead, body, trail) for body in part.cache[1])
            below = after
        if not self.parts:
            rows.append(blank)
        return rows


# -- one entry point -----------------------------------------------------------------------

def item_rows(item: Item, painter: Painter, look: ItemLook, reply: Reply | None = None
              ) -> list[Row]:
    """Every drawn line of `item` (the blank lines above it included)."""
    frame = frame_of(item, look)
    kind = item.kind
    if kind == "text":
        if reply is None:
            reply = Reply(item)
        return reply.rows(painter, frame, look)
    width = painter.inner_width(frame)
    if kind in ("turn", "turn-end", "step"):
        lines = divider_lines(item, width)
    elif kind == "user":
        lines = user_lines(item, width, look)
    elif kind == "reasoning":
        lines = reasoning_lines(item, width, look)
    elif kind == "tool":
        lines = tool_lines(item, width, look)
    else:
        lines = notice_lines(item, width, look)
    return painter.rows(frame, lines)


def _text_lines(text: str, width: int) -> int:
    """About how many lines `text` wraps to at `width` (no wrapping done)."""
    if not text:
        return 1
    if len(text) <= width and "\n" not in text:
        return 1
    return sum(len(line) // width + 1 for line in text.split("\n"))


def estimate(item: Item, pane_width: int, expanded: bool) -> int:
    """About how many lines `item_rows` draws for `item`, without rendering it (an item far
    out of sight: its exact height is learnt when it is first drawn)."""
    kind = item.kind
    width = max(1, min(pane_width, MAX_BLOCK) - 3)
    if kind == "step":
        return 1
    if kind in ("turn", "turn-end"):
        return 2
    if kind == "reasoning":
        return 1 + (1 + _text_lines(item.text, width) if expanded else 1)
    if kind == "tool":
        if expanded:
            return 3 + _text_lines(item.arguments, width) + (
                1 + _text_lines(item.result, width) if item.result is not None else 0)
        result = item.result or ""
        return 3 + min(RESULT_PREVIEW_LINES + 1, result.count("\n") + 1) if result else 3
    text = item.text[:MARKDOWN_LIMIT + 1]
    if kind == "user":
        head = 20 + len(item.lane) + len(item.source) + (
            len(item.receipt.text) if item.receipt is not None else 0)
        return 2 + head // width + _text_lines(text, width)
    if kind == "text":
        return 1 + _text_lines(text, width)
    return _text_lines(text, width)

