"""One selected agent (issue 10): the tree cursor, the transcript, the inbox and the
composer's target always name the same agent, whatever keys arrive how fast, and a move the
app makes itself (ctrl+n) is never reported back as a new selection. After the last key the
screen is still and the idle app uses almost no CPU."""

from __future__ import annotations

import re
from collections.abc import Callable

from .terminal import Terminal, accepted_texts, burst, events_of, key

FAST = "demo_speed = 0\n"
NAMES = ("○ demo", "agent 2", "agent 3")


def _shown(term: Terminal) -> dict[str, str]:
    """Which agent each part of the screen names."""
    text = term.text()
    cursor = term.highlighted(NAMES, columns=35)  # the tree pane
    assert len(cursor) == 1, f"no single cursor row in the tree: {cursor}\n{text}"
    return {
        "cursor": cursor[0].removeprefix("○ "),
        "transcript": re.search(r"Transcript · ([\w ]+?)(?: ·|\s*─)", text).group(1),
        "inbox": re.search(r"Inbox · ([\w ]+?) ·", text).group(1),
        "composer": re.search(r"→ ([\w ]+?) ·", text).group(1),
    }


def _new_agent(term: Terminal, name: str) -> None:
    """ctrl+n asks for a name, offering the next free one; enter takes it."""
    term.press("ctrl+n")
    term.wait_for("Name the new agent")
    term.press("enter")
    term.wait_gone("Name the new agent")
    term.wait_for(f"→ {name}")


def _agree(term: Terminal) -> str:
    shown = _shown(term)
    assert len(set(shown.values())) == 1, f"the screen names different agents: {shown}"
    return shown["cursor"]


def test_ctrl_n_selects_the_new_agent_and_moves_the_cursor_to_it(
        terminal: Callable[..., Terminal]) -> None:
    term = terminal(cols=160, rows=24, config=FAST)
    _new_agent(term, "agent 2")
    term.press("tab")  # the tree has focus: ctrl+n there used to start the ping-pong
    _new_agent(term, "agent 3")
    term.settle()
    assert _agree(term) == "agent 3"


def test_a_navigation_burst_leaves_one_still_selection_and_an_idle_app(
        terminal: Callable[..., Terminal]) -> None:
    term = terminal(cols=160, rows=24, config=FAST)
    for name in ("agent 2", "agent 3"):
        _new_agent(term, name)
    term.press("tab")  # focus the tree
    term.wait_gone("Created agent")  # the toasts time out: then nothing else should move
    term.press("up", "up", "down", "up", "down", "down", "up")  # key repeat: one read
    term.settle(quiet=1.0)  # a loaded machine may take a while to apply the burst
    seen, cpu = term.watch(1.5)
    assert len(seen) == 1, "the screen kept changing after the last key"
    assert cpu < 0.3, f"the idle app used {cpu:.2f} s of CPU in 1.5 s (ping-pong: ~1.2 s)"
    chosen = _agree(term)
    assert chosen == "agent 2"  # 3 → 2 → 1 → 2 → 1 → 2 → 3 → 2
    term.write(burst(key("enter"), "for the chosen one", key("enter")))
    term.wait_for("for the chosen one")
    assert f"→ {chosen} ·" in term.text()
    # Accepted = the durable inbox splice that took it. The log is written in batches, so the
    # screen can show the message before the file holds it: wait for the file, then check who.
    term.wait_until(lambda: any("for the chosen one" in accepted_texts(records)
                                for records in term.sessions().values()),
                    "the accepted message in a session log")
    sessions = term.sessions()
    got = {sid: accepted_texts(records) for sid, records in sessions.items()}
    titles = {sid: [t["title"] for t in events_of(records, "session/title")][-1]
              for sid, records in sessions.items()}
    receivers = [titles[sid] for sid, texts in got.items() if "for the chosen one" in texts]
    assert receivers == [chosen]
