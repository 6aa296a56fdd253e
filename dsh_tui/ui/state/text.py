"""Text helpers shared by every view: one line of a text, short ids, durations, token counts,
human words for harness reasons, and the text of a message dict.

The sanitising rule itself lives in `dsh_tui.harness.safe_text` (the CLI uses it too);
`visible`, `visible_input` and `visible_label` are re-exported here so a view has one
place to import its text helpers from.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from dsh_tui.harness.safe_text import (  # noqa: F401  (re-exported for the widgets)
    visible,
    visible_input,
    visible_label,
)


def one_line(text: str, limit: int = 120) -> str:
    """First non-empty line of `text`, shortened to `limit` characters, made visible."""
    line = ""
    for candidate in text.splitlines():
        if candidate.strip():
            line = candidate.strip()
            break
    line = visible(line)
    if len(line) > limit:
        line = line[: limit - 1] + "…"
    return line


def last_line(text: str, limit: int = 120) -> str:
    """Last non-empty line of `text` (what a collapsed reasoning block shows while it streams)."""
    for candidate in reversed(text.splitlines()):
        if candidate.strip():
            line = visible(candidate.strip())
            return line if len(line) <= limit else "…" + line[-(limit - 1):]
    return ""


def short_id(message_id: str | None) -> str:
    """The short id shown on inbox and transcript items: enough to tell items apart."""
    if not message_id:
        return "—"
    compact = message_id.replace("-", "")
    return compact[:6] if len(compact) > 6 else message_id


def compact_json(value: Any, limit: int = 160) -> str:
    """One line of JSON for the event log, cut at `limit` (a huge string is cut before
    encoding, so showing a 5 MB delta does not encode all of it)."""
    if isinstance(value, str) and len(value) > limit * 2:
        value = value[: limit * 2]  # a 5 MB delta is not encoded whole to show 160 characters
    try:
        text = json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    text = visible(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def format_duration(ms: int | float | None) -> str:
    """`0.8s`, `1m05s`: how long a turn or tool ran, as titles and separators show it."""
    if ms is None or ms < 0:
        return ""
    if ms < 60_000:
        return f"{ms / 1000:.1f}s"
    minutes, seconds = divmod(int(ms // 1000), 60)
    return f"{minutes}m{seconds:02d}s"


def format_tokens(count: int) -> str:
    """`950`, `12.3k`, `1.2M`: token counts short enough for a title."""
    if count < 1000:
        return str(count)
    if count < 1_000_000:
        return f"{count / 1000:.1f}k"
    return f"{count / 1_000_000:.1f}M"


def cause_text(cause: Any) -> str:
    """Human words for a cancel cause ({"kind": "user"} → "cancelled by you")."""
    if not isinstance(cause, Mapping):
        return "cancelled"
    kind = cause.get("kind")
    if kind == "user":
        return "cancelled by you"
    if kind == "parent":
        return "cancelled by its parent"
    if kind == "disposed":
        return "agent disposed"
    if kind == "hook":
        reason = cause.get("reason")
        return f"stopped by a hook: {reason}" if reason else "stopped by a hook"
    if kind == "legacy":
        return "cancelled (legacy log)"
    message = cause.get("message")
    if message:
        return f"cancelled: {message}"
    return f"cancelled ({kind})" if kind else "cancelled"


def reason_text(reason: Any) -> tuple[str, str]:
    """(kind, words) for a turn end reason; errors carry their message, aborts their cause."""
    if not isinstance(reason, Mapping):
        return "unknown", "ended"
    kind = str(reason.get("kind") or "unknown")
    if kind == "completed":
        return kind, "completed"
    if kind == "aborted":
        return kind, "aborted · " + cause_text(reason.get("reason"))
    if kind == "error":
        error = reason.get("error")
        if isinstance(error, Mapping):
            message = str(error.get("message") or "error")
            code = error.get("code")
            text = f"error · {message}"
            if code and code != "UNKNOWN":
                text += f" ({code})"
            return kind, visible(text)
        return kind, "error"
    if kind == "max-tokens":
        if reason.get("limit") == "context":
            return kind, "stopped: the context window is full (context-full)"
        return kind, "stopped at the output limit (max-tokens)"
    if kind == "blocked":
        return kind, "blocked before a step"
    if kind == "interrupted":
        return kind, "interrupted (the process stopped mid-turn)"
    return kind, kind


def message_text(message: Any) -> str:
    """Joined text blocks of a message dict (tolerates missing or odd content)."""
    if not isinstance(message, Mapping):
        return ""
    content = message.get("content")
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content or ():
        if isinstance(block, Mapping) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
    return "".join(parts)
