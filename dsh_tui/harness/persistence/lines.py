"""Events to log lines, with each huge string JSON-encoded once.

A model that sends one 5 MB delta puts the same text into three events (the chunk, the
block end, the assembled message), and encoding each whole stalled the event loop (see
docs/performance.md). A record holding a string of `BIG` or more characters is encoded
piecewise, each huge string once per writer, and the batch is never copied into one
buffer; every other record goes through the C encoder. The bytes are the same either way
(`dumps_compact`, JavaScript's JSON.stringify); tests/persistence/test_lines.py checks it.
"""

from __future__ import annotations

from collections.abc import Mapping
from json.encoder import encode_basestring  # the C one where available
from types import MappingProxyType
from typing import Any

import orjson

from ..jsonvalue import dumps_compact, fix_surrogates, thaw_json
from ..session import SessionEvent

BIG = 1 << 16
"""Strings at least this long (in characters) are encoded once and written as their own piece."""

_CACHE_KEEP = 4


def _has_big(value: Any, big: int) -> bool:
    """Whether `value` holds a string of `big` characters or more (type checks only: this
    runs for every event written, most of them a few small fields)."""
    stack = [value]
    pop, extend = stack.pop, stack.extend
    while stack:
        item = pop()
        kind = type(item)
        if kind is str:
            if len(item) >= big:
                return True
        elif kind is dict or kind is MappingProxyType:
            extend(item.values())
        elif kind is list or kind is tuple:
            extend(item)
        elif isinstance(item, str) and len(item) >= big:
            return True
    return False


def _text_bytes(text: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return fix_surrogates(text).encode("utf-8")


class LineEncoder:
    """Turns events into the bytes of their log lines; remembers its last few huge strings.

    A record holding a string of `big` or more characters is encoded piecewise: the small
    skeleton as text, each huge string as bytes from this cache, so the chunk, block end
    and message holding one text share one encoding.
    """

    def __init__(self, big: int = BIG) -> None:
        self.big = big
        self._encoded: dict[str, bytes] = {}

    def encode(self, events: list[SessionEvent]) -> list[bytes]:
        """The lines of `events` (each ending in a newline) as a few byte pieces, in order.

        A batch without a huge string forgets the remembered ones, so their bytes live
        only as long as the reply that produced them is being written.
        """
        pieces: list[bytes] = []
        text: list[str] = []
        found_big = False
        for event in events:
            record = event.to_json()
            if _has_big(record["data"], self.big):
                found_big = True
                self._pieces(record, text, pieces)
                text.append("\n")
            else:
                text.append(_plain_line(record))
                text.append("\n")
        if text:
            pieces.append(_text_bytes("".join(text)))
        if not found_big:
            self._encoded.clear()
        return pieces

    def _big(self, value: str) -> bytes:
        encoded = self._encoded.get(value)
        if encoded is None:
            encoded = _big_bytes(value)
            while len(self._encoded) >= _CACHE_KEEP:
                del self._encoded[next(iter(self._encoded))]
            self._encoded[value] = encoded
        return encoded

    def _pieces(self, value: Any, text: list[str], pieces: list[bytes]) -> None:
        """Append `value`'s compact JSON: small parts to `text`, huge strings as bytes."""
        kind = type(value)
        if kind is str or isinstance(value, str):
            if len(value) >= self.big:
                if text:
                    pieces.append(_text_bytes("".join(text)))
                    text.clear()
                pieces.append(self._big(str(value)))
            else:
                text.append(encode_basestring(value))
        elif value is None or value is True or value is False or kind is int or kind is float:
            text.append(dumps_compact(value))
        elif isinstance(value, Mapping):
            text.append("{")
            first = True
            for key, item in value.items():
                if not first:
                    text.append(",")
                first = False
                text.append(encode_basestring(key))
                text.append(":")
                self._pieces(item, text, pieces)
            text.append("}")
        elif kind is list or kind is tuple:
            text.append("[")
            for index, item in enumerate(value):
                if index:
                    text.append(",")
                self._pieces(item, text, pieces)
            text.append("]")
        else:
            raise TypeError(f"not storable as JSON: {kind.__name__}")


def _big_bytes(value: str) -> bytes:
    """A huge string's JSON bytes. orjson escapes strings exactly as JSON.stringify does (held
    equal to `encode_basestring` by tests/persistence/test_lines.py) and is ~6x faster than
    the stdlib's C encoder: a 5 MB reply's encoding went from ~70 ms to ~13 ms of the event
    loop. A lone surrogate (not valid UTF-8, which orjson refuses) takes the stdlib path."""
    try:
        return orjson.dumps(value)
    except orjson.JSONEncodeError:
        return _text_bytes(encode_basestring(value))


def _plain_line(record: dict[str, Any]) -> str:
    try:
        return dumps_compact(record)
    except TypeError:
        # Appended data is plain JSON, but a seed handed over as read-only views
        # (MappingProxyType, tuples) must still be storable.
        return dumps_compact(thaw_json(record))
