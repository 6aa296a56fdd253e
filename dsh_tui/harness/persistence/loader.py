"""The strict loader behind `resume()`: committed prefix, upgrades, checks, crash repair.

`prepare_load` runs upstream's steps in order: the committed prefix (`scan`), a header
that belongs to the requested id and to this very path, legacy upgrades (`legacy`), no
unknown event types unless marked ignorable, every envelope validated (a bad record is
reported with its file and line), then the closers for a turn a crash left open
(`repair`) and the splices that put back what a crash claimed but never recorded
(`requeue`). `commit_repair` makes that durable, so a second load sees the same log.
"""

from __future__ import annotations

import contextlib
import gc
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..jsonvalue import MAX_SAFE_INTEGER, dumps_compact
from ..session import SURFACE_TYPES, SessionError, validate_envelope
from .errors import SessionFormatUnsupportedError, SessionLogCorruptError
from .fileio import append_durably, truncate_durably
from .known_types import KNOWN_SESSION_EVENT_TYPES
from .legacy import upgrade_events
from .repair import interrupted_turn_closers
from .requeue import requeue_splices
from .scan import Compression, ScannedLog, scan_artifact
from .zstd_frames import encode_frame


@dataclass(slots=True)
class PreparedLog:
    """A checked, upgraded log and the closers its repair will append."""

    scanned: ScannedLog
    header: dict[str, Any]
    events: list[dict[str, Any]]
    closers: list[dict[str, Any]]

    @property
    def needs_repair(self) -> bool:
        """Whether loading must write before the log goes live: a torn tail to cut or an open
        turn to close (`commit_repair`); a clean log is adopted without a write."""
        return self.scanned.truncate_to is not None or bool(self.closers)


def _same_place(path: Path, expected_dir: Path) -> bool:
    if path.parent == expected_dir:
        return True
    try:
        return os.path.samefile(path.parent, expected_dir)  # case-insensitive aliases
    except OSError:
        return False


_PLAIN_KEYS = frozenset({"type", "seq", "time", "data"})
# Types whose envelope check looks inside `data` (messages, request headers, legacy refusals).
_DEEP_TYPES = SURFACE_TYPES | {"request/header", "request/header-delta"}


def _plain_envelope_ok(event: dict[str, Any]) -> bool:
    """The common case, accepted without the full validator: exactly the four plain keys,
    int seq and time, a type whose check does not look into `data`."""
    time = event.get("time")
    return event.keys() == _PLAIN_KEYS and type(event["seq"]) is int and \
        type(time) is int and -MAX_SAFE_INTEGER <= time <= MAX_SAFE_INTEGER and \
        type(event["type"]) is str and event["type"] not in _DEEP_TYPES


def check_events(scanned: ScannedLog, session_id: str) -> list[dict[str, Any]]:
    """Upgrade and validate the scanned events in place; returns them.

    The session constructor validates the seed again; checking here as well
    costs little and turns "seed event at index N" into a file and line.
    """
    where = scanned.path
    events = scanned.events
    upgrade_events(events, session_id)
    known = KNOWN_SESSION_EVENT_TYPES
    for index, event in enumerate(events):
        if not _plain_envelope_ok(event):
            try:
                validate_envelope(event, index)
            except SessionError as error:
                raise SessionLogCorruptError(
                    f"{where}: line {scanned.event_lines[index]}: {error}; nothing was changed "
                    f"(dsh-tui view {where} shows everything it can read)") from None
        if event["type"] not in known and event.get("ignorable") is not True:
            raise SessionFormatUnsupportedError(
                f'{where}: line {scanned.event_lines[index]}: session "{session_id}" contains '
                f'event type "{event["type"]}" (seq {event["seq"]}) unknown to this harness '
                "and not marked ignorable; refusing to interpret the log (it was likely "
                "written by a newer harness)")
    return events


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic GC while a log becomes objects.

    Loading allocates one dict per event and never a cycle; left on, the
    collector re-traverses the growing heap again and again, which alone
    roughly doubles the cost of loading a long session.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def prepare_load(path: Path, session_id: str,
                 locate: Callable[[Mapping[str, Any]], Path]) -> PreparedLog:
    """Read and check `path` as the stored log of `session_id`, computing its repair.

    `locate(header)` is the session directory the header names; a file found
    anywhere else (copied or moved by hand) is refused, as upstream does.
    """
    with _gc_paused():
        return _prepare(path, session_id, locate)


def _prepare(path: Path, session_id: str,
             locate: Callable[[Mapping[str, Any]], Path]) -> PreparedLog:
    scanned = scan_artifact(path)
    header = scanned.header
    if header["id"] != session_id:
        raise SessionLogCorruptError(f'{path}: requested id "{session_id}" does not match header '
                                     f'id "{header["id"]}"')
    expected_dir = locate(header)
    if not _same_place(path, expected_dir):
        raise SessionLogCorruptError(f'{path}: header id "{header["id"]}" and cwd identify '
                                     f'"{expected_dir}", not this file')
    events = check_events(scanned, session_id)
    closers = interrupted_turn_closers(events)
    if events:
        closed = [*events, *closers]
        seed_length = header.get("seedLength")
        closers += requeue_splices(closed, seed_length if type(seed_length) is int else 0,
                                   len(closed), closed[-1]["time"])
    return PreparedLog(scanned, header, events, closers)


def encode_records(records: list[Any], compression: str) -> bytes:
    """JSONL bytes of `records` as one durable batch (one frame in zstd mode)."""
    text = "\n".join([dumps_compact(record) for record in records]) + "\n"
    data = text.encode("utf-8")
    return encode_frame(data) if compression == "zstd" else data


def commit_repair(prepared: PreparedLog) -> int:
    """Cut the torn tail, then append recovered events and closers; returns the new size.

    Two fsynced steps, as upstream: earlier bytes are never rewritten, and a
    crash between the steps leaves a log the next load repairs again.
    """
    scanned = prepared.scanned
    size = scanned.size
    if scanned.truncate_to is not None:
        truncate_durably(scanned.path, scanned.truncate_to)
        size = scanned.truncate_to
    batch = [*scanned.recovered, *prepared.closers]
    if batch:
        data = encode_records(batch, scanned.compression)
        append_durably(scanned.path, data)
        size += len(data)
    return size


def read_for_adoption(path: Path, session_id: str) -> tuple[list[Any], int, Compression]:
    """Stored events, size and encoding of a log a live session is about to continue.

    Used when a session goes live over an existing log without a preceding
    `load()` (a session created before persistence was attached). The live
    session is the authority on how its turn ends, so a torn tail is cut (and
    a torn zstd frame's complete lines re-appended) but no closers are added.
    """
    with _gc_paused():
        scanned = scan_artifact(path)
        upgrade_events(scanned.events, session_id)
    size = scanned.size
    if scanned.truncate_to is not None:
        truncate_durably(path, scanned.truncate_to)
        size = scanned.truncate_to
        if scanned.recovered:
            data = encode_records(scanned.recovered, scanned.compression)
            append_durably(path, data)
            size += len(data)
    return scanned.events, size, scanned.compression
