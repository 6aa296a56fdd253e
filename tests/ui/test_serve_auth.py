"""`dsh-tui serve` lets in only the holder of the link it printed, through a host the person
chose: a real server process, a real HTTP client (httpx) and a real WebSocket client
(aiohttp), as a browser and as an attacker would send them."""

from __future__ import annotations

import re
from pathlib import Path

import aiohttp
import httpx
import pytest

from dsh_tui.serve.guard import COOKIE_LIFETIME_S, Guard, host_name
from dsh_tui.serve.server import printed_url

from .served import Served, served_tab

ASSETS = ("/static/js/textual.js", "/static/css/xterm.css")
TAB = "0123456789abcdef0123456789abcdef"
TAB_SOCKET = f"/ws/{TAB}/{TAB[::-1]}?width=80&height=24"
"""The socket dsh-tui's page opens (its tab and the one it replaced); `tab/TAB/state` is
the stream of what the tab's app reports."""


async def ws_status(served: Served, headers: dict[str, str], origin: str | None = None,
                    path: str = "/ws?width=80&height=24") -> int:
    """101 if the WebSocket upgrade was accepted (then closed at once), else the refusal."""
    try:
        async with aiohttp.ClientSession() as session, session.ws_connect(
                served.base + path, headers=headers, origin=origin):
            return 101
    except aiohttp.WSServerHandshakeError as error:
        return error.status


async def get(served: Served, path: str, **headers: str) -> httpx.Response:
    async with httpx.AsyncClient() as client:
        return await client.get(served.base + path, headers=headers)


def forged(cookie: str) -> list[str]:
    """Cookies a guesser could send: the signature altered, the time altered, none."""
    name, value = cookie.split("=", 1)
    issued, signature = value.split(".", 1)
    flipped = ("A" if signature[0] != "A" else "B") + signature[1:]
    return [f"{name}={issued}.{flipped}", f"{name}={int(issued) - 1}.{signature}",
            f"{name}={issued}", f"{name}=", f"other={value}"]


async def test_without_the_cookie_every_request_is_refused(tmp_path: Path) -> None:
    served = Served(tmp_path, "demo_speed = 0\n")
    try:
        token = await served.token()
        cookie = await served.cookie()
        for cookie_header in [None, *forged(cookie)]:
            headers = {"Cookie": cookie_header} if cookie_header else {}
            for path in ("/", *ASSETS, "/download/abc", "/nowhere", f"/tab/{TAB}/state"):
                answer = await get(served, path, **headers)
                assert answer.status_code == 401, (path, cookie_header)
                assert answer.text.count("\n") == 1 and token not in answer.text
                assert "set-cookie" not in answer.headers
            assert await ws_status(served, headers) == 401
            assert await ws_status(served, headers, path=TAB_SOCKET) == 401
        assert served.apps() == []  # no refused socket started an app
        # The cookie itself does let in (so the refusals above are the cookie's doing).
        assert (await get(served, "/", Cookie=cookie)).status_code == 200
    finally:
        served.stop()


async def test_a_wrong_token_is_refused_and_only_the_page_exchanges_one(tmp_path: Path,
                                                                        ) -> None:
    served = Served(tmp_path, "demo_speed = 0\n")
    try:
        token = await served.token()
        near = ("A" if token[0] != "A" else "B") + token[1:]
        for wrong in ("", "wrong", near, token + "x", token[:-1]):
            answer = await get(served, f"/?token={wrong}")
            assert answer.status_code == 401 and "set-cookie" not in answer.headers
            assert token not in answer.text
        # The token is exchanged by the page alone: not taken by an asset or the socket.
        assert (await get(served, f"{ASSETS[0]}?token={token}")).status_code == 401
        assert await ws_status(served, {}, path=f"/ws?token={token}") == 401
        assert served.apps() == []
    finally:
        served.stop()


