"""Agent names that stay unique within a workspace and are never reused.

A name is the session's latest `session/title` (written with `source: {kind: "user"}`,
as upstream records a rename). Whoever gives a name (the app's new agent, a spawned
child, the `spawn_agent` tool, a rename) asks the world's name book first; the open
workspace is that book, so "researcher" asked for three times becomes "researcher",
"researcher 2" and "researcher 3", and a disposed agent's name is not handed out again.
A world without a book (a test's bare context) keeps names as asked.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from typing import Any, Protocol

from .persistence.paths import encode_segment

NAMES_SERVICE = "dsh_tui.names"
"""`ctx.services` key of the world's `NameBook`."""

MAX_NAME_CHARS = 80

MAX_CHILD_ID_SEGMENT = 160
"""The longest directory name (as `encode_segment` writes it) a child id may need; a file
name may have 255 bytes. Nested ids grew without bound: 24 emoji in a name at depth 1, CJK
at depth 2 or ASCII at depth 8 hit ENAMETOOLONG and the child's log was lost."""

_NOT_SLUG = re.compile(r"[^A-Za-z0-9_-]+")


class NameBook(Protocol):
    """Hands out names (see the module doc)."""

    def claim_name(self, wanted: str, session: str | None = None) -> str:
        """`wanted`, or `wanted 2`, `wanted 3`… the first never given; now given."""
        ...

    def numbered_name(self, base: str, start: int = 1, session: str | None = None) -> str:
        """`base N` for the first N >= start never given; now given."""
        ...


def normalize_name(text: str) -> str:
    """One line of visible words: whitespace runs become one space, trimmed, bounded."""
    name = " ".join(text.split())
    return name if len(name) <= MAX_NAME_CHARS else name[:MAX_NAME_CHARS - 1] + "…"


def child_session_id(parent_id: str, name: str = "") -> str:
    """A new sub-agent's id: the parent's id, a short ASCII slug of `name` and a random
    suffix (`main-1a2b3c4d.researcher-5e6f7a`), so a child still reads as its parent's. It
    stays short whatever the name and the depth: characters a path would escape are left
    out of the slug (the name itself is the title), and a parent id that would make the
    directory name too long is cut and stands with a hash of itself."""
    slug = _NOT_SLUG.sub("-", name).strip("-")[:24].strip("-") or "sub"
    tail = f"{slug}-{uuid.uuid4().hex[:6]}"
    candidate = f"{parent_id}.{tail}"
    if len(encode_segment(candidate)) <= MAX_CHILD_ID_SEGMENT:
        return candidate
    digest = hashlib.sha256(parent_id.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    head = _NOT_SLUG.sub("", parent_id.replace(".", "-"))[:40] or "agent"
    return f"{head}-{digest}.{tail}"


def book_of(ctx: Any) -> NameBook | None:
    """The name book of `ctx`'s world, or None (a bare test world)."""
    services = getattr(ctx, "services", None)
    return services.get(NAMES_SERVICE) if services is not None else None


def claim_name(ctx: Any, wanted: str, session: str | None = None) -> str:
    """A unique name for `session` in `ctx`'s world, as close to `wanted` as it can be."""
    wanted = normalize_name(wanted) or "agent"
    book = book_of(ctx)
    return wanted if book is None else book.claim_name(wanted, session)


def numbered_name(ctx: Any, base: str, start: int = 1, session: str | None = None) -> str:
    """`base N`: the first number from `start` not yet given in `ctx`'s world."""
    book = book_of(ctx)
    return f"{base} {max(start, 1)}" if book is None else book.numbered_name(base, start, session)


def suggest_numbered(ctx: Any, base: str, start: int = 1) -> str:
    """What `numbered_name` would give, without giving it (a dialog's suggestion)."""
    book = book_of(ctx)
    suggest = getattr(book, "free_numbered", None)
    return f"{base} {max(start, 1)}" if suggest is None else suggest(base, start)


def take_name(ctx: Any, name: str, session: str | None = None) -> None:
    """Note a name the person chose (kept as chosen) so no default name ever repeats it."""
    book = book_of(ctx)
    take = getattr(book, "take_name", None)
    if take is not None:
        take(name, session)


def rename(session: Any, name: str) -> None:
    """Record a person's name for `session` the way upstream records a rename."""
    session.append("session/title", {"title": name, "messageSeqs": [],
                                     "source": {"kind": "user"}})
