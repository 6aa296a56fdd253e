"""`dsh-tui serve`: the app in a browser through textual-serve, driven over a real websocket."""

from __future__ import annotations

import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import aiohttp
import httpx
import pytest

from dsh_tui import cli

from .served import (
    HANG_GUARD_S,
    Served,
    TabStates,
    assert_none_left,
    composer_lines,
    free_port,
    new_tab_id,
    served_env,
    served_tab,
    tagged,
)


def test_the_served_command_carries_the_options_but_never_the_key(tmp_path: Path) -> None:
    args = cli.build_parser().parse_args([
        "--provider", "openai-compatible", "--base-url", "http://127.0.0.1:9/v1",
        "--model", "qwen3", "--data-dir", str(tmp_path / "my data"), "serve", "--port", "8123"])
    argv = shlex.split(cli.serve_command(args))
    assert argv[:3] == [sys.executable, "-m", "dsh_tui"]
    assert argv[3:] == ["--provider", "openai-compatible", "--model", "qwen3", "--base-url",
                        "http://127.0.0.1:9/v1", "--data-dir", str(tmp_path / "my data")]


def test_serve_refuses_bad_options_in_one_line(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "DEEPSEEK_API_KEY"}
    # Two tabs resuming one session would both append to its log: refused.
    for extra in (["--provider", "deepseek"], ["--provider", "nope"], ["--resume", "abc"],
                  ["-c"]):
        result = subprocess.run(
            [sys.executable, "-m", "dsh_tui", *extra, "serve", "--port", str(free_port())],
            capture_output=True, text=True, env=env, timeout=HANG_GUARD_S)
        assert result.returncode == cli.EXIT_USAGE
        assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr


def test_serve_says_in_one_line_what_it_cannot_serve(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "DEEPSEEK_API_KEY"}
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        for extra in (["--port", str(port)], ["--trusted-host", "https://proxy.example/"]):
            result = subprocess.run(
                [sys.executable, "-m", "dsh_tui", "--data-dir", str(tmp_path), "serve",
                 *extra], capture_output=True, text=True, env=env, timeout=HANG_GUARD_S)
            assert result.returncode == cli.EXIT_USAGE and result.stdout == ""
            assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
            assert ("cannot listen" if "--port" in extra else "--trusted-host") in result.stderr


async def test_a_browser_tab_gets_a_running_app(tmp_path: Path) -> None:
    served = Served(tmp_path, "demo_speed = 0\n")
    try:
        cookie = await served.cookie()
        async with httpx.AsyncClient(headers={"Cookie": cookie}) as client:
            page = await client.get(served.base + "/")
        assert page.status_code == 200 and "<div>dsh-tui</div>" in page.text
        screen = b""
        async with aiohttp.ClientSession() as session, session.ws_connect(
                f"ws://127.0.0.1:{served.port}/ws?width=120&height=36",
                headers={"Cookie": cookie}) as ws:
            deadline = time.monotonic() + HANG_GUARD_S
            # The app's first screen arrives as terminal output: the tree lists the demo agent.
            while b"demo" not in screen and time.monotonic() < deadline:
                message = await ws.receive(timeout=deadline - time.monotonic())
                if message.type == aiohttp.WSMsgType.BINARY:
                    screen += message.data
                elif message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED):
                    break
            assert b"demo" in screen
            assert served.server.poll() is None
            # Stopped as a service manager stops it, the tab still open: the whole group gets
            # SIGTERM, the apps die with the server, and nothing it prints is a traceback.
            os.killpg(served.server.pid, signal.SIGTERM)
        served.server.wait(timeout=HANG_GUARD_S)
    finally:
        served.stop()
    output = served.stdout.read_text(errors="replace") + served.stderr.read_text(
        errors="replace")
    assert "Traceback" not in output


def test_the_leak_check_finds_a_process_that_left_its_group() -> None:
    # What every serve test ends with: a process it started that escaped the server's
    # process group (a new session, as a daemonising child would) fails the test.
    tag = uuid.uuid4().hex
    stray = subprocess.Popen(["sleep", "60"], env=served_env(tag), start_new_session=True)
    try:
        # Until the child has exec'd, /proc shows the parent's environment, without the tag:
        # a check that ran first found nothing (CI of 0066ba5). Wait until it can be seen.
        deadline = time.monotonic() + HANG_GUARD_S
        while not tagged(tag) and time.monotonic() < deadline:
            time.sleep(0.01)
        with pytest.raises(AssertionError, match="outlived their serve test"):
            assert_none_left(tag, grace=0.2)
        assert stray.wait(timeout=HANG_GUARD_S) == -signal.SIGKILL  # and it was killed
    finally:
        if stray.poll() is None:
            stray.kill()
            stray.wait()


