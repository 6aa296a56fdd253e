"""A served tab as the browser drives it: `dsh-tui serve` on a free port, its websocket
spoken as textual-serve's page speaks it (JSON envelopes in, terminal bytes out), and what
the app draws read through a `pyte` screen. Shared by the serve and the browser tests."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import aiohttp
import httpx

HANG_GUARD_S = 30.0
"""A safety net against hangs, never an assertion on speed."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ServedTab:
    """One browser tab's websocket, spoken as textual-serve's page speaks it; what the app
    draws goes into a `pyte` screen so a test reads what the person sees."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse, cols: int, rows: int) -> None:
        import pyte

        self.ws = ws
        self.screen = pyte.Screen(cols, rows)
        self.stream = pyte.ByteStream(self.screen)
        self.received = 0
        """The largest output frame so far, in bytes (the page acts on the first of >10)."""

    def text(self) -> str:
        return "\n".join(line.rstrip() for line in self.screen.display)

    async def type(self, data: str) -> None:
        await self.ws.send_str(json.dumps(["stdin", data]))

    async def wait_for(self, what: str | Callable[[str], bool]) -> str:
        test = (lambda text: what in text) if isinstance(what, str) else what
        deadline = time.monotonic() + HANG_GUARD_S
        while not test(self.text()):
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"never shown: {what!r}\n{self.text()}"
            try:
                message = await self.ws.receive(timeout=remaining)
            except TimeoutError:
                continue
            if message.type == aiohttp.WSMsgType.BINARY:
                self.received = max(self.received, len(message.data))
                self.stream.feed(message.data)
            elif message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED,
                                  aiohttp.WSMsgType.ERROR):
                raise AssertionError(f"the tab closed while waiting for {what!r}\n"
                                     f"{self.text()}")
        return self.text()


def composer_lines(screen: str) -> list[str]:
    """The composer's lines of text on a screen: between its title (which names the agent,
    `→ NAME`) and the bottom of its border."""
    lines = screen.splitlines()
    top = next(i for i, line in enumerate(lines) if "→ " in line and line.startswith("╭"))
    body = []
    for line in lines[top + 1:]:
        if line.startswith("╰"):
            break
        body.append(line.strip("│ ").rstrip())
    return body


TAG_VARIABLE = "DSH_TUI_TEST_RUN"
"""Set to a fresh value in everything a serve test starts (the server, its apps, the
browser): every process that inherited it is one of ours, whatever group or parent it ended
up in, and none may outlive the test (other work on this machine runs dsh_tui too)."""


def tagged(tag: str) -> list[str]:
    """`pid command` of every live process whose environment carries `tag`."""
    needle = f"{TAG_VARIABLE}={tag}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if needle not in (entry / "environ").read_bytes().split(b"\0"):
                continue
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(
                errors="replace")
        except OSError:
            continue
        if state != "Z":
            found.append(f"{entry.name} {command.strip()}")
    return found


def assert_none_left(tag: str, grace: float = 10.0) -> None:
    """Fail (after killing them) if processes a test started outlive it by `grace` seconds."""
    deadline = time.monotonic() + grace
    while (left := tagged(tag)) and time.monotonic() < deadline:
        time.sleep(0.05)
    for line in left:
        with contextlib.suppress(OSError):
            os.kill(int(line.split()[0]), signal.SIGKILL)
    assert not left, "processes outlived their serve test:\n" + "\n".join(left)


def served_env(tag: str) -> dict[str, str]:
    """This environment for a served app: no API key, no test or Textual settings, the tag."""
    env = {k: v for k, v in os.environ.items()
           if not k.endswith("_API_KEY") and not k.startswith(("TEXTUAL", "PYTEST"))}
    env[TAG_VARIABLE] = tag
    return env


class Served:
    """`dsh-tui serve` on a free port with its own config and data dir; what it prints goes
    to files beside them (`stdout`, `stderr`), read for the link it prints."""

    def __init__(self, root: Path, config: str, *serve_args: str,
                 host: str = "127.0.0.1") -> None:
        self.root = root
        self.data = root / "data"
        (root / "config.toml").write_text(config)
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.tag = uuid.uuid4().hex
        self.stdout = root / "serve.stdout"
        self.stderr = root / "serve.stderr"
        env = served_env(self.tag)
        with self.stdout.open("wb") as out, self.stderr.open("wb") as err:
            self.server = subprocess.Popen(
                [sys.executable, "-m", "dsh_tui", "--config", str(root / "config.toml"),
                 "--data-dir", str(self.data), "serve", "--host", host, "--port",
                 str(self.port), *serve_args],
                stdout=out, stderr=err, env=env, start_new_session=True)
        self._url: str | None = None

    async def url(self) -> str:
        """The link the server printed (with its token), once it listens."""
        deadline = time.monotonic() + HANG_GUARD_S
        while self._url is None:
            for line in self.stdout.read_text(errors="replace").splitlines():
                if line.startswith("dsh-tui serve: http"):
                    self._url = line.removeprefix("dsh-tui serve: ")
            assert self.server.poll() is None or self._url, \
                f"serve exited: {self.stderr.read_text(errors='replace')}"
            assert time.monotonic() < deadline, "serve never printed its link"
            if self._url is None:
                await asyncio.sleep(0.05)
        return self._url

    async def token(self) -> str:
        return (await self.url()).rsplit("?token=", 1)[1]

    async def cookie(self) -> str:
        """A `Cookie` header value, from exchanging the printed link's token as a browser."""
        async with httpx.AsyncClient() as client:
            answer = await client.get(await self.url())
        assert answer.status_code == 303, answer.text
        return answer.headers["set-cookie"].split(";", 1)[0]

    def apps(self) -> list[int]:
        """Pids of the apps the server runs (its process group, the server left out)."""
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit() or int(entry.name) == self.server.pid:
                continue
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            fields = stat[stat.rindex(")") + 2:].split()
            if int(fields[2]) == self.server.pid and fields[0] != "Z":  # pgrp, state
                found.append(int(entry.name))
        return found

    async def wait_no_apps(self) -> None:
        deadline = time.monotonic() + HANG_GUARD_S
        while self.apps():
            assert time.monotonic() < deadline, "a closed tab's app never exited"
            await asyncio.sleep(0.05)

    def sessions(self) -> dict[str, list[dict[str, Any]]]:
        out = {}
        for path in sorted(self.data.rglob("session.jsonl")):
            records = [json.loads(line) for line in path.read_text().splitlines() if line]
            out[records[0]["id"]] = records
        return out

    def stop(self) -> None:
        """Kill the server and its apps; fails if any process this test started survives."""
        if self.server.poll() is None:
            os.killpg(self.server.pid, signal.SIGKILL)
            self.server.wait()
        assert_none_left(self.tag)