async def test_foreign_hosts_origins_and_sites_are_refused_even_signed_in(tmp_path: Path,
                                                                          ) -> None:
    served = Served(tmp_path, "demo_speed = 0\n")
    try:
        token = await served.token()
        cookie = await served.cookie()
        own = served.base  # http://127.0.0.1:PORT
        port = served.port
        refused: list[dict[str, str]] = [
            {"Host": f"evil.example:{port}"},  # DNS rebinding: a name that resolves here
            {"Host": f"127.0.0.1.evil.example:{port}"},
            {"Host": f"evil.example:{port}", "Origin": f"http://evil.example:{port}"},
            {"Origin": "https://evil.example"},  # another site's page
            {"Origin": f"http://localhost:{port + 1 if port < 65535 else port - 1}"},
            {"Origin": f"http://127.0.0.1:{port + 1 if port < 65535 else port - 1}"},
            {"Origin": "null"},
            {"Sec-Fetch-Site": "cross-site"},
            {"Sec-Fetch-Site": "same-site"},  # another port of localhost is the same site
        ]
        for extra in refused:
            origin = extra.pop("Origin", None)
            headers = {"Cookie": cookie, **extra}
            with_origin = {**headers, **({"Origin": origin} if origin else {})}
            for path in ("/", *ASSETS, f"/tab/{TAB}/state"):
                answer = await get(served, path, **with_origin)
                assert answer.status_code == 403, (path, extra, origin)
                assert token not in answer.text
            assert await ws_status(served, headers, origin=origin) == 403, (extra, origin)
            assert await ws_status(served, headers, origin=origin, path=TAB_SOCKET) == 403
            # Nor can a rebinding page exchange the token for a cookie.
            exchange = await get(served, f"/?token={token}", **with_origin)
            assert exchange.status_code == 403 and "set-cookie" not in exchange.headers
        assert served.apps() == []
        # The same requests from the page itself are answered.
        for path in ("/", *ASSETS):
            answer = await get(served, path, Cookie=cookie, Origin=own,
                               **{"Sec-Fetch-Site": "same-origin"})
            assert answer.status_code == 200
        for host in (f"localhost:{port}", f"127.0.0.1:{port}"):
            answer = await get(served, "/", Cookie=cookie, Host=host)
            assert answer.status_code == 200
        assert await ws_status(served, {"Cookie": cookie}, origin=own) == 101
        await served.wait_no_apps()
    finally:
        served.stop()
    # Refusals are reported on stderr, without the token or the query it travels in.
    err = served.stderr.read_text()
    assert "refused GET / from 127.0.0.1 (403): host not trusted (evil.example:" in err
    assert token not in err


async def test_signed_in_the_page_its_assets_and_the_socket_work_and_the_token_stays_secret(
        tmp_path: Path) -> None:
    served = Served(tmp_path, "demo_speed = 0\n")
    try:
        url = await served.url()
        token = await served.token()
        assert url == f"http://127.0.0.1:{served.port}/?token={token}"
        assert len(token) >= 43  # 32 random bytes
        async with httpx.AsyncClient() as client:
            exchange = await client.get(url + "&fontsize=18")
        assert exchange.status_code == 303
        # The token leaves the address bar; the other parameters stay.
        assert exchange.headers["location"] == "./?fontsize=18"
        set_cookie = exchange.headers["set-cookie"]
        assert token not in set_cookie
        attributes = {part.strip().split("=")[0].lower() for part in set_cookie.split(";")}
        assert {"httponly", "path", "samesite"} <= attributes
        assert "samesite=strict" in set_cookie.lower()
        cookie = set_cookie.split(";", 1)[0]
        page = await get(served, "/?fontsize=18", Cookie=cookie)
        assert page.status_code == 200 and "<div>dsh-tui</div>" in page.text
        assert token not in page.text and 'data-font-size="18"' in page.text
        assert page.headers["referrer-policy"] == "no-referrer"
        # Every asset the page names loads, relative to the page.
        assets = re.findall(r'(?:href|src)="(static/[^"]+)"', page.text)
        assert {"static/js/textual.js", "static/css/xterm.css"} <= set(assets)
        for asset in assets:
            assert (await get(served, "/" + asset, Cookie=cookie)).status_code == 200
        async with served_tab(served) as tab:
            for pid in served.apps():  # the apps never see the token
                proc = Path(f"/proc/{pid}")
                assert token.encode() not in (proc / "environ").read_bytes()
                assert token.encode() not in (proc / "cmdline").read_bytes()
            await tab.type("hello from a signed-in tab\r")
            await tab.wait_for("turn 1")
        await served.wait_no_apps()
        (records,) = [r for sid, r in served.sessions().items() if "." not in sid]  # the root
        texts = [m["content"][0]["text"] for r in records if r["type"] == "agent/inbox/spliced"
                 for m in r["data"]["inserted"]]
        assert texts == ["hello from a signed-in tab"]
    finally:
        served.stop()
    out = served.stdout.read_text()
    assert out.count(token) == 1 and f"dsh-tui serve: {url}\n" in out
    assert token not in served.stderr.read_text()
    for path in tmp_path.rglob("*"):
        if path.is_file() and path not in (served.stdout,):
            assert token.encode() not in path.read_bytes(), path


