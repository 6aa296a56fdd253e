"""`read_session_log`: open any single log file for viewing, never giving up on detail.

The viewer's job is to show what a log holds, including logs this build would
refuse to resume: upstream snapshot logs with shape variants and seq gaps,
logs of newer format versions, logs with a damaged line in the middle. So the
rules here are the opposite of the strict loader's: packed rows are expanded,
seqs stay as recorded, unknown types and shapes are kept as they are, a bad
line is skipped with a warning, and only a torn last line is silently dropped.
The one thing that is fatal is a file whose first line is not a session header:
then it is not a session log at all.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

import zstandard

from ..session import SessionEvent
from .chunk_rows import ROW_TYPES, MalformedRowError, expand_row
from .errors import SessionLogError
from .header import looks_like_header, viewer_header
from .legacy import steering_as_user_message
from .scan import compression_of, parse_line
from .zstd_frames import decode_frame, decode_torn_prefix, scan_frames

log = logging.getLogger("dsh_tui.harness.persistence")


def _zstd_text(path: Path, buf: bytes) -> bytes:
    """The logical text of a zstd log: every readable frame, newline-terminated."""
    scan = scan_frames(buf, strict=False)
    if scan.error is not None:
        log.warning("%s: stopped reading at a damaged Zstandard frame: %s", path, scan.error)
    parts: list[bytes] = []
    for index, (start, end) in enumerate(scan.frames):
        try:
            text = decode_frame(buf[start:end])
        except zstandard.ZstdError as error:
            if index == 0:
                raise SessionLogError(f"{path}: the header frame cannot be decoded ({error})") \
                    from None
            log.warning("%s: skipped the Zstandard frame at byte %d: %s", path, start, error)
            continue
        if text and not text.endswith(b"\n"):
            text += b"\n"  # keep a damaged record from swallowing the next frame's first line
        parts.append(text)
    if scan.torn_start is not None:
        parts.append(decode_torn_prefix(buf[scan.torn_start:]))
    return b"".join(parts)


def _event(record: Mapping[str, Any]) -> SessionEvent | None:
    kind, seq, time = record.get("type"), record.get("seq"), record.get("time")
    if not isinstance(kind, str) or not kind or type(seq) is not int or \
            type(time) not in (int, float):
        return None
    return SessionEvent(kind, seq, cast(int, time), record.get("data"), record.get("surfaceOp"),
                        record.get("sourceEventSeqs"), record.get("ignorable") is True)


def read_session_log(path: str | os.PathLike[str]) -> tuple[dict[str, Any], list[SessionEvent]]:
    """The header (as recorded, minus its `type` tag) and the events of one log file.

    Accepts `session.jsonl` and `session.jsonl.zstd` (recognised by content).
    Events are `SessionEvent`s in file order with seqs as recorded; a wrapped
    legacy `steering/message` is shown as the `user/message` it became
    upstream. Raises `SessionLogError` only when the file is not a session log.
    """
    file = Path(path)
    buf = file.read_bytes()
    text = _zstd_text(file, buf) if compression_of(file, buf) == "zstd" else buf
    end = text.find(b"\n")
    if end < 0:
        raise SessionLogError(f"{file}: empty or header-less session log")
    try:
        first = parse_line(text[:end])
    except (ValueError, RecursionError):
        first = None
    if not looks_like_header(first):
        raise SessionLogError(f"{file}: not a session log (line 1 is not a session header)")
    lines = text[end + 1:].split(b"\n")
    lines.pop()  # bytes after the last newline: a torn tail, never a committed record
    return viewer_header(first), events_of_lines(file, lines, 2)


def events_of_lines(file: Path, lines: list[bytes], first_line_no: int) -> list[SessionEvent]:
    """The events of complete record lines, tolerantly (see the module docstring)."""
    events: list[SessionEvent] = []
    for line_no, line in enumerate(lines, start=first_line_no):
        try:
            value = parse_line(line)
        except (ValueError, RecursionError):
            log.warning("%s: line %d is not JSON; skipped", file, line_no)
            continue
        if isinstance(value, dict) and value.get("type") in ROW_TYPES:
            try:
                members = expand_row(value)
            except MalformedRowError as error:
                log.warning("%s: line %d: %s; skipped", file, line_no, error)
                continue
            events.extend(SessionEvent.from_json(member) for member in members)
            continue
        event = _event(steering_as_user_message(value)) if isinstance(value, dict) else None
        if event is None:
            log.warning("%s: line %d is not an event record; skipped", file, line_no)
            continue
        events.append(event)
    return events
