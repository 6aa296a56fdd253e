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

from .terminal import Terminal, accepted, burst, discards, events_of, key, queue_behind_a_turn

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
    term.wait_until(lambda: "child 1 · running" in term.text(), "the child's turn")
    term.write(burst("child follow-up", key("enter")))
    term.wait_for("NEXT TURN · 1")  # the child's inbox (its tree row is short of room)


def _arm_breakpoint(term: Terminal) -> None:
    term.press("ctrl+p")
    term.wait_for("Search for commands")
    term.write(burst("Break before each step"))
    term.wait_for("Break before each step")
    term.press("enter")
    term.wait_for("Breakpoint set")


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


def test_leaving_at_a_breakpoint_sends_nothing_and_resume_puts_the_batch_back(
        terminal: Callable[..., Terminal]) -> None:
    """The person quits while reviewing a paused step: the step is not sent on the way
    out (no `user/message`, no request), and `--resume` shows the batch pending again,
    at the head of its lane, with the breakpoint still set."""
    term = terminal(cols=120, rows=30, config=SLOW)
    _arm_breakpoint(term)
    term.write(burst("review me before it goes", key("enter")))
    term.wait_for("Skip step")  # paused: the panel shows the batch
    term.press("ctrl+q")
    assert term.wait_exit() == 0
    records = next(iter(term.sessions().values()))
    sent = [r["type"] for r in records if r.get("type") in ("user/message", "request/header")]
    assert sent == [], "quitting at a breakpoint sent the step it was showing"

    again = terminal(cols=120, rows=30, config=SLOW, args=("-c",))
    again.wait_for("review me before it goes")
    line = next(line for line in again.lines() if " demo " in line and "◆" in line)
    assert "↵1" in line, f"the batch is not pending again: {line!r}"
    again.press("ctrl+q")
    assert again.wait_exit() == 0
    assert discards(again) == []


def test_a_batch_stopped_at_a_breakpoint_is_offered_back_after_a_quit_and_put_back_whole(
        terminal: Callable[..., Terminal]) -> None:
    """escape at a breakpoint ends the turn with its claimed batch (the core contract);
    the inbox offers it as "claimed, never sent", still after quitting and `-c`, and one
    command puts it back at the head of its lane: same id, same text, same lane."""
    term = terminal(cols=120, rows=30, config=SLOW)
    _arm_breakpoint(term)
    term.write(burst("look at this first", key("enter")))
    term.wait_for("Skip step")
    term.write(burst("queued behind it", key("enter")))
    term.wait_for("queued behind it")
    term.press("escape")  # stop: the turn ends aborted, its claimed batch with it
    term.wait_for("NEVER SENT")
    term.press("ctrl+q")
    assert term.wait_exit() == 0
    first = next(item for item in accepted(next(iter(term.sessions().values())))
                 if item["content"][0]["text"] == "look at this first")

    again = terminal(cols=120, rows=30, config=SLOW, args=("-c",))
    again.wait_for("NEVER SENT")
    again.press("ctrl+p")
    again.wait_for("Search for commands")
    again.write(burst("Put back unsent"))
    again.wait_for("Put back unsent messages")
    again.press("enter")
    again.wait_for("Put back 1 message")
    again.wait_gone("NEVER SENT")
    rows = [line for line in again.lines() if "look at this first" in line
            or "queued behind it" in line]
    assert len(rows) == 2 and "look at this first" in rows[0], again.text()  # head of lane
    again.press("ctrl+q")
    assert again.wait_exit() == 0
    splices = events_of(next(iter(again.sessions().values())), "agent/inbox/spliced")
    assert splices[-1] == {"target": "next-turn", "start": 0, "inserted": [first]}


def test_a_sigcont_it_did_not_ask_for_starts_no_second_terminal_session(
        terminal: Callable[..., Terminal]) -> None:
    """A hang-up sends the terminal's session leader SIGHUP *and* SIGCONT; Textual's driver
    took any SIGCONT as the end of a suspend and set the terminal up again (a second
    output thread and input thread, the alternate screen entered again), which on a
    hung-up terminal wedged the exit. The app continues without a suspend of its own must
    not touch the terminal: nothing re-entered, and keys still arrive once each."""
    term = terminal(cols=100, rows=30)
    mark = len(term.raw)
    term.signal(signal.SIGCONT)
    term.type("still one")
    term.wait_for("still one")
    term.type(" reader")
    term.wait_for("still one reader")
    assert b"\x1b[?1049h" not in term.raw[mark:], "SIGCONT set the terminal up again"
    term.press("ctrl+q")
    assert term.wait_exit() == 0
