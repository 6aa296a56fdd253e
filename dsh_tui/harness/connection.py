"""A world's link to where its agents run, and the notices a link failure owes the person.

A world built in this process is always `local`. An attached world (`dsh_tui.remote`)
reaches its agents over a socket that can drop: it says so with `world/connection`
(`connected` → `reconnecting` → `connected`, or `closed`), and says every request that
failed with one `world/notice` line, so the UI shows both without knowing why a world
is remote (docs/contract.md §12).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

ConnectionState = Literal["local", "connected", "reconnecting", "closed"]

CONNECTION_SERVICE = "dsh_tui.connection"
"""`ctx.services` key of the world's `Connection` (absent: a local world)."""

CONNECTION_EVENT = "world/connection"
"""Emitted on the root context with the `Connection` after its state changed."""

NOTICE_EVENT = "world/notice"
"""Emitted on the root context with a `Notice`: one line the person must see."""


@dataclass
class Connection:
    """Where the agents run (`where`: a host:port, never a token) and whether the link is up.

    `detail` says why it is not (the last failure, one line)."""

    where: str
    state: ConnectionState = "connected"
    detail: str = ""

    def describe(self) -> str:
        """One line for a pane title: `127.0.0.1:8123 · reconnecting (refused)`."""
        if self.state == "connected":
            return self.where
        detail = f" ({self.detail})" if self.detail and self.state != "local" else ""
        return f"{self.where} · {self.state}{detail}"


@dataclass(frozen=True)
class Notice:
    """One line for the person: what failed, on which agent (None: the world), how bad."""

    text: str
    level: Literal["information", "warning", "error"] = "error"
    agent_id: str | None = None


def connection_of(ctx: Any) -> Connection | None:
    """The world's `Connection`, or None for a local world."""
    services = getattr(ctx, "services", None)
    found = services.get(CONNECTION_SERVICE) if isinstance(services, dict) else None
    return found if isinstance(found, Connection) else None