async def test_a_served_tab_offers_the_keys_a_browser_passes(tmp_path: Path) -> None:
    served = Served(tmp_path, "demo_speed = 0\n")
    try:
        async with served_tab(served) as tab:
            screen = await tab.wait_for("alt+t Inject")  # the footer
            # The composer title, the footer and the hint name alt+t, never the ctrl+t the
            # browser keeps; shift+enter makes a new line (the page sends it as itself).
            title = next(line for line in screen.splitlines() if "→ demo" in line)
            assert "alt+t inject" in title and "^j / shift+⏎ newline" in title
            assert "^t" not in screen and "^n" not in screen
            await tab.type("\x1bOP")  # f1: the help lists every key that works here
            help_screen = await tab.wait_for("dsh-tui keys")
            assert "alt+n" in help_screen and "alt+t" in help_screen
            assert "shift+⏎" in help_screen
            assert "^n" not in help_screen and "^t" not in help_screen
            assert "^w" not in help_screen and "alt+backspace" in help_screen
            await tab.type("\x1b")
            await tab.wait_for(lambda text: "dsh-tui keys" not in text)
            # alt+t arrives as ESC t and injects; alt+backspace (ESC DEL) deletes a word.
            await tab.type("some context")
            await tab.type("\x1bt")
            await tab.wait_for("✚ inject")
            await tab.type("one two three")
            await tab.wait_for("one two three")
            await tab.type("\x1b\x7f")
            await tab.wait_for(lambda text: "one two" in text and "three" not in text)
            # shift+enter as the page sends it (CSI 13;2 u) starts a new line, sends nothing.
            await tab.type("\x1b[13;2u" + "four")
            await tab.wait_for(lambda text: composer_lines(text)[-2:] == ["one two", "four"])
        await served.wait_no_apps()
        (records,) = served.sessions().values()
        inserted = [item for r in records if r["type"] == "agent/inbox/spliced"
                    for item in r["data"]["inserted"]]
        assert [m["content"][0]["text"] for m in inserted] == ["some context"]
    finally:
        served.stop()


async def test_a_tab_opened_and_closed_saves_no_session(tmp_path: Path) -> None:
    served = Served(tmp_path, "demo_speed = 0\n")
    try:
        for _ in range(2):  # opened, then reloaded (a second tab process), never used
            async with served_tab(served):
                pass
            await served.wait_no_apps()
        assert served.sessions() == {}
        assert not list(served.data.rglob("*.jsonl"))
    finally:
        served.stop()


async def test_closing_a_tab_while_the_agent_runs_is_a_quit(tmp_path: Path) -> None:
    served = Served(tmp_path, "demo_speed = 0.05\n")  # slow: the turn runs when the tab closes
    try:
        async with served_tab(served) as tab:
            await tab.type("compare two designs for a cache\r")
            await tab.wait_for("running · turn 1")
            await tab.type("and a second thought\r")
            await tab.wait_for("and a second thought")
            await tab.wait_for(lambda text: "NEXT TURN · 1" in text)
        await served.wait_no_apps()  # the tab closed while the agent ran
        sessions = served.sessions()
        root = next(records for sid, records in sessions.items() if "." not in sid)
        splices = [r["data"] for r in root if r["type"] == "agent/inbox/spliced"]
        assert not [s for r in sessions.values() for s in r
                    if s["type"] == "agent/inbox/spliced" and s["data"].get("outcome")]
        texts = [m["content"][0]["text"] for s in splices for m in s["inserted"]]
        assert texts == ["compare two designs for a cache", "and a second thought"]
        # Still queued when the tab closed: no claim of it is on record.
        claimed = sum(s.get("removedCount", 0) for s in splices if s["target"] == "next-turn")
        assert claimed == 1
    finally:
        served.stop()