@contextlib.asynccontextmanager
async def served_tab(served: Served, cols: int = 120, rows: int = 36, *,
                     tab: str | None = None, left: str | None = None,
                     ready: str = "→ demo") -> AsyncIterator[ServedTab]:
    """A tab signed in as a browser is (the cookie from the printed link, its own Origin).
    With `tab` (and `left`, the tab id of the page load it replaced), its socket is the one
    dsh-tui's page opens, `ws/TAB/LEFT`; without, textual-serve's plain `ws`. Yielded once
    `ready` is on screen (by default the composer naming its agent)."""
    cookie = await served.cookie()
    path = "ws" if tab is None else f"ws/{tab}" + (f"/{left}" if left else "")
    async with aiohttp.ClientSession() as session, session.ws_connect(
            f"ws://127.0.0.1:{served.port}/{path}?width={cols}&height={rows}",
            headers={"Cookie": cookie}, origin=served.base) as ws:
        tab_socket = ServedTab(ws, cols, rows)
        # What the page sends: its terminal's size once the socket is open, and focus as
        # soon as the first output arrives (textual.js marks the page `-first-byte` on the
        # first frame of more than 10 bytes; dsh-tui's page focuses the terminal then),
        # which is before the app's first screen, while the app is still starting.
        await ws.send_str(json.dumps(["resize", {"width": cols, "height": rows}]))
        await tab_socket.wait_for(lambda _text: tab_socket.received > 10)
        await ws.send_str(json.dumps(["focus"]))
        await tab_socket.wait_for(ready)
        yield tab_socket


def new_tab_id() -> str:
    """A tab id as the page makes one (128 random bits, hex)."""
    return uuid.uuid4().hex


class TabStates:
    """The page's view of its app: the `tab/TAB/state` stream, read in the background."""

    def __init__(self, served: Served, tab: str) -> None:
        self.served = served
        self.tab = tab
        self.states: list[dict[str, Any]] = []
        self.status: int | None = None
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> TabStates:
        cookie = await self.served.cookie()
        ready = asyncio.Event()

        async def read() -> None:
            async with httpx.AsyncClient(timeout=None) as client, client.stream(
                    "GET", f"{self.served.base}/tab/{self.tab}/state",
                    headers={"Cookie": cookie, "Origin": self.served.base}) as answer:
                self.status = answer.status_code
                ready.set()
                async for line in answer.aiter_lines():
                    if line.startswith("data: "):
                        self.states.append(json.loads(line.removeprefix("data: ")))

        self._task = asyncio.create_task(read())
        await asyncio.wait_for(ready.wait(), HANG_GUARD_S)
        return self

    async def __aexit__(self, *_exc: object) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def wait_for(self, test: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        """The latest state once `test` holds for it (bounded wait)."""
        deadline = time.monotonic() + HANG_GUARD_S
        while not (self.states and test(self.states[-1])):
            assert time.monotonic() < deadline, f"never reported: {self.states}"
            await asyncio.sleep(0.02)
        return self.states[-1]
