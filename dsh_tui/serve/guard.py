"""Who may use `dsh-tui serve`: the holder of the link it printed, in a browser that reached
this machine by a name the person chose.

Whoever drives a tab drives the agents (their tools over the working directory, the API
key's spending, every saved session through f3). So, as the dsh runtime's web profile does:
a random launch token per process, printed once, exchanged for an HMAC-signed HttpOnly,
SameSite=Strict cookie; every request without that cookie is refused (401). Before that,
the Host must be loopback, the bound address or a `--trusted-host` (DNS rebinding), an
Origin must match the Host and `Sec-Fetch-Site` must not be cross-site or same-site (a page
on another localhost port is "same-site"): 403. No message ever carries the token.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import ipaddress
import secrets
import time
from collections.abc import Callable, Iterable, Mapping
from urllib.parse import urlsplit

COOKIE_LIFETIME_S = 30 * 24 * 3600
"""A cookie is refused after this long (and with the process: its key is never stored)."""

WILDCARDS = ("0.0.0.0", "::", "")
"""Bind addresses that listen on every address of the machine."""

NOT_SIGNED_IN = ("not signed in: open the link `dsh-tui serve` printed (the one ending in "
                 "?token=…) in this browser")
WRONG_TOKEN = ("that link's token is not this server's: open the link the running "
               "`dsh-tui serve` printed last")
FOREIGN_HOST = ("this server is not served under that host name: reach it as 127.0.0.1 or "
                "localhost, or start serve with --trusted-host NAME")
FOREIGN_ORIGIN = "refused: the request comes from another site's page"
NO_HOST = "refused: the request names no host"


def host_name(header: str) -> str | None:
    """The host name of a Host header (`name`, `name:port`, `[v6]:port`), lowercased and
    without a trailing dot; None if it is not one."""
    value = header.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        host, rest = value[1:end], value[end + 1:]
        if end < 0 or (rest and not (rest[:1] == ":" and rest[1:].isdigit())):
            return None
    else:
        host, colon, port = value.partition(":")
        if colon and not port.isdigit():
            return None
    host = host.rstrip(".")
    return host or None


def _ip(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def _normal(host: str) -> str:
    """A host name for comparing: an IP address in its one canonical spelling."""
    name = host.strip().lower().strip("[]").rstrip(".")
    ip = _ip(name)
    return str(ip) if ip is not None else name


def is_loopback(bind: str) -> bool:
    """True if a bind address (or name) reaches only this machine."""
    name = _normal(bind)
    ip = _ip(name)
    return name == "localhost" or (ip is not None and ip.is_loopback)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


class Guard:
    """The checks of one serve process: its token, its cookie key, the hosts it answers to."""

    def __init__(self, *, port: int, bind: str, trusted_hosts: Iterable[str] = (),
                 clock: Callable[[], float] = time.time) -> None:
        self.token = secrets.token_urlsafe(32)
        self._key = secrets.token_bytes(32)
        self.cookie_name = f"dsh-tui-{port}"  # cookies ignore ports: one per server
        self._clock = clock
        self._every_address = bind.strip().lower() in WILDCARDS
        self._trusted = {_normal(host_name(name) or name) for name in trusted_hosts}
        if not self._every_address:
            self._trusted.add(_normal(bind))

    # ---- where a request comes from: 403 --------------------------------------------------

    def host_allowed(self, host: str) -> bool:
        """Loopback, the bound address, a trusted name; any IP address when bound to every
        address (a rebinding attack needs a name it controls, never an IP literal)."""
        ip = _ip(host)
        if host == "localhost" or (ip is not None and ip.is_loopback):
            return True
        if _normal(host) in self._trusted:
            return True
        return self._every_address and ip is not None

    def refuse_origin(self, headers: Mapping[str, str]) -> str | None:
        """Why a request with these headers is refused whatever it carries, or None."""
        header = headers.get("Host")
        if not header:
            return NO_HOST
        host = host_name(header)
        if host is None or not self.host_allowed(host):
            return FOREIGN_HOST
        origin = headers.get("Origin")
        if origin is not None:
            parts = urlsplit(origin.strip())
            if parts.scheme not in ("http", "https") or \
                    parts.netloc.lower() != header.strip().lower():
                return FOREIGN_ORIGIN
        if headers.get("Sec-Fetch-Site", "").strip().lower() in ("cross-site", "same-site"):
            return FOREIGN_ORIGIN
        return None

    # ---- who sends it: 401 -----------------------------------------------------------------

    def token_matches(self, given: str) -> bool:
        return hmac.compare_digest(given.encode(errors="replace"), self.token.encode())

    def _signature(self, issued: str) -> str:
        return _b64(hmac.new(self._key, f"dsh-tui serve {issued}".encode(),
                             hashlib.sha256).digest())

    def new_cookie(self) -> str:
        """A cookie value: when it was issued, signed with this process's key."""
        issued = str(int(self._clock()))
        return f"{issued}.{self._signature(issued)}"

    def cookie_valid(self, value: str | None) -> bool:
        if not value:
            return False
        issued, _, signature = value.partition(".")
        if not issued.isdigit() or not hmac.compare_digest(
                signature.encode(errors="replace"), self._signature(issued).encode()):
            return False
        return 0 <= self._clock() - int(issued) <= COOKIE_LIFETIME_S
