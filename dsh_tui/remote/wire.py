"""The runtime's unary RPCs: a launch token exchanged for a cookie, then `POST /api/<method>`.

`GET /connect?token=…` answers 302 with a `dsh-auth-…` cookie bound to one in-memory
"operator" peer; that peer may own one WebSocket and is deleted when the socket closes,
so the RPC cookie here and each socket's cookie (`mux.py`) are taken separately. Every
failure becomes a `RemoteError` whose message is one line with no token in it.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import aiohttp

from .endpoint import Endpoint

TIMEOUT = aiohttp.ClientTimeout(total=20, sock_connect=5)


class RemoteError(Exception):
    """A request the runtime refused or could not be reached for: `code` is the runtime's
    (`session/queue-item-not-found`, …) or this client's (`transport`, `unauthorized`)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else self.code


def one_line(text: str, limit: int = 300) -> str:
    """Collapse whitespace so a server's words fit in one notification line."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[:limit - 1] + "…"


def describe_transport(error: BaseException, endpoint: Endpoint) -> str:
    """Why the runtime could not be reached, in a few words, token removed."""
    if isinstance(error, aiohttp.ClientConnectorError):
        return f"cannot reach {endpoint.where} (is the runtime running?)"
    if isinstance(error, TimeoutError):
        return f"{endpoint.where} did not answer in time"
    if isinstance(error, aiohttp.ServerDisconnectedError):
        return f"{endpoint.where} closed the connection"
    name = type(error).__name__
    detail = endpoint.redact(one_line(str(error), 160))
    return f"{endpoint.where}: {name}" + (f" ({detail})" if detail else "")


async def exchange_token(http: aiohttp.ClientSession, endpoint: Endpoint) -> str:
    """Trade the launch token for a fresh peer cookie (`name=value`), as a client does."""
    url = f"{endpoint.base}/connect"
    try:
        async with http.get(url, params={"token": endpoint.token.reveal()},
                            allow_redirects=False, timeout=TIMEOUT) as response:
            if response.status in (401, 403):
                raise RemoteError("unauthorized", f"{endpoint.where} refused the launch token "
                                  "(a runtime makes a new one each start: attach with the "
                                  "line it printed this time)")
            cookie = next((morsel for name, morsel in response.cookies.items()
                           if name.startswith("dsh-auth-")), None)
            if response.status not in (200, 302, 303) or cookie is None:
                raise RemoteError("unauthorized", f"{endpoint.where} answered HTTP "
                                  f"{response.status} without a session cookie: is it a dsh "
                                  "runtime started with --profile web?")
            return f"{cookie.key}={cookie.value}"
    except RemoteError:
        raise
    except (aiohttp.ClientError, TimeoutError, OSError) as error:
        raise RemoteError("transport", describe_transport(error, endpoint)) from None


class RpcClient:
    """Unary calls with one peer cookie; `call` returns the result's `value` or raises."""

    def __init__(self, http: aiohttp.ClientSession, endpoint: Endpoint) -> None:
        self.http = http
        self.endpoint = endpoint
        self._cookie: str | None = None
        self._ids = itertools.count(1)

    async def connect(self) -> None:
        """Take the RPC peer's cookie (again after the runtime forgot it)."""
        self._cookie = await exchange_token(self.http, self.endpoint)

    async def call(self, method: str, args: dict[str, Any]) -> Any:
        """`POST /api/<method>` with `{"args": args}`; a 401 takes a new cookie once."""
        if self._cookie is None:
            await self.connect()
        for attempt in (1, 2):
            status, body = await self._post(method, args)
            if status == 401 and attempt == 1:
                await self.connect()
                continue
            return self._result(method, status, body)
        raise AssertionError("unreachable")

    async def _post(self, method: str, args: dict[str, Any]) -> tuple[int, str]:
        envelope = {"type": "client-request", "rpcId": f"dsh-tui-{next(self._ids)}",
                    "method": method, "payload": {"args": args}}
        headers = {"Cookie": self._cookie or "", "Content-Type": "application/json"}
        try:
            async with self.http.post(f"{self.endpoint.base}/api/{method}",
                                      data=json.dumps(envelope), headers=headers,
                                      timeout=TIMEOUT) as response:
                return response.status, await response.text()
        except (aiohttp.ClientError, TimeoutError, OSError) as error:
            raise RemoteError("transport", describe_transport(error, self.endpoint)) from None

    def _result(self, method: str, status: int, body: str) -> Any:
        try:
            answer = json.loads(body)
        except ValueError:
            answer = None
        result = answer.get("result") if isinstance(answer, dict) else None
        if not isinstance(result, dict):
            raise RemoteError("transport", f"{method}: HTTP {status} "
                              f"{self.endpoint.redact(one_line(body, 120))}")
        if result.get("ok") is True:
            return result.get("value")
        found = result.get("error")
        error: dict[str, Any] = found if isinstance(found, dict) else {}
        code = str(error.get("code") or "error")
        message = one_line(str(error.get("message") or code))
        raise RemoteError(code, self.endpoint.redact(message))
