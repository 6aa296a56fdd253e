"""A data dir that cannot be written: the installed app says "not saved" on screen for as
long as it lasts, and its exit is non-zero with one line saying what was not saved."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from .terminal import Terminal, burst, key


def test_an_unwritable_data_dir_is_shown_and_the_exit_says_so(
        terminal: Callable[..., Terminal], tmp_path: Path) -> None:
    blocker = tmp_path / "blocker"  # a file where the data directory should be (root-proof)
    blocker.write_text("not a directory")
    term = terminal(cols=80, rows=24, args=("--data-dir", str(blocker / "sessions")),
                    config="demo_speed = 0.05\n")
    assert "not saved" not in term.text()  # nothing to save yet, nothing failed yet
    term.write(burst("keep this", key("enter")))
    term.wait_for("not saved")
    term.press("ctrl+q")
    assert term.wait_exit() != 0
    text = term.text()
    assert "Traceback" not in text
    # One line in all: what the app printed once it gave the terminal back (read from the
    # bytes: pyte has no alternate screen, and the screen wraps a long line).
    after = bytes(term.raw).rsplit(b"\x1b[?1049l", 1)[-1].decode("utf-8", "replace")
    printed = [line for line in re.sub(r"\x1b\[[0-9;?<>=]*[a-zA-Z~]", "", after).splitlines()
               if line.strip()]
    assert len(printed) == 1 and printed[0].startswith("dsh-tui:"), printed
    assert "could be saved" in printed[0]
