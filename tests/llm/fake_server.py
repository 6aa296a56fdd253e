"""A loopback HTTP/1.1 server that replays scripted chat-completions answers.

Modelled on upstream's `llm-mock-server`: each accepted request consumes the
next scripted `Reply` (FIFO); an exhausted script answers a structured 500;
every request is recorded (headers and parsed body) for assertions. Replies are
sent as separate writes, so a test controls exactly where the bytes split
(including inside a UTF-8 sequence) and how long the server pauses between
them. A reply can end cleanly, abort mid-body, reset the socket, or hang until
the client hangs up; `Seen.closed` tells a test that the client closed the
connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import http
import json
import socket
import struct
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import transcripts

Ending = Literal["done", "abort", "reset", "hang"]


@dataclass
class Reply:
    """One scripted answer. `parts` are written one by one; a float is a pause (seconds).

    `ending`: "done" finishes the body properly; "abort" closes the socket without
    finishing the chunked body (a cut connection); "reset" closes with TCP RST;
    "hang" keeps the connection open until the client closes it.
    """

    status: int = 200
    parts: Sequence[bytes | float] = ()
    headers: dict[str, str] = field(default_factory=dict)
    ending: Ending = "done"
    chunked: bool = True
    head_delay: float = 0.0  # seconds before the status line (a queued request)


@dataclass
class Seen:
    """One request as the server received it."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    closed: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def json(self) -> Any:
        return json.loads(self.body)


def sse_parts(transcript: str | bytes, *, split: int | None = None,
              pause: float = 0.0) -> list[bytes | float]:
    """A transcript as writes: one per event, or fixed-size byte slices with `split`."""
    data = transcript.encode("utf-8") if isinstance(transcript, str) else transcript
    if split is not None:
        pieces = [data[i:i + split] for i in range(0, len(data), split)]
    else:
        pieces = [event + b"\n\n" for event in data.split(b"\n\n") if event]
        if not data.endswith(b"\n\n") and pieces:  # keep an unterminated tail as sent
            pieces[-1] = pieces[-1][:-2]
    out: list[bytes | float] = []
    for piece in pieces:
        out.append(piece)
        if pause:
            out.append(pause)
    return out


def sse_reply(transcript: str | bytes, **kwargs: Any) -> Reply:
    ending = kwargs.pop("ending", "done")
    return Reply(200, sse_parts(transcript, **kwargs), {"Content-Type": "text/event-stream"},
                 ending=ending)


def json_reply(status: int, body: str | dict[str, Any],
               headers: dict[str, str] | None = None) -> Reply:
    text = body if isinstance(body, str) else json.dumps(body)
    return Reply(status, [text.encode("utf-8")],
                 {"Content-Type": "application/json", **(headers or {})})


def data_lines(payloads: Iterable[str | dict[str, Any]], *, done: bool = True) -> str:
    """`data:` events from JSON texts or objects, optionally ending with `[DONE]`."""
    lines = [p if isinstance(p, str) else json.dumps(p, ensure_ascii=False) for p in payloads]
    return "".join(f"data: {line}\n\n" for line in lines) + ("data: [DONE]\n\n" if done else "")


def deepseek_rejection(seen: Seen, api_key: str | None) -> Reply | None:
    """Reject a request the way the live DeepSeek API does (strict passback mode), or None.

    Mirrors the live API's request validation (docs/contract.md §11.6): a
    wrong bearer is a 401; with thinking on (the default when `thinking` is
    absent) every assistant message must carry `reasoning_content`; assistant
    `content: null` needs `tool_calls`; a tool message must answer an earlier call.
    """
    if api_key is not None and seen.headers.get("authorization") != f"Bearer {api_key}":
        return json_reply(401, transcripts.ERROR_401)
    body = seen.json
    thinking = (body.get("thinking") or {}).get("type", "enabled") == "enabled"
    calls: set[str] = set()
    for message in body.get("messages", []):
        if message.get("role") == "assistant":
            if thinking and "reasoning_content" not in message:
                return json_reply(400, transcripts.ERROR_400_PASSBACK)
            if message.get("content") is None and not message.get("tool_calls"):
                return json_reply(400, {"error": {"message": "content or tool_calls must be set",
                                                  "type": "invalid_request_error"}})
            calls.update(call["id"] for call in message.get("tool_calls", []))
        if message.get("role") == "tool" and message.get("tool_call_id") not in calls:
            return json_reply(400, {"error": {"message": "tool_call_id does not match a call",
                                              "type": "invalid_request_error"}})
    return None


