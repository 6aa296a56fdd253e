"""Markdown to lines of `Content`: what a reply in the transcript shows, without widgets.

A reply is parsed by markdown-it (the parser Textual's `Markdown` uses, same configuration)
and each top-level block (a paragraph, a list, a fence …) becomes lines of `Content` at
most `width` cells wide, styled with the theme's variables (`$primary`, `$boost` …,
resolved when drawn). The look follows Textual's Markdown (headings, bullets, inline code,
quotes, fences, thin-lined tables). Text is never parsed as markup; links are shown, not
opened; code lines too long for the width are folded, not hidden. Pure functions: the
transcript (`transcript_items.py`) decides when to render and keeps the result.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token
from markdown_it.tree import SyntaxTreeNode
from textual.content import Content, Span
from textual.highlight import HighlightTheme, highlight

BULLETS = ("• ", "◦ ", "‣ ", "▹ ", "∙ ")
"""Bullets by list depth. Textual's Markdown has `• ▪ ‣ ⭑ ◦`; `▪` has an emoji form
(some terminals and browsers draw it two cells wide) and `⭑` is not in DejaVu Sans Mono
(tests/ui/test_glyphs.py)."""
MARGINS: dict[str, tuple[int, int]] = {
    "heading": (1, 1), "fence": (1, 1), "code_block": (1, 1), "blockquote": (1, 1),
    "hr": (1, 1), "table": (1, 1),
}
"""Blank lines above and below a top-level block (others: none above, one below). Two
neighbours share the larger of their margins, as CSS margins collapse; the first block's
top and the last block's bottom margin are left out (the reply has its own)."""
CODE_PAD = 2
"""Cells of fence background left and right of the code (and one line above and below),
as Textual's Markdown pads its fences."""
MIN_COLUMN = 3
"""Narrowest table column (cells of text) when a table is squeezed to fit."""

_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class Look:
    """What a rendering depends on besides the source and the width."""

    dark: bool = True
    search: re.Pattern[str] | None = None
    plain_code: bool = False
    """Fences shown without highlighting (a reply still streaming: see `PLAIN_WHILE_OPEN`)."""
    match_style: str = "bold reverse"


@dataclass
class Part:
    """One top-level block of a reply: its source lines and its tokens.

    The tokens are kept, not a syntax tree: markdown-it's `SyntaxTreeNode` links every
    node to its parent (a reference cycle only a full collection frees), so the tree is
    built for a rendering and dropped with it (`node`)."""

    source: str
    tokens: list[Token]
    first_line: int
    cache: tuple[Any, list[Any]] | None = None
    """What the transcript drew of this block last, and for which width and look."""

    @property
    def kind(self) -> str:
        return self.tokens[0].type.removesuffix("_open")

    @property
    def node(self) -> SyntaxTreeNode:
        """The block's syntax tree, built anew (see the class docstring)."""
        return SyntaxTreeNode(self.tokens).children[0]

    @property
    def margins(self) -> tuple[int, int]:
        return MARGINS.get(self.kind, (0, 1))


def parse(parser: MarkdownIt, text: str, first_line: int = 0) -> list[Part]:
    """The top-level blocks of `text`; `first_line` numbers its first line (a tail of a
    longer reply is parsed on its own, `reparse_tail`)."""
    lines = text.splitlines(keepends=True)
    parts = []
    group: list[Token] = []
    depth = 0
    for token in parser.parse(text):
        group.append(token)
        depth += token.nesting
        if depth == 0:
            start, end = group[0].map if group[0].map else (0, len(lines))
            parts.append(Part("".join(lines[start:end]), group, first_line + start))
            group = []
    return parts


def reparse_tail(parser: MarkdownIt, parts: list[Part], text: str) -> list[Part]:
    """`parts` of a reply that grew to `text`: every block but the last is kept as it is
    (its cached lines too), and the text from the last block's first line on is parsed
    again (the last block may have grown, ended, or been followed by new ones). As
    Textual's own `Markdown.append` does; the reply is parsed whole once it completes."""
    if not parts:
        return parse(parser, text)
    start = parts[-1].first_line
    lines = text.splitlines(keepends=True)
    return parts[:-1] + parse(parser, "".join(lines[start:]), start)


# -- inline text ---------------------------------------------------------------------------

