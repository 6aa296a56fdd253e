"""Server-sent events over raw bytes, split on CR, LF and CRLF only.

httpx's `aiter_lines()` splits with `str.splitlines()`, which also breaks on U+2028,
U+2029, `\\x85` and friends, so a model that writes U+2028 inside a JSON string would
corrupt the payload. This parser works from `aiter_bytes()` and recognises only the three
line endings the SSE specification allows; every line and event is bounded
(`StreamLimits`), since a server that never ends a line once took 858 MB. What it
dispatches and when is on `SseParser`.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterator
from dataclasses import dataclass

_LINE_END = re.compile(r"\r\n|\r|\n")

MIB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class StreamLimits:
    """Bounds on what one streamed reply may make this process hold (README: "Limits").

    `line`: characters of one SSE line (a whole tool call's arguments sent in one event
    fit easily); `event`: characters of one event's data lines together; `reply`: bytes
    of one reply body after decompression (the longest answer DeepSeek allows, 393,216
    tokens at a few hundred bytes of SSE each, stays under it). Exceeding any of them
    fails the attempt with `RESPONSE_TOO_LARGE`, which is not retried."""

    line: int = 8 * MIB
    event: int = 16 * MIB
    reply: int = 256 * MIB


class SseTooLarge(ValueError):
    """A line or an event passed its bound; the message says which and the bound."""


@dataclass(frozen=True, slots=True)
class SseEvent:
    """One dispatched event: `data` lines joined with `\\n`; `event` and `id` as sent."""

    data: str
    event: str | None = None
    id: str | None = None


@dataclass(frozen=True, slots=True)
class SseComment:
    """A comment line (the text after the colon); servers send these as keep-alives."""

    text: str


SseItem = SseEvent | SseComment


class SseParser:
    """Incremental parser: `feed(bytes)` yields every item completed by those bytes.

    An unfinished line is kept as a list of parts and joined once its end arrives, so a
    long line costs linear time; its length is checked as it grows.

    UTF-8 is decoded incrementally (a multi-byte character may be split across reads),
    and a CRLF whose CR and LF arrive in different reads is one line end. Comments
    (`: keep-alive`) are reported apart from data events, so the caller can tell transport
    liveness from content progress. An event is dispatched only on its terminating blank
    line: an unterminated tail at end of stream is truncation and is dropped, never
    flushed as if complete. A line or an event longer than its bound raises
    `SseTooLarge`: a server that never ends a line once took memory to 858 MB at 100 % CPU.
    """

    __slots__ = ("_data", "_data_size", "_decoder", "_event", "_id", "_limits", "_skip_lf",
                 "_started", "_tail", "_tail_size")

    def __init__(self, limits: StreamLimits | None = None) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._limits = limits if limits is not None else StreamLimits()
        self._tail: list[str] = []  # text after the last line ending, in parts
        self._tail_size = 0
        self._skip_lf = False  # the previous read ended in CR: a leading LF belongs to it
        self._started = False  # a leading byte-order mark is dropped once
        self._data: list[str] = []
        self._data_size = 0
        self._event: str | None = None
        self._id: str | None = None

    def feed(self, chunk: bytes) -> Iterator[SseItem]:
        text = self._decoder.decode(chunk)
        if not text:
            return
        if not self._started:
            self._started = True
            if text.startswith("\ufeff"):
                text = text[1:]
        if self._skip_lf:
            self._skip_lf = False
            if text.startswith("\n"):
                text = text[1:]
        start = 0
        for match in _LINE_END.finditer(text):
            end = match.start()
            if match.group() == "\r" and match.end() == len(text):
                self._skip_lf = True  # maybe the first half of a CRLF split across reads
            self._check_line(end - start)
            line = text[start:end]
            if self._tail:
                line = "".join(self._tail) + line
                self._tail, self._tail_size = [], 0
            item = self._line(line)
            if item is not None:
                yield item
            start = match.end()
        if start < len(text):
            self._check_line(len(text) - start)
            self._tail.append(text[start:])
            self._tail_size += len(text) - start

    def _check_line(self, adding: int) -> None:
        if self._tail_size + adding > self._limits.line:
            self._tail, self._tail_size = [], 0
            bound = size_text(self._limits.line, "characters")
            raise SseTooLarge(f"an SSE line longer than {bound}")

    def close(self) -> bool:
        """End of stream; True if a partial line or event was pending (it is discarded)."""
        rest = self._decoder.decode(b"", final=True)
        truncated = bool(self._tail) or bool(rest) or bool(self._data)
        self._tail, self._tail_size = [], 0
        self._data, self._data_size = [], 0
        return truncated

    def _line(self, line: str) -> SseItem | None:
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            return SseComment(line[1:].removeprefix(" "))
        field, colon, value = line.partition(":")
        if colon:
            value = value.removeprefix(" ")
        if field == "data":
            self._data_size += len(value) + 1
            if self._data_size > self._limits.event:
                self._data, self._data_size = [], 0
                bound = size_text(self._limits.event, "characters")
                raise SseTooLarge(f"an SSE event larger than {bound}")
            self._data.append(value)
        elif field == "event":
            self._event = value
        elif field == "id" and "\0" not in value:
            self._id = value
        # "retry" and unknown fields are ignored, as the specification says
        return None

    def _dispatch(self) -> SseEvent | None:
        data, event = self._data, self._event
        self._data, self._data_size, self._event = [], 0, None
        if not data:
            return None
        return SseEvent("\n".join(data), event, self._id)



def size_text(count: int, unit: str = "bytes") -> str:
    """A bound for a message: "8 MiB", "1,000 characters"."""
    if count >= MIB and count % MIB == 0:
        return f"{count // MIB} MiB"
    return f"{count:,} {unit}"
