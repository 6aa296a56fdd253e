"""Mouse text selection over lines a widget draws itself (the transcript's `render_line`).

Textual selects text by reading an `offset` (column, row) from the style of the segment
under the pointer, and copies it by asking the widget for its text (`get_selection`);
the transcript answers both from its line model. These are the two small pieces of it
that only deal with one drawn line.
"""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style as RichStyle
from textual.strip import Strip

LINE_BREAKS = str.maketrans(dict.fromkeys((0x0B, 0x0C, 0x1C, 0x1D, 0x1E, 0x85, 0x2028, 0x2029),
                                           " "))
"""Characters `str.splitlines` breaks at besides newlines: `Selection.extract` splits the
text with it, so one of these inside a drawn line would shift every row after it."""


def restyled(strip: Strip, start: int, end: int, style: RichStyle) -> Strip:
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