def inline(token: Token | None, look: Look) -> Content:
    """An inline token (a paragraph's, a heading's, a cell's text) as styled Content."""
    if token is None or not token.children:
        return Content("")
    text: list[str] = []
    spans: list[Span] = []
    opened: list[tuple[str, int]] = []
    position = 0
    code = ("$text-warning 95% on $warning 10%" if look.dark
            else "$text-error 95% on $error 5%")

    def add(piece: str, style: str = "") -> None:
        nonlocal position
        if style and piece:
            spans.append(Span(position, position + len(piece), style))
        text.append(piece)
        position += len(piece)

    for child in token.children:
        kind = child.type
        if kind == "text":
            add(_SPACES.sub(" ", child.content))
        elif kind == "softbreak":
            add(" ")
        elif kind == "hardbreak":
            add("\n")
        elif kind == "code_inline":
            add(child.content, code)
        elif kind in ("html_inline", "text_special"):
            add(child.content)
        elif kind == "image":
            alt = child.content or child.attrs.get("alt", "")
            add(f"[image: {alt}]" if alt else "[image]", "underline")
        elif kind.endswith("_open"):
            style = {"em_open": "italic", "strong_open": "bold", "s_open": "strike",
                     "link_open": "underline $text-accent"}.get(kind, "")
            opened.append((style, position))
        elif kind.endswith("_close") and opened:
            style, start = opened.pop()
            if style and position > start:
                spans.append(Span(start, position, style))
    return marked(Content("".join(text), spans=spans), look)


def marked(content: Content, look: Look) -> Content:
    """`content` with the search's matches highlighted."""
    if look.search is None:
        return content
    return content.highlight_regex(look.search, style=look.match_style)


def wrapped(content: Content, width: int) -> list[Content]:
    """`content` word-wrapped to `width` cells (a word longer than that is folded)."""
    if width <= 0:
        return []
    if not content.plain:
        return [Content("")]
    return [line.rstrip() for line in content.wrap(width)]


def fitted(line: Content, width: int, style: str) -> Content:
    """`line` padded to `width` cells, `style` under its own styles (a background)."""
    pad = width - line.cell_length
    if pad > 0:
        line = line.pad_right(pad)
    return line.stylize_before(style) if style else line


# -- blocks --------------------------------------------------------------------------------

Highlighter = Callable[[str, str], Content]


def render_part(part: Part, width: int, look: Look,
                highlighter: Highlighter | None = None) -> list[Content]:
    """The lines of one top-level block at `width` cells."""
    return render_node(part.node, max(width, 1), look, highlighter or code_content, depth=0)


def render_node(node: SyntaxTreeNode, width: int, look: Look, highlighter: Highlighter,
                depth: int) -> list[Content]:
    kind = node.type
    if kind == "paragraph":
        return wrapped(inline(_inline_token(node), look), width)
    if kind == "heading":
        return _heading(node, width, look)
    if kind in ("bullet_list", "ordered_list"):
        return _list(node, width, look, highlighter, depth)
    if kind == "blockquote":
        return _quote(node, width, look, highlighter, depth)
    if kind in ("fence", "code_block"):
        return _code(node, width, look, highlighter)
    if kind == "table":
        return _table(node, width, look)
    if kind == "hr":
        return [Content.styled("─" * width, "$secondary")]
    # html_block and anything unknown: its text, as written
    text = (node.content if not node.children else "").rstrip("\n")
    lines: list[Content] = []
    for line in text.split("\n"):
        lines.extend(wrapped(marked(Content(line), look), width))
    return lines


def _inline_token(node: SyntaxTreeNode) -> Token | None:
    for child in node.children:
        if child.type == "inline":
            return child.token
    return None


def _heading(node: SyntaxTreeNode, width: int, look: Look) -> list[Content]:
    level = int(node.tag[1:]) if node.tag[1:].isdigit() else 1
    style = (f"$markdown-h{level}-color on $markdown-h{level}-background "
             f"$markdown-h{level}-text-style")
    return [line.stylize_before(style) for line in
            wrapped(inline(_inline_token(node), look), width)]


def render_children(node: SyntaxTreeNode, width: int, look: Look, highlighter: Highlighter,
                    depth: int, gap: int) -> list[Content]:
    """The blocks inside a list item or a quote, `gap` blank lines between two of them."""
    lines: list[Content] = []
    for index, child in enumerate(node.children):
        if index and gap:
            lines.extend(Content("") for _ in range(gap))
        lines.extend(render_node(child, width, look, highlighter, depth))
    return lines


def _list(node: SyntaxTreeNode, width: int, look: Look, highlighter: Highlighter,
          depth: int) -> list[Content]:
    items = [child for child in node.children if child.type == "list_item"]
    if not items:
        return []
    if node.type == "ordered_list":
        try:
            start = int(items[0].info or 1)
        except ValueError:
            start = 1
        size = max(len(f"{number}. ") for number in range(start, start + len(items)))
        symbols = [f"{number}. ".rjust(size + 1) for number in range(start, start + len(items))]
    else:
        symbols = [BULLETS[depth % len(BULLETS)]] * len(items)
    bullet_style = "$text-primary" if look.dark else "$text-secondary"
    loose = any(not paragraph.hidden for item in items for paragraph in item.children
                if paragraph.type == "paragraph")
    lines: list[Content] = []
    for index, (item, symbol) in enumerate(zip(items, symbols, strict=True)):
        indent = len(symbol)
        inner = max(1, width - indent - 1)  # Textual's list item keeps a cell on the right
        body = render_children(item, inner, look, highlighter, depth + 1, gap=1 if loose else 0)
        if index and loose:
            lines.append(Content(""))
        if not body:
            body = [Content("")]
        lines.append(Content.assemble((symbol, bullet_style), body[0]))
        lines.extend(Content(" " * indent) + line for line in body[1:])
    return lines


