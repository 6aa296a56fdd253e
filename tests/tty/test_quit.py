"""Quit is not dispose (issue 9): leaving the app keeps every inbox, children's included.

The installed binary in a pty: messages queue behind a slow demo turn in a root agent and
in a child, the person leaves (ctrl+q, or SIGTERM as a shutdown sends), and no session file
gains a discard (`agent/inbox/spliced` with `outcome: "canceled"`); `--resume` shows every
queued message again.
"""

from __future__ import annotations

import signal
from collections.abc import Callable

import pytest

from .terminal import Terminal, burst, discards, key, queue_behind_a_turn

SLOW = "demo_speed = 0.05\n"


def _queue_work(term: Terminal) -> None:
    """A running root with two queued follow-ups, a running child with one."""
    queue_behind_a_turn(term, "second", "third")
    term.press("ctrl+p")
    term.wait_for("Search for commands")
    term.write(burst("spawn child agent", key("enter")))
    term.wait_for("Name the new child")
    term.press("enter")  # the offered name: demo › child 1
    term.wait_gone("Name the new child")
    term.wait_for("child 1")
    term.write(burst("child task", key("enter")))
    term.wait_until(lambda: term.text().count(" t1") >= 2, "the child's turn")
    term.write(burst("child follow-up", key("enter")))
    term.wait_for("↵1")


@pytest.mark.parametrize("how", ["ctrl+q", "SIGTERM", "hang-up"])
def test_leaving_keeps_every_inbox_and_resume_brings_them_back(
        terminal: Callable[..., Terminal], how: str) -> None:
    term = terminal(cols=120, rows=30, config=SLOW)
    _queue_work(term)
    if how == "ctrl+q":
        term.press("ctrl+q")
    elif how == "SIGTERM":
        term.signal(signal.SIGTERM)
    else:
        term.hang_up()  # the terminal window closes: SIGHUP
    assert term.wait_exit() == 0
    if how != "hang-up":
        assert b"\x1b[?1049l" in term.raw  # the terminal was given back (alternate screen)
    assert discards(term) == [], "leaving the app wrote a discard"
    sessions = term.sessions()
    root = next(sid for sid, records in sessions.items() if sid.startswith("demo-"))
    assert len(sessions) >= 2  # the root and its child

    again = terminal(cols=120, rows=30, config=SLOW, args=("--resume", root))
    again.wait_for("↵2")  # the root's two queued follow-ups
    again.wait_for("child 1")
    line = next(line for line in again.lines() if "child 1" in line)
    assert "↵1" in line, f"the child's inbox did not come back: {line!r}"
    again.press("ctrl+q")
    assert again.wait_exit() == 0
    assert discards(again) == []
