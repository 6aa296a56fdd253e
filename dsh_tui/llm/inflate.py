"""A reply body's `Content-Encoding`, undone in bounded pieces.

httpx inflates each network read in one call, so 64 KiB of a gzip bomb became up to
64 MB in memory before anyone could count it. The adapter therefore reads the raw body
and inflates it here, at most `PIECE` bytes at a time, so the reply's byte bound
(`StreamLimits.reply`) stops a bomb after the first piece past it. Only what the
request offers (`ACCEPT_ENCODING`) is understood; any other coding is refused.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator

ACCEPT_ENCODING = "gzip, deflate"
PIECE = 256 * 1024


class UnsupportedEncoding(ValueError):
    """The server used a content coding this client did not offer."""


class BodyDecoder:
    """`feed(raw)` yields the decoded bytes, each piece at most `piece` long."""

    def __init__(self, content_encoding: str | None, piece: int = PIECE) -> None:
        codings = [c.strip().lower() for c in (content_encoding or "").split(",")]
        codings = [c for c in codings if c and c != "identity"]
        if len(codings) > 1 or (codings and codings[0] not in ("gzip", "x-gzip", "deflate")):
            raise UnsupportedEncoding(f"unsupported Content-Encoding {content_encoding!r}")
        self._coding = codings[0] if codings else None
        self._piece = piece
        self._inflater: zlib._Decompress | None = self._new() if self._coding else None
        self._first = True  # deflate: the first bytes tell zlib-wrapped from raw

    def _new(self, raw_deflate: bool = False) -> zlib._Decompress:
        if self._coding == "deflate":
            return zlib.decompressobj(-zlib.MAX_WBITS if raw_deflate else zlib.MAX_WBITS)
        return zlib.decompressobj(zlib.MAX_WBITS | 16)

    def feed(self, data: bytes) -> Iterator[bytes]:
        """The decoded bytes of `data`, in pieces; raises zlib.error on a corrupt body."""
        if self._inflater is None:
            for start in range(0, len(data), self._piece):
                yield data[start:start + self._piece]
            return
        if self._first and data:
            self._first = False
            if self._coding == "deflate":
                try:  # servers send both forms under this name (httpx tries both too)
                    zlib.decompressobj().decompress(data[:2])
                except zlib.error:
                    self._inflater = self._new(raw_deflate=True)
        pending = data
        while True:
            inflater = self._inflater
            out = inflater.decompress(pending, self._piece)
            pending = inflater.unconsumed_tail
            if out:
                yield out
            if inflater.eof:
                # Past the end of a member, every byte left is in `unused_data` (zlib may
                # also leave a copy in `unconsumed_tail`): another gzip member, or nothing.
                pending = inflater.unused_data
                if not pending:
                    return
                self._inflater = self._new()
                continue
            if not pending and len(out) < self._piece:
                return
