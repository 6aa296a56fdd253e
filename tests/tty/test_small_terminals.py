"""80x24 and 60x20 are usable in a real terminal: the installed app in a pty, read as a person
would read it. The streamed reply is visible (the transcript takes the width), the folded
inbox opens with its key, and the edit and confirm dialogs show their text and buttons."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from .terminal import Terminal, burst, key


def _button_row(term: Terminal, *labels: str) -> str:
    """The screen line holding every label (a button row cut by the edge would miss some)."""
    for line in term.lines():
        if all(label in line for label in labels):
            return line
    raise AssertionError(f"no line shows all of {labels}:\n{term.text()}")


@pytest.mark.parametrize(("cols", "rows"), [(80, 24), (60, 20)])
def test_a_small_terminal_shows_the_reply_the_inbox_and_whole_dialogs(
        terminal: Callable[..., Terminal], cols: int, rows: int) -> None:
    term = terminal(cols=cols, rows=rows)
    term.wait_for("inbox ⚑0 ↵0")  # the side panes fold away; the inbox counts stay in sight
    assert "Agents" not in term.text()
    term.write(burst("hello there", key("enter")))
    term.wait_for("hello there")
    # The reply streams into a transcript as wide as the terminal, not into 6 columns.
    term.wait_until(lambda: any(line.startswith("│ ▌") and "hello there" not in line
                                and "follow-up" not in line and len(line.strip("│ ▌")) > 20
                                for line in term.lines()), "a streamed reply line")
    term.wait_for("completed", timeout=30)
    term.write(burst("some context", key("ctrl+t")))  # injected: waits, never wakes the agent
    term.wait_for("inbox ⚑1 ↵0")  # the folded inbox's counts, in the transcript title
    term.press("ctrl+o")
    term.wait_for("NEXT STEP · 1")
    assert "some context" in term.text()
    term.press("enter")  # edit the highlighted item
    term.wait_for("Edit queued message")
    row = _button_row(term, "Cancel", "Save")
    assert row.rstrip().endswith("█") or row.rstrip().endswith("▎")  # the dialog's edge shows
    term.press("escape")
    term.wait_gone("Edit queued message")
    term.press("ctrl+l")  # stop and clear asks first
    term.wait_for("discard 1 pending item")
    _button_row(term, "No (n)", "Stop and clear (ctrl+y)")
    term.press("escape")
    term.wait_gone("discard 1 pending item")
    term.press("ctrl+q")
    assert term.wait_exit() == 0