class FakeServer:
    """`async with FakeServer(replies) as server:` then point a provider at `server.base_url`.

    With `deepseek_key` set, every request is first validated like the live API
    (`deepseek_rejection`); a rejected request does not consume a scripted reply.
    """

    def __init__(self, replies: Iterable[Reply] = (), *, deepseek_key: str | None = None,
                 validate: bool = False,
                 responder: Callable[[Seen], Reply] | None = None) -> None:
        self.validate = validate or deepseek_key is not None
        self.responder = responder
        """Answers every request the script does not (a model that reads the prompt)."""
        self.deepseek_key = deepseek_key
        self.script: deque[Reply] = deque(replies)
        self.requests: list[Seen] = []
        self._server: asyncio.base_events.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._tasks: set[asyncio.Task[Any]] = set()

    @property
    def base_url(self) -> str:
        assert self._server is not None
        host, port = self._server.sockets[0].getsockname()[:2]
        return f"http://{host}:{port}"

    def push(self, *replies: Reply) -> None:
        self.script.extend(replies)

    async def __aenter__(self) -> FakeServer:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for writer in list(self._writers):
            writer.transport.abort()
        for task in list(self._tasks):
            task.cancel()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._server.wait_closed(), 1.0)

    # -- one connection ---------------------------------------------------------------------------

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        watcher: asyncio.Task[None] | None = None
        try:
            seen = await self._read_request(reader)
            if seen is None:
                return
            self.requests.append(seen)
            watcher = asyncio.ensure_future(self._watch_close(reader, seen))
            rejection = deepseek_rejection(seen, self.deepseek_key) if self.validate else None
            if rejection is not None:
                reply = rejection
            elif self.script:
                reply = self.script.popleft()
            elif self.responder is not None:
                reply = self.responder(seen)
            else:
                reply = json_reply(500, {"error": {"message": "fake server script exhausted at "
                                                   f"request {len(self.requests)}",
                                                   "type": "server_error"}})
            await self._send(reply, writer, seen)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        except asyncio.CancelledError:
            # Shutdown cancels handlers still streaming; ending normally keeps asyncio's
            # start_server callback (Python 3.11) from reporting the cancellation.
            pass
        finally:
            if watcher is not None:
                watcher.cancel()
            self._writers.discard(writer)
            if task is not None:
                self._tasks.discard(task)
            if not writer.transport.is_closing():
                writer.close()

    @staticmethod
    async def _read_request(reader: asyncio.StreamReader) -> Seen | None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError:
            return None
        lines = head.decode("latin-1").split("\r\n")
        method, path, _ = lines[0].split(" ", 2)
        headers: dict[str, str] = {}
        for line in lines[1:]:
            if line:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
        body = await reader.readexactly(int(headers.get("content-length", "0")))
        return Seen(method, path, headers, body)

    @staticmethod
    async def _watch_close(reader: asyncio.StreamReader, seen: Seen) -> None:
        try:
            while await reader.read(65536):
                pass
        except ConnectionError:
            pass
        seen.closed.set()

    async def _send(self, reply: Reply, writer: asyncio.StreamWriter, seen: Seen) -> None:
        if reply.head_delay:
            await asyncio.sleep(reply.head_delay)
            if seen.closed.is_set():
                return
        phrase = http.HTTPStatus(reply.status).phrase
        head = [f"HTTP/1.1 {reply.status} {phrase}", "Connection: close"]
        headers = {"Content-Type": "text/event-stream", **reply.headers}
        if reply.chunked:
            headers["Transfer-Encoding"] = "chunked"
        head += [f"{name}: {value}" for name, value in headers.items()]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
        await writer.drain()
        for part in reply.parts:
            if seen.closed.is_set():
                return
            if isinstance(part, float | int):
                await asyncio.sleep(part)
                continue
            writer.write(b"%x\r\n%s\r\n" % (len(part), part) if reply.chunked else part)
            await writer.drain()
        if reply.ending == "done":
            if reply.chunked:
                writer.write(b"0\r\n\r\n")
            await writer.drain()
        elif reply.ending == "reset":
            sock = writer.get_extra_info("socket")
            if sock is not None:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            writer.transport.abort()
        elif reply.ending == "hang":
            await seen.closed.wait()
        # "abort": fall through; the connection closes without the final chunk
