"""What a name on the command line names: one resolver, one set of messages.

Every command that names a stored workspace or session (`--resume X`, `export X`,
`view X`) reads X by the same rules (`catalog.match`: exact id, exact title, or an id
prefix that names one thing) and says the same when X names nothing or several things,
so what works for one command works for all. `export` and `view` take a log file too;
a file of that name wins, as it always did.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dsh_tui.cli import CliError
from dsh_tui.harness.persistence.catalog import (
    Ambiguous,
    Match,
    NoMatch,
    WorkspaceEntry,
    build_catalog,
    match,
)
from dsh_tui.harness.safe_text import visible_label
from dsh_tui.ui.state.session_rows import clip, status, when

MAX_CANDIDATES = 8
"""An ambiguous name lists at most this many candidates (then how many more)."""
LABEL_CELLS = 40


def find(catalog: list[WorkspaceEntry], query: str, root: Path, *,
         file_too: bool = False) -> Match:
    """The workspace or session `query` names in `catalog` (stored under `root`), or a
    CliError: one line for nothing, the candidates under it for several."""
    try:
        return match(catalog, query)
    except NoMatch:
        either = "no such file and " if file_too else ""
        raise CliError(f'{either}no saved session "{query}" (no workspace, session, id '
                       f"prefix or title matches it) in {root}; dsh-tui sessions lists "
                       "them") from None
    except Ambiguous as many:
        raise CliError(f'"{query}" matches {len(many.candidates)} saved workspaces or '
                       "sessions; give more of the id (or the whole title):",
                       candidates(many.candidates)) from None


def session_log(persistence: Any, query: str) -> tuple[Path, bool]:
    """(the log file, whether it was found by name) for `export` and `view`: the file
    `query` if there is one, else the session it names (a workspace of one root names
    that root; a workspace of several asks which)."""
    path = Path(query)
    if path.is_file():
        return path, False
    found = find(build_catalog(persistence), query, persistence.root, file_too=True)
    entry = found.entry
    if entry is None:
        roots = [r for r in found.group.roots if not r.dropped] or found.group.roots
        if len(roots) != 1:
            raise CliError(f'"{query}" names workspace {visible_label(found.id)}, which holds '
                           f"{len(roots)} root agents; name one of them:",
                           candidates([Match(found.group, r) for r in roots]))
        entry = roots[0]
    return persistence.path_for(entry.header), True


def candidates(found: list[Match]) -> list[str]:
    """One short, sanitised line per candidate (at most `MAX_CANDIDATES`, then a count)."""
    lines = [_candidate(m) for m in found[:MAX_CANDIDATES]]
    if len(found) > MAX_CANDIDATES:
        lines.append(f"… and {len(found) - MAX_CANDIDATES} more (dsh-tui sessions lists "
                     "them all)")
    return lines


def _candidate(found: Match) -> str:
    group, entry = found.group, found.entry
    if entry is None:
        return (f"workspace {visible_label(found.id)}  "
                f"{clip(visible_label(group.cwd or ''), LABEL_CELLS)}  "
                f"(last active {when(group.last_activity)})")
    where = f"workspace {visible_label(group.id)}" if group.id else "no workspace"
    line = (f"{visible_label(entry.id)}  “{clip(visible_label(entry.name), LABEL_CELLS)}”  "
            f"{status(entry)}, {when(entry.last_activity)}, {where}")
    if found.within:
        line += (f" (its {found.within} sub-agents match too)" if found.within > 1
                 else " (its sub-agent matches too)")
    return line

