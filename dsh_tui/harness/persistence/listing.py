"""Finding stored logs under a root without reading more than their first line.

A session picker scales with the number of sessions, not with the size of
every conversation, so listing reads only the header line (or the header frame
of a zstd log). Finding one id probes its encoded directory in every project
directory, because the id alone does not say which cwd it was stored under.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import zstandard

from ..safe_text import visible_label
from .errors import SessionLogCorruptError
from .header import looks_like_header, viewer_header
from .paths import LOG_NAMES, encode_segment, session_dir
from .scan import compression_of, parse_line
from .zstd_frames import decode_frame, scan_frames

log = logging.getLogger("dsh_tui.harness.persistence")

_HEADER_READ_LIMIT = 1 << 20  # a header line is tiny; give up early on a file without one


def creation_order(header: Mapping[str, Any]) -> tuple[int, str]:
    """The order sessions were made in: by `createdAt`, ties (two made in one millisecond
    by different processes, or by a version before `created_ms`) broken by id, so every
    listing and a reopened tree agree."""
    created = header.get("createdAt")
    return (created if type(created) is int else 0, str(header.get("id")))


def subdirectories(directory: Path) -> list[Path]:
    """The directories in `directory`, sorted ([] if it is missing). An entry that cannot
    be looked at (a symbolic link to itself: ELOOP) is skipped with a one-line warning; it
    used to abort the listing of its whole directory, so every session there was hidden."""
    try:
        entries = list(os.scandir(directory))
    except FileNotFoundError:
        return []
    found = []
    for entry in entries:
        try:
            if entry.is_dir():
                found.append(Path(entry.path))
        except OSError as error:
            log.warning("skipping %s: %s", visible_label(entry.path), error.strerror or error)
    return sorted(found)


def project_dirs(root: Path) -> list[Path]:
    """Every project directory under `root`, sorted (a missing root has none)."""
    return subdirectories(root)


def find_artifacts(root: Path, session_id: str) -> list[Path]:
    """The stored log of `session_id` (`[]` or one path); more than one is an error."""
    segment = encode_segment(session_id)
    found = [project / segment / name for project in project_dirs(root)
             for name in LOG_NAMES if (project / segment / name).is_file()]
    if len(found) > 1:
        listing = ", ".join(str(path) for path in found)
        raise SessionLogCorruptError(
            f'session "{session_id}" is stored more than once ({listing}); keep one')
    return found


def read_header_record(path: Path) -> Any:
    """The parsed first record of a log, reading only as far as it (None if incomplete)."""
    with path.open("rb") as file:
        buf = file.read(4)
        if compression_of(path, buf) == "zstd":
            while True:
                frames = scan_frames(buf, max_frames=1)
                if frames.frames:
                    start, end = frames.frames[0]
                    text = decode_frame(buf[start:end])
                    if not text.endswith(b"\n") or text.count(b"\n") != 1:
                        return None
                    return parse_line(text[:-1])
                more = file.read(8192)
                if not more or len(buf) > _HEADER_READ_LIMIT:
                    return None
                buf += more
        while b"\n" not in buf:
            more = file.read(8192)
            if not more or len(buf) > _HEADER_READ_LIMIT:
                return None
            buf += more
        return parse_line(buf[:buf.index(b"\n")])


def _entry(root: Path, path: Path) -> dict[str, Any] | None:
    try:
        record = read_header_record(path)
    except (OSError, ValueError, RecursionError, zstandard.ZstdError) as error:
        log.warning("skipping %s: %s", path, error)
        return None
    if record is None or not looks_like_header(record):
        log.warning("skipping %s: no complete session header line", path)
        return None
    try:
        expected = session_dir(root, record)
    except ValueError as error:
        log.warning("skipping %s: %s", path, error)
        return None
    if expected != path.parent:
        log.warning('skipping %s: its header (id "%s") belongs in %s', path, record["id"],
                    expected)
        return None
    return viewer_header(record)


def list_headers(root: Path) -> list[dict[str, Any]]:
    """Headers (minus the `type` tag) of every readable stored session, newest first."""
    headers: list[dict[str, Any]] = []
    seen: dict[str, Path] = {}
    for project in project_dirs(root):
        try:
            session_dirs = subdirectories(project)
        except OSError as error:
            log.warning("cannot list %s: %s", project, error)
            continue
        for directory in session_dirs:
            for name in LOG_NAMES:
                path = directory / name
                if not path.is_file():
                    continue
                header = _entry(root, path)
                if header is None:
                    continue
                if header["id"] in seen:
                    log.warning('session "%s" is stored twice (%s and %s); listing the first',
                                header["id"], seen[header["id"]], path)
                    continue
                seen[header["id"]] = path
                headers.append(header)
    headers.sort(key=creation_order, reverse=True)
    return headers
