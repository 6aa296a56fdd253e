"""The write-behind log of one live session.

Holds the events not yet on disk and turns them into bytes in the file. It knows nothing
about timers or the event loop: `JsonlPersistence` decides *when* to call
`write_pending` and *where* `sync` runs (a worker thread, so an fsync never stalls the
UI). Its failure rule, that a full disk costs durability but never data or log
integrity, is on `SessionWriter`.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..jsonvalue import dumps_compact
from ..session import Session, SessionEvent
from .fileio import append_all, fsync_dir, make_private_dirs, open_append, publish_new_file
from .header import header_line
from .lines import LineEncoder
from .scan import Compression
from .zstd_frames import encode_frame

log = logging.getLogger("dsh_tui.harness.persistence")


def is_durable_type(event_type: str) -> bool:
    """Events written before their append returns: inbox splices, turn boundaries and
    names (a person's rename is seen in the tree at once; a `kill -9` a moment later
    must not bring the old name back)."""
    return event_type == "agent/inbox/spliced" or event_type.startswith("turn/") \
        or event_type == "session/title"


ROUTE_TYPE = "agent/route"
"""This project's record of the route an agent was made on (`{provider, model}`, ignorable):
a session that never sent a request has no `request/header` to name it."""

NAMING_TYPES = frozenset({"session/title", ROUTE_TYPE})
"""Events that only name a session. A new session holding nothing else is not created on
disk: an app opened (or a browser tab reloaded) and left without a message leaves no file.
Unless `keep_named` is set: then its workspace is on disk, and a named agent is something
the person made and expects back."""


class SessionWriter:
    """Pending events, the open file and the sync bookkeeping of one session.

    Failure rule: bytes leave `pending` only after they are entirely in the file. A failed
    write is rolled back to the last good size and the events stay pending for the next
    attempt, so a full disk costs durability, never data or log integrity.
    """

    def __init__(self, header: Mapping[str, Any], path: Path, *, materialized: bool,
                 compression: Compression = "none", size: int = 0, next_seq: int = 0) -> None:
        self.header = dict(header)
        self.session_id: str = self.header["id"]
        self.path = path
        self.materialized = materialized
        self.compression: Compression = compression
        self.size = size  # bytes known to be good on disk
        self.pending: list[SessionEvent] = []
        self.next_seq = next_seq  # every seq below it is on disk or pending
        self.timer: Any = None  # asyncio.TimerHandle of the batching window
        self.failure: BaseException | None = None
        self.written_gen = 0  # bumped per successful write; fsync covers up to synced_gen
        self.synced_gen = 0
        self.last_sync = 0.0  # time.monotonic() of the last successful sync
        self._fd: int | None = None
        self._tail_dirty = False
        self._dirs_to_sync: list[Path] = []
        self._fd_lock = threading.Lock()  # an fsync in a worker thread vs close()
        self._lines = LineEncoder()
        # Called with the session directory just before the log is first created
        # (the persistence takes the session's lock there); raises OSError to refuse.
        self.before_create: Callable[[Path], None] | None = None
        self.keep_named = False
        """Write a session that is only named (its workspace is on disk)."""
        self.creating = False  # inside `_materialize` (observers must not re-enter it)

    # -- capturing events -----------------------------------------------------------------------

    def capture(self, session: Session, event: SessionEvent) -> bool:
        """Queue `event` (and any earlier event this writer has not seen); False if known."""
        if event.seq < self.next_seq:
            return False
        if event.seq > self.next_seq:
            self.pending.extend(session.events[self.next_seq:event.seq])
        self.pending.append(event)
        self.next_seq = event.seq + 1
        return True

    def capture_existing(self, events: Sequence[SessionEvent]) -> list[SessionEvent]:
        """Queue the events already in the session (a seed) that are not on disk yet."""
        fresh = list(events[self.next_seq:])
        self.pending.extend(fresh)
        self.next_seq = max(self.next_seq, len(events))
        return fresh

    @property
    def unsynced(self) -> bool:
        """Whether bytes written (or directories created) still wait for an fsync; a flush or
        a close must not report durable while this holds."""
        return self.synced_gen < self.written_gen or bool(self._dirs_to_sync)

    # -- writing --------------------------------------------------------------------------------

    def encode(self, events: Sequence[SessionEvent]) -> list[bytes]:
        """The batch's bytes as a few pieces (a huge string is its own, shared by its events)."""
        pieces = self._lines.encode(list(events))
        return [encode_frame(b"".join(pieces))] if self.compression == "zstd" else pieces

    def write_pending(self, *, create: bool = False) -> None:
        """Write every pending event as one batch; raises OSError with nothing lost.
        `create`: make the file now even if nothing (or only a name) is pending."""
        if self.materialized and not self.pending:
            return
        if not self.materialized and not create and (not self.pending or (
                not self.keep_named and all(e.type in NAMING_TYPES for e in self.pending))):
            return  # only named so far: the first real event creates the file, with these
        count = len(self.pending)
        try:
            batch = self.encode(self.pending)
            if self.materialized:
                self._append(batch)
            else:
                self._materialize(batch)
        except OSError as error:
            if self.failure is None:
                log.error('session "%s": writing %d event(s) to %s failed; they stay in memory '
                          "and are retried on the next write or flush: %s", self.session_id,
                          count, self.path, error)
            self.failure = error
            raise
        del self.pending[:count]
        self.written_gen += 1
        if self.failure is not None:
            log.warning('session "%s": writing to %s works again', self.session_id, self.path)
            self.failure = None

    def _materialize(self, batch: list[bytes]) -> None:
        head = (dumps_compact(header_line(self.header)) + "\n").encode("utf-8")
        if self.compression == "zstd":
            head = encode_frame(head)
        session_dir = self.path.parent
        created = make_private_dirs(session_dir)
        self.creating = True
        try:
            if self.before_create is not None:
                self.before_create(session_dir)
            publish_new_file(self.path, [head, *batch])
        finally:
            self.creating = False
        # The new name (and new directories) become durable with the next sync,
        # inside the same batching window as the bytes themselves.
        self._dirs_to_sync = list(dict.fromkeys([session_dir, *(d.parent for d in created)]))
        self.materialized = True
        self.size = len(head) + sum(len(piece) for piece in batch)
        self._fd = open_append(self.path)

    def _append(self, batch: list[bytes]) -> None:
        fd = self._fd
        if fd is None:
            fd = self._fd = open_append(self.path)
        if self._tail_dirty:
            os.ftruncate(fd, self.size)
            self._tail_dirty = False
        try:
            append_all(fd, batch, self.size)
        except OSError:
            self._tail_dirty = True  # re-truncate first if the rollback did not take
            raise
        self.size += sum(len(piece) for piece in batch)

    # -- syncing and closing --------------------------------------------------------------------

    def sync(self) -> None:
        """fsync the file (and, once, the directories a first write created). Thread-safe."""
        with self._fd_lock:
            target = self.written_gen
            dirs, self._dirs_to_sync = self._dirs_to_sync, []
            try:
                if self._fd is not None and self.synced_gen < target:
                    os.fsync(self._fd)
                for directory in dirs:
                    fsync_dir(directory)
            except OSError:
                self._dirs_to_sync = dirs + self._dirs_to_sync
                raise
            self.synced_gen = max(self.synced_gen, target)
            self.last_sync = time.monotonic()

    def close(self) -> None:
        """Close the file descriptor (after any in-flight fsync finishes)."""
        with self._fd_lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def cancel_timer(self) -> None:
        """Stop the pending batching-window timer, if any (before a direct flush or a close)."""
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