async def test_the_page_learns_when_leaving_would_end_work(tmp_path: Path) -> None:
    served = Served(tmp_path, "demo_speed = 0.02\n")  # a turn runs until it is stopped
    tab = new_tab_id()
    try:
        async with TabStates(served, tab) as states, served_tab(served, tab=tab) as page:
            await states.wait_for(lambda s: s == {"leave": False})  # nothing to lose yet
            await page.type("half a thought")
            await states.wait_for(lambda s: s["leave"] is True)  # unsent text
            await page.type("\x7f" * len("half a thought"))
            await states.wait_for(lambda s: s["leave"] is False)
            await page.type("compare two designs for a cache\r")
            await page.wait_for("running · turn 1")
            running = await states.wait_for(lambda s: "workspace" in s)  # saved: its id
            assert running["leave"] is True and running["workspace"].startswith("ws-")
            await page.type("\x1b")  # escape stops the turn (its inbox is kept)
            await page.wait_for("Stopped demo")
            await states.wait_for(lambda s: s["leave"] is False)  # nothing runs now
            await page.type("a draft")
            await states.wait_for(lambda s: s["leave"] is True)
            await page.type("\x11")  # ctrl+q: the draft is saved, the app quits
            await states.wait_for(lambda s: s["leave"] is False)  # the dead page asks nothing
        async with TabStates(served, "not-a-tab") as refused:
            assert refused.status == 404
    finally:
        served.stop()


async def test_a_reloaded_page_is_offered_the_workspace_it_left(tmp_path: Path) -> None:
    served = Served(tmp_path, "demo_speed = 0\n")
    first, second, third = new_tab_id(), new_tab_id(), new_tab_id()
    try:
        async with TabStates(served, first) as states, served_tab(served, tab=first) as page:
            await page.type("compare two designs for a cache\r")
            await page.type("and a draft kept for later")
            await page.wait_for(lambda t: "→ demo" in t and
                                composer_lines(t)[:1] == ["and a draft kept for later"])
            left = await states.wait_for(lambda s: "workspace" in s and s["leave"])
        # Reloaded at once: the page's next load names the one it replaced, whose app is
        # still quitting (it holds the workspace until it has saved everything).
        async with served_tab(served, tab=second, left=first,
                              ready="Reopen the workspace this page left?") as page:
            offer = await page.wait_for(left["workspace"])
            assert "1 root agent (demo)" in offer
            await page.type("\r")  # enter: Reopen has the focus
            # Its agent (with its turn: tokens ending its row) and its draft, with no new
            # "demo" beside it. (Which part of the reply shows depends on how far the
            # turn got before the reload, so the transcript is not read.)
            screen = await page.wait_for(
                lambda t: "→ demo" in t
                and composer_lines(t)[:1] == ["and a draft kept for later"])
            named_demo = re.compile(r"[\s▾▸└├─│]*\S[ ✓]demo ")  # fold, glyph, mark, name
            tree = [line.split("│")[1] for line in screen.splitlines()
                    if line.startswith("│") and named_demo.match(line.split("│")[1])]
            assert len(tree) == 1 and re.search(r" \d+$", tree[0].rstrip()), tree
        await served.wait_no_apps()
        roots = [sid for sid in served.sessions() if "." not in sid]
        assert len(roots) == 1  # nothing new was saved
        # A page whose last load declined nothing and saved nothing still offers it; escape
        # starts a new workspace instead.
        async with served_tab(served, tab=third, left=second,
                              ready="Reopen the workspace this page left?") as page:
            await page.type("\x1b")
            await page.wait_for(lambda t: "→ demo" in t and "No messages yet" in t)
        async with served_tab(served, tab=new_tab_id()):  # a new tab: nothing to offer
            pass
        await served.wait_no_apps()
    finally:
        served.stop()


async def test_after_every_page_load_the_key_bar_shows_the_composers_keys(
        tmp_path: Path) -> None:
    # The page focuses its terminal on the app's first output, before the web driver's
    # opening blur: the app starts blurred with the composer focused, and the bar kept the
    # agent tree's keys (4 of 4 loads in a browser, issue 25).
    served = Served(tmp_path, "demo_speed = 0\n")
    try:
        for _ in range(3):
            async with served_tab(served) as tab:
                screen = await tab.wait_for(lambda t: "Follow-up" in t.splitlines()[-1])
                footer = screen.splitlines()[-1]
                assert "Inject" in footer and "Spawn child" not in footer
            await served.wait_no_apps()
    finally:
        served.stop()
