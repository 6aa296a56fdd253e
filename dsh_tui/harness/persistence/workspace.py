"""A workspace: what one person left open, kept as an append-only record beside the sessions.

All root agents of one app run (and, through `parentSession`, their children) belong to
one workspace. The record says which roots it holds, which were disposed, which agent was
selected, which had a breakpoint, which names were ever given (default names are never
reused) and the command-line options it was last opened with; everything else (inboxes,
names, transcripts) is in the session logs. It has one writer, like a session, and exists
on disk only once one of its sessions does: an app opened and closed leaves nothing behind.
The on-disk layout and its crash rules are on `Workspace`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..jsonvalue import dumps_compact
from .fileio import append_all, make_private_dirs, open_append, replace_durably, write_all
from .listing import subdirectories
from .lock import SessionLock, lock_holder
from .paths import encode_segment, project_dir_name

log = logging.getLogger("dsh_tui.harness.persistence")

WORKSPACES_DIR = "~workspaces"
WORKSPACE_LOG = "workspace.jsonl"
WORKSPACE_LOCK = "workspace.lock"
WORKSPACE_VERSION = 1
DRAFTS_FILE = "drafts.json"
DRAFTS_VERSION = 1
_READ_LIMIT = 16 << 20  # a workspace record is a few KB; refuse to fold a runaway file
RETRY_DELAY = 1.0  # while writing fails, retry this often (as the session writers do)
OPTION_KEYS = ("config", "route", "provider", "model", "baseUrl")
"""The keys of an `options` record (see `WorkspaceState.options`)."""


def new_workspace_id() -> str:
    """A fresh, short workspace id (`ws-` and 8 hex digits)."""
    return f"ws-{uuid.uuid4().hex[:8]}"


def workspace_dir(root: Path, cwd: str | None, workspace_id: str) -> Path:
    """The directory that owns the workspace `workspace_id` of `cwd` (no I/O)."""
    return root / project_dir_name(cwd) / WORKSPACES_DIR / encode_segment(workspace_id)


def _now() -> int:
    return int(time.time() * 1000)


@dataclass
class WorkspaceState:
    """The fold of one workspace record: the latest word on every question it answers."""

    id: str
    created_at: int
    cwd: str | None
    path: Path
    roots: list[str] = field(default_factory=list)
    """Root session ids in the order they joined, minus the ones disposed."""
    dropped: set[str] = field(default_factory=set)
    """Sessions the person disposed (roots or children): not reopened."""
    joined: dict[str, int] = field(default_factory=dict)
    """Root session id → when it joined (a root claimed by two workspaces goes to the later)."""
    selected: str | None = None
    breakpoints: set[str] = field(default_factory=set)
    names: set[str] = field(default_factory=set)
    """Every name given in this workspace, disposed agents' included."""
    options: dict[str, str] | None = None
    """The command-line options of the run that last opened it (`config`, `route`,
    `provider`, `model`, `baseUrl`): the reopen command repeats them. None: a record
    written before runs recorded them."""
    last_activity: int = 0

    def apply(self, record: Mapping[str, Any]) -> None:
        """Fold one record; unknown types and malformed fields are ignored (a newer build's)."""
        kind = record.get("type")
        when = record.get("time")
        if type(when) is int:
            self.last_activity = max(self.last_activity, when)
        session = record.get("session")
        if not isinstance(session, str) or not session:
            session = None
        if kind == "root" and session is not None:
            if session not in self.roots:
                self.roots.append(session)
            self.dropped.discard(session)
            self.joined[session] = when if type(when) is int else 0
        elif kind == "dropped" and session is not None:
            self.dropped.add(session)
            if session in self.roots:
                self.roots.remove(session)
            if self.selected == session:
                self.selected = None
        elif kind == "selected" and session is not None:
            self.selected = session
        elif kind == "breakpoint" and session is not None:
            if record.get("armed") is True:
                self.breakpoints.add(session)
            else:
                self.breakpoints.discard(session)
        elif kind == "name":
            name = record.get("name")
            if isinstance(name, str) and name:
                self.names.add(name)
        elif kind == "options":
            self.options = {key: value for key, value in record.items()
                            if key in OPTION_KEYS and isinstance(value, str) and value}


