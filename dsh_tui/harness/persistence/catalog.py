"""What is stored, as a person thinks of it: workspaces, each a tree of root agents and
their children, with each session's title, status at its last write, last activity and size.

`build_catalog(persistence)` reads only headers, workspace records and small slices of
each log, so listing stays cheap. Sessions no workspace holds (older ones, or upstream's)
are grouped as "no workspace" per working directory so they stay listed and resumable.
`match(catalog, query)` turns what a person typed (after `--resume`, `export`, `view`)
into the workspace or session it names, or says it is `Ambiguous`.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .activity import last_activity
from .listing import creation_order
from .workspace import WorkspaceState, list_workspaces, workspace_holder

STATUS_SCAN_LIMIT = 256 << 20  # bigger plain logs report no pending count (never read whole)
_SPLICE = b'"type":"agent/inbox/spliced"'
_TURN = b'"type":"turn/'


@dataclass
class SessionEntry:
    """One stored session in the tree."""

    id: str
    header: dict[str, Any]
    title: str | None = None
    preview: str | None = None
    bytes: int = 0
    last_activity: int = 0  # ms since the epoch: its last activity (not a resume's records)
    status: str = "idle"  # idle | interrupted | unknown (at the last write)
    pending: int | None = 0  # inbox items at the last write (None: not counted)
    holder: Any = None  # LockInfo of the process that has it open, or None
    dropped: bool = False  # the person disposed it; the workspace does not reopen it
    children: list[SessionEntry] = field(default_factory=list)

    @property
    def name(self) -> str:
        """What the person calls it: its title, else its id."""
        return self.title or self.id

    def walk(self, depth: int = 0) -> Iterator[tuple[int, SessionEntry]]:
        """(depth, entry) for this entry and its descendants, depth first."""
        yield depth, self
        for child in self.children:
            yield from child.walk(depth + 1)


@dataclass
class WorkspaceEntry:
    """A workspace (or, with `id` None, the sessions of one directory no workspace holds)."""

    id: str | None
    cwd: str | None
    created_at: int
    last_activity: int
    roots: list[SessionEntry] = field(default_factory=list)
    state: WorkspaceState | None = None
    holder: Any = None

    def walk(self) -> Iterator[tuple[int, SessionEntry]]:
        """(depth, entry) for every session of the group, roots at depth 0."""
        for root in self.roots:
            yield from root.walk()

    @property
    def selected(self) -> str | None:
        """The agent that was selected when the workspace was last written."""
        return self.state.selected if self.state is not None else None


# -- status at the last write -------------------------------------------------------------------

_STATUS_CACHE: dict[tuple[str, int, int], tuple[str, int | None]] = {}
_STATUS_LOCK = threading.Lock()


def _fields(line: bytes) -> dict[str, Any] | None:
    try:
        record = json.loads(line)
    except ValueError:
        return None
    return record if isinstance(record, dict) else None


def last_write_status(path: Path) -> tuple[str, int | None]:
    """("idle" | "interrupted" | "unknown", pending items or None) of a log as last written.

    interrupted: a turn was open at the last write (the app left, or died, while the
    agent worked) or the last turn was closed as interrupted by a resume.
    """
    try:
        stat = path.stat()
    except OSError:
        return "unknown", None
    if path.suffix != ".jsonl":
        return "unknown", None  # upstream's zstd log: not scanned for a listing
    key = (str(path), stat.st_size, stat.st_mtime_ns)
    with _STATUS_LOCK:
        cached = _STATUS_CACHE.get(key)
    if cached is not None:
        return cached
    result = _scan_status(path, stat.st_size)
    with _STATUS_LOCK:
        if len(_STATUS_CACHE) > 4096:
            _STATUS_CACHE.clear()
        _STATUS_CACHE[key] = result
    return result


def _typed_lines(data: bytes) -> Iterator[bytes]:
    """The whole lines of `data` that are inbox splices or turn boundaries, in order.

    Found with `bytes.find` (C speed) rather than by splitting every line: a log is mostly
    stream chunks. Inside a JSON string a quote is escaped, so `"type":"turn/` with bare
    quotes is always a record's own type field."""
    hits: list[int] = []
    for marker in (_SPLICE, _TURN):
        at = data.find(marker)
        while at != -1:
            hits.append(at)
            at = data.find(marker, at + 1)
    hits.sort()
    last_start = -1
    for at in hits:
        start = data.rfind(b"\n", 0, at) + 1
        if start == last_start or at - start > 120:
            continue
        last_start = start
        end = data.find(b"\n", at)
        if end == -1:
            continue  # a torn last line: not yet written whole
        yield data[start:end]


