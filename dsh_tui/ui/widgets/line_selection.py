"""Mouse text selection for widgets that draw their own lines (`render_line`).

Textual selects text in a widget by reading an `offset` (column, row) from the style of the
segment under the pointer, and copies it by asking the widget for its text
(`get_selection`). Widgets built on `Content` get both for free; a widget that renders
its own strips (a reply, `blocks.AssistantBlock`) gets neither, so a drag over a reply
highlighted nothing and ctrl+c had nothing to copy. These helpers give such a widget both,
with the offsets counted in characters of each drawn line, as Textual counts them.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.segment import Segment
from rich.style import Style as RichStyle
from textual.selection import Selection
from textual.strip import Strip

LINE_BREAKS = str.maketrans(dict.fromkeys((0x0B, 0x0C, 0x1C, 0x1D, 0x1E, 0x85, 0x2028, 0x2029),
                                           " "))
"""Characters `str.splitlines` breaks at besides newlines: `Selection.extract` splits the
text with it, so one of these inside a drawn line would shift every row after it."""


def selected_line(strip: Strip, row: int, selection: Selection | None,
                  style: RichStyle) -> Strip:
    """Row `row` as drawn with the selection's part of it in `style`, every segment
    carrying its offset (what the screen reads to know where a drag starts and ends)."""
    if selection is not None and (span := selection.get_span(row)) is not None:
        strip = _restyled(strip, span[0], span[1], style)
    return strip.apply_offsets(0, row)


def _restyled(strip: Strip, start: int, end: int, style: RichStyle) -> Strip:
    """`strip` with its characters from `start` to `end` (-1: the end) in `style` on top."""
    segments: list[Segment] = []
    x = 0
    for segment in strip:
        text, own, control = segment
        length = len(text)
        first = max(start - x, 0)
        last = length if end == -1 else min(end - x, length)
        if control or first >= last:
            segments.append(segment)
        else:
            if first:
                segments.append(Segment(text[:first], own))
            segments.append(Segment(text[first:last], own + style if own else style))
            if last < length:
                segments.append(Segment(text[last:], own))
        x += length
    return Strip(segments, strip.cell_length)


def lines_text(strips: Sequence[Strip]) -> str:
    """The drawn lines as one text, a line per row, for `Selection.extract` (trailing
    padding dropped: a copied paragraph has no run of spaces at each line's end)."""
    return "\n".join(strip.text.rstrip().translate(LINE_BREAKS) for strip in strips)
