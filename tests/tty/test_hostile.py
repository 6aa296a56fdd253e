"""Issue 11 in a real terminal: the hostile corpus through every surface that shows
outside text, judged on the raw bytes the installed `dsh-tui` wrote to the pty.

A crafted session (made by the real harness: hostile titles for a root and its sub-agent,
hostile user text, reasoning, a tool with a hostile name, arguments and result, a long
line, an event type of its own, and queued inbox items) is opened with `dsh-tui view`
(transcript, reasoning and tools expanded, tree, titles, inbox rows, the event log over
all agents, the palette built from agent names) and listed by the live app's sessions
screen (f3); in the live app a hostile paste goes into the composer, into the inbox and
into the edit dialog. `dsh-tui sessions` and `export` print the same session. None of
the planted sequences may appear in any of those bytes.
"""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import Callable
from pathlib import Path

from ui.hostile_corpus import HOSTILE, planted_in  # tests/ is on sys.path (rootdir packages)

from dsh_tui.compose import build_context
from dsh_tui.harness import user_message
from dsh_tui.harness.persistence import JsonlPersistence
from dsh_tui.llm.scripted import ScriptedModel, reasoning, reply, text, tool_call
from dsh_tui.loop import Tool
from dsh_tui.ui.state.world import create_agent

from .terminal import BINARY, Terminal, key

TOOL = "look\x1b]0;PWN\x07up\u202e"


async def _craft(data: Path) -> Path:
    """A finished turn full of hostile text, then two items left queued; returns the log."""
    script = [reply(reasoning(f"PWN-THINK {HOSTILE}"),
                    tool_call("c1", TOOL, {"q": HOSTILE})),
              reply(text(f"PWN-ANSWER {HOSTILE} " + "x" * 5000 + HOSTILE))]
    lookup = Tool(TOOL, "looks", {"type": "object", "properties": {}},
                  lambda _args: f"PWN-RESULT {HOSTILE}")
    ctx = build_context(providers={"mock": ScriptedModel(script)}, tools=[lookup],
                        retry=False, system_prompt=None, persistence=JsonlPersistence(data))
    root = (await create_agent(ctx, provider="mock", model="mock", title=f"PWN-ROOT {HOSTILE}",
                               session_id="crafted")).agent
    await create_agent(root.ctx, provider="mock", model="mock", title=f"PWN-CHILD {HOSTILE}",
                       session_id="crafted-child",
                       meta={"parentSession": root.id, "origin": "subagent",
                             "delegationDepth": 1})
    root.followup(user_message(f"PWN-ASK {HOSTILE}"))
    await asyncio.wait_for(root.when_idle(), 20)
    root.session.append(f"custom/PWN{HOSTILE}", {"note": HOSTILE}, ignorable=True)
    root.inbox.append("next-turn", user_message(f"PWN-QUEUED {HOSTILE}"))
    root.inbox.append("next-step", user_message(f"PWN-STEP {HOSTILE}"))
    (log,) = [p for p in data.rglob("session.jsonl") if "crafted-child" not in str(p)]
    return log  # the world is left as is (not disposed): the queued items stay queued


def assert_clean(data: bytes, where: str) -> None:
    assert planted_in(data) == [], f"{where}: planted sequences reached the terminal"


def test_view_shows_a_crafted_log_without_a_raw_byte(tmp_path: Path) -> None:
    log = asyncio.run(_craft(tmp_path / "crafted"))
    with Terminal(tmp_path, cols=120, rows=40, args=["view", str(log)]) as term:
        term.wait_for("completed")
        term.wait_for("PWN-QUEUED")
        term.write(b"r")
        term.write(b"t")
        term.settle()
        term.press("f2")
        term.wait_for("custom/PWN")
        term.press("ctrl+a")
        term.settle()
        term.press("f2")
        term.press("ctrl+p")
        term.write(b"agent: PWN")  # (many commands name agents: the agents' own rows)
        term.wait_for("agent: PWN-ROOT")
        term.press("escape")
        term.settle()
        assert_clean(bytes(term.raw), "dsh-tui view")
        assert "␛" in bytes(term.raw).decode("utf-8", "replace")  # it was shown, visibly


def test_the_live_app_shows_hostile_names_pastes_and_edits_safely(
        tmp_path: Path, terminal: Callable[..., Terminal]) -> None:
    asyncio.run(_craft(tmp_path / "data"))  # where the terminal's app keeps its sessions
    term = terminal(cols=120, rows=40, config="demo_speed = 0.05\n")
    term.press("f3")
    term.wait_for("PWN-ROOT")
    term.wait_for("PWN-ASK")
    term.press("escape")
    term.wait_gone("Saved sessions")  # a paste sent while the screen still closes lands there
    term.settle()
    paste = f"PWN-PASTE {HOSTILE}".encode()
    term.write(b"\x1b[200~" + paste + b"\x1b[201~")
    term.wait_for("PWN-PASTE")
    term.press("ctrl+t")  # inject: queued in the inbox, the agent stays idle
    term.wait_for("1 step")
    term.press("tab", "tab", "tab")
    term.settle()
    term.write(key("enter"))  # edit (no letter is an inbox command)
    term.wait_for("Edit queued message")
    term.settle()
    term.press("escape")
    term.settle()
    assert_clean(bytes(term.raw), "live app")
    term.press("ctrl+q")
    assert term.wait_exit() == 0


def test_sessions_and_export_print_the_crafted_session_safely(tmp_path: Path) -> None:
    data = tmp_path / "data"
    asyncio.run(_craft(data))
    for argv in (["sessions", "--data-dir", str(data)],
                 ["export", "crafted", "--data-dir", str(data)],
                 ["export", "crafted", "--format", "jsonl", "--data-dir", str(data)]):
        result = subprocess.run([str(BINARY), *argv], capture_output=True, timeout=60,
                                stdin=subprocess.DEVNULL)
        assert result.returncode == 0, result.stderr
        assert b"PWN" in result.stdout
        assert_clean(result.stdout + result.stderr, " ".join(argv[:2]))


assert key("escape") == b"\x1b"  # the layer's key table is what the writes above rely on
