"""`dsh-tui serve` in a real Chromium, driven by Playwright as a person drives it.

The system browser (Debian's `chromium`, which `.ci/run` installs) through
`executable_path`, never a browser Playwright downloads; a fresh profile per run. What the
app draws is read from the page's own websocket frames through a `pyte` screen, so the
test sees what the page's terminal shows without reading pixels. A reload while a turn
runs asks "leave page?" first (the page learns it from the app), and the new page offers
the workspace the last one had.

Skipped, saying why, where Playwright or Chromium is missing.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import pyte
import pytest

from .served import HANG_GUARD_S, Served, composer_lines, served_env

CHROMIUM = os.environ.get("DSH_TUI_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
LAUNCH_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update",
               "--disable-sync"]

async_api = pytest.importorskip(
    "playwright.async_api",
    reason="the Python playwright package is not installed (.ci/run installs it)")
pytestmark = pytest.mark.skipif(
    not Path(CHROMIUM).is_file(),
    reason=f"no Chromium at {CHROMIUM} (.ci/run installs Debian's chromium; "
           "DSH_TUI_CHROMIUM points elsewhere)")


async def open_served(playwright: Any, served: Served, profile: Path, shown: PageScreen, *,
                      display: str | None = None,
                      on_socket: Callable[[Any], None] | None = None) -> tuple[Any, Any]:
    """Chromium (headless, or with a window on X `display`) on a fresh profile with the
    served page open and its frames read by `shown` (and `on_socket`): (context, page)."""
    url = await served.url()  # the printed link: its token signs the browser in
    env = served_env(served.tag)
    args = LAUNCH_ARGS
    if display is not None:
        env["DISPLAY"] = display
        args = [a for a in LAUNCH_ARGS if a != "--headless"] + [
            "--window-position=0,0", "--window-size=1280,900"]
    browser = await playwright.chromium.launch_persistent_context(
        str(profile), executable_path=CHROMIUM, args=args, env=env,
        headless=display is None, viewport={"width": 1200, "height": 760})
    page = browser.pages[0] if browser.pages else await browser.new_page()
    page.on("websocket", shown.attach)
    if on_socket is not None:
        page.on("websocket", on_socket)
    await page.goto(url)
    return browser, page


class PageScreen:
    """What the page's terminal shows: every binary frame of the page's websocket, fed to a
    `pyte` screen sized as the page sized its terminal."""

    def __init__(self) -> None:
        self.screen = pyte.Screen(80, 24)
        self.stream = pyte.ByteStream(self.screen)
        self.sockets = 0

    def attach(self, ws: Any) -> None:
        self.sockets += 1
        query = parse_qs(urlparse(ws.url).query)
        self.screen = pyte.Screen(int(query["width"][0]), int(query["height"][0]))
        self.stream = pyte.ByteStream(self.screen)
        screen, stream = self.screen, self.stream

        def received(payload: Any) -> None:
            if isinstance(payload, bytes) and screen is self.screen:
                stream.feed(payload)

        def sent(payload: Any) -> None:
            if isinstance(payload, str) and payload.startswith('["resize"'):
                size = json.loads(payload)[1]
                screen.resize(size["height"], size["width"])

        ws.on("framereceived", received)
        ws.on("framesent", sent)

    def text(self) -> str:
        return "\n".join(line.rstrip() for line in self.screen.display)

    async def wait_for(self, what: str | Callable[[str], bool]) -> str:
        test = (lambda text: what in text) if isinstance(what, str) else what
        deadline = time.monotonic() + HANG_GUARD_S
        while not test(self.text()):
            assert time.monotonic() < deadline, f"never shown: {what!r}\n{self.text()}"
            await asyncio.sleep(0.05)
        return self.text()


async def test_serve_in_chromium_types_without_a_click_streams_queues_and_reloads(
        tmp_path: Path) -> None:
    served = Served(tmp_path, "demo_speed = 1\n")  # turn 1 runs for seconds
    shown = PageScreen()
    try:
        async with async_api.async_playwright() as playwright:
            browser, page = await open_served(playwright, served, tmp_path / "profile", shown)
            try:
                # Typed at once, while the app behind the page is still starting: kept.
                early_screen = shown.text()
                await page.keyboard.type("compare two ")
                await shown.wait_for("→ demo")  # the app is on screen
                # No click anywhere: the page gave its terminal the keyboard.
                await page.wait_for_function(
                    "document.activeElement && "
                    "document.activeElement.classList.contains('xterm-helper-textarea')",
                    timeout=HANG_GUARD_S * 1000)
                await page.keyboard.type("designs for a cache")
                await shown.wait_for("compare two designs for a cache")
                assert "→ demo" not in early_screen  # the first keys did come before the app
                await page.keyboard.press("Enter")
                # The reply streams: the turn runs and its reasoning grows on screen.
                first = await shown.wait_for(lambda t: "running · turn 1" in t
                                             and "thinking…" in t)
                await shown.wait_for(lambda t: "running · turn 1" in t and t != first)
                # A second message while it runs waits in the inbox for the next turn.
                await page.keyboard.type("and a second thought")
                await page.keyboard.press("Enter")
                await shown.wait_for("NEXT TURN · 1")
                roots_before = _roots(served)
                assert len(roots_before) == 1

                # Reload while the turn runs: the page asks first (the app told it that
                # leaving ends work); accepted, the old tab's app quits and a new one
                # starts, which offers the workspace the page left.
                asked: list[str] = []

                async def answer(dialog: Any) -> None:
                    asked.append(dialog.type)
                    await dialog.accept()

                page.on("dialog", answer)
                await page.wait_for_function("document.body.dataset.dshTuiLeave === '1'",
                                             timeout=HANG_GUARD_S * 1000)
                await page.reload()
                assert asked == ["beforeunload"]
                await shown.wait_for(lambda t: shown.sockets == 2 and
                                     "Reopen the workspace this page left?" in t)
                await page.keyboard.press("Escape")  # no: a new workspace
                await shown.wait_for(lambda t: "→ demo" in t and "No messages yet" in t)
                # Nothing to lose in it yet: leaving does not ask.
                await page.wait_for_function("document.body.dataset.dshTuiLeave === '0'",
                                             timeout=HANG_GUARD_S * 1000)
                await page.wait_for_function(
                    "document.activeElement && "
                    "document.activeElement.classList.contains('xterm-helper-textarea')",
                    timeout=HANG_GUARD_S * 1000)
                # shift+enter starts a new line (xterm.js alone sends it as enter: a send).
                await page.keyboard.type("first line")
                await page.keyboard.press("Shift+Enter")
                await page.keyboard.type("second line")
                await shown.wait_for(
                    lambda t: composer_lines(t)[:2] == ["first line", "second line"])
            finally:
                await browser.close()
        await served.wait_no_apps()
        assert set(_roots(served)) == set(roots_before)  # the new workspace saved nothing
        (records,) = _roots(served).values()
        texts = [m["content"][0]["text"] for r in records if r["type"] == "agent/inbox/spliced"
                 for m in r["data"]["inserted"]]
        assert texts == ["compare two designs for a cache", "and a second thought"]
    finally:
        served.stop()


def _roots(served: Served) -> dict[str, list[dict[str, Any]]]:
    """Saved root sessions (a sub-agent's id has its parent's id and a dot)."""
    return {sid: records for sid, records in served.sessions().items() if "." not in sid}
