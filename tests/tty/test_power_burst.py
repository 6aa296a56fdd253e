"""Twenty inbox keys in one burst on a running agent (issue 29): mark, merge, split (in
the editor), move, undo three times, redo. Each key acts in order, the inbox on screen is
exactly what the durable log replays to, and nothing is sent to the model meanwhile."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from .terminal import Terminal, events_of, focus_pane, key, queue_behind_a_turn

SLOW = "demo_speed = 0.02\n"

KEYS = ["space", "space", "ctrl+j",                      # mark alpha and beta, merge them
        "down", "enter", "home", "right", "right", "right", "ctrl+b",  # split "one two"
        "down", "shift+up", "shift+down",                # move "two" up and back down
        "ctrl+z", "ctrl+z", "ctrl+z", "ctrl+y",          # undo both moves and the split; redo
        "home", "down", "shift+up"]                      # "one" above the merged item


def replay(records: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The inbox as the durable splices leave it (no app code involved)."""
    lists: dict[str, list[dict[str, Any]]] = {"next-step": [], "next-turn": []}
    for data in events_of(records, "agent/inbox/spliced"):
        items = lists[data["target"]]
        start = data["start"]
        items[start:start + data.get("removedCount", 0)] = data.get("inserted", [])
    return lists


def shown_items(term: Terminal, left: int) -> list[tuple[str, str]]:
    """(short id, first preview line) of each pending item the inbox pane shows."""
    rows = [line[left:].strip("│ ") for line in term.lines()[1:-5]]
    out = []
    for number, row in enumerate(rows):
        found = re.match(r"\d+\. .*#([0-9a-f]{6})", row)
        if found and number + 1 < len(rows):
            out.append((found.group(1), rows[number + 1].strip()))
    return out


def test_twenty_inbox_keys_in_one_burst_replay_to_the_screen(
        terminal: Callable[..., Terminal]) -> None:
    term = terminal(cols=130, rows=40, config=SLOW)
    queue_behind_a_turn(term, "alpha", "beta", "one two", "delta")
    focus_pane(term, "inbox")
    assert len(KEYS) == 20
    term.write(b"".join(key(name) for name in KEYS))
    final = ["one", "alpha\n\nbeta", "two", "delta"]

    def burst_done() -> bool:
        (records,) = term.sessions().values()
        return [item["content"][0]["text"] for item in replay(records)["next-turn"]] == final

    term.wait_until(burst_done, "the log to hold the last key's edit")
    left = next(line.index("╭─ Inbox") for line in term.lines() if "╭─ Inbox" in line)
    state: dict[str, Any] = {}

    def replayed_is_shown() -> bool:  # (the tree's spinner moves: the pane is compared)
        (records,) = term.sessions().values()
        lists = replay(records)
        expected = [(item["id"][:6], item["content"][0]["text"].splitlines()[0])
                    for target in ("next-step", "next-turn") for item in lists[target]]
        state.update(records=records, lists=lists, expected=expected)
        return shown_items(term, left) == expected

    term.wait_until(replayed_is_shown, "the inbox on screen to be what the log replays to")
    records, lists = state["records"], state["lists"]
    texts = [item["content"][0]["text"] for item in lists["next-turn"]]
    assert texts == final, texts
    assert not lists["next-step"]
    # nothing else sent: the running turn's prompt is the only message the model saw
    sent = [m["content"][0]["text"] for m in events_of(records, "user/message")]
    assert sent == ["first task"], sent
    assert not events_of(records, "steering/message")
    assert len(events_of(records, "turn/start")) == 1
    term.press("ctrl+q")
    assert term.wait_exit() == 0
