"""The command line that names and lists saved sessions, on a real terminal (issue 25, §4).

The installed binary in a pty: `dsh-tui sessions` fits its rows to the terminal's own
width (no `COLUMNS`: the width comes from the terminal), `view` opens a saved session by
an id prefix as `--resume` takes it, and the reopen command `sessions` lists for a
workspace is the one quitting printed, `--config` included.
"""

from __future__ import annotations

import asyncio
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

from ui.test_workspaces import make_workspace  # tests/ is on sys.path (rootdir packages)

from dsh_tui.ui.state.session_rows import cells

from .terminal import BINARY, Terminal, burst, key, wait_running

LONG = "an agent with the long name people give"


def _store(root: Path) -> str:
    (root / "proj").mkdir()
    return asyncio.run(make_workspace(root / "data", root / "proj",
                                      {LONG: ["researcher of many things"], "writer": []},
                                      "old"))


def test_sessions_rows_fit_an_80_column_terminal(tmp_path: Path) -> None:
    _store(tmp_path)
    with Terminal(tmp_path, cols=80, rows=30, args=["sessions"], env={"COLUMNS": ""}) as term:
        assert term.wait_exit() == 0
        said = bytes(term.raw).decode("utf-8", "replace").replace("\r", "").splitlines()
    rows = [line for line in said if line.startswith("  ") and "reopen:" not in line]
    assert len(rows) == 3, said
    too_wide = [line for line in said if cells(line) > 80 and "reopen:" not in line]
    assert too_wide == [], "rows wrap at 80 columns"
    assert [line.split()[-1] for line in rows] == \
        ["old-root0", rows[1].split()[-1], "old-root1"]  # every id, whole
    assert re.fullmatch(r"old-root0\.child-[0-9a-f]{6}", rows[1].split()[-1])


def test_view_opens_a_saved_session_by_an_id_prefix(tmp_path: Path) -> None:
    _store(tmp_path)
    with Terminal(tmp_path, cols=120, rows=30, args=["view", "old-root0.c"]) as term:
        term.wait_for("work for researcher of")  # the child's queued item (wrapped)
        term.press("ctrl+q")
        assert term.wait_exit() == 0


def test_sessions_lists_the_command_quitting_printed(
        terminal: Callable[..., Terminal], tmp_path: Path) -> None:
    config = tmp_path / "config.toml"  # the terminal's own config file, named explicitly
    term = terminal(cols=120, rows=30, args=("--config", str(config)))
    term.write(burst("hello", key("enter")))
    wait_running(term)
    term.press("ctrl+q")
    assert term.wait_exit() == 0
    term.pump(0.2)
    after = bytes(term.raw).rsplit(b"\x1b[?1049l", 1)[-1].decode("utf-8", "replace")
    found = re.search(r"(dsh-tui [^\r\n]*--resume ws-[0-9a-f]{8})", after)
    assert found, f"no reopen command after the app left the screen:\n{after!r}"
    said = found.group(1)
    assert f"--config {config}" in said
    listing = subprocess.run([str(BINARY), "--data-dir", str(term.data_dir), "sessions"],
                             capture_output=True, text=True, timeout=30)
    assert f"  reopen: {said}" in listing.stdout.splitlines(), listing.stdout
