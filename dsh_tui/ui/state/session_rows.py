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
PREVIEW_MIN = 12


def when(ms: int, fmt: str = "%Y-%m-%d %H:%M") -> str:
    """A local date and time to the minute (`?` when unknown)."""
    if ms <= 0:
        return "?"
    return dt.datetime.fromtimestamp(ms / 1000).strftime(fmt)


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


def heading(group: WorkspaceEntry, width: int | None = None) -> str:
    """The line that introduces a workspace (or the sessions no workspace holds): what it
    is, whether another process has it open, when it was last active, then its directory.
    In `width` cells a part that does not fit is shortened (the directory keeps its end)
    or left out; the id never is."""
    if group.id is None:
        line = "no workspace (saved before workspaces, or by other tools)"
    else:
        line = f"workspace {visible_label(group.id)}"
    room = width if width is not None else 1 << 30

    def add(*choices: str) -> None:
        nonlocal line
        for part in choices:
            if cells(line) + cells(part) <= room:
                line += part
                return

    if group.holder is not None and not group.holder.is_this_process:
        add(f"  ● open in another dsh-tui ({visible_label(group.holder.describe())})",
            "  ● open elsewhere")
    add(f"  · last active {when(group.last_activity)}")
    if group.cwd:
        where = visible_label(group.cwd)
        left = room - cells(line) - 4
        add(f"  · {where}", f"  · {clip_start(where, left)}" if left >= PREVIEW_MIN else "")
    return line


def clip_start(text: str, limit: int) -> str:
    """`text` cut to its last `limit` cells, with an ellipsis in front when cut."""
    if cells(text) <= limit:
        return text
    out: list[str] = []
    used = 0
    for char in reversed(text):
        width = cells(char)
        if used + width > limit - 1:
            break
        out.append(char)
        used += width
    return "…" + "".join(reversed(out))


@dataclass(frozen=True)
class _Fit:
    """Which columns a `sessions` row shows, and how wide (see `FITS`)."""

    size: bool = True
    when: str = "%Y-%m-%d %H:%M"  # "" : no date column
    name: int = NAME_CHARS
    status: int = 0  # 0: whole, -1: no status column


FITS = (
    _Fit(),
    _Fit(size=False),
    _Fit(size=False, when="%m-%d %H:%M"),
    _Fit(size=False, when="%m-%d %H:%M", name=20),
    _Fit(size=False, when="", name=20),
    _Fit(size=False, when="", name=12),
    _Fit(size=False, when="", name=12, status=12),
    _Fit(size=False, when="", name=12, status=-1),
)
"""From the whole row to the narrowest: the size goes first, then the year, then long
names are cut, then the date, then the status; the id, what a person copies to reopen,
is never cut.
A root's first prompt follows in whatever room is left (none: it is left out)."""


def _columns(row: Row, fit: _Fit) -> list[str]:
    entry = row.entry
    assert entry is not None
    state = status(entry)
    out = ["  " * (row.depth + 1) + clip(name(entry), fit.name)]
    if fit.status >= 0:
        out.append(clip(state, fit.status) if fit.status else state)
    if fit.when:
        out.append(when(entry.last_activity, fit.when))
    if fit.size:
        out.append(size(entry.bytes))
    return [*out, visible_label(entry.id)]


def tree_text(catalog: list[WorkspaceEntry], command: Callable[[WorkspaceEntry], str],
              width: int | None = None) -> str:
    """The whole catalog as aligned plain text (what `dsh-tui sessions` prints), each
    row fitted to `width` cells (None: rows as long as they are)."""
    table = rows(catalog)
    sessions = [row for row in table if row.entry is not None]
    for fit in FITS:
        cols = [_columns(row, fit) for row in sessions]
        widths = [max([cells(c[i]) for c in cols], default=0) for i in range(len(cols[0]))] \
            if cols else []
        if width is None or sum(widths) + 2 * (len(widths) - 1) <= width:
            break
    size_at = len(widths) - 2 if fit.size else -1
    lines: list[str] = []
    index = 0
    for row in table:
        if row.entry is None:
            if lines:
                lines.append("")
            lines.append(heading(row.group, width))
            lines.append(f"  reopen: {command(row.group)}")  # whole: it is copied to run
            continue
        parts = cols[index]
        index += 1
        line = "  ".join(" " * (widths[i] - cells(part)) + part if i == size_at
                         else pad(part, widths[i]) for i, part in enumerate(parts))
        if row.depth == 0 and row.entry.preview:  # a root's first prompt, to recognise it
            room = PREVIEW_CELLS if width is None else min(PREVIEW_CELLS,
                                                           width - cells(line) - 4)
            if room >= PREVIEW_MIN:
                line += f"  “{clip(visible_label(row.entry.preview), room)}”"
        lines.append(line.rstrip())
    return "\n".join(lines) + "\n"
