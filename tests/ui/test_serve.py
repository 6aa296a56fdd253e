"""`dsh-tui serve`: the app in a browser through textual-serve, driven over a real websocket."""

from __future__ import annotations

import asyncio
import os
import shlex
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import aiohttp
import httpx

from dsh_tui import cli

HANG_GUARD_S = 30.0
"""A safety net against hangs, never an assertion on speed."""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


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
    for extra in (["--provider", "deepseek"], ["--provider", "nope"], ["--resume", "abc"]):
        result = subprocess.run(
            [sys.executable, "-m", "dsh_tui", *extra, "serve", "--port", str(_free_port())],
            capture_output=True, text=True, env=env, timeout=HANG_GUARD_S)
        assert result.returncode == cli.EXIT_USAGE
        assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr


async def test_a_browser_tab_gets_a_running_app(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("demo_speed = 0\n")
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "dsh_tui", "--config", str(config), "--data-dir",
         str(tmp_path / "data"), "serve", "--port", str(port)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        base = f"http://127.0.0.1:{port}"
        page = await _get_when_up(base)
        assert page.status_code == 200 and "<div>dsh-tui</div>" in page.text
        assert f"ws://127.0.0.1:{port}/ws" in page.text
        screen = b""
        async with aiohttp.ClientSession() as session, \
                session.ws_connect(f"ws://127.0.0.1:{port}/ws?width=120&height=36") as ws:
            deadline = time.monotonic() + HANG_GUARD_S
            # The app's first screen arrives as terminal output: the tree lists the demo agent.
            while b"demo" not in screen and time.monotonic() < deadline:
                message = await ws.receive(timeout=deadline - time.monotonic())
                if message.type == aiohttp.WSMsgType.BINARY:
                    screen += message.data
                elif message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED):
                    break
            assert b"demo" in screen
            assert server.poll() is None
            # Stopped as a service manager stops it, the tab still open: the whole group gets
            # SIGTERM, the apps die with the server, and nothing it prints is a traceback.
            os.killpg(server.pid, signal.SIGTERM)
        output = server.communicate(timeout=HANG_GUARD_S)[0].decode(errors="replace")
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
    assert "Traceback" not in output


async def _get_when_up(base: str) -> httpx.Response:
    deadline = time.monotonic() + HANG_GUARD_S
    async with httpx.AsyncClient() as client:
        while True:
            try:
                return await client.get(base + "/")
            except httpx.TransportError:
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.1)