def _parse(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return None


def read_state(path: Path) -> tuple[WorkspaceState | None, int]:
    """The folded state of the record at `path` and the length of its whole lines.

    None when there is no complete header line. A torn last line (no newline yet) is
    not folded and lies beyond the returned length; a damaged middle line is skipped.
    """
    with path.open("rb") as handle:
        data = handle.read(_READ_LIMIT + 1)
    if len(data) > _READ_LIMIT:
        raise OSError(f"{path} is larger than a workspace record can be")
    good = data.rfind(b"\n") + 1
    lines = data[:good].split(b"\n")
    header = _parse(lines[0]) if lines else None
    if not isinstance(header, dict) or header.get("type") != "workspace" or \
            not isinstance(header.get("id"), str) or type(header.get("createdAt")) is not int:
        return None, good
    cwd = header.get("cwd")
    state = WorkspaceState(id=header["id"], created_at=header["createdAt"],
                           cwd=cwd if isinstance(cwd, str) and cwd else None, path=path,
                           last_activity=header["createdAt"])
    for raw in lines[1:]:
        record = _parse(raw) if raw.strip() else None
        if isinstance(record, dict):
            state.apply(record)
    return state, good


def read_drafts(directory: Path) -> dict[str, str]:
    """The drafts kept in a workspace's directory: session id → unsent text (none: {}).
    A damaged or oversized file is logged and read as no drafts, never an error."""
    path = directory / DRAFTS_FILE
    try:
        with path.open("rb") as handle:
            data = handle.read(_READ_LIMIT + 1)
    except FileNotFoundError:
        return {}
    except OSError as error:
        log.warning("cannot read the drafts in %s: %s", path, error)
        return {}
    doc = _parse(data) if len(data) <= _READ_LIMIT else None
    drafts = doc.get("drafts") if isinstance(doc, dict) and doc.get("type") == "drafts" \
        else None
    if not isinstance(drafts, dict):
        log.warning("skipping the drafts in %s: not a drafts file", path)
        return {}
    return {key: text for key, text in drafts.items()
            if isinstance(key, str) and key and isinstance(text, str) and text}


def list_workspaces(root: Path) -> list[WorkspaceState]:
    """Every readable workspace record under `root`, most recently active first."""
    found: list[WorkspaceState] = []
    try:
        projects = subdirectories(root)
    except OSError:
        return []
    for project in projects:
        holder = project / WORKSPACES_DIR
        try:
            entries = subdirectories(holder)
        except OSError:
            continue
        for directory in entries:
            path = directory / WORKSPACE_LOG
            try:
                state, _ = read_state(path)
            except OSError:
                continue
            if state is None:
                log.warning("skipping %s: no complete workspace header line", path)
                continue
            if workspace_dir(root, state.cwd, state.id) != directory:
                log.warning('skipping %s: its header (id "%s") belongs elsewhere', path, state.id)
                continue
            found.append(state)
    found.sort(key=lambda s: (s.last_activity, s.created_at), reverse=True)
    return found


def workspace_holder(state: WorkspaceState) -> Any:
    """Who has this workspace open (a `LockInfo`), or None."""
    return lock_holder(state.path.parent, WORKSPACE_LOCK)


class Workspace:
    """The open workspace of this app run: records as it goes, one writer at a time.

    `Workspace.new(root, cwd)` starts one that exists only in memory until
    `materialize()` (called when its first session reaches the disk);
    `Workspace.reopen(root, state)` takes an existing record's lock (raising
    `SessionLockedError` when another process holds it) and appends to it.

    On disk, inside the project directory of its working directory (upstream's layout):

        <root>/--<project_key(cwd)>--/~workspaces/<encode_segment(id)>/workspace.jsonl

    `~workspaces` is a name `encode_segment` never produces (it escapes `~` itself), so no
    session id can own that directory, and upstream's discovery, which only looks for
    `session.jsonl*` inside each directory of a project, passes over it. The file holds one
    JSON object a line, camelCase keys, written whole with one `os.write` on an O_APPEND
    descriptor before the call that records it returns, so a `kill -9` leaves every line
    written so far; a torn last line (a crash inside the write) is ignored when read and
    cut before the next append. A write that fails (a full or read-only disk) is cut back
    to the last whole line and kept in memory; it is retried every `RETRY_DELAY` seconds
    while an event loop runs (and at the next record and at close), and `save_failure`
    says so meanwhile, so the app's "not saved" line covers the workspace too.
    `workspace.lock` (the same `flock` as `session.lock`) is held while it is open;
    another process gets `SessionLockedError` naming the holder.

    Beside the record, `drafts.json` holds each agent's unsent composer text (see
    `save_drafts`).
    """

    def __init__(self, root: Path, state: WorkspaceState, *, materialized: bool) -> None:
        """Use `Workspace.new` or `Workspace.reopen`."""
        self.root = root
        self.state = state
        self.materialized = materialized
        self._pending: list[dict[str, Any]] = []
        self._fd: int | None = None
        self._lock: SessionLock | None = None
        self._mutex = threading.Lock()
        self.closed = False
        self.failure: str | None = None
        self.lost_on_exit: str | None = None
        """Set by `close()` when records could not be written at all (one line)."""
        self._wanted = materialized  # a session is on disk: so must this record be
        self._retry: asyncio.TimerHandle | None = None
        self.opened_selection: str | None = state.selected
        """The selection as the workspace was opened (the app restores it once)."""
        self.opened_breakpoints: set[str] = set(state.breakpoints)
        self.drafts: dict[str, str] = {}
        """Each agent's unsent composer text, as last given to `save_drafts` (or as the
        reopened workspace kept it)."""
        self._drafts_dirty = False
        self.on_materialize: list[Callable[[], None]] = []
        """Called once the record is on disk (at once by `when_on_disk` if it already is):
        the sessions' persistence then writes agents that are only named."""

    @property
    def id(self) -> str:
        """The workspace id."""
        return self.state.id

    @property
    def path(self) -> Path:
        """The record file (it exists once materialized)."""
        return self.state.path

    @classmethod
    def new(cls, root: Path, cwd: str | None, workspace_id: str | None = None) -> Workspace:
        """A new workspace of `cwd` under `root`, in memory until `materialize()`."""
        workspace_id = workspace_id or new_workspace_id()
        path = workspace_dir(root, cwd, workspace_id) / WORKSPACE_LOG
        return cls(root, WorkspaceState(id=workspace_id, created_at=_now(), cwd=cwd, path=path,
                                        last_activity=_now()), materialized=False)

    @classmethod
    def reopen(cls, root: Path, state: WorkspaceState) -> Workspace:
        """Take the record's lock, cut a torn last line, and append from there."""
        lock = SessionLock.acquire(state.path.parent, state.id, name=WORKSPACE_LOCK,
                                   what="workspace")
        try:
            fresh, good = read_state(state.path)
            if fresh is None:
                raise OSError(f"{state.path} has no workspace header line")
            if state.path.stat().st_size > good:
                os.truncate(state.path, good)
            workspace = cls(root, fresh, materialized=True)
            workspace.drafts = read_drafts(state.path.parent)
            workspace._lock = lock
            workspace._fd = open_append(state.path)
        except BaseException:
            lock.release()
            raise
        return workspace

    # -- recording ------------------------------------------------------------------------------

    def record(self, kind: str, **fields: Any) -> None:
        """Fold and write one record (`time` added). Never raises: a failed write is logged
        and kept for the next write, so the workspace never stops the app."""
        record = {"type": kind, **{k: v for k, v in fields.items() if v is not None},
                  "time": _now()}
        with self._mutex:
            if self.closed:
                return
            self.state.apply(record)
            self._pending.append(record)
            if self.materialized:
                self._write_pending()

    def _write_pending(self) -> None:
        if not self._pending or self._fd is None:
            return
        # dumps_compact escapes a lone surrogate (a non-UTF-8 cwd or name, as Python
        # decodes it) the way JSON.stringify does: json.dumps left it raw and encoding
        # the line raised, so the record stayed empty.
        data = "".join(dumps_compact(r) + "\n" for r in self._pending).encode("utf-8")
        try:
            # A short write then ENOSPC must not leave half a line: the retry would glue
            # the whole record onto it, and the reader would skip both as one bad line.
            append_all(self._fd, data, os.fstat(self._fd).st_size)
        except OSError as error:
            self._failed(error, "cannot write")
            return
        self._pending.clear()
        if not self._drafts_dirty:
            self.failure = None

    def save_drafts(self, drafts: Mapping[str, str]) -> None:
        """Keep each agent's unsent text with the workspace (empty ones left out): written
        whole, replacing the last, while the workspace is on disk; held until it is. Never
        raises: a failed write shows in `save_failure` and is retried.

        `drafts.json` is one small JSON object renamed over the last (`replace_durably`),
        not an append-only record: a draft changes with every pause in typing, and a record
        would grow by the whole text each time."""
        wanted = {key: text for key, text in drafts.items() if text}
        with self._mutex:
            if self.closed or (wanted == self.drafts and not self._drafts_dirty):
                return
            self.drafts = wanted
            self._drafts_dirty = True
            if self.materialized:
                self._write_drafts()

    def _write_drafts(self) -> None:
        if not self._drafts_dirty:
            return
        path = self.path.parent / DRAFTS_FILE
        try:
            if self.drafts:
                doc = {"type": "drafts", "version": DRAFTS_VERSION, "drafts": self.drafts}
                replace_durably(path, dumps_compact(doc).encode("utf-8"))
            else:
                path.unlink(missing_ok=True)
        except OSError as error:
            self._failed(error, "cannot write the drafts of")
            return
        self._drafts_dirty = False
        if not self._pending:
            self.failure = None

    def _failed(self, error: OSError, what: str) -> None:
        if self.failure is None:
            log.error("workspace %s: %s %s (kept in memory, retried): %s", self.id, what,
                      self.path, error)
        self.failure = f"{error.strerror or error}: {self.path}"
        if self._retry is not None or self.closed:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no loop: the next record or close() tries again
        self._retry = loop.call_later(RETRY_DELAY, self._try_again)

    def _try_again(self) -> None:
        with self._mutex:
            self._retry = None
            if self.closed:
                return
            if self.materialized:
                self._write_pending()
                self._write_drafts()
                return
        self.materialize()

    @property
    def save_failure(self) -> str | None:
        """Why records of this workspace are not on disk right now, or None (cheap to poll)."""
        unsaved = (self._pending or self._drafts_dirty) if self.materialized else self._wanted
        return self.failure if unsaved else None

    def materialize(self) -> None:
        """Create the record on disk (header and everything recorded so far). Idempotent."""
        with self._mutex:
            if self.materialized or self.closed:
                return
            self._wanted = True
            directory = self.path.parent
            try:
                make_private_dirs(directory)
                self._lock = SessionLock.acquire(directory, self.id, name=WORKSPACE_LOCK,
                                                 what="workspace")
                header: dict[str, Any] = {"type": "workspace", "version": WORKSPACE_VERSION,
                                          "id": self.id, "createdAt": self.state.created_at}
                if self.state.cwd is not None:
                    header["cwd"] = self.state.cwd
                line = (dumps_compact(header) + "\n").encode("utf-8")
                fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND
                             | getattr(os, "O_CLOEXEC", 0), 0o600)
                try:
                    write_all(fd, line)
                except BaseException:
                    os.close(fd)  # created just now, under our lock: gone again, so the
                    os.unlink(self.path)  # retry starts from nothing, never a torn header
                    raise
            except OSError as error:
                if self._lock is not None:
                    self._lock.release()
                    self._lock = None
                self._failed(error, "cannot create")
                return
            self._fd = fd
            self.materialized = True
            self.failure = None
            self._write_pending()
            self._write_drafts()
        if self.materialized:
            self._announce()

    def when_on_disk(self, callback: Callable[[], None]) -> None:
        """Call `callback` once this record is on disk (now, if it is already)."""
        self.on_materialize.append(callback)
        if self.materialized:
            self._announce()

    def _announce(self) -> None:
        observers, self.on_materialize = self.on_materialize, []
        for observer in observers:
            try:
                observer()
            except Exception:
                log.exception("workspace %s: an on-disk observer failed", self.id)

    def close(self) -> None:
        """Write what is pending, fsync, let go of the lock. Idempotent. What still cannot
        be written is named in `lost_on_exit`."""
        if self._wanted and not self.materialized:
            self.materialize()  # a last try: its sessions are on disk
        with self._mutex:
            if self.closed:
                return
            self.closed = True
            if self._retry is not None:
                self._retry.cancel()
                self._retry = None
            if self.materialized:
                self._write_drafts()
            fd, self._fd = self._fd, None
            if fd is not None:
                if self._pending:
                    self._fd = fd
                    self._write_pending()
                    self._fd = None
                try:
                    os.fsync(fd)
                except OSError:
                    pass
                os.close(fd)
            if self._lock is not None:
                self._lock.release()
                self._lock = None
            unsaved = len(self._pending) + int(self._drafts_dirty) if self.materialized \
                else (len(self._pending) + 1 if self._wanted else 0)
            if unsaved:
                self.lost_on_exit = (f"nothing more could be saved under {self.root}: {unsaved} "
                                     f"record(s) of workspace {self.id} were not written "
                                     f"({self.failure})")

    # -- names ----------------------------------------------------------------------------------

    def claim_name(self, wanted: str, session: str | None = None, *,
                   taken: Iterable[str] = ()) -> str:
        """`wanted`, or `wanted 2`, `wanted 3`… : the first name never given in this
        workspace (nor in `taken`); recorded as given."""
        wanted = " ".join(wanted.split()) or "agent"
        used = self.state.names | set(taken)
        name, n = wanted, 1
        while name in used:
            n += 1
            name = f"{wanted} {n}"
        self.record("name", name=name, session=session)
        return name

    def free_numbered(self, base: str, start: int = 1, *, taken: Iterable[str] = ()) -> str:
        """`base N` for the first N >= `start` never given here (nothing recorded)."""
        used = self.state.names | set(taken)
        n = max(start, 1)
        while f"{base} {n}" in used:
            n += 1
        return f"{base} {n}"

    def numbered_name(self, base: str, start: int = 1, session: str | None = None, *,
                      taken: Iterable[str] = ()) -> str:
        """`base N` for the first N >= `start` never given here; recorded as given."""
        name = self.free_numbered(base, start, taken=taken)
        self.record("name", name=name, session=session)
        return name

    def take_name(self, name: str, session: str | None = None) -> None:
        """Record a name chosen by the person (kept as chosen, duplicates included)."""
        if name not in self.state.names:
            self.record("name", name=name, session=session)
