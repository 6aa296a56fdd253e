"""The stored workspaces and sessions as rows of words, for `dsh-tui sessions` and f3.

Both show the same tree: a line per workspace (its id, directory, last activity, whether
another process has it open), then each root with its children indented, with name,
status at the last write, last activity, size and id. Every string that came from outside
(titles, names, ids, directories) passes through `visible_label`, so a title cannot move
the cursor, recolour the terminal or reorder the line (bidi controls).
"""

from __future__ import annotations

import datetime as dt
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

from dsh_tui.harness.persistence.catalog import SessionEntry, WorkspaceEntry
from dsh_tui.harness.safe_text import visible_label

NAME_CHARS = 40
PREVIEW_CELLS = 60


def when(ms: int) -> str:
    """A local date and time to the minute (`?` when unknown)."""
    if ms <= 0:
        return "?"
    return dt.datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d %H:%M")


def size(count: int) -> str:
    """Bytes as a person reads them: 880 B, 9.6 KB, 2.2 MB."""
    value = float(count)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{int(value)} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{count} B"


def cells(text: str) -> int:
    """Terminal cells `text` takes (wide East Asian characters take two)."""
    total = 0
    for char in text:
        if unicodedata.combining(char):
            continue
        total += 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
    return total


def clip(text: str, limit: int) -> str:
    """`text` cut to `limit` cells, with an ellipsis when cut."""
    if cells(text) <= limit:
        return text
    out, used = [], 0
    for char in text:
        width = cells(char)
        if used + width > limit - 1:
            break
        out.append(char)
        used += width
    return "".join(out) + "…"


def pad(text: str, width: int) -> str:
    """`text` padded with spaces to `width` cells."""
    return text + " " * max(0, width - cells(text))


def status(entry: SessionEntry, *, live: bool = False) -> str:
    """idle / interrupted / … with pending items and who has it open."""
    if entry.dropped:
        words = ["disposed"]
    elif live:
        words = ["open here"]
    else:
        words = ["?" if entry.status == "unknown" else entry.status]
    if entry.pending:
        words.append(f"{entry.pending} pending")
    if entry.holder is not None and not live and not entry.holder.is_this_process:
        words.append("● open")
    return " · ".join(words)


def name(entry: SessionEntry) -> str:
    """The visible-safe, clipped name of a session."""
    return clip(visible_label(entry.name), NAME_CHARS)


@dataclass(frozen=True)
class Row:
    """One line: a workspace heading (`entry` None) or a session at `depth`."""

    group: WorkspaceEntry
    entry: SessionEntry | None
    depth: int


def rows(catalog: list[WorkspaceEntry]) -> list[Row]:
    """Every heading and session of the catalog, in display order."""
    out: list[Row] = []
    for group in catalog:
        out.append(Row(group, None, 0))
        out += [Row(group, entry, depth) for depth, entry in group.walk()]
    return out


def heading(group: WorkspaceEntry) -> str:
    """The line that introduces a workspace (or the sessions no workspace holds): what it
    is, whether another process has it open, when it was last active, then its directory
    (the longest part, so a narrow screen cuts that)."""
    if group.id is None:
        title = "no workspace (saved before workspaces, or by other tools)"
    else:
        title = f"workspace {visible_label(group.id)}"
    line = title
    if group.holder is not None and not group.holder.is_this_process:
        line += f"  ● open in another dsh-tui ({visible_label(group.holder.describe())})"
    line += f"  · last active {when(group.last_activity)}"
    if group.cwd:
        line += f"  · {visible_label(group.cwd)}"
    return line


def tree_text(catalog: list[WorkspaceEntry], command: Callable[[WorkspaceEntry], str]) -> str:
    """The whole catalog as aligned plain text (what `dsh-tui sessions` prints)."""
    table = rows(catalog)
    cols: list[list[str]] = []
    for row in table:
        if row.entry is None:
            continue
        entry = row.entry
        cols.append(["  " * (row.depth + 1) + name(entry), status(entry),
                     when(entry.last_activity), size(entry.bytes), visible_label(entry.id)])
    widths = [max([cells(c[i]) for c in cols] + [len(h)]) for i, h in
              enumerate(("  NAME", "STATUS", "LAST ACTIVE", "SIZE", "ID"))]
    lines: list[str] = []
    index = 0
    for row in table:
        if row.entry is None:
            if lines:
                lines.append("")
            lines.append(heading(row.group))
            lines.append(f"  reopen: {command(row.group)}")
            continue
        cells_ = cols[index]
        index += 1
        size_cell = " " * (widths[3] - cells(cells_[3])) + cells_[3]
        line = "  ".join([pad(cells_[0], widths[0]), pad(cells_[1], widths[1]),
                          pad(cells_[2], widths[2]), size_cell, pad(cells_[4], widths[4])])
        if row.depth == 0 and row.entry.preview:  # a root's first prompt, to recognise it
            line += f"  “{clip(visible_label(row.entry.preview), PREVIEW_CELLS)}”"
        lines.append(line.rstrip())
    return "\n".join(lines) + "\n"
