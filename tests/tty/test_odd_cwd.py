"""Issue 25 §2: a working directory whose path is not UTF-8 (bytes a Latin-1 system left,
`caf\\xe9`): the workspace record stayed empty, every retry said "File exists", quit
exited 2 and `-c` could not reopen. The installed binary in a pty, started there, quits
and comes back with `-c`; `sessions` lists it."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

from .terminal import BINARY, Terminal, burst, key

SLOW = "demo_speed = 0.05\n"  # the first turn still runs when the second message is sent


def test_a_non_utf8_working_directory_saves_quits_and_reopens(
        tmp_path: Path, terminal: Callable[..., Terminal]) -> None:
    odd = os.fsdecode(os.fsencode(tmp_path) + b"/caf\xe9-\xff")  # surrogate-escaped str
    os.mkdir(odd)
    term = terminal(config=SLOW, args=("--cwd", odd))
    term.write(burst("remember this", key("enter")))
    term.wait_for("t1")
    term.write(burst("and keep this queued", key("enter")))
    term.wait_for("↵1")  # queued behind the running turn
    term.wait_until(lambda: bool(term.session_files()), "the session on disk")
    term.press("ctrl+q")
    assert term.wait_exit() == 0
    term.pump(0.2)
    assert re.search(rb"--resume ws-[0-9a-f]{8}", bytes(term.raw)), term.text()
    records = list(Path(term.data_dir).rglob("workspace.jsonl"))
    assert len(records) == 1 and records[0].stat().st_size > 0
    listing = subprocess.run([str(BINARY), "--data-dir", str(term.data_dir), "sessions"],
                             capture_output=True, timeout=30)
    assert listing.returncode == 0, listing.stderr
    assert "caf\ufffd-\ufffd".encode() in listing.stdout  # the odd bytes shown as marks
    assert b"1 pending" in listing.stdout
    again = terminal(config=SLOW, args=("--cwd", odd, "-c"))
    again.wait_for("↵1")  # the workspace came back with its queued item
    again.press("ctrl+q")
    assert again.wait_exit() == 0
