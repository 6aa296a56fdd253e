"""`dsh-tui serve`: textual-serve's handlers behind an aiohttp application of our own.

textual-serve builds its aiohttp app in a private method with no hook for middleware, so
this module builds the app itself from textual-serve's public parts: `Server.handle_websocket`
(one app process per tab), `Server.handle_download` and its static folder, plus the page
from `page.Page`. Every request, the WebSocket upgrade included, passes the `guard`
middleware first. Nothing in textual-serve or Textual is patched or subclassed. The page's
socket names its tab (`ws/TAB/LEFT`): that tab's app is started by a `Server` of its own,
whose command sets the tab ids, and `tab/TAB/state` streams what that app reports (`tab`).
"""

from __future__ import annotations

import asyncio
import shlex
import shutil
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from urllib.parse import urlencode

from aiohttp import web
from aiohttp.typedefs import Middleware

from dsh_tui.harness.safe_text import one_line
from dsh_tui.serve.guard import (
    COOKIE_LIFETIME_S,
    FOREIGN_HOST,
    FOREIGN_ORIGIN,
    NO_HOST,
    NOT_SIGNED_IN,
    WILDCARDS,
    WRONG_TOKEN,
    Guard,
    is_loopback,
)
from dsh_tui.serve.page import Page
from dsh_tui.serve.tab import (
    LEFT_VARIABLE,
    RUNTIME_VARIABLE,
    TAB_ID,
    TAB_VARIABLE,
    TabState,
    read_state,
    state_path,
)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

LOGGED = {NOT_SIGNED_IN: "no valid cookie", WRONG_TOKEN: "wrong token",
          FOREIGN_HOST: "host not trusted", FOREIGN_ORIGIN: "another site's page",
          NO_HOST: "no Host header"}
"""Why a request was refused, as the server's own log says it (the answer says more)."""

SECURITY_HEADERS = {
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": "frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
}


def printed_url(bind: str, port: int, token: str) -> str:
    """The link to open: the bound address (127.0.0.1 for every address), with the token."""
    host = bind.strip()
    if host.lower() in WILDCARDS:
        host = "[::1]" if host == "::" else "127.0.0.1"
    elif ":" in host:
        host = f"[{host.strip('[]')}]"
    return f"http://{host}:{port}/?token={token}"


def exposure(bind: str, cwd: Path) -> str | None:
    """What binding `bind` exposes, for stderr; None for a loopback address."""
    if is_loopback(bind):
        return None
    where = ("every address of this machine" if bind.strip().lower() in WILDCARDS
             else bind.strip())
    return one_line(
        f"listening on {where}: whoever reaches this port and has the link runs the agents' "
        f"tools over {cwd}, spends the API key, and opens, exports or deletes every saved "
        "session (f3). The link's token is the only key: keep it private, prefer "
        "127.0.0.1 with an SSH tunnel (README: Serving to a browser)", 600)


class RefusalLog:
    """One stderr line per refused request, at most one a second (the rest counted), so a
    scan of the port cannot flood the terminal. The query (where a token would be) is
    never printed, and the path goes through the one sanitiser."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._last = float("-inf")
        self._held = 0

    def __call__(self, request: web.Request, status: int, reason: str) -> None:
        now = self._clock()
        if now - self._last < 1.0:
            self._held += 1
            return
        more = f" (and {self._held} more refused)" if self._held else ""
        self._last, self._held = now, 0
        where = one_line(f"{request.method} {request.path}", 120)
        why = LOGGED.get(reason, reason)
        if reason == FOREIGN_HOST:
            why += f" ({one_line(request.headers.get('Host', ''), 80)}; --trusted-host NAME)"
        elif reason == FOREIGN_ORIGIN:
            origin = request.headers.get("Origin")
            site = request.headers.get("Sec-Fetch-Site")
            why += (f" (Origin {one_line(origin, 80)})" if origin
                    else f" (Sec-Fetch-Site {one_line(site or '', 20)})")
        print(f"dsh-tui serve: refused {where} from {request.remote} ({status}): {why}{more}",
              file=sys.stderr, flush=True)


def _refused(status: int, reason: str) -> web.Response:
    return web.Response(status=status, text=f"dsh-tui serve: {reason}\n")


def guard_middleware(guard: Guard, log: Callable[[web.Request, int, str], None]) -> Middleware:
    """Refuse what `guard` refuses; exchange a right `?token=` on the page for a cookie."""

    @web.middleware
    async def check(request: web.Request, handler: Handler) -> web.StreamResponse:
        reason = guard.refuse_origin(request.headers)
        if reason is not None:
            log(request, 403, reason)
            return _refused(403, reason)
        if request.path == "/" and "token" in request.query:
            if not guard.token_matches(request.query["token"]):
                log(request, 401, WRONG_TOKEN)
                return _refused(401, WRONG_TOKEN)
            rest = [(k, v) for k, v in request.query.items() if k != "token"]
            # Relative, so it holds behind a proxy's path prefix; the token leaves the URL.
            response = web.Response(status=303, text="signed in\n", headers={
                "Location": "./" + (f"?{urlencode(rest)}" if rest else "")})
            response.set_cookie(guard.cookie_name, guard.new_cookie(), path="/",
                                max_age=COOKIE_LIFETIME_S, httponly=True, samesite="Strict",
                                secure=request.secure)
            return response
        if not guard.cookie_valid(request.cookies.get(guard.cookie_name)):
            log(request, 401, NOT_SIGNED_IN)
            return _refused(401, NOT_SIGNED_IN)
        return await handler(request)

    return check


async def _security_headers(request: web.Request, response: web.StreamResponse) -> None:
    for name, value in SECURITY_HEADERS.items():
        response.headers.setdefault(name, value)


STATE_POLL_S = 0.1
"""How often a tab's state file is checked while its page listens."""
KEEPALIVE_S = 10.0
"""A comment line this often on a quiet state stream: a page gone is noticed."""


