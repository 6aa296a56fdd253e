"""Routes as a person meets them (issue 13): the installed app at 80x24 with two routes in
its config; ctrl+n asks the name, then which route, keys typed in one burst choose one,
and the new agent's route is what it runs on and what the composer names."""

from __future__ import annotations

from collections.abc import Callable

from .terminal import Terminal, burst, events_of, key

CONFIG = """demo_speed = 0
route = "quick"

[routes.quick]
provider = "demo"

[routes.local]
base_url = "http://127.0.0.1:9/v1"
model = "qwen3-8b"
max_tokens = 64
first_byte_timeout = 2
"""


def test_ctrl_n_asks_for_the_route_and_the_agent_runs_on_it(
        terminal: Callable[..., Terminal]) -> None:
    term = terminal(cols=80, rows=24, config=CONFIG)
    term.wait_for("→ main (quick · demo)")
    term.press("ctrl+n")
    term.wait_for("Name the new agent")
    term.press("enter")  # the name offered
    term.wait_for("Route for agent 2")
    assert "local · qwen3-8b · openai-compatible · max_tokens 64" in term.text()
    term.write(burst(key("down"), key("enter")))  # as fast as a person's fingers, or faster
    term.wait_for("→ agent 2 (local · qwen3-8b)")
    term.write(burst("hello local", key("enter")))
    # Nothing listens on port 9: the request fails as a transport error, on that route.
    term.wait_for("TRANSPORT", timeout=30)
    term.press("ctrl+q")
    assert term.wait_exit() == 0
    headers = [e["header"]["config"] for records in term.sessions().values()
               for e in events_of(records, "request/header")]
    assert {"provider": "local", "model": "qwen3-8b", "maxTokens": 64} in headers
