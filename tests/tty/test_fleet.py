"""Twenty agents at a glance (issue 28), in the installed app in a real terminal.

At 80x24 the tree is folded away: the count of agents that need the person leads the key
bar, and ctrl+g visits them oldest first, while the person works in another agent. At
120x40, three marked running agents get one steer each, and a subtree stop keeps, then
discards, every node's inbox: checked in the session logs.
"""

from __future__ import annotations

import http.server
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from .terminal import Terminal, accepted, burst, discards, events_of, focus_pane, key

CTRL_DELETE = b"\x1b[3;5~"


class Refusing(http.server.BaseHTTPRequestHandler):
    """A model server that thinks a moment, then refuses the request (HTTP 400)."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        time.sleep(1.5)  # the person has moved on to another agent by now
        body = b'{"error": {"message": "no such model", "type": "invalid_request_error"}}'
        self.send_response(400)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def refusing_server() -> Iterator[int]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Refusing)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def _palette(term: Terminal, command: str) -> None:
    term.press("ctrl+p")
    term.wait_for("Search for commands")
    term.write(burst(command, key("enter")))
    term.wait_gone("Search for commands")


def _new_root(term: Terminal, name: str, route_keys: tuple[str, ...] = ()) -> None:
    """ctrl+n, the offered name, the route (preselected, or moved to with `route_keys`),
    in one burst as a fast hand types it."""
    term.write(burst(key("ctrl+n"), key("enter"), *(key(k) for k in route_keys), key("enter")))
    term.wait_for(f"→ {name} ")


def _needs(term: Terminal) -> str:
    return term.lines()[-1]


def test_needs_you_is_counted_with_the_tree_folded_and_ctrl_g_visits_oldest_first(
        terminal: Callable[..., Terminal], refusing_server: int) -> None:
    config = f"""demo_speed = 0
route = "quick"
notify = "desktop"

[routes.quick]
provider = "demo"