def _scan_status(path: Path, size: int) -> tuple[str, int | None]:
    if size > STATUS_SCAN_LIMIT:
        return "unknown", None
    pending = 0
    open_turn = False
    interrupted = False
    try:
        with path.open("rb") as handle:
            data = handle.read()
    except OSError:
        return "unknown", None
    for line in _typed_lines(data):
        if _SPLICE in line[:120]:
            record = _fields(line)
            body = record.get("data") if record else None
            if isinstance(body, dict):
                inserted = body.get("inserted")
                removed = body.get("removedCount")
                pending += len(inserted) if isinstance(inserted, list) else 0
                pending -= removed if type(removed) is int else 0
        else:
            record = _fields(line)
            if record is None:
                continue
            kind = record.get("type")
            if kind == "turn/start":
                open_turn, interrupted = True, False
            elif kind == "turn/end":
                open_turn = False
                body = record.get("data")
                reason = body.get("reason") if isinstance(body, dict) else None
                interrupted = isinstance(reason, dict) and reason.get("kind") == "interrupted"
    return ("interrupted" if open_turn or interrupted else "idle"), max(pending, 0)


# -- building the tree --------------------------------------------------------------------------


def _entry(persistence: Any, header: dict[str, Any]) -> SessionEntry:
    entry = SessionEntry(id=str(header["id"]), header=header)
    try:
        path = persistence.path_for(header)
        stat = path.stat()
    except Exception:
        return entry
    entry.bytes = stat.st_size
    entry.last_activity = last_activity(path)
    summary = persistence.describe(header)
    entry.title = summary.get("title")
    entry.preview = summary.get("preview")
    entry.status, entry.pending = last_write_status(path)
    holder = persistence.lock_holder(header)
    entry.holder = holder
    return entry


def _latest(entry: SessionEntry) -> int:
    return max([entry.last_activity, *(_latest(child) for child in entry.children)])


def build_catalog(persistence: Any) -> list[WorkspaceEntry]:
    """Every stored workspace and session as trees, most recently active workspace first.

    Reads headers (first lines), the workspace records (a few KB each), a bounded slice of
    each log for its title, and the inbox splices and turn boundaries of each plain log for
    its status (a byte scan that parses only those lines, cached by size and mtime).
    Sessions no workspace holds (written before workspaces, or by upstream's tools) are
    grouped as "no workspace" per working directory, roots with their children.
    """
    headers = persistence.list_sessions()
    entries = {str(h["id"]): _entry(persistence, h) for h in headers}
    children: dict[str, list[str]] = {}
    for header in headers:
        parent = header.get("parentSession")
        if header.get("origin") == "subagent" and isinstance(parent, str) and \
                parent in entries and parent != header["id"]:
            children.setdefault(parent, []).append(str(header["id"]))
    placed: set[str] = set()

    def grow(session_id: str, dropped: set[str]) -> SessionEntry:
        entry = entries[session_id]
        placed.add(session_id)
        entry.dropped = session_id in dropped
        entry.children = [grow(child, dropped) for child in
                          sorted(children.get(session_id, []),
                                 key=lambda c: creation_order(entries[c].header))
                          if child not in placed]
        return entry

    states = list_workspaces(Path(persistence.root))
    owner: dict[str, WorkspaceState] = {}
    for state in states:
        for root in [*state.roots, *state.dropped]:
            if root in entries and (root not in owner or
                                    state.joined.get(root, 0) > owner[root].joined.get(root, 0)):
                owner[root] = state
    out: list[WorkspaceEntry] = []
    for state in states:
        group = WorkspaceEntry(id=state.id, cwd=state.cwd, created_at=state.created_at,
                               last_activity=state.last_activity, state=state,
                               holder=workspace_holder(state))
        for root in [*state.roots, *sorted(state.dropped & set(state.joined))]:
            if owner.get(root) is state and root not in placed:
                group.roots.append(grow(root, state.dropped))
        if not group.roots:
            continue  # its sessions are gone (deleted, or only ever in memory)
        group.last_activity = max([group.last_activity, *(_latest(r) for r in group.roots)])
        out.append(group)
    loose: dict[str | None, WorkspaceEntry] = {}
    for header in sorted(headers, key=creation_order):
        session_id = str(header["id"])
        if session_id in placed:
            continue
        parent = header.get("parentSession")
        if header.get("origin") == "subagent" and parent in entries and parent != session_id:
            continue  # grown under its parent below
        cwd = header.get("cwd") if isinstance(header.get("cwd"), str) else None
        if cwd not in loose:
            loose[cwd] = WorkspaceEntry(id=None, cwd=cwd, created_at=0, last_activity=0)
        loose[cwd].roots.append(grow(session_id, set()))
    for session_id in entries:  # cycles of parents: still listed
        if session_id not in placed:
            cwd = entries[session_id].header.get("cwd")
            group = loose.setdefault(cwd if isinstance(cwd, str) else None,
                                     WorkspaceEntry(id=None, cwd=None, created_at=0,
                                                    last_activity=0))
            group.roots.append(grow(session_id, set()))
    for group in loose.values():
        group.roots.sort(key=_latest, reverse=True)
        group.last_activity = max(_latest(r) for r in group.roots)
        group.created_at = min(int(r.header.get("createdAt") or 0) for r in group.roots)
        out.append(group)
    out.sort(key=lambda g: g.last_activity, reverse=True)
    return out


