"""An option list whose highlighted option is drawn in one colour on its bar.

The highlighted option's bar is 3:1 against the pane (tests/ui/test_contrast.py), so it is
as light as the text around it: a lane badge or a heading keeping its own colour on it was
1.3-2.5:1. Textual draws an option's own colours over the highlight's (a Content's spans
win over its base style); here, on the highlighted option's lines, the highlight's text
colour wins (bold, italic and strike stay), as a Tree already does for its cursor row.
"""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip
from textual.widgets import OptionList


class FlatHighlight:
    """Mixin for an OptionList (before it in the bases)."""

    def render_line(self, y: int) -> Strip:
        strip: Strip = super().render_line(y)  # type: ignore[misc]
        assert isinstance(self, OptionList)
        bar = self.get_visual_style("option-list--option",
                                    "option-list--option-highlighted").rich_style
        if bar.bgcolor is None or bar.color is None or self.highlighted is None:
            return strip
        first = next(iter(strip), None)
        if first is None or first.style is None or first.style.bgcolor != bar.bgcolor:
            return strip  # not a line of the highlighted option (its bar starts each line)
        return Strip(Segment.apply_style(strip, post_style=Style(color=bar.color)),
                     strip.cell_length)


class FlatOptionList(FlatHighlight, OptionList):
    """An OptionList with a `FlatHighlight`."""