[routes.broken]
base_url = "http://127.0.0.1:{refusing_server}/v1"
model = "no-such-model"
first_byte_timeout = 10
"""
    term = terminal(cols=80, rows=24, config=config)
    term.wait_for("→ main (quick")
    for child in ("scout", "probe"):  # main › scout › probe: sub-agents in the tree
        _palette(term, "spawn child agent")
        term.wait_for("Name the new child")
        term.write(burst(child, key("enter"), key("enter")))
        term.wait_for(f"→ {child} ")
    for n in range(2, 19):
        _new_root(term, f"agent {n}")
        if n in (3, 5):  # two agents stop at a breakpoint before their first step
            _palette(term, "break before each step")
            term.wait_for("Breakpoint set")
            term.write(burst(f"go {n}", key("enter")))
            term.wait_for("◆ paused")
    _new_root(term, "agent 19", ("down",))  # on the route whose server refuses
    term.write(burst("go 19", key("enter")))
    _new_root(term, "agent 20", ("up",))  # the person works here meanwhile
    term.write(burst("my own work", key("enter")))
    term.wait_until(lambda: "3 need you" in _needs(term), "three agents needing you",
                    timeout=30)
    # agent 20's turn ends while the person still looks at it (its log says so: the
    # screen had it first), so it is seen, not left to be found later
    term.wait_until(lambda: any(e.get("turn") == 1 for e in events_of(
        _session_of(term, "agent 20"), "turn/end")), "agent 20's answer", timeout=30)
    term.settle()
    screen = term.text()
    assert "╭─ Agents" not in screen  # the tree is folded at 80x24
    assert _needs(term).startswith(" ^g 3 need you · ◆2 ✗1 "), _needs(term)
    # the failure came while the person was in agent 20: the terminal was asked to notify
    assert b"\x1b]9;dsh-tui \xc2\xb7 agent 19: its turn failed\x07" in term.raw
    assert b"\x1b]9;dsh-tui \xc2\xb7 agent 3" not in term.raw  # (it paused while shown)
    visited = []
    for _ in range(4):
        before = term.text()
        term.press("ctrl+g")
        term.wait_until(lambda b=before: term.text() != b, "the jump")
        visited.append(next(name for name in ("agent 3", "agent 5", "agent 19")
                            if f"→ {name} " in term.settle()))
    assert visited == ["agent 3", "agent 5", "agent 19", "agent 3"]
    # looking at agent 19 cleared its failure; the two pauses still wait for an answer
    assert _needs(term).startswith(" ^g 2 need you · ◆2 "), _needs(term)
    term.press("ctrl+q")
    assert term.wait_exit() == 0


def _steers(records: list[dict[str, Any]]) -> list[str]:
    return [item["content"][0]["text"] for item in accepted(records)
            if item.get("source", {}).get("lane") == "steer"]


def _session_of(term: Terminal, title: str) -> list[dict[str, Any]]:
    """The records of the session titled `title` ([] while its file is not written)."""
    for records in term.sessions().values():
        titles = [t["title"] for t in events_of(records, "session/title")]
        if titles and titles[-1] == title:
            return records
    return []


def test_a_steer_broadcast_to_three_marked_agents_and_a_subtree_stop_keeping_then_discarding(
        terminal: Callable[..., Terminal]) -> None:
    term = terminal(cols=120, rows=40, config="demo_speed = 0.02\n")
    term.wait_for("→ demo ")
    term.write(burst("first task", key("enter")))
    for n in (2, 3, 4):
        term.write(burst(key("ctrl+n"), key("enter")))
        term.wait_for(f"→ agent {n} ")
        term.write(burst(f"task {n}", key("enter")))
        if n == 4:
            term.write(burst("queued for agent 4", key("enter")))
    for child in ("kid 1", "kid 2"):  # agent 4 › kid 1 › kid 2, each busy with one queued
        _palette(term, "spawn child agent")
        term.wait_for("Name the new child")
        term.write(burst(child, key("enter")))
        term.wait_for(f"→ {child} ")
        term.write(burst(f"task for {child}", key("enter"), f"queued for {child}",
                         key("enter")))
    focus_pane(term, "tree")
    term.press("home", "space", "space", "space")  # demo, agent 2, agent 3
    term.wait_for("Agents · 3 marked")
    term.press("ctrl+r")
    term.wait_for("Broadcast to 3 agents: demo, agent 2, agent 3")
    term.write(burst("wrap up now", key("ctrl+s")))
    term.wait_for("Sent the steer to 3 agents · ctrl+z undoes.")
    term.wait_until(lambda: all(_steers(_session_of(term, name)) == ["wrap up now"]
                                for name in ("demo", "agent 2", "agent 3")),
                    "each marked agent's steer in its log")
    assert not _steers(_session_of(term, "agent 4"))

    team = ("agent 4", "kid 1", "kid 2")
    term.press("backspace", "home", "down", "down", "down")  # unmark; the cursor on agent 4
    term.write(CTRL_DELETE)
    term.wait_for("Stop agent 4 and its 2 sub-agents?")
    term.press("ctrl+y")  # keep: the confirming chord
    term.wait_for("Stopped 3 agents, keeping every inbox")
    for name in team:  # each queued follow-up is still there, nothing thrown away
        term.wait_until(lambda n=name: any(
            e.get("reason", {}).get("kind") == "aborted"
            for e in events_of(_session_of(term, n), "turn/end")), f"{name}'s stop")
    assert not discards(term)
    term.write(CTRL_DELETE)  # again: idle now, but with work kept
    term.wait_for("Stop agent 4 and its 2 sub-agents?")
    term.press("ctrl+d")
    term.wait_for("Stopped 3 agents, discarding their inboxes")
    term.wait_until(lambda: len(discards(term)) == 3, "three discarding splices")
    thrown = {name: [(data["target"], data.get("removedCount"))
                     for data in events_of(_session_of(term, name), "agent/inbox/spliced")
                     if data.get("outcome") == "canceled"] for name in team}
    assert thrown == {name: [("next-turn", 1)] for name in team}  # each one's queued item
    for name in team:
        assert f"queued for {name}" in [item["content"][0]["text"]
                                        for item in accepted(_session_of(term, name))]
    term.press("ctrl+q")
    assert term.wait_exit() == 0
