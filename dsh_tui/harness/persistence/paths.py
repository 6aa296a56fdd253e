"""Where a session lives on disk: upstream's JSONL layout, byte for byte.

`<root>/--<project_key(cwd)>--/<encode_segment(id)>/session.jsonl` (or `_no-cwd/`
when the header has no cwd). A session id is an arbitrary string, so it is
escaped into one safe path segment before it touches the filesystem: no
traversal, no separators, and no two ids share a directory. The escaping works
on UTF-16 code units, as upstream's does, so both harnesses pick the same
directory for the same id (including ids with astral characters or lone
surrogates).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

RAW_LOG_NAME = "session.jsonl"
ZSTD_LOG_NAME = "session.jsonl.zstd"
LOG_NAMES = (RAW_LOG_NAME, ZSTD_LOG_NAME)
NO_CWD_DIR = "_no-cwd"

_SAFE = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")
_SEPARATORS = frozenset((ord("/"), ord("\\"), ord(":")))
_PROJECT_KEY_MAX = 251


def _code_units(text: str) -> list[int]:
    """UTF-16 code units of `text` (astral characters become surrogate pairs)."""
    raw = text.encode("utf-16-le", "surrogatepass")
    return [raw[i] | (raw[i + 1] << 8) for i in range(0, len(raw), 2)]


def _escape(unit: int) -> str:
    return f"~{unit:04X}"


def encode_segment(raw: str) -> str:
    """Escape `raw` into one safe, injective path segment (upstream's `encodeSegment`).

    `[A-Za-z0-9._-]` stays literal; every other UTF-16 unit, `~` included,
    becomes `~XXXX`. The whole segments `.` and `..` are escaped so an id can
    never walk out of its project directory.
    """
    if not raw:
        raise ValueError("cannot encode an empty path segment")
    if raw == ".":
        return "~002E"
    if raw == "..":
        return "~002E~002E"
    return "".join(chr(unit) if unit in _SAFE else _escape(unit) for unit in _code_units(raw))


def project_key(cwd: str) -> str:
    """The readable, lossy project directory name of `cwd` (upstream's `projectKey`).

    Runs of `/`, `\\` and `:` collapse to one `-`, unsafe units are escaped as
    in `encode_segment`, leading dashes are stripped (`root` if nothing is
    left), and the key is cut to 251 characters and wrapped as `--key--`.
    """
    if not cwd:
        raise ValueError("cannot encode an empty project path")
    parts: list[str] = []
    in_separator_run = False
    for unit in _code_units(cwd):
        if unit in _SEPARATORS:
            if not in_separator_run:
                parts.append("-")
            in_separator_run = True
        else:
            parts.append(chr(unit) if unit in _SAFE else _escape(unit))
            in_separator_run = False
    slug = "".join(parts).lstrip("-") or "root"
    return f"--{slug[:_PROJECT_KEY_MAX]}--"


def project_dir_name(cwd: str | None) -> str:
    """The project directory for `cwd` (a separate one for sessions without a cwd)."""
    return NO_CWD_DIR if cwd is None else project_key(cwd)


def session_dir(root: Path, header: Mapping[str, Any]) -> Path:
    """The directory owned by the session `header` describes (no I/O)."""
    cwd = header.get("cwd")
    return root / project_dir_name(cwd if isinstance(cwd, str) else None) / encode_segment(
        header["id"])
