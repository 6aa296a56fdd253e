"""`JsonlPersistence`: sessions as upstream-compatible JSONL files, attached to a live world.

Writes are split by what a crash may lose: inbox splices, turn boundaries and names are
in the file before the call that made them returns, so a `kill -9` cannot lose an accepted
message; stream chunks are batched by a timer, and fsync runs on a worker thread. Reading
has a strict loader for `resume()` and a tolerant one (`reader`) for viewing. One process
writes a session at a time (`lock.py`). The details are on `JsonlPersistence`.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import platformdirs

from ..jsonvalue import json_equal
from ..once import once
from ..session import Session, SessionEvent
from .errors import SessionCollisionError, SessionLogError, SessionNotFoundError
from .listing import find_artifacts, list_headers
from .loader import commit_repair, prepare_load, read_for_adoption
from .lock import LockInfo, SessionLock, SessionLockedError, lock_holder
from .paths import RAW_LOG_NAME, ZSTD_LOG_NAME, session_dir
from .scan import Compression
from .summary import summarize
from .writer import SessionWriter, is_durable_type

if TYPE_CHECKING:
    from ..context import Context

log = logging.getLogger("dsh_tui.harness.persistence")

DEFAULT_BATCH_WINDOW = 0.2
RETRY_DELAY = 1.0  # while writing fails (full or read-only disk), retry this often
_LOADED_KEEP = 8  # logs just loaded, kept so resuming them needs no second read


def default_root() -> Path:
    """Where logs live when no `--data-dir` is given: the platform's user data directory."""
    return platformdirs.user_data_path("dsh-tui") / "sessions"


class LoadedSession(NamedTuple):
    """What `load()` returns: unpack as `header, events = p.load(id)`.

    `header` is the in-memory session header (no `type` tag); `events` are
    plain dicts, contiguous from seq 0, already repaired, ready for
    `Session(id, seed=events, header=header, restore=True)`.
    """

    header: dict[str, Any]
    events: list[dict[str, Any]]


@dataclass(slots=True)
class _Loaded:
    """A log `load()` just returned, so adopting it as a live session needs no re-read."""

    path: Path
    size: int
    compression: Compression
    events: list[dict[str, Any]]