async def test_served_on_every_address_the_page_uses_the_address_it_was_reached_by(
        tmp_path: Path) -> None:
    served = Served(tmp_path, "demo_speed = 0\n", host="0.0.0.0")
    try:
        url = await served.url()
        assert url.startswith(f"http://127.0.0.1:{served.port}/?token=")
        cookie = await served.cookie()
        page = await get(served, "/", Cookie=cookie)
        assert page.status_code == 200
        assert "0.0.0.0" not in page.text and "127.0.0.1" not in page.text
        assert 'src="static/js/textual.js"' in page.text
        assert 'var path = "ws/" + tab' in page.text
        assert "new URL(path, window.location.href)" in page.text
        # Reached through another address of the machine: an IP literal cannot be a
        # rebinding attack, so it is answered; a name still has to be trusted.
        assert (await get(served, "/", Cookie=cookie,
                          Host=f"192.0.2.7:{served.port}")).status_code == 200
        assert (await get(served, "/", Cookie=cookie,
                          Host=f"evil.example:{served.port}")).status_code == 403
        async with served_tab(served):
            pass
        await served.wait_no_apps()
    finally:
        served.stop()
    err = served.stderr.read_text()
    assert "listening on every address of this machine" in err
    assert "spends the API key" in err and "f3" in err


async def test_a_trusted_host_is_answered_and_others_are_not(tmp_path: Path) -> None:
    served = Served(tmp_path, "demo_speed = 0\n", "--trusted-host", "dsh.example",
                    "--trusted-host", "Proxy.Example.:443")
    try:
        cookie = await served.cookie()
        port = served.port
        for name in ("dsh.example", "proxy.example"):
            answer = await get(served, "/", Cookie=cookie, Host=f"{name}:{port}",
                               Origin=f"http://{name}:{port}")
            assert answer.status_code == 200, name
        assert await ws_status(served, {"Cookie": cookie, "Host": f"dsh.example:{port}"},
                               origin=f"http://dsh.example:{port}") == 101
        # A trusted name is not a wildcard: its subdomains and lookalikes are refused.
        for name in ("evil.dsh.example", "dsh.example.evil", "dshexample"):
            answer = await get(served, "/", Cookie=cookie, Host=f"{name}:{port}")
            assert answer.status_code == 403, name
        await served.wait_no_apps()
    finally:
        served.stop()


@pytest.mark.parametrize(("header", "name"), [
    ("127.0.0.1:8000", "127.0.0.1"), ("[::1]:8000", "::1"), ("LocalHost.", "localhost"),
    ("[::1]", "::1"), ("example.com", "example.com"), ("a:b", None), ("[::1", None),
    ("[::1]x", None), ("::1", None), ("", None)])
def test_host_header_names(header: str, name: str | None) -> None:
    assert host_name(header) == name


def test_a_cookie_ends_with_its_lifetime_and_with_its_process() -> None:
    now = [1_000_000.0]
    guard = Guard(port=8000, bind="127.0.0.1", clock=lambda: now[0])
    cookie = guard.new_cookie()
    assert guard.cookie_valid(cookie)
    now[0] += COOKIE_LIFETIME_S + 1
    assert not guard.cookie_valid(cookie)
    # Another process (another key) does not take it, even at the same moment.
    other = Guard(port=8000, bind="127.0.0.1", clock=lambda: 1_000_000.0)
    assert not other.cookie_valid(cookie)
    assert guard.token != other.token


def test_the_printed_link_names_an_address_a_browser_can_open() -> None:
    assert printed_url("0.0.0.0", 80, "T") == "http://127.0.0.1:80/?token=T"
    assert printed_url("::", 80, "T") == "http://[::1]:80/?token=T"
    assert printed_url("::1", 80, "T") == "http://[::1]:80/?token=T"
    assert printed_url("box.lan", 80, "T") == "http://box.lan:80/?token=T"
