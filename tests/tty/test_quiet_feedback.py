"""Quiet feedback (issue 29): a burst of inbox keys leaves one status line, covers no pane,
and the notice goes on time while the app sits idle.

Why toasts stayed: a toast per inbox key stacked up to nine toasts over the panes, and when
two of them expired in the same frame Textual 8.2.8 removed them from the DOM but its later
layouts no longer marked the area of a toast removed after them as changed, so the terminal
kept showing it (for good on an idle app). Inbox actions now say one line on the composer's
border, expired by the app's own timer (`controllers/status.py`).
"""

from __future__ import annotations

from collections.abc import Callable

from .terminal import Terminal, focus_pane, key, queue_behind_a_turn

SLOW = "demo_speed = 0.02\n"

NOTICES = ("Removed #", "is now", "Already at the", "Restored", "Nothing to undo")


def test_a_burst_of_inbox_keys_leaves_one_line_that_goes_on_time(
        terminal: Callable[..., Terminal]) -> None:
    term = terminal(cols=120, rows=34, config=SLOW)
    queue_behind_a_turn(term, "alpha one", "beta two", "gamma three")
    term.press("escape")  # stop, keeping the inbox: the app is idle from here on
    term.wait_for("paused")
    focus_pane(term, "inbox")
    keys = ["delete", "delete", "delete", "ctrl+z", "ctrl+z", "ctrl+z", "shift+right",
            "shift+right", "shift+up"]
    term.write(b"".join(key(name) for name in keys))
    term.wait_for("Already at the top.")
    screen = term.text()
    assert sum(screen.count(notice) for notice in NOTICES) == 1, screen  # one line
    composer_border = next(line for line in reversed(term.lines()) if line.startswith("╰"))
    assert "Already at the top." in composer_border  # on the composer's border, not a pane
    term.wait_until(lambda: not any(n in term.text() for n in NOTICES), "the notice to go",
                    timeout=8)