def _quote(node: SyntaxTreeNode, width: int, look: Look, highlighter: Highlighter,
           depth: int) -> list[Content]:
    rule = "$text-primary 50%" if look.dark else "$text-secondary"
    inner = max(1, width - 3)
    body = render_children(node, inner, look, highlighter, depth, gap=1)
    return [Content.assemble(("▌", rule), " ", fitted(line, inner, ""), " ")
            .stylize_before("on $boost") for line in body or [Content("")]]


def code_content(code: str, language: str, dark: bool = True) -> Content:
    """`code` highlighted for `language` (plain text for an unknown one)."""
    return highlight(code, language=language or None, theme=HighlightTheme)


def _code(node: SyntaxTreeNode, width: int, look: Look,
          highlighter: Highlighter) -> list[Content]:
    code = node.content.rstrip("\n")
    language = (node.info or "").split(maxsplit=1)[0] if node.info else ""
    content = Content(code) if look.plain_code else highlighter(code, language)
    background = ("rgb(210,210,210) on black 10%" if look.dark
                  else "$foreground on white 30%")
    pad = CODE_PAD if width > 4 * CODE_PAD else 0
    inner = max(1, width - 2 * pad)
    edge = fitted(Content(""), width, background)
    lines: list[Content] = [edge]
    for line in content.split("\n", allow_blank=True):
        line = marked(line.expand_tabs(4).rstrip(), look)
        for piece in (line.fold(inner) if line.cell_length > inner else [line]):
            lines.append(fitted(Content(" " * pad) + piece, width, background))
    lines.append(edge)
    return lines


def _table(node: SyntaxTreeNode, width: int, look: Look) -> list[Content]:
    rows: list[list[Content]] = []
    aligns: list[str] = []
    header_rows = 0
    for section in node.children:
        for tr in section.children:
            rows.append([inline(_inline_token(cell), look) for cell in tr.children])
            if section.type == "thead":
                header_rows += 1
                aligns = [_align(cell) for cell in tr.children]
    columns = max((len(row) for row in rows), default=0)
    if not columns:
        return []
    for cells_of_row in rows:
        cells_of_row.extend(Content("") for _ in range(columns - len(cells_of_row)))
    aligns.extend("left" for _ in range(columns - len(aligns)))
    widths = _column_widths(rows, columns, width)
    line_style = "$line-muted"
    lines: list[Content] = []

    def rule(left: str, middle: str, right: str) -> Content:
        return Content.styled(left + middle.join("─" * (w + 2) for w in widths) + right,
                              line_style)

    lines.append(rule("┌", "┬", "┐"))
    for index, row in enumerate(rows):
        if index == header_rows and header_rows:
            lines.append(rule("├", "┼", "┤"))
        header = index < header_rows
        cells = [wrapped(cell, w) or [Content("")] for cell, w in zip(row, widths, strict=True)]
        for y in range(max(len(cell) for cell in cells)):
            pieces: list[Content | tuple[str, str]] = [("│", line_style)]
            for cell, w, align in zip(cells, widths, aligns, strict=True):
                text = cell[y] if y < len(cell) else Content("")
                pad = w - text.cell_length
                left = pad // 2 if align == "center" else pad if align == "right" else 0
                text = Content(" " * left) + text + Content(" " * (pad - left))
                if header:
                    text = text.stylize_before("bold $primary")
                pieces.extend([Content(" "), text, Content(" "), ("│", line_style)])
            lines.append(Content.assemble(*pieces))
    lines.append(rule("└", "┴", "┘"))
    return lines


def _align(cell: SyntaxTreeNode) -> str:
    style = str(cell.attrs.get("style", ""))
    return style.partition("text-align:")[2].strip() or "left"


def _column_widths(rows: Sequence[Sequence[Content]], columns: int, width: int) -> list[int]:
    """Each column as wide as its widest cell, squeezed (widest first) to fit `width`."""
    natural = [max(max((cell.cell_length for cell in row[column:column + 1]), default=0)
                   for row in rows) for column in range(columns)]
    widths = [max(1, w) for w in natural]
    room = max(columns * 1, width - 3 * columns - 1)  # "│ " + " " per column, and the last "│"
    while sum(widths) > room:
        widest = max(range(columns), key=lambda c: widths[c])
        floor = min(MIN_COLUMN, natural[widest])
        if widths[widest] <= max(1, floor):
            break
        widths[widest] -= 1
    return widths


def plain_lines(lines: Sequence[Content]) -> str:
    """The text of rendered lines (tests and search read it)."""
    return "\n".join(line.plain.rstrip() for line in lines)
