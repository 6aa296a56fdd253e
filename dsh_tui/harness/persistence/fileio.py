"""The few filesystem operations a session log needs, each with its failure story.

Kept apart from the buffering logic so every syscall that can lose or tear data
is in one short, reviewable place: whole-buffer appends that roll back a
partial write, publishing a new file without ever replacing an existing one,
and the directory fsyncs that make a new name survive a power cut.
"""

from __future__ import annotations

import errno
import os
import secrets
from collections.abc import Sequence
from pathlib import Path
from typing import cast

_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_BINARY = getattr(os, "O_BINARY", 0)


def make_private_dirs(path: Path) -> list[Path]:
    """Create `path` and missing parents with mode 0700; returns the ones created, outermost first."""
    missing: list[Path] = []
    current = path
    while not current.exists():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    created: list[Path] = []
    for directory in reversed(missing):
        try:
            directory.mkdir(mode=0o700)
            created.append(directory)
        except FileExistsError:
            pass
    return created


def fsync_dir(path: Path) -> None:
    """Make a directory's entries durable (a no-op where directories cannot be opened)."""
    try:
        fd = os.open(path, os.O_RDONLY | _O_CLOEXEC)
    except (PermissionError, IsADirectoryError):  # Windows: directories cannot be opened
        return
    try:
        os.fsync(fd)
    except OSError as error:
        if error.errno not in (errno.EINVAL, errno.EBADF, errno.ENOTSUP):
            raise
    finally:
        os.close(fd)


def write_all(fd: int, data: bytes) -> None:
    """os.write until every byte is written (a short write is retried, never dropped)."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        if written <= 0:
            raise OSError(errno.EIO, "write wrote no bytes")
        view = view[written:]


def append_all(fd: int, data: bytes | Sequence[bytes], size_before: int) -> None:
    """Append `data` (or its pieces, in order) through an O_APPEND fd; on failure cut
    the file back to `size_before`.

    A half-written batch would otherwise be followed by the retried batch, and
    the torn line in between would read as corruption before a later turn end.
    """
    try:
        for piece in _pieces(data):
            write_all(fd, piece)
    except OSError:
        try:
            os.ftruncate(fd, size_before)
        except OSError:
            pass  # the caller re-truncates before its next write
        raise


def open_append(path: Path) -> int:
    """Open for appending only (O_APPEND: concurrent writes never interleave mid-record), not
    inherited by child processes."""
    return os.open(path, os.O_WRONLY | os.O_APPEND | _O_CLOEXEC | _O_BINARY)


def _pieces(data: bytes | Sequence[bytes]) -> Sequence[bytes]:
    if isinstance(data, (bytes, bytearray, memoryview)):
        return [cast(bytes, data)]  # any bytes-like object is written as it is
    return data


def publish_new_file(final: Path, content: bytes | Sequence[bytes]) -> None:
    """Create `final` holding exactly `content` (or its pieces, in order), never replacing
    an existing file.

    The bytes go to a private temp file first and are then hard-linked into
    place: `link` fails with EEXIST instead of overwriting, so two processes
    creating the same session cannot clobber each other, and a reader never
    sees a half-written first batch. Where hard links are unsupported the temp
    file is renamed after an existence check (Windows' rename never replaces).
    """
    tmp = final.with_name(f"{final.name}.{secrets.token_hex(6)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_CLOEXEC | _O_BINARY, 0o600)
    try:
        try:
            for piece in _pieces(content):
                write_all(fd, piece)
        finally:
            os.close(fd)
        try:
            os.link(tmp, final)
        except FileExistsError:
            raise
        except (OSError, NotImplementedError, AttributeError) as error:
            if isinstance(error, OSError) and error.errno not in (
                    errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK,
                    errno.ENOSYS):
                raise
            if final.exists():
                raise FileExistsError(errno.EEXIST, "session log already exists",
                                      str(final)) from None
            os.rename(tmp, final)
    finally:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass


def replace_durably(final: Path, content: bytes) -> None:
    """Make `final` hold exactly `content`, replacing what it held: written to a private
    temp file, fsynced, renamed over `final`, then the directory fsynced. A crash leaves
    either the old file or the new one whole, never a mix (the temp file may stay behind;
    its name ends in `.tmp`)."""
    tmp = final.with_name(f"{final.name}.{secrets.token_hex(6)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_CLOEXEC | _O_BINARY, 0o600)
    try:
        try:
            write_all(fd, content)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, final)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    fsync_dir(final.parent)


def truncate_durably(path: Path, size: int) -> None:
    """Cut `path` back to `size` bytes and fsync, so a repaired torn tail stays cut after a
    power loss (the first of a repair's two durable steps)."""
    fd = os.open(path, os.O_WRONLY | _O_CLOEXEC | _O_BINARY)
    try:
        os.ftruncate(fd, size)
        os.fsync(fd)
    finally:
        os.close(fd)


def append_durably(path: Path, data: bytes) -> None:
    """Append `data` at the end of `path` and fsync before returning: earlier bytes are never
    rewritten (the second durable step of a repair)."""
    fd = open_append(path)
    try:
        size = os.fstat(fd).st_size
        append_all(fd, data, size)
        os.fsync(fd)
    finally:
        os.close(fd)
