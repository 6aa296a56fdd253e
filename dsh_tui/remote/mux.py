"""The runtime's one WebSocket (`/api/remote.mux`), its streams, and coming back after a drop.

Streams are opened with `{"type":"open","streamId","endpoint","payload":{"args"}}` and
answered with `item`, `end` or `error` frames; every frame goes to its stream's handlers
in the order it arrived, on one reader task. A socket owns a runtime peer that dies with
it, so each (re)connection takes a fresh cookie. When the socket drops, every stream is
told (`on_reset`), the mux says `reconnecting`, retries with growing delays, and reopens
every stream it still has; each stream's `args()` is read again at that moment, so a
follower can ask for what it is missing.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from .endpoint import Endpoint
from .wire import RemoteError, describe_transport, exchange_token, one_line

log = logging.getLogger("dsh_tui.remote.mux")

BACKOFF_FIRST = 0.1
BACKOFF_MAX = 3.0
HEARTBEAT = 20.0
"""Seconds between this client's own pings (a silent dead socket is noticed by then)."""


def _ignore(*_args: Any) -> None:
    return None


@dataclass(eq=False)
class Stream:
    """One stream: what to open, and who hears its frames."""

    endpoint: str
    args: Callable[[], dict[str, Any]]
    on_item: Callable[[Any], None]
    on_error: Callable[[RemoteError], None] = _ignore
    on_end: Callable[[], None] = _ignore
    on_reset: Callable[[], None] = _ignore
    id: str = ""
    open: bool = field(default=False)


StateListener = Callable[[str, str], None]
"""`(state, detail)`: `connected`, `reconnecting` (detail: the last failure) or `closed`."""


class Mux:
    """`await mux.start()` connects (raising RemoteError on failure); `open(stream)` and
    `end(stream)` manage streams; `drop()` cuts the socket as a network failure would
    (tests, benchmarks); `close()` ends everything for good."""

    def __init__(self, http: aiohttp.ClientSession, endpoint: Endpoint,
                 on_state: StateListener = _ignore) -> None:
        self.http = http
        self.endpoint = endpoint
        self.on_state = on_state
        self.streams: dict[str, Stream] = {}
        self.reconnects = 0
        self._ws: aiohttp.ClientWebSocketResponse | None = None
        self._task: asyncio.Task[None] | None = None
        self._counter = 0
        self._closing = False
        self._connected = asyncio.Event()

    # -- lifecycle ------------------------------------------------------------------------------

    async def start(self) -> None:
        """Open the first socket; raises RemoteError (one line, no token) if it cannot."""
        self._ws = await self._connect()
        self._connected.set()
        self._task = asyncio.create_task(self._run(), name="dsh-tui remote mux")

    async def close(self) -> None:
        """End every stream and the socket; nothing reconnects afterwards."""
        self._closing = True
        ws, self._ws = self._ws, None
        if ws is not None:
            with contextlib.suppress(Exception):
                await ws.close()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
        self.on_state("closed", "")

    async def drop(self) -> None:
        """Cut the socket the way a network failure does: the mux reconnects by itself."""
        ws = self._ws
        if ws is not None:
            await ws.close(code=aiohttp.WSCloseCode.GOING_AWAY)

    async def wait_connected(self, timeout: float) -> bool:
        """Wait (bounded) until a socket is up; False on timeout."""
        try:
            await asyncio.wait_for(self._connected.wait(), timeout)
        except TimeoutError:
            return False
        return True

    @property
    def connected(self) -> bool:
        """Whether a socket is up now."""
        return self._connected.is_set()

    # -- streams --------------------------------------------------------------------------------

    def open(self, stream: Stream) -> Stream:
        """Register `stream` and open it now if the socket is up (else at reconnection)."""
        self._counter += 1
        stream.id = f"s{self._counter}"
        self.streams[stream.id] = stream
        if self._ws is not None and self._connected.is_set():
            self._send_open(stream)
        return stream

    def end(self, stream: Stream) -> None:
        """Stop hearing `stream` and tell the runtime (best effort)."""
        if self.streams.pop(stream.id, None) is None:
            return
        if stream.open:
            stream.open = False
            self._send({"type": "cancel", "streamId": stream.id})

    def _send_open(self, stream: Stream) -> None:
        stream.open = True
        self._send({"type": "open", "streamId": stream.id, "endpoint": stream.endpoint,
                    "payload": {"args": stream.args()}})

    def _send(self, frame: dict[str, Any]) -> None:
        ws = self._ws
        if ws is None or ws.closed:
            return
        task = asyncio.ensure_future(ws.send_str(json.dumps(frame)))
        task.add_done_callback(_quiet)

    # -- the socket -----------------------------------------------------------------------------

    async def _connect(self) -> aiohttp.ClientWebSocketResponse:
        cookie = await exchange_token(self.http, self.endpoint)
        try:
            return await self.http.ws_connect(
                f"{self.endpoint.base}/api/remote.mux", headers={"Cookie": cookie},
                heartbeat=HEARTBEAT, max_msg_size=0, autoping=True)
        except (aiohttp.ClientError, TimeoutError, OSError) as error:
            raise RemoteError("transport", describe_transport(error, self.endpoint)) from None

    async def _run(self) -> None:
        while not self._closing:
            ws = self._ws
            if ws is not None:
                await self._read(ws)
            if self._closing:
                return
            self._connected.clear()
            for stream in list(self.streams.values()):
                stream.open = False
                self._safely(stream.on_reset)
            await self._reconnect()

    async def _read(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        try:
            async for message in ws:
                if message.type == aiohttp.WSMsgType.TEXT:
                    self._dispatch(message.data)
                elif message.type in (aiohttp.WSMsgType.ERROR, aiohttp.WSMsgType.CLOSE):
                    break
        except (TimeoutError, aiohttp.ClientError, OSError) as error:
            log.info("remote socket failed: %s", self.endpoint.redact(str(error)))
        finally:
            with contextlib.suppress(Exception):
                await ws.close()

    async def _reconnect(self) -> None:
        delay = BACKOFF_FIRST
        detail = "the connection dropped"
        while not self._closing:
            self.on_state("reconnecting", detail)
            await asyncio.sleep(delay * (0.8 + 0.4 * random.random()))
            try:
                self._ws = await self._connect()
            except RemoteError as error:
                detail = str(error)
                delay = min(BACKOFF_MAX, delay * 2)
                continue
            self.reconnects += 1
            self._connected.set()
            self.on_state("connected", "")
            for stream in list(self.streams.values()):
                self._send_open(stream)
            return

    def _dispatch(self, text: str) -> None:
        try:
            frame = json.loads(text)
        except ValueError:
            log.warning("remote sent a frame that is not JSON (%d bytes)", len(text))
            return
        if not isinstance(frame, dict):
            return
        stream = self.streams.get(str(frame.get("streamId")))
        if stream is None:
            return
        kind = frame.get("type")
        if kind == "item":
            self._safely(stream.on_item, frame.get("value"))
        elif kind == "error":
            found = frame.get("error")
            error: dict[str, Any] = found if isinstance(found, dict) else {}
            stream.open = False
            self.streams.pop(stream.id, None)
            self._safely(stream.on_error, RemoteError(
                str(error.get("code") or "error"),
                self.endpoint.redact(one_line(str(error.get("message") or "stream failed")))))
        elif kind == "end":
            stream.open = False
            self.streams.pop(stream.id, None)
            self._safely(stream.on_end)

    @staticmethod
    def _safely(handler: Callable[..., Any], *args: Any) -> None:
        try:
            handler(*args)
        except Exception:
            log.exception("remote stream handler failed")


def _quiet(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()
