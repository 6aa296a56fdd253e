"""A person drags the mouse over a reply in a real terminal, sees it highlighted, and
ctrl+c puts exactly that text on the clipboard (OSC 52, what Textual's copy writes).

The reply draws its own lines, so before `ui/widgets/line_selection.py` a drag over it
highlighted nothing and ctrl+c had nothing to copy (it said how to quit instead). The
mouse goes in as the SGR reports a terminal sends (press, motion with the button held,
release), one write each.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable

from .terminal import Terminal, burst, key

CLIPBOARD = re.compile(rb"\x1b\]52;c;([A-Za-z0-9+/=]*)(?:\x07|\x1b\\)")


def cell_of(term: Terminal, needle: str) -> tuple[int, int]:
    for y, line in enumerate(term.lines()):
        if needle in line:
            return y, line.index(needle)
    raise AssertionError(f"{needle!r} is not on screen:\n{term.text()}")


def test_a_drag_over_a_reply_is_highlighted_and_ctrl_c_copies_it(
        terminal: Callable[..., Terminal]) -> None:
    term = terminal(cols=100, rows=30)
    term.write(burst("hello there", key("enter")))
    term.wait_for("completed", timeout=30)
    term.settle()
    (y1, x1), (y2, x2) = cell_of(term, "This reply"), cell_of(term, "demo model")
    x2 += len("demo model") - 1  # the cell under the pointer is selected too
    before = term.background(y1, x1)
    term.write(f"\x1b[<0;{x1 + 1};{y1 + 1}M".encode())  # 1-based: column, row
    term.write(f"\x1b[<32;{x2 + 1};{y2 + 1}M".encode())
    term.write(f"\x1b[<0;{x2 + 1};{y2 + 1}m".encode())
    term.wait_until(lambda: term.background(y1, x1) != before, "the drag to be highlighted")
    assert term.background(y2, x2 + 2) == before  # past the end: not selected
    shown = len(term.raw)
    term.press("ctrl+c")
    term.wait_for("Copied")
    copied = CLIPBOARD.findall(bytes(term.raw[shown:]))
    assert copied, "ctrl+c wrote nothing to the clipboard"
    assert " ".join(base64.b64decode(copied[-1]).decode().split()) == \
        "This reply came from the built-in demo model"
    term.press("ctrl+c")  # the selection is gone: now the idle agent's quit hint
    term.wait_for("Press ctrl+c again")  # (the toast wraps before "to quit")
    term.press("ctrl+q")
    assert term.wait_exit() == 0
