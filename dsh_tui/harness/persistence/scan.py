"""Finding the committed prefix of a stored log (upstream's raw and zstd scanners).

A crash can only tear the last line, so whatever follows the last newline is a torn tail
the repair cuts off. A complete line that does not parse or whose seq does not follow
cannot be made by a crash: it is damage, and loading stops naming the file and line,
changing nothing (valid records after it are never cut away; `dsh-tui view` still shows
them). The rules are on `PrefixScanner`; `scan_zstd` runs them over decompressed frames.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import zstandard

from .chunk_rows import ROW_TYPES, MalformedRowError, expand_row
from .errors import SessionLogCorruptError
from .header import check_header_line
from .zstd_frames import (
    ZSTD_MAGIC,
    ZstdStructureError,
    decode_frame,
    decode_torn_prefix,
    scan_frames,
)

Compression = Literal["none", "zstd"]


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")  # JSON.parse refuses NaN and Infinity too


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)
_loads = _DECODER.decode
# The C scanner every JSONDecoder carries; typeshed does not declare it.
_scan_once = _DECODER.scan_once  # type: ignore[attr-defined]


@dataclass(slots=True)
class ScannedLog:
    """The committed prefix of one artifact, before any logical upgrade or repair.

    `truncate_to` is the file offset a repair cuts back to (None: nothing
    torn); `recovered` are events decoded from a torn zstd frame, which the
    repair re-appends after truncating. `event_lines[i]` is the line of the
    logical text that stored `events[i]` (line 1 is the header).
    """

    path: Path
    compression: Compression
    header: dict[str, Any]
    events: list[Any]
    event_lines: list[int]
    size: int
    truncate_to: int | None = None
    recovered: list[Any] = field(default_factory=list)


def compression_of(path: Path, head: bytes) -> Compression:
    """zstd when the file starts with the frame magic or is named `*.zstd`."""
    return "zstd" if head[:4] == ZSTD_MAGIC or path.name.endswith(".zstd") else "none"


def parse_line(line: bytes) -> Any:
    """Decode one line as Node does (invalid UTF-8 becomes U+FFFD), then parse it.

    The C scanner is called directly for the common case of a line that is
    exactly one JSON value (what every writer produces); anything else goes
    through `json.loads`, which also produces the error for a bad line.
    """
    text = line.decode("utf-8", "replace")
    try:
        value, end = _scan_once(text, 0)
    except StopIteration:
        return _loads(text)
    if end != len(text):
        return _loads(text)
    return value


def damaged(where: str, line_no: int, what: str, detail: str = "") -> SessionLogCorruptError:
    """The one-line refusal for damage: file, line, and where to look instead."""
    return SessionLogCorruptError(
        f"{where}: corrupt session log: {what} at line {line_no}{detail}; nothing was changed "
        f"(dsh-tui view {where} shows everything it can read)")


class PrefixScanner:
    """Consumes logical text after the header and keeps the contiguous committed prefix.

    A writer appends whole newline-terminated lines, so after a crash only the last line
    can be incomplete; whatever follows the last newline is a torn tail, never data, and
    the repair cuts it off. Every complete line must be a record that continues the
    prefix: a complete line that does not parse, or whose seq does not follow, cannot be
    made by a crash, so it is damage and loading stops with the file and line named (and
    nothing changed). Damage is never repaired by cutting the valid records that follow it
    away; `dsh-tui view` still shows everything such a log holds.
    """

    def __init__(self, where: str, header_bytes: int) -> None:
        self.where = where
        self.events: list[Any] = []
        self.event_lines: list[int] = []
        self.input_bytes = header_bytes
        self.committed = header_bytes
        self._fragment = b""
        self._line = 1

    def feed(self, chunk: bytes) -> None:
        """Consume bytes that directly follow everything fed so far.

        Raises `SessionLogCorruptError` at the first complete line that is not
        the next record; an incomplete last line stays unconsumed (`committed`
        stops before it).
        """
        offset = self.input_bytes - len(self._fragment)
        self.input_bytes += len(chunk)
        if self._fragment:
            chunk = self._fragment + chunk
        parts = chunk.split(b"\n")
        self._fragment = parts.pop()
        events = self.events
        lines = self.event_lines
        line_no = self._line
        for part in parts:
            offset += len(part) + 1
            line_no += 1
            try:
                value = parse_line(part)
                decoded = expand_row(value) if type(value) is dict and \
                    value.get("type") in ROW_TYPES else None
            except (ValueError, RecursionError, MalformedRowError):
                raise damaged(self.where, line_no, "unparsable committed event") from None
            if decoded is None:
                if type(value) is dict and value.get("seq") == len(events):
                    events.append(value)
                    lines.append(line_no)
                    self.committed = offset
                    continue
                got = value.get("seq") if type(value) is dict else None
                raise damaged(self.where, line_no, "seq gap in committed region",
                              f" (expected {len(events)}, got {got})")
            if value["seq0"] != len(events):  # members are contiguous from seq0 by construction
                raise damaged(self.where, line_no, "seq gap in committed region",
                              f" (expected {len(events)}, got {value['seq0']})")
            events.extend(decoded)
            lines.extend([line_no] * len(decoded))
            self.committed = offset
        self._line = line_no


def _header_record(line: bytes, where: str) -> dict[str, Any]:
    try:
        value = parse_line(line)
    except (ValueError, RecursionError):
        raise SessionLogCorruptError(
            f"{where}: corrupt session log: header line is not valid JSON") from None
    return check_header_line(value, where)


def scan_raw(path: Path, buf: bytes) -> ScannedLog:
    """Scan an uncompressed log: header line, then the committed prefix of records; a tail
    after the last newline is marked torn (`truncate_to`), never read as data."""
    where = str(path)
    end = buf.find(b"\n")
    if end < 0:
        raise SessionLogCorruptError(f"{where}: empty or header-less session log")
    header = _header_record(buf[:end], where)
    scanner = PrefixScanner(where, end + 1)
    scanner.feed(buf[end + 1:])
    torn = scanner.committed if scanner.committed < len(buf) else None
    return ScannedLog(path, "none", header, scanner.events, scanner.event_lines, len(buf), torn)


def scan_zstd(path: Path, buf: bytes) -> ScannedLog:
    """Scan a zstd log frame by frame: only the last frame may be torn, and its complete
    lines are kept in `recovered` for the repair to re-append."""
    where = str(path)
    try:
        frames = scan_frames(buf)
    except ZstdStructureError as error:
        raise SessionLogCorruptError(f"{where}: corrupt Zstandard session log: {error}") from None
    if not frames.frames:
        raise SessionLogCorruptError(f"{where}: empty or header-less Zstandard session log")
    start, end = frames.frames[0]
    try:
        header_text = decode_frame(buf[start:end])
    except zstandard.ZstdError:
        raise SessionLogCorruptError(
            f"{where}: corrupt Zstandard session log: header frame failed validation") from None
    if not header_text.endswith(b"\n") or header_text.count(b"\n") != 1:
        raise SessionLogCorruptError(
            f"{where}: corrupt Zstandard session log: the header frame is not exactly one line")
    header = _header_record(header_text[:-1], where)
    scanner = PrefixScanner(where, len(header_text))
    for start, end in frames.frames[1:]:
        try:
            scanner.feed(decode_frame(buf[start:end]))
        except zstandard.ZstdError as error:
            raise SessionLogCorruptError(
                f"{where}: corrupt Zstandard session log: frame at byte {start} failed "
                f"validation ({error})") from None
    if scanner.committed != scanner.input_bytes:
        raise SessionLogCorruptError(
            f"{where}: corrupt Zstandard session log: a complete frame contains a torn or "
            "invalid JSONL record")
    if frames.torn_start is None:
        return ScannedLog(path, "zstd", header, scanner.events, scanner.event_lines, len(buf))
    complete = len(scanner.events)
    scanner.feed(decode_torn_prefix(buf[frames.torn_start:]))
    return ScannedLog(path, "zstd", header, scanner.events, scanner.event_lines, len(buf),
                      frames.torn_start, scanner.events[complete:])


def scan_artifact(path: Path) -> ScannedLog:
    """Read `path` and return its committed prefix (raises SessionLogCorruptError)."""
    buf = path.read_bytes()
    if compression_of(path, buf) == "zstd":
        return scan_zstd(path, buf)
    return scan_raw(path, buf)
