"""One writer per session: an advisory lock file beside each session log.

Two processes appending to one log interleave seqs and leave a log that no longer
resumes, so a process takes `session.lock` (an exclusive `flock`) before it repairs,
resumes or first writes a log, and holds it while the session is live. The kernel drops
a `flock` when its holder dies, `kill -9` included, so a dead process's lock is simply
free again: nothing to detect or steal. The file names its holder (pid and host) so the
refusal can say who has the session open. Sharing within a process is on `SessionLock`.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from .errors import SessionLogError
from .paths import LOG_NAMES

try:
    import fcntl
except ImportError:  # Windows: no flock; sessions are not locked there
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger("dsh_tui.harness.persistence")

LOCK_NAME = "session.lock"
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
# A listing probes with a shared lock for an instant; an acquirer retries over
# this long so a probe never makes a resume fail.
_ACQUIRE_PATIENCE = 0.25

# Locks this process holds: real path of the lock file -> [fd, number of holders].
_HELD: dict[str, list[int]] = {}
_HELD_LOCK = threading.Lock()


class SessionLockedError(SessionLogError):
    """The session is open in another process (or another persistence of this one)."""

    def __init__(self, message: str, holder: LockInfo) -> None:
        super().__init__(message)
        self.holder = holder


@dataclass(frozen=True, slots=True)
class LockInfo:
    """Who holds a session's lock: pid and host as the holder wrote them (None if unknown)."""

    pid: int | None
    host: str | None

    @property
    def is_this_process(self) -> bool:
        """Whether this very process holds the lock (then the UI does not warn about it)."""
        return self.pid == os.getpid() and self.host == socket.gethostname()

    def describe(self) -> str:
        """Who holds the lock, for a message ("pid 123 on host", or "another process")."""
        if self.pid is None:
            return "another process"
        where = f" on {self.host}" if self.host else ""
        return f"pid {self.pid}{where}"


def lock_file(path: Path, name: str = LOCK_NAME) -> Path:
    """The lock file of a session, given its log file or its directory (`name`: another
    record that locks the same way, a workspace's `workspace.lock`)."""
    path = Path(path)
    directory = path.parent if path.name in LOG_NAMES else path
    return directory / name


def _read_info(fd: int) -> LockInfo:
    try:
        raw = os.pread(fd, 4096, 0)
        data = json.loads(raw.decode("utf-8"))
        pid = data.get("pid")
        host = data.get("host")
        return LockInfo(pid if type(pid) is int else None, host if isinstance(host, str) else None)
    except (OSError, ValueError, AttributeError):
        return LockInfo(None, None)  # being written right now, or not ours


def lock_holder(path: Path, name: str = LOCK_NAME) -> LockInfo | None:
    """The holder of the session at `path` (log file or directory), or None if it is free.

    One open and one non-blocking probe; never creates, waits or raises for
    an unreadable directory (that reads as free).
    """
    if fcntl is None:
        return None
    try:
        fd = os.open(lock_file(path, name), os.O_RDONLY | _O_CLOEXEC)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _read_info(fd)
        except OSError:
            return None  # a filesystem without flock: nobody can hold it
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


class SessionLock:
    """A held session lock; `release()` is idempotent (process exit releases it too).

    The lock belongs to the process: a second persistence object in the same process (a
    test's second "lifecycle", a viewer) shares it rather than fighting its own process.
    `lock_holder(path)` is the cheap query for listings.
    """

    def __init__(self, path: Path, fd: int | None, key: str | None = None) -> None:
        self.path = path
        self._fd = fd
        self._key = key

    @classmethod
    def acquire(cls, path: Path, session_id: str, *, name: str = LOCK_NAME,
                what: str = "session") -> SessionLock:
        """Take the lock of the session at `path` (log file or directory, which must exist).

        Raises `SessionLockedError` naming the holder. Where the lock file
        cannot be created (a read-only data dir) or the filesystem has no
        `flock`, returns an unheld lock: such a session cannot be written by
        anyone, and refusing to open it would hide it for no gain.
        """
        target = lock_file(path, name)
        if fcntl is None:
            return cls(target, None)
        key = os.path.realpath(target)
        with _HELD_LOCK:
            held = _HELD.get(key)
            if held is not None:
                held[1] += 1
                return cls(target, held[0], key)
            lock = cls._acquire(target, key, session_id, what)
            if lock._fd is not None and lock._key is not None:
                _HELD[key] = [lock._fd, 1]
            return lock

    @classmethod
    def _acquire(cls, target: Path, key: str, session_id: str, what: str) -> SessionLock:
        try:
            fd = os.open(target, os.O_RDWR | os.O_CREAT | _O_CLOEXEC, 0o600)
        except OSError:
            try:
                fd = os.open(target, os.O_RDONLY | _O_CLOEXEC)
            except OSError as error:
                log.warning('%s "%s": cannot create its lock file %s (%s)', what, session_id,
                            target, error)
                return cls(target, None)
        deadline = time.monotonic() + _ACQUIRE_PATIENCE
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() < deadline:
                    time.sleep(0.02)
                    continue
                holder = _read_info(fd)
                os.close(fd)
                raise SessionLockedError(
                    f'{what} "{session_id}" is open in another dsh-tui ({holder.describe()}); '
                    "close it there first", holder) from None
            except OSError as error:
                if error.errno not in (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOTSUP,
                                       errno.EINVAL):
                    os.close(fd)
                    raise
                return cls(target, fd)  # no flock here: unlocked, as before
        info = json.dumps({"pid": os.getpid(), "host": socket.gethostname()}) + "\n"
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, info.encode("utf-8"), 0)
        except OSError:
            pass  # held all the same; only the holder's name is missing
        return cls(target, fd, key)

    @property
    def held(self) -> bool:
        """Whether this object still holds the lock (False after `release`, or when the
        filesystem could not lock at all)."""
        return self._fd is not None

    def release(self) -> None:
        """Drop this hold; the flock goes with the last holder of the file in this process.
        Idempotent."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        with _HELD_LOCK:
            held = _HELD.get(self._key) if self._key is not None else None
            if held is not None and held[0] == fd:
                held[1] -= 1
                if held[1] > 0:
                    return
                del _HELD[self._key]  # type: ignore[arg-type]
            os.close(fd)  # closing the only descriptor drops the flock