def tab_command(command: str, runtime: Path, tab: str, left: str | None) -> str:
    """`command` with the tab's variables set (the ids are validated hex, the path quoted)."""
    assigns = [f"{RUNTIME_VARIABLE}={shlex.quote(str(runtime))}", f"{TAB_VARIABLE}={tab}"]
    if left is not None:
        assigns.append(f"{LEFT_VARIABLE}={left}")
    return " ".join([*assigns, command])


class TabStreams:
    """The `tab/TAB/state` streams: each sends the tab's state when its file changes."""

    def __init__(self, runtime: Path) -> None:
        self.runtime = runtime
        self.stopping = asyncio.Event()

    async def handle(self, request: web.Request) -> web.StreamResponse:
        tab = request.match_info["tab"]
        if not TAB_ID.fullmatch(tab):
            raise web.HTTPNotFound(text="dsh-tui serve: no such tab\n")
        path = state_path(self.runtime, tab)
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream",
                                               "X-Accel-Buffering": "no"})
        await response.prepare(request)
        seen: tuple[int, int] | None = None
        sent: TabState | None = None
        quiet = 0.0
        try:
            while not self.stopping.is_set():
                try:
                    stat = path.stat()
                    mark: tuple[int, int] | None = (stat.st_mtime_ns, stat.st_size)
                except OSError:
                    mark = None
                if sent is None or mark != seen:
                    seen = mark
                    state = read_state(path) or TabState()
                    if state != sent:
                        await response.write(f"data: {state.to_json()}\n\n".encode())
                        sent, quiet = state, 0.0
                if quiet >= KEEPALIVE_S:
                    await response.write(b": still here\n\n")
                    quiet = 0.0
                try:
                    await asyncio.wait_for(self.stopping.wait(), STATE_POLL_S)
                except TimeoutError:
                    quiet += STATE_POLL_S
        except (ConnectionResetError, ConnectionError):
            pass  # the page went away
        return response

    async def stop(self, _app: web.Application) -> None:
        self.stopping.set()


def build_app(command: str, guard: Guard, *, title: str = "dsh-tui",
              log: Callable[[web.Request, int, str], None] | None = None,
              runtime: Path | None = None) -> web.Application:
    """The application: the page, textual-serve's websocket, downloads and assets, all
    behind `guard`; with a `runtime` directory, each tab's socket and state stream."""
    from textual_serve.server import Server

    server = Server(command, title=title)
    page = Page(title)

    async def index(request: web.Request) -> web.Response:
        try:
            font_size = min(max(int(request.query.get("fontsize", "16")), 6), 64)
        except ValueError:
            font_size = 16
        return web.Response(text=page.render(font_size), content_type="text/html")

    app = web.Application(middlewares=[guard_middleware(guard, log or RefusalLog())])
    app.add_routes([
        web.get("/", index, name="index"),
        web.get("/ws", server.handle_websocket, name="websocket"),
        web.get("/download/{key}", server.handle_download, name="download"),
        web.static("/static", server.statics_path, name="static"),
    ])
    if runtime is not None:
        streams = TabStreams(runtime)

        async def tab_socket(request: web.Request) -> web.StreamResponse:
            tab, left = request.match_info["tab"], request.match_info.get("left")
            if not TAB_ID.fullmatch(tab) or (left is not None and not TAB_ID.fullmatch(left)):
                raise web.HTTPNotFound(text="dsh-tui serve: no such tab\n")
            tab_server = Server(tab_command(command, runtime, tab, left), title=title)
            tab_server.download_manager = server.download_manager  # one /download/ for all
            return await tab_server.handle_websocket(request)

        app.add_routes([
            web.get("/ws/{tab}", tab_socket),
            web.get("/ws/{tab}/{left}", tab_socket),
            web.get("/tab/{tab}/state", streams.handle),
        ])
        app.on_shutdown.append(streams.stop)
    app.on_response_prepare.append(_security_headers)
    app.on_shutdown.append(server.on_shutdown)
    return app


def serve(command: str, *, host: str, port: int, trusted_hosts: Iterable[str] = ()) -> None:
    """Run until SIGINT/SIGTERM. Prints the link (with the token) once, on stdout, when the
    port is listening; raises OSError if it cannot listen."""
    guard = Guard(port=port, bind=host, trusted_hosts=trusted_hosts)

    def announce(*_: object) -> None:
        print(f"dsh-tui serve: {printed_url(host, port, guard.token)}", flush=True)

    runtime = Path(tempfile.mkdtemp(prefix="dsh-tui-serve-"))  # 0700: this user's only
    try:
        web.run_app(build_app(command, guard, runtime=runtime), host=host or None, port=port,
                    access_log=None, print=announce, handle_signals=True)
    finally:
        shutil.rmtree(runtime, ignore_errors=True)
