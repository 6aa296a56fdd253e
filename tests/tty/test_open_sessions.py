"""Sessions in real terminals: focus on start, no file without a message, one writer.

Each app is the installed `dsh-tui` in its own pseudo-terminal (its own process), as two
people (or two browser tabs of `dsh-tui serve`, which are two processes too) would run it
on one data dir.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable

from .terminal import BINARY, Terminal, accepted_texts

FAST = "demo_speed = 0\n"


def test_typing_at_once_reaches_the_composer_and_quitting_unused_leaves_no_session(
        terminal: Callable[..., Terminal]) -> None:
    term = terminal(config=FAST)
    term.type("typed before any click")  # no click, no tab: the composer has the focus
    term.wait_for("typed before any click")
    term.press("ctrl+q")
    assert term.wait_exit() == 0
    assert term.session_files() == []  # opened, typed, never sent: nothing on disk


def test_a_session_open_in_one_terminal_is_marked_open_and_not_resumed_in_another(
        terminal: Callable[..., Terminal]) -> None:
    first = terminal(config=FAST)
    first.type("hello from the first terminal")
    first.press("enter")
    first.wait_until(lambda: bool(first.session_files()), "the first session on disk")
    session_id = _root_holding(first, "hello from the first terminal")

    listing = subprocess.run([str(BINARY), "--data-dir", str(first.data_dir), "sessions"],
                             capture_output=True, text=True, timeout=30)
    assert f"{session_id}" in listing.stdout
    assert f"● open in another dsh-tui (pid {first.pid}" in listing.stdout  # its workspace
    row = next(line for line in listing.stdout.splitlines()
               if session_id in re.split(r"\s{2,}", line.strip()))  # its id column
    assert "● open" in row

    second = terminal(config=FAST)
    second.press("f3")
    second.wait_for("Saved sessions")
    second.wait_for(f"in another dsh-tui (pid {first.pid}")
    # Typing filters: the first terminal's root is the one row left; try to resume it.
    second.type(session_id)
    second.wait_for(f"filter: {session_id}")  # the root (and its children) are left,
    second.settle()  # the root's row highlighted
    second.press("enter")
    second.wait_for("is open in another dsh-tui")
    screen = second.settle()
    assert "Resumed" not in screen
    tree = second.lines()[: len(second.lines()) // 2]
    assert not any("hello from the first" in line for line in tree)

    # The first terminal still owns its log alone: one writer, seqs unbroken.
    first.type("still mine")
    first.press("enter")
    first.wait_until(lambda: "still mine" in accepted_texts(first.sessions()[session_id]),
                     "the second message in the first session")
    records = first.sessions()[session_id]
    seqs = [r["seq"] for r in records[1:]]
    assert seqs == list(range(len(seqs)))
    assert accepted_texts(records) == ["hello from the first terminal", "still mine"]


def _root_holding(term: Terminal, text: str) -> str:
    """The id of the session whose inbox received `text` (the demo may have started a
    sub-agent with a session of its own beside it)."""
    term.wait_until(lambda: any(text in accepted_texts(r) for r in term.sessions().values()),
                    f"{text!r} on disk")
    (session_id,) = [sid for sid, r in term.sessions().items() if text in accepted_texts(r)]
    return session_id