def find_session(catalog: list[WorkspaceEntry], session_id: str,
                 ) -> tuple[WorkspaceEntry, list[SessionEntry]] | None:
    """The workspace holding `session_id` and the path of entries from its root to it."""
    for group in catalog:
        for root in group.roots:
            trail = _trail(root, session_id)
            if trail:
                return group, trail
    return None


def _trail(entry: SessionEntry, session_id: str) -> list[SessionEntry]:
    if entry.id == session_id:
        return [entry]
    for child in entry.children:
        trail = _trail(child, session_id)
        if trail:
            return [entry, *trail]
    return []


# -- resolving what the person typed -------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """What `--resume` opens: a workspace whole (or, for a session no workspace holds, the
    tree of its root), with `select` the agent to show first."""

    group: WorkspaceEntry
    roots: tuple[SessionEntry, ...]
    select: str | None


@dataclass(frozen=True)
class Match:
    """One thing stored that a query names: a workspace (`entry` None) or a session of
    `group`. As a candidate of an ambiguous query, `within` counts the matching sessions
    beneath `entry` that it stands for (they are its own sub-agents)."""

    group: WorkspaceEntry
    entry: SessionEntry | None = None
    within: int = 0

    @property
    def id(self) -> str:
        """The workspace's or the session's id."""
        return self.entry.id if self.entry is not None else str(self.group.id)


class NoMatch(LookupError):
    """Nothing stored matches."""


class Ambiguous(LookupError):
    """More than one thing matches; `candidates` are what to choose from."""

    def __init__(self, query: str, candidates: list[Match]) -> None:
        """`candidates`: the matches, a session's matching sub-agents folded into it."""
        super().__init__(query)
        self.query = query
        self.candidates = candidates


def target_of_workspace(group: WorkspaceEntry, select: str | None = None) -> Target:
    """The whole workspace (its disposed roots left out), `select` shown first if it is
    there, else the selection it was left with, else its first root."""
    roots = tuple(r for r in group.roots if not r.dropped)
    live = {entry.id for root in roots for _, entry in root.walk() if not entry.dropped}
    chosen = select if select in live else group.selected if group.selected in live else None
    return Target(group, roots, chosen or (roots[0].id if roots else None))


def target_of_session(catalog: list[WorkspaceEntry], session_id: str) -> Target:
    """The workspace that holds `session_id`, with it selected; a session no workspace
    holds (or a disposed root) opens its own root's tree."""
    found = find_session(catalog, session_id)
    if found is None:
        raise NoMatch(session_id)
    group, trail = found
    if group.id is not None and not trail[0].dropped:
        return target_of_workspace(group, session_id)
    return Target(group, (trail[0],), session_id)  # a loose (or disposed) tree: that one only


def match(catalog: list[WorkspaceEntry], query: str) -> Match:
    """What `query` names, for every command that takes a name (`--resume`, `export`,
    `view`): an exact id, then an exact title (case-insensitive), then an id prefix, of a
    workspace or any session. A prefix whose matches are one session and its own
    sub-agents names that session: ownership is the tree the headers record
    (`parentSession`), so it holds whatever shape child ids take. Raises NoMatch or
    Ambiguous (candidates in listing order)."""
    workspaces = [g for g in catalog if g.id is not None]
    sessions = [(g, e) for g in catalog for _, e in g.walk()]
    for group in workspaces:
        if group.id == query:
            return Match(group)
    for group, entry in sessions:
        if entry.id == query:
            return Match(group, entry)
    folded = " ".join(query.casefold().split())
    titled = [Match(g, e) for g, e in sessions if e.title and
              " ".join(e.title.split()).casefold() == folded]
    if len(titled) == 1:
        return titled[0]
    if len(titled) > 1:
        raise Ambiguous(query, titled)
    found = [Match(g) for g in workspaces if str(g.id).startswith(query)]
    found += _heads([(g, e) for g, e in sessions if e.id.startswith(query)])
    if len(found) == 1:
        return found[0]
    if found:
        raise Ambiguous(query, found)
    raise NoMatch(query)


