"""When a session last had activity, as a listing shows it ("last active").

Not the log's modification time: resuming a log writes to it without anyone using the
session. Every resume ends the seed with `session/end-seed`, stamped with the time of
the resume; what a resume after a crash appends before it (the repair's closers, the
splices that put back what the crash took) carries the time of the last record the
crash left, never a later one. So the last activity is the `time` of the last record
that is not an end-seed. Only the tail of the log is read.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

TAIL_BYTES = 256 << 10
"""How much of a log's end is read; a tail of nothing but resume records falls back
to the file's modification time."""

_CACHE: dict[tuple[str, int, int], int | None] = {}
_LOCK = threading.Lock()


def last_activity(path: Path) -> int:
    """Milliseconds since the epoch of the session's last activity at `path` (0 when the
    file cannot be read)."""
    try:
        stat = path.stat()
    except OSError:
        return 0
    key = (str(path), stat.st_size, stat.st_mtime_ns)
    with _LOCK:
        cached = _CACHE.get(key, -1)
    if cached == -1:
        cached = _scan(path, stat.st_size) if path.suffix == ".jsonl" else None
        with _LOCK:
            if len(_CACHE) > 4096:
                _CACHE.clear()
            _CACHE[key] = cached
    return cached if isinstance(cached, int) else int(stat.st_mtime * 1000)


def _scan(path: Path, size: int) -> int | None:
    try:
        with path.open("rb") as handle:
            handle.seek(max(0, size - TAIL_BYTES))
            data = handle.read(TAIL_BYTES)
    except OSError:
        return None
    lines = data.split(b"\n")
    lines.pop()  # after the last newline: empty, or a torn line never committed
    if size > TAIL_BYTES and lines:
        lines.pop(0)  # may start mid-line
    return last_activity_of(_records(reversed(lines)))


def _records(lines: Any) -> Any:
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            yield record


def last_activity_of(newest_first: Any) -> int | None:
    """The `time` of the last record that is activity, given the records newest first
    (a packed chunk row's last delta; the header's `createdAt` when nothing followed it
    but end-seeds; None when none of `newest_first` tells)."""
    for record in newest_first:
        kind = record.get("type")
        if kind == "session/end-seed":
            continue
        if type(record.get("time")) is int:
            return int(record["time"])
        if type(record.get("time0")) is int:  # a packed chunk row: its deltas' gaps
            data = record.get("data")
            gaps = data.get("dt") if isinstance(data, dict) else None
            return int(record["time0"]) + (sum(g for g in gaps if type(g) is int)
                                           if isinstance(gaps, list) else 0)
        if kind == "session" and type(record.get("createdAt")) is int:
            return int(record["createdAt"])
    return None
