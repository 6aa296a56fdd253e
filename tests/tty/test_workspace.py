"""A day with dsh-tui, as a person has it: several agents, quit, come back with `-c`.

The installed binary in a pty (issue 13): two root agents, a child each, queued
follow-ups in all four, a rename; the person quits (ctrl+q) and the exact reopen command
is printed on the real terminal after the app gave the screen back; `dsh-tui -c` brings
the whole workspace back: every root and child, every inbox, the names and the selection.
The kill -9 variant leaves no time to say anything, and `-c` still brings it all back.
"""

from __future__ import annotations

import re
import signal
import subprocess
from collections.abc import Callable

import pytest

from .terminal import BINARY, Terminal, burst, key, wait_running

SLOW = "demo_speed = 0.05\n"


def _row(term: Terminal, name: str) -> str:
    """The agent tree's row (the left pane) that names `name`, or ""."""
    for line in term.lines():
        if line.startswith("│") and "│" in line[1:]:
            left = line[1:line.index("│", 1)]
            if f" {name} " in f" {left} ":
                return left
    return ""


def _spawn_child(term: Terminal, name: str | None) -> None:
    term.press("ctrl+p")
    term.wait_for("Search for commands")
    term.write(burst("spawn child agent", key("enter")))
    term.wait_for("Name the new child")
    if name:
        term.write(burst(name, key("enter")))
    else:
        term.press("enter")
    term.wait_gone("Name the new child")


def _build_a_day(term: Terminal) -> None:
    """demo (running, 1 queued) › scout (running, 1 queued); writer (renamed from agent 2,
    its offered name; running, 1 queued) › probe (running, 1 queued)."""
    term.write(burst("first task", key("enter")))
    wait_running(term)
    term.write(burst("queued for demo", key("enter")))
    term.wait_until(lambda: "↵1" in _row(term, "demo"), "demo's queued item")
    _spawn_child(term, "scout")
    term.wait_until(lambda: "scout" in _row(term, "scout"), "the child named scout")
    term.write(burst("child task", key("enter")))
    term.write(burst("queued for scout", key("enter")))
    term.wait_until(lambda: "↵1" in _row(term, "scout"), "scout's queued item")
    term.press("ctrl+n")
    term.wait_for("Name the new agent")
    term.press("enter")  # the offered name: agent 2
    term.wait_gone("Name the new agent")
    term.wait_until(lambda: bool(_row(term, "agent 2")), "agent 2 in the tree")
    term.write(burst("second root task", key("enter")))
    term.write(burst("queued for agent 2", key("enter")))
    term.wait_until(lambda: "↵1" in _row(term, "agent 2"), "agent 2's queued item")
    _spawn_child(term, "probe")
    term.wait_until(lambda: bool(_row(term, "probe")), "agent 2's child")
    term.write(burst("probe task", key("enter")))
    term.write(burst("queued for probe", key("enter")))
    term.wait_until(lambda: "↵1" in _row(term, "probe"), "probe's queued item")
    # Rename agent 2 (select it in the tree, then f6).
    term.press("ctrl+p")
    term.wait_for("Search for commands")
    term.write(burst("agent: agent 2", key("enter")))
    term.wait_for("→ agent 2")
    term.press("f6")
    term.wait_for("Rename agent 2")
    term.write(burst("writer", key("enter")))
    term.wait_gone("Rename agent 2")
    term.wait_until(lambda: bool(_row(term, "writer")), "the renamed agent in the tree")
    term.wait_for("→ writer")


def _check_the_day_is_back(term: Terminal) -> None:
    for name in ("demo", "scout", "writer", "probe"):
        term.wait_until(lambda name=name: "↵1" in _row(term, name),
                        f"{name} with its queued item")
    assert not _row(term, "agent 2 ")  # renamed: the old name is nowhere in the tree
    term.wait_for("→ writer")  # the selection is where it was left


@pytest.mark.parametrize("how", ["ctrl+q", "kill -9"])
def test_quit_then_continue_brings_the_whole_workspace_back(
        terminal: Callable[..., Terminal], how: str) -> None:
    term = terminal(cols=120, rows=30, config=SLOW)
    _build_a_day(term)
    if how == "ctrl+q":
        term.press("ctrl+q")
        assert term.wait_exit() == 0
        term.pump(0.2)
        said = term.text()  # the real terminal, after the alternate screen was left
        match = re.search(r"dsh-tui --data-dir \S+ --resume (ws-[0-9a-f]{8})", said)
        assert match, f"no reopen command on the terminal:\n{said}"
        assert b"\x1b[?1049l" in term.raw
        assert term.raw.rindex(b"--resume ws-") > term.raw.rindex(b"\x1b[?1049l")
    else:
        term.wait_until(lambda: len(term.session_files()) >= 4, "four sessions on disk")
        term.signal(signal.SIGKILL)
        term.wait_exit()
    again = terminal(cols=120, rows=30, config=SLOW, args=("-c",))
    _check_the_day_is_back(again)
    listing = subprocess.run([str(BINARY), "--data-dir", str(again.data_dir), "sessions"],
                             capture_output=True, text=True, timeout=30)
    assert "● open in another dsh-tui" in listing.stdout  # the workspace is open (again)
    blocked = subprocess.run([str(BINARY), "--data-dir", str(again.data_dir), "-c"],
                             capture_output=True, text=True, timeout=30, cwd=again.root)
    assert blocked.returncode == 2 and "is open in another dsh-tui" in blocked.stderr
    again.press("ctrl+q")
    assert again.wait_exit() == 0


def _composer_text(term: Terminal) -> str:
    """What the composer holds, as one string (its box: the line after its title)."""
    lines = term.lines()
    top = next(i for i, line in enumerate(lines) if line.startswith("╭") and "→ " in line)
    body = []
    for line in lines[top + 1:]:
        if line.startswith("╰"):
            break
        body.append(line.strip("│ ").rstrip())
    return " ".join(part for part in body if part)


def test_unsent_text_stays_with_its_agent_and_comes_back_after_a_quit(
        terminal: Callable[..., Terminal]) -> None:
    term = terminal(cols=120, rows=30)
    term.write(burst("first task", key("enter")))
    wait_running(term)  # a message was sent: the workspace is saved from here on
    term.type("an unsent draft for demo")
    term.wait_until(lambda: _composer_text(term) == "an unsent draft for demo", "the draft")
    term.press("ctrl+n")
    term.wait_for("Name the new agent")
    term.press("enter")
    term.wait_gone("Name the new agent")
    term.wait_for("→ agent 2")
    term.wait_until(lambda: "an unsent" not in _composer_text(term), "demo's draft put away")
    term.write(burst("second task", key("enter")))  # (an agent never sent to is not saved)
    term.wait_until(lambda: "second task" not in _composer_text(term), "the message sent")
    term.type("agent 2's own draft")
    term.wait_until(lambda: _composer_text(term) == "agent 2's own draft", "the second draft")
    term.press("ctrl+q")
    assert term.wait_exit() == 0
    again = terminal(cols=120, rows=30, args=("-c",))
    again.wait_for("→ agent 2")
    again.wait_until(lambda: _composer_text(again) == "agent 2's own draft",
                     "agent 2's draft after -c")
    again.press("ctrl+p")
    again.wait_for("Search for commands")
    again.write(burst("agent: demo", key("enter")))
    again.wait_for("→ demo")
    again.wait_until(lambda: _composer_text(again) == "an unsent draft for demo",
                     "demo's draft after -c")
    again.press("ctrl+q")
    assert again.wait_exit() == 0
