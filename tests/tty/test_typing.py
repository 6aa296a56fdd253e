"""Typing is safe (issue 10): prose typed while the tree, the transcript or the inbox has
focus lands in the composer and never disposes, removes, re-files, edits or arms anything;
ctrl+c stops the selected running agent keeping its inbox, and on an idle one says how to
quit, and a second ctrl+c quits. Inbox keys in one burst each see the previous one's effect.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from .terminal import (
    PANE_KEYS,
    Terminal,
    accepted,
    discards,
    events_of,
    focus_pane,
    queue_behind_a_turn,
)

SLOW = "demo_speed = 0.005\n"  # the first turn outlasts the test
PROSE = "status of the build, dry run: please fix it, excellent; undo Xx lbce"


@pytest.mark.parametrize("pane", list(PANE_KEYS))
def test_prose_typed_into_a_pane_lands_in_the_composer_and_does_nothing_else(
        terminal: Callable[..., Terminal], pane: str) -> None:
    term = terminal(cols=120, rows=30, config=SLOW)
    queue_behind_a_turn(term, "alpha", "beta")
    focus_pane(term, pane)
    term.type(PROSE)  # one write, as a fast typist or a paste delivers it
    term.wait_for(PROSE)
    term.wait_until(lambda: "Follow-up" in term.lines()[-1], "the composer to take the focus")
    shown = term.text()
    assert "Follow-up" in shown.splitlines()[-1]  # the composer has the focus now
    assert "↵2" in shown and "child" not in shown and "◆" not in shown
    assert "Dispose" not in shown.splitlines()[-1] and "Edit" not in shown  # no dialog
    term.press("ctrl+q")
    assert term.wait_exit() == 0
    assert len(term.sessions()) == 1  # no agent was spawned
    assert discards(term) == []  # nothing removed, disposed or cleared


def test_ctrl_c_stops_the_running_agent_keeping_its_inbox_then_twice_quits(
        terminal: Callable[..., Terminal]) -> None:
    term = terminal(cols=120, rows=30, config=SLOW)
    queue_behind_a_turn(term, "alpha", "beta")
    term.press("ctrl+c")
    term.wait_for("Stopped demo")
    term.wait_for("paused: the agent is idle")  # its inbox kept, waiting
    assert "↵2" in term.text()
    term.press("ctrl+c")
    term.wait_for("ctrl+c again to quit")
    assert term.process is not None and term.process.poll() is None
    term.press("ctrl+c")
    assert term.wait_exit() == 0
    assert discards(term) == []


def test_inbox_keys_in_one_burst_each_see_the_previous_ones_effect(
        terminal: Callable[..., Terminal]) -> None:
    term = terminal(cols=120, rows=30, config=SLOW)
    queue_behind_a_turn(term, "alpha", "beta")
    focus_pane(term, "inbox")
    term.press("shift+right", "shift+right")  # follow-up → steer → inject, in one read
    term.wait_for("NEXT STEP · 1")
    term.press("ctrl+q")
    assert term.wait_exit() == 0
    (records,) = term.sessions().values()
    lanes = [m.get("source", {}).get("lane") for m in accepted(records)
             if m["content"][0]["text"] == "alpha"]
    assert lanes[-1] == "inject", lanes


def test_keys_typed_as_the_app_starts_reach_the_composer(tmp_path: Path) -> None:
    # A person who types while the app is still starting: at the spawn (before Python and
    # Textual are up; the terminal still cooks the input) and right after the first paint.
    # Both reach the composer, in order, and are sent as one message.
    with Terminal(tmp_path, cols=100, rows=30) as term:
        term.type("typed at spawn")
        term.wait_until(lambda: b"Agents" in term.raw, "the first paint")
        term.type(", then at first paint")
        term.wait_for("│ typed at spawn, then at first paint")
        term.press("enter")
        term.wait_for("turn 1")
        term.press("ctrl+q")
        assert term.wait_exit() == 0
        sent = [m["content"][0]["text"] for records in term.sessions().values()
                for m in events_of(records, "user/message")]
        assert sent[:1] == ["typed at spawn, then at first paint"]
