"""`read_session_tail`: open a huge log for viewing by its last part only.

A power user's session log can reach a gigabyte. `dsh-tui view` must start in a
couple of seconds and must not hold the file in memory, and what a person looks
at first is the end of the session. So a plain JSONL log larger than `limit`
bytes is read as its header line plus its last `limit` bytes, from the first
line that starts inside them; everything else is read exactly as
`read_session_log` reads it. Zstandard logs have no line boundaries to seek to
and are read whole.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, BinaryIO

from ..session import SessionEvent
from .errors import SessionLogError
from .header import looks_like_header, viewer_header
from .reader import events_of_lines, read_session_log
from .scan import parse_line

TAIL_BYTES = 4 * 1024 * 1024
"""What `dsh-tui view` reads of a big plain log: its last 4 MB (about 30,000 events)."""

_HEADER_LIMIT = 1024 * 1024


def header_line(handle: BinaryIO, file: Path) -> tuple[bytes, Any]:
    """(line 1 of a plain log with its newline, that line parsed), checked to be a session
    header. A big log is opened by its end (`read_session_tail`, `open_pages`); this is the
    one line of its start either reads, so a file that is no session log is refused
    before any page is."""
    handle.seek(0)
    head = handle.readline(_HEADER_LIMIT)
    if not head.endswith(b"\n"):
        raise SessionLogError(f"{file}: empty or header-less session log")
    try:
        first = parse_line(head[:-1])
    except (ValueError, RecursionError):
        first = None
    if not looks_like_header(first):
        raise SessionLogError(f"{file}: not a session log (line 1 is not a session header)")
    return head, first


def read_session_tail(path: str | os.PathLike[str], limit: int = TAIL_BYTES
                      ) -> tuple[dict[str, Any], list[SessionEvent], int]:
    """(header, events, skipped): `skipped` is how many bytes before the tail were not read."""
    file = Path(path)
    size = file.stat().st_size
    with file.open("rb") as handle:
        magic = handle.read(4)
        if size <= limit or magic == b"\x28\xb5\x2f\xfd":  # small, or Zstandard frames
            header, events = read_session_log(file)
            return header, events, 0
        head, first = header_line(handle, file)
        start = size - limit
        handle.seek(start - 1)
        text = handle.read()
    cut = text.find(b"\n")  # the byte before the tail tells whether a line starts at it
    if cut < 0:
        return viewer_header(first), [], size - len(head)
    lines = text[cut + 1:].split(b"\n")
    lines.pop()  # a torn last line is never a committed record
    skipped = start + cut - len(head)
    return viewer_header(first), events_of_lines(file, lines, 0), skipped