class JsonlPersistence:
    """Session logs under `root`, one upstream-layout `session.jsonl` per session.

    Writing: `attach(ctx)` listens to the session store. Every appended event is queued on
    its session's `SessionWriter`; inbox splices, turn boundaries and names are written
    (plain `os.write`, no fsync) before the listener returns, so the inbox call that made a
    splice returns only once the bytes are in the file and a `kill -9` cannot lose an
    accepted message. Everything else, notably the stream chunks, is written by a timer at
    most `batch_window` seconds after the first queued event, and the fsync of both kinds
    runs in the same window on a worker thread. `ctx.sessions.flush(session)` writes and
    fsyncs everything at once.

    Reading: `load(id)` is the strict loader `resume()` uses (see `loader`);
    `list_sessions()` reads only headers; `read_session_log(path)` (in `reader`) is the
    tolerant one for viewing.

    One process writes a session at a time: a session's lock (`lock.py`) is taken before
    its log is repaired, resumed or first created, and held while it is live; another
    process gets `SessionLockedError` naming the holder. Creating a session whose id
    already has a different log on disk is refused.
    """

    def __init__(self, root: str | os.PathLike[str] | None = None, *,
                 batch_window: float = DEFAULT_BATCH_WINDOW) -> None:
        self.root = Path(os.path.abspath(os.path.expanduser(root))) if root is not None \
            else default_root()
        if not 0 < batch_window <= DEFAULT_BATCH_WINDOW:
            raise ValueError(f"batch_window must be in (0, {DEFAULT_BATCH_WINDOW}] seconds")
        self.batch_window = batch_window
        self._live: dict[Session, SessionWriter] = {}
        self._refused: set[Session] = set()
        self._retired: list[SessionWriter] = []  # disposed with events still unwritten
        self._loaded: dict[str, _Loaded] = {}
        self._loaded_lock = threading.Lock()  # load() may run in a worker thread
        self._locks: dict[str, SessionLock] = {}  # session id -> its held lock
        self._detach: Callable[[], None] | None = None
        self.lost_on_exit: str | None = None  # set by detach when events could not be written
        self.companions: list[Any] = []
        """Other records kept beside the sessions (the open workspace): each one's
        `save_failure` joins this persistence's, so one "not saved" state covers them."""
        self.keep_named = False
        """Write sessions that are only named too (see `keep_named_sessions`)."""
        self.on_first_write: list[Callable[[Mapping[str, Any]], None]] = []
        """Called with a new session's header just before its log is first created (the
        workspace creates its own record there, so a session never exists on disk without
        the workspace it belongs to). An exception is logged, never raised."""

    def __repr__(self) -> str:
        return f"JsonlPersistence({str(self.root)!r})"

    # -- attaching ------------------------------------------------------------------------------

    def attach(self, ctx: Context) -> Callable[[], None]:
        """Persist every session of `ctx`'s world; returns `detach()` (idempotent).

        Pass the root context: a listener registered through an agent context
        would hear only that agent. Sets `ctx.registry.persistence` so
        `ctx.agents.resume()` can load through this object. `detach()` (also run
        when the context's scope unwinds) stops listening, then writes and
        fsyncs everything still pending.
        """
        if self._detach is not None:
            raise RuntimeError(f"{self!r} is already attached to a context")
        offs: list[Callable[[], None]] = []

        @once
        def detach() -> None:
            for off in reversed(offs):
                off()
            self._detach = None
            if getattr(ctx.registry, "persistence", None) is self:
                ctx.registry.persistence = None
            self._drain_all()

        # Registered before the listeners so a scope unwind removes them first.
        offs.append(ctx.effect(detach))
        offs.append(ctx.on("session/created", self._on_created))
        offs.append(ctx.on("session/event", self._on_event))
        offs.append(ctx.on("session/flush", self._on_flush))
        offs.append(ctx.on("session/disposed", self._on_disposed))
        ctx.registry.persistence = self
        self._detach = detach
        for session in ctx.sessions.list():  # sessions that went live before attaching
            self._adopt_quietly(session)
        return detach

    # -- listeners ------------------------------------------------------------------------------

    def _on_created(self, session: Session) -> None:
        # A raise here vetoes the creation: a live session must not silently
        # write into (or next to) another session's stored log.
        self._refused.discard(session)
        self._writer_for(session)

    def _on_event(self, session: Session, event: SessionEvent) -> None:
        if session in self._refused:
            return
        writer = self._live.get(session)
        if writer is None:
            writer = self._adopt_quietly(session)
            if writer is None:
                return
        writer.capture(session, event)
        self._schedule(writer, is_durable_type(event.type))

    async def _on_flush(self, session: Session) -> None:
        writer = self._live.get(session) or self._writer_for(session)
        writer.cancel_timer()
        writer.write_pending()
        if writer.unsynced:
            await asyncio.get_running_loop().run_in_executor(None, writer.sync)

    def _on_disposed(self, session: Session) -> None:
        self._refused.discard(session)
        writer = self._live.pop(session, None)
        if writer is None:
            self._unlock(session.id)
            return
        writer.cancel_timer()
        try:
            writer.write_pending()
        except OSError:
            self._retired.append(writer)  # retried (and unlocked) when this persistence detaches
        retired = writer in self._retired
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._finish(writer)
            if not retired:
                self._unlock(session.id)
            return

        def closed(_: Any) -> None:
            writer.close()
            if not retired and not any(s.id == session.id for s in self._live):
                self._unlock(session.id)

        future = loop.run_in_executor(None, self._sync_quietly, writer)
        future.add_done_callback(closed)

    # -- scheduling -----------------------------------------------------------------------------

    def _schedule(self, writer: SessionWriter, durable: bool) -> None:
        if durable:
            try:
                writer.write_pending()
            except OSError:
                pass  # logged by the writer; the events stay pending
        if writer.timer is not None or not (writer.pending or writer.unsynced):
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._write_without_loop(writer)
            return
        writer.timer = loop.call_later(self.batch_window, self._on_timer, writer, loop)

    def _on_timer(self, writer: SessionWriter, loop: asyncio.AbstractEventLoop) -> None:
        writer.timer = None
        try:
            writer.write_pending()
        except OSError:
            # Keep trying while the loop runs: when space (or write access) returns,
            # the file catches up with memory without anyone having to type.
            if writer in self._live.values() and writer.timer is None:
                writer.timer = loop.call_later(RETRY_DELAY, self._on_timer, writer, loop)
            return
        if writer.unsynced:
            loop.run_in_executor(None, self._sync_quietly, writer)

    def _write_without_loop(self, writer: SessionWriter) -> None:
        """No loop, so no timer: write now, and fsync once a window has passed."""
        try:
            writer.write_pending()
        except OSError:
            return
        if time.monotonic() - writer.last_sync >= self.batch_window:
            self._sync_quietly(writer)

    @staticmethod
    def _sync_quietly(writer: SessionWriter) -> None:
        try:
            writer.sync()
        except OSError as error:
            log.error('session "%s": fsync of %s failed (retried at the next window or flush): '
                      "%s", writer.session_id, writer.path, error)

    def _finish(self, writer: SessionWriter) -> None:
        self._sync_quietly(writer)
        writer.close()

    def _drain_all(self) -> None:
        writers = [*self._live.values(), *self._retired]
        self._live.clear()
        self._refused.clear()
        self._retired = []
        unsaved: list[SessionWriter] = []
        for writer in writers:
            writer.cancel_timer()
            try:
                writer.write_pending()
            except OSError:
                log.error('session "%s": %d event(s) could not be written to %s and are lost '
                          "with this process", writer.session_id, len(writer.pending),
                          writer.path)
                unsaved.append(writer)
            self._finish(writer)
        if unsaved:
            first = unsaved[0]
            count = sum(len(writer.pending) for writer in unsaved)
            self.lost_on_exit = (
                f"nothing more could be saved under {self.root}: {count} event(s) of "
                f"{len(unsaved)} session(s) were not written ({first.failure})")
        with self._loaded_lock:
            locks, self._locks = self._locks, {}
        for lock in locks.values():
            lock.release()

    def keep_named_sessions(self) -> None:
        """From now on a session holding only its name (and route) is written as well, and
        those already named are written now. Called when the workspace reaches the disk: an
        agent the person made and named there is expected back with it, message or not."""
        self.keep_named = True
        for writer in list(self._live.values()):
            writer.keep_named = True
            if not writer.materialized and not writer.creating and writer.pending:
                self._schedule(writer, True)

    def create_log(self, session: Session) -> None:
        """Put `session`'s log on disk now (its header and whatever is pending, a name
        alone included), or raise `OSError` / `SessionLogError` saying why it cannot be.
        The `spawn_agent` tool asks before it hands a sub-agent its task: a child whose log
        cannot exist is a failed spawn, not a success whose log is lost with the process."""
        if session in self._refused:
            raise SessionLogError(f'session "{session.id}" is not persisted')
        writer = self._writer_for(session)
        writer.cancel_timer()
        writer.write_pending(create=True)

    def forget(self, session: Session) -> None:
        """Stop persisting `session` and drop what it has pending: it is being thrown away
        because its log could not be created (`create_log`), so nothing of it is "lost"."""
        self._refused.add(session)
        writer = self._live.pop(session, None)
        if writer is not None:
            writer.cancel_timer()
            writer.pending.clear()
            writer.close()
        self._unlock(session.id)

    # -- health ---------------------------------------------------------------------------------

    @property
    def save_failure(self) -> str | None:
        """Why some live session is not (fully) on disk right now, or None when all is saved.

        Cheap enough to poll: a UI shows it as a persistent "not saved" state. It
        clears by itself once a retry (every `RETRY_DELAY` s) writes everything.
        """
        for writer in (*tuple(self._live.values()), *self._retired):
            failure = writer.failure
            if failure is not None and writer.pending:
                where = getattr(failure, "filename", None) or writer.path
                reason = getattr(failure, "strerror", None) or str(failure)
                return f"{reason}: {where}"
        for companion in tuple(self.companions):
            failure = getattr(companion, "save_failure", None)
            if failure is not None:
                return str(failure)
        return None

    # -- locking --------------------------------------------------------------------------------

    def _lock(self, session_id: str, path: Path) -> bool:
        """Hold the lock of `session_id` (whose log or directory is `path`); True if newly taken.

        Raises `SessionLockedError` when another process (or another
        persistence in this one) holds it.
        """
        with self._loaded_lock:
            if session_id in self._locks:
                return False
        lock = SessionLock.acquire(path, session_id)
        with self._loaded_lock:
            if session_id in self._locks:  # taken meanwhile by another thread of ours
                lock.release()
                return False
            self._locks[session_id] = lock
        return True

    def _unlock(self, session_id: str) -> None:
        with self._loaded_lock:
            lock = self._locks.pop(session_id, None)
        if lock is not None:
            lock.release()

    def release(self) -> None:
        """Let go of sessions this object loaded but never made live (their locks too).

        A tool that only loads (a check, an export of a repaired log) calls this when
        done, so another process can resume those sessions while this one runs on.
        """
        live = {session.id for session in tuple(self._live)}
        with self._loaded_lock:
            self._loaded.clear()
            idle = [key for key in self._locks if key not in live]
            locks = [self._locks.pop(key) for key in idle]
        for lock in locks:
            lock.release()

    def lock_holder(self, header_or_id: Mapping[str, Any] | str) -> LockInfo | None:
        """Who has this stored session open (this process included), or None; never raises."""
        try:
            path = self.path_for(header_or_id)
        except (SessionLogError, OSError):
            return None
        return lock_holder(path)

    # -- adopting a live session ------------------------------------------------------------------

    def _adopt_quietly(self, session: Session) -> SessionWriter | None:
        try:
            return self._writer_for(session)
        except SessionLogError as error:
            self._refused.add(session)
            log.error('session "%s" is not persisted: %s', session.id, error)
            return None

    def _writer_for(self, session: Session) -> SessionWriter:
        writer = self._live.get(session)
        if writer is not None:
            return writer
        writer = self._open_writer(session)
        writer.keep_named = self.keep_named
        self._live[session] = writer
        fresh = writer.capture_existing(session.events)
        self._schedule(writer, any(is_durable_type(event.type) for event in fresh))
        return writer

    def _open_writer(self, session: Session) -> SessionWriter:
        """A writer positioned after whatever part of `session` is already on disk."""
        header = dict(session.header)
        planned = self._planned_path(header)
        with self._loaded_lock:
            loaded = self._loaded.pop(session.id, None)
        try:
            found = self._find(session.id)
        except OSError as error:
            log.warning('session "%s": cannot look for an existing log under %s (%s); assuming '
                        "none", session.id, self.root, error)
            found = []
        if not found:
            writer = SessionWriter(header, planned, materialized=False)
            writer.before_create = lambda directory: self._before_create(header, directory)
            return writer
        path = found[0]
        if path.parent != planned.parent:
            raise SessionCollisionError(
                f'session "{session.id}" is already persisted at {path} (another cwd); a live '
                "session cannot reuse its id")
        self._lock(session.id, path)
        if loaded is not None and loaded.path == path and self._size(path) == loaded.size:
            stored, size, compression = loaded.events, loaded.size, loaded.compression
        else:
            stored, size, compression = read_for_adoption(path, session.id)
        if not _covers(session, stored):
            raise SessionCollisionError(
                f'session "{session.id}" already has a stored log at {path} that this live '
                "session does not continue (id collision); resume it instead of creating it")
        return SessionWriter(header, path, materialized=True, compression=compression,
                             size=size, next_seq=len(stored))

    def _before_create(self, header: Mapping[str, Any], directory: Path) -> None:
        self._lock_new(header["id"], directory)
        for observer in list(self.on_first_write):
            try:
                observer(header)
            except Exception:
                log.exception('session "%s": a first-write observer failed', header["id"])

    def _lock_new(self, session_id: str, directory: Path) -> None:
        try:
            self._lock(session_id, directory)
        except SessionLockedError as error:
            raise OSError(errno.EBUSY, str(error)) from None

    @staticmethod
    def _size(path: Path) -> int:
        try:
            return path.stat().st_size
        except OSError:
            return -1

    # -- lookup ---------------------------------------------------------------------------------

    def path_for(self, header_or_id: Mapping[str, Any] | str) -> Path:
        """Where a session's log lives, or will live once it has events.

        For a header: the live session's file, else an existing upstream
        `session.jsonl.zstd` in the directory the header names, else the plain
        `session.jsonl` this build writes there (one `stat`, no reading). For an
        id: the live session's file, else the one stored artifact under any
        project directory; `SessionNotFoundError` if there is none.
        """
        session_id = header_or_id["id"] if isinstance(header_or_id, Mapping) else header_or_id
        for session, writer in self._live.items():
            if session.id == session_id:
                return writer.path
        if isinstance(header_or_id, Mapping):
            planned = self._planned_path(header_or_id)
            upstream = planned.with_name(ZSTD_LOG_NAME)
            return upstream if not planned.exists() and upstream.exists() else planned
        found = self._find(header_or_id)
        if not found:
            raise SessionNotFoundError(f'no stored session "{header_or_id}" under {self.root}')
        return found[0]

    def _planned_path(self, header: Mapping[str, Any]) -> Path:
        return session_dir(self.root, header) / RAW_LOG_NAME

    def _find(self, session_id: str) -> list[Path]:
        return find_artifacts(self.root, session_id)

    # -- loading --------------------------------------------------------------------------------

    def load(self, session_id: str) -> LoadedSession:
        """Strictly load, repair (durably) and return a stored session for resuming.

        Raises `SessionNotFoundError`, `SessionLogCorruptError` (naming file and
        line) or `SessionFormatUnsupportedError`. A session that is live in this
        persistence is refused: it is the authority on its own log. Safe to run
        in a worker thread (`asyncio.to_thread`), which keeps a long log's load
        off the event loop.
        """
        if any(session.id == session_id for session in tuple(self._live)):
            raise SessionLogError(f'session "{session_id}" is live; dispose it before loading '
                                  "it again")
        found = self._find(session_id)
        if not found:
            raise SessionNotFoundError(f'no stored session "{session_id}" under {self.root}')
        path = found[0]
        taken = self._lock(session_id, path)
        try:
            prepared = prepare_load(path, session_id,
                                    lambda header: session_dir(self.root, header))
            size = prepared.scanned.size
            if prepared.needs_repair:
                size = commit_repair(prepared)
        except BaseException:
            if taken:
                self._unlock(session_id)
            raise
            log.info('session "%s": repaired %s (%s torn byte(s) cut, %d closer(s) appended)',
                     session_id, path, prepared.scanned.size - (
                         prepared.scanned.truncate_to or prepared.scanned.size),
                     len(prepared.closers))
        events = prepared.events + prepared.closers
        with self._loaded_lock:
            self._loaded.pop(session_id, None)
            while len(self._loaded) >= _LOADED_KEEP:  # loaded, never resumed: drop the oldest
                stale = next(iter(self._loaded))
                del self._loaded[stale]
                if not any(s.id == stale for s in tuple(self._live)):
                    lock = self._locks.pop(stale, None)
                    if lock is not None:
                        lock.release()
            self._loaded[session_id] = _Loaded(path, size, prepared.scanned.compression, events)
        return LoadedSession(prepared.header, events)

    # -- listing --------------------------------------------------------------------------------

    def describe(self, header_or_id: Mapping[str, Any] | str) -> dict[str, Any]:
        """A stored session's latest title and first prompt, for choosing one to resume.

        Reads at most a bounded slice from each end of the log; keys are absent when
        unknown (or the log is upstream's zstd form). Never raises for a bad file.
        """
        try:
            path = self.path_for(header_or_id)
        except (SessionLogError, OSError):
            return {}
        return summarize(path)

    def list_sessions(self) -> list[dict[str, Any]]:
        """Headers of every stored session, newest first (only first lines are read).

        A file whose header is missing, torn, undecodable or stored under a
        directory its id and cwd do not name is skipped with a logged warning;
        listing never raises for the contents of the root.
        """
        return list_headers(self.root)


def _covers(session: Session, stored: list[Any]) -> bool:
    """Whether the live session's first events are exactly the stored ones."""
    events = session.events
    if len(events) < len(stored):
        return False
    for live, record in zip(events, stored, strict=False):
        if live.data is record.get("data"):  # seeded from this very load: same objects
            if live.seq != record.get("seq") or live.type != record.get("type"):
                return False
            continue
        if not json_equal(live.to_json(), record):
            return False
    return True
