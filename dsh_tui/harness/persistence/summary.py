"""What a person needs to recognise a stored session: its title and its first prompt.

Headers alone say only an id and a date. A session's latest `session/title` sits
near its end and its first prompt near its start, so reading a bounded slice of
each end of a plain log finds both without scanning a long session whole. A zstd
log (upstream's) is not sliced; its summary stays empty.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..messages import message_text

SLICE_BYTES = 64 * 1024
PREVIEW_CHARS = 120


def _lines(chunk: bytes, *, drop_first: bool, drop_last: bool) -> Iterator[dict[str, Any]]:
    parts = chunk.split(b"\n")
    if drop_first:
        parts = parts[1:]  # may start mid-line
    if drop_last:
        parts = parts[:-1]  # may end mid-line
    for raw in parts:
        if b'"type"' not in raw:
            continue
        try:
            record = json.loads(raw)
        except ValueError:
            continue
        if isinstance(record, dict):
            yield record


def _first_prompt(records: Iterator[dict[str, Any]]) -> str | None:
    for record in records:
        data = record.get("data")
        if record.get("type") == "user/message" and isinstance(data, dict):
            text = message_text(data).strip()
        elif record.get("type") == "agent/inbox/spliced" and isinstance(data, dict):
            inserted = data.get("inserted") or []
            text = message_text(inserted[0]).strip() if inserted and isinstance(
                inserted[0], dict) else ""
        else:
            continue
        if text:
            line = " ".join(text.split())
            return line if len(line) <= PREVIEW_CHARS else line[:PREVIEW_CHARS - 1] + "…"
    return None


def _latest_title(records: list[dict[str, Any]]) -> str | None:
    for record in reversed(records):
        data = record.get("data")
        if record.get("type") == "session/title" and isinstance(data, dict):
            title = data.get("title")
            if isinstance(title, str) and title.strip():
                return title.strip()
    return None


def summarize(path: Path) -> dict[str, Any]:
    """`{"title"?, "preview"?, "bytes"}` of a plain session log (keys absent when unknown)."""
    out: dict[str, Any] = {}
    try:
        size = path.stat().st_size
        out["bytes"] = size
        if path.suffix != ".jsonl":
            return out
        with path.open("rb") as handle:
            head = handle.read(SLICE_BYTES)
            handle.seek(max(0, size - SLICE_BYTES), os.SEEK_SET)
            tail = handle.read(SLICE_BYTES)
    except OSError:
        return out
    preview = _first_prompt(_lines(head, drop_first=False, drop_last=len(head) < size))
    title = _latest_title(list(_lines(tail, drop_first=size > SLICE_BYTES, drop_last=False)))
    if title is None and size > SLICE_BYTES:
        title = _latest_title(list(_lines(head, drop_first=False, drop_last=True)))
    if preview is not None:
        out["preview"] = preview
    if title is not None:
        out["title"] = title
    return out