def _heads(matched: list[tuple[WorkspaceEntry, SessionEntry]]) -> list[Match]:
    """The matched sessions no other matched session owns, each counting the matched
    sessions beneath it."""
    ids = {entry.id for _, entry in matched}
    owned: set[str] = set()
    heads: list[Match] = []
    for group, entry in matched:
        if entry.id in owned:
            continue
        below = {e.id for _, e in entry.walk()} - {entry.id}
        owned |= below
        heads = [h for h in heads if h.id not in below]
        heads.append(Match(group, entry, len(below & ids)))
    return heads


def resolve(catalog: list[WorkspaceEntry], query: str) -> Target:
    """The target `query` names (see `match`): a workspace whole, or the workspace that
    holds the session, with it selected. Raises NoMatch or Ambiguous."""
    return target_of(catalog, match(catalog, query))


def target_of(catalog: list[WorkspaceEntry], found: Match) -> Target:
    """What opening `found` opens: a workspace whole, or the workspace that holds the
    session, with it selected."""
    if found.entry is None:
        return target_of_workspace(found.group)
    return target_of_session(catalog, found.entry.id)


def most_recent(catalog: list[WorkspaceEntry], cwd: str | None) -> WorkspaceEntry | None:
    """The most recently active workspace of `cwd` (any directory when None)."""
    for group in catalog:
        if group.id is not None and (cwd is None or group.cwd == cwd) and \
                any(not r.dropped for r in group.roots):
            return group
    return None


def to_json(catalog: list[WorkspaceEntry], command: Any = None) -> list[dict[str, Any]]:
    """Plain JSON (camelCase keys) of the catalog; `command(group)` → the reopen command."""

    def session(entry: SessionEntry) -> dict[str, Any]:
        out: dict[str, Any] = {"id": entry.id}
        if entry.title:
            out["title"] = entry.title
        out["status"] = entry.status
        if entry.pending is not None:
            out["pending"] = entry.pending
        out.update(lastActivity=entry.last_activity, bytes=entry.bytes,
                   createdAt=entry.header.get("createdAt"))
        if entry.header.get("origin") == "subagent":
            out["parentSession"] = entry.header.get("parentSession")
        if entry.dropped:
            out["disposed"] = True
        if entry.holder is not None:
            out["openIn"] = {"pid": entry.holder.pid, "host": entry.holder.host}
        if entry.preview:
            out["preview"] = entry.preview
        out["children"] = [session(child) for child in entry.children]
        return out

    result = []
    for group in catalog:
        item: dict[str, Any] = {"id": group.id}
        if group.cwd is not None:
            item["cwd"] = group.cwd
        item.update(createdAt=group.created_at, lastActivity=group.last_activity)
        if group.holder is not None:
            item["openIn"] = {"pid": group.holder.pid, "host": group.holder.host}
        if command is not None:
            item["command"] = command(group)
        item["sessions"] = [session(root) for root in group.roots]
        result.append(item)
    return result


# -- tidying ---------------------------------------------------------------------------------------

ARCHIVE_DIR = "~archive"
"""Archived files keep their place under `<root>/~archive/` (move them back to restore).
Neither this build nor upstream lists anything there: its directories hold no
`session.jsonl` where a session's would be."""


def remove(persistence: Any, group: WorkspaceEntry, entry: SessionEntry | None, *,
           archive: bool) -> int:
    """Delete (or archive) `entry`'s tree, or with `entry` None the whole group (and its
    workspace record). Refuses, changing nothing, when any of it is open in a process
    (this one included). Returns the number of sessions removed."""
    import shutil

    from .lock import lock_holder

    entries = [e for _, e in (entry.walk() if entry is not None else group.walk())]
    root = Path(persistence.root)
    dirs: list[Path] = []
    for item in entries:
        directory = persistence.path_for(item.header).parent
        holder = lock_holder(directory)
        if holder is not None:
            where = "here" if holder.is_this_process else f"in {holder.describe()}"
            raise OSError(f'session "{item.id}" is open {where}; close it first')
        dirs.append(directory)
    if entry is None and group.state is not None:
        if workspace_holder(group.state) is not None:
            raise OSError(f"workspace {group.id} is open; close it first")
        dirs.append(group.state.path.parent)
    for directory in dirs:
        if archive:
            target = root / ARCHIVE_DIR / directory.relative_to(root)
            target.parent.mkdir(parents=True, exist_ok=True)
            directory.rename(target)
        else:
            shutil.rmtree(directory)
    return len(entries)
