"""Server-sent events over raw bytes, split on CR, LF and CRLF only.

httpx's `aiter_lines()` splits with `str.splitlines()`, which also breaks on
U+2028, U+2029, `\\x85` and friends, so a model that writes U+2028 inside a JSON
string would corrupt the payload. This parser therefore works from
`aiter_bytes()`: it decodes UTF-8 incrementally (a multi-byte character may be
split across reads) and recognises only the three line endings the SSE
specification allows, including a CRLF whose CR and LF arrive in different reads.

It reports comments (`: keep-alive`) separately from data events so the caller
can tell transport liveness from content progress. An event is dispatched only on
its terminating blank line: an unterminated tail at end of stream is truncation
and is dropped, never flushed as if complete.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterator
from dataclasses import dataclass

_LINE_END = re.compile(r"\r\n|\r|\n")


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
    """Incremental parser: `feed(bytes)` yields every item completed by those bytes."""

    __slots__ = ("_data", "_decoder", "_event", "_id", "_skip_lf", "_started", "_tail")

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._tail = ""  # text after the last line ending
        self._skip_lf = False  # the previous read ended in CR: a leading LF belongs to it
        self._started = False  # a leading byte-order mark is dropped once
        self._data: list[str] = []
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
        buffer = self._tail + text
        start = 0
        for match in _LINE_END.finditer(buffer):
            end = match.start()
            if match.group() == "\r" and match.end() == len(buffer):
                self._skip_lf = True  # maybe the first half of a CRLF split across reads
            item = self._line(buffer[start:end])
            if item is not None:
                yield item
            start = match.end()
        self._tail = buffer[start:]

    def close(self) -> bool:
        """End of stream; True if a partial line or event was pending (it is discarded)."""
        self._tail += self._decoder.decode(b"", final=True)
        truncated = bool(self._tail) or bool(self._data)
        self._tail = ""
        self._data = []
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
            self._data.append(value)
        elif field == "event":
            self._event = value
        elif field == "id" and "\0" not in value:
            self._id = value
        # "retry" and unknown fields are ignored, as the specification says
        return None

    def _dispatch(self) -> SseEvent | None:
        data, event = self._data, self._event
        self._data, self._event = [], None
        if not data:
            return None
        return SseEvent("\n".join(data), event, self._id)

