"""Where a dsh runtime listens and the launch token it printed, kept out of every text.

`dsh --profile web` prints one line, `dsh web: http://HOST:PORT/?token=TOKEN`. The token
is the runtime's only credential for new clients, so it lives in a `Token` whose repr
and str are a placeholder; every message this package builds goes through `redact`,
which also removes the token from texts the network layer produced (a URL in an error).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

LINE_PREFIX = "dsh web:"
TOKEN_ENV = "DSH_WEB_TOKEN"
"""The environment variable `dsh-tui attach` reads the token from (safer than argv)."""


class EndpointError(ValueError):
    """The text is not a runtime's launch line or URL; the message never quotes a token."""


class Token:
    """The launch token: `reveal()` is the one way to read it."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        """The token itself, for the one request that sends it (`/connect`)."""
        return self._value

    def __repr__(self) -> str:
        return "Token(***)"

    __str__ = __repr__

    def __bool__(self) -> bool:
        return bool(self._value)


@dataclass(frozen=True)
class Endpoint:
    """A runtime's base URL (`http://HOST:PORT`) and its launch token."""

    base: str
    token: Token

    @property
    def where(self) -> str:
        """`HOST:PORT`: how the UI names the runtime (never with the token)."""
        return urlsplit(self.base).netloc

    def redact(self, text: str) -> str:
        """`text` with the token (raw or URL-encoded) replaced by `***`."""
        return redact(text, self.token)


_TOKEN_CHARS = re.compile(r"^[A-Za-z0-9_\-=.~%]+$")


def parse_endpoint(text: str, token: str | None = None) -> Endpoint:
    """The endpoint from the runtime's printed line, its URL, or `http://HOST:PORT` plus
    `token` (from stdin or $DSH_WEB_TOKEN). Raises EndpointError saying what is missing."""
    line = text.strip()
    if line.startswith(LINE_PREFIX):
        line = line[len(LINE_PREFIX):].strip()
    if "://" not in line:
        line = f"http://{line}"
    parts = urlsplit(line)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise EndpointError("expected the runtime's line `dsh web: http://HOST:PORT/?token=…` "
                            "or its URL")
    try:
        port = parts.port
    except ValueError:
        raise EndpointError("the runtime's URL has a bad port") from None
    found = parse_qs(parts.query).get("token", [])
    value = token if token else (found[0] if found else "")
    value = value.strip()
    if not value:
        raise EndpointError("no launch token: give the whole line the runtime printed, or the "
                            f"URL and the token on standard input or in ${TOKEN_ENV}")
    if not _TOKEN_CHARS.match(value):
        raise EndpointError("the launch token has characters a runtime never prints")
    host = parts.hostname if ":" not in parts.hostname else f"[{parts.hostname}]"
    base = f"{parts.scheme}://{host}" + (f":{port}" if port else "")
    return Endpoint(base, Token(value))


def redact(text: str, token: Token | None) -> str:
    """`text` without the token, raw or percent-encoded."""
    if token is None or not token:
        return text
    value = token.reveal()
    from urllib.parse import quote

    for form in {value, quote(value, safe="")}:
        text = text.replace(form, "***")
    return text
