"""Which Textual is installed: the guard of each place that reads a private Textual field.

Those places (the Strip patch in `strips.py`, the release of off-screen lines in
`offscreen.py`) were read against one release line; on any other they stand aside."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version


def textual_is(line: str) -> bool:
    """Whether the installed Textual's version starts with `line` (such as "8.2.")."""
    try:
        return version("textual").startswith(line)
    except PackageNotFoundError:
        return False
