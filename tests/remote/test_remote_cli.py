"""`dsh-tui attach` in a real terminal against the shared runtime: the runtime's sessions on
screen, the token out of argv, the screen and the error line."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from remote_support import attached, events_of, new_agent, wait_for

from dsh_tui.harness import user_message
from dsh_tui.remote import parse_endpoint

_spec = importlib.util.spec_from_file_location(
    "dsh_tui_tests_terminal", Path(__file__).resolve().parents[1] / "tty" / "terminal.py")
assert _spec is not None and _spec.loader is not None
terminal = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = terminal
_spec.loader.exec_module(terminal)


async def test_attach_shows_the_runtime_sessions_with_the_token_kept_out(runtime,
                                                                        tmp_path) -> None:
    world = await attached(runtime)
    try:
        agent = await new_agent(world, "cli")
        agent.followup(user_message("name me [words=2]"))
        await wait_for(lambda: any(e.data.get("source", {}).get("kind") == "provider"
                                   for e in events_of(agent, "session/title")), "its title")
    finally:
        await world.close()
    endpoint = parse_endpoint(runtime.line)
    token = endpoint.token.reveal()
    term = terminal.Terminal(tmp_path, cols=120, rows=30, args=("attach", endpoint.base),
                             env={"DSH_WEB_TOKEN": token})
    with term:
        term.wait_for("Agents · 127.0.0.1:", timeout=30)  # the pane cuts the port
        term.wait_for("Remote test", timeout=30)  # the runtime's title of that session
        argv = Path(f"/proc/{term.pid}/cmdline").read_bytes()
        assert token.encode() not in argv
        term.press("ctrl+q")
        assert term.wait_exit(timeout=20) == 0
    assert token.encode() not in bytes(term.raw)


def test_a_refused_token_is_one_line_without_it(runtime, tmp_path) -> None:
    endpoint = parse_endpoint(runtime.line)
    wrong = "B" * 43
    term = terminal.Terminal(tmp_path, args=("attach", f"dsh web: {endpoint.base}/?token={wrong}"))
    with term:
        assert term.wait_exit(timeout=30) == 2
        term.pump(0.2)
        shown = [line.strip() for line in term.lines() if line.strip()]
    assert shown == [f"dsh-tui: cannot attach: {endpoint.where} refused the launch token (a "
                     "runtime makes a new one each start: attach with the line it printed "
                     "this time)"] or shown[0].startswith("dsh-tui: cannot attach:")
    assert wrong.encode() not in bytes(term.raw)
    assert "Traceback" not in term.text()
