"""The header record: line 1 of every session log.

On disk the header is tagged `"type":"session"` so a reader can tell it from an
event, and always carries `delegationDepth` (upstream requires it on disk). In
memory (`Session.header`, `list_sessions()`, `load()`) the tag is dropped and
only the documented keys are kept, in upstream's order, so a header read back
equals the header written.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..jsonvalue import MAX_SAFE_INTEGER
from ..session import SESSION_FORMAT_VERSION
from .errors import SessionFormatUnsupportedError, SessionLogCorruptError

HEADER_TAG = "session"
_OPTIONAL_BEFORE_DEPTH = ("cwd", "parentSession", "seedLength", "origin")
_RETIRED_KEYS = ("sandboxMode", "approvalPolicy")


def _counter(value: Any) -> bool:
    return type(value) is int and 0 <= value <= MAX_SAFE_INTEGER


def header_line(header: Mapping[str, Any]) -> dict[str, Any]:
    """The record written as line 1 (key order as upstream's `toHeaderLine`)."""
    line: dict[str, Any] = {"type": HEADER_TAG, "version": header["version"], "id": header["id"],
                            "createdAt": header["createdAt"]}
    for key in _OPTIONAL_BEFORE_DEPTH:
        if header.get(key) is not None:
            line[key] = header[key]
    line["delegationDepth"] = header.get("delegationDepth") or 0
    if header.get("agentPreset") is not None:
        line["agentPreset"] = header["agentPreset"]
    return line


def session_header(line: Mapping[str, Any]) -> dict[str, Any]:
    """The in-memory header of a strictly checked line: documented keys only."""
    header: dict[str, Any] = {"version": line["version"], "id": line["id"],
                              "createdAt": line["createdAt"]}
    for key in _OPTIONAL_BEFORE_DEPTH:
        if line.get(key) is not None:
            header[key] = line[key]
    header["delegationDepth"] = line["delegationDepth"]
    if line.get("agentPreset") is not None:
        header["agentPreset"] = line["agentPreset"]
    return header


def looks_like_header(value: Any) -> bool:
    """Loose shape used by listing and viewing: a tagged record with an id and a time."""
    return isinstance(value, Mapping) and value.get("type") == HEADER_TAG and \
        isinstance(value.get("id"), str) and bool(value["id"]) and \
        _counter(value.get("createdAt")) and type(value.get("version")) in (int, float)


def viewer_header(value: Mapping[str, Any]) -> dict[str, Any]:
    """A header as recorded minus its line tag (unknown keys kept, for showing)."""
    return {key: item for key, item in value.items() if key != "type"}


def check_header_line(value: Any, where: str) -> dict[str, Any]:
    """Validate a parsed first line the way upstream's loader does; returns the header.

    A different format version is refused *before* the shape is checked: a
    newer format need not look like today's header, and its reader should be
    told to upgrade rather than that the log is corrupt.
    """
    if isinstance(value, Mapping):
        version = value.get("version")
        if type(version) in (int, float) and version != SESSION_FORMAT_VERSION:
            raise SessionFormatUnsupportedError(
                f'{where}: session "{value.get("id")}" uses format version {version}; this '
                f"build reads version {SESSION_FORMAT_VERSION} (upgrade dsh-tui to open it)")
    if not (isinstance(value, Mapping) and value.get("type") == HEADER_TAG and
            type(value.get("version")) in (int, float) and isinstance(value.get("id"), str) and
            value["id"] and _counter(value.get("createdAt")) and
            _counter(value.get("delegationDepth")) and
            value.get("origin", "subagent") == "subagent" and
            isinstance(value.get("agentPreset", ""), str)):
        raise SessionLogCorruptError(f"{where}: corrupt session log: first line is not a "
                                     "session header")
    for key in _RETIRED_KEYS:
        if key in value:
            raise SessionLogCorruptError(
                f"{where}: session header uses retired policy baseline field {key!r}")
    return session_header(value)
