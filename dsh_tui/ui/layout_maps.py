"""A layout's leftovers no longer keep the widgets it placed.

Why: Textual's compositor lays the screen out with a nested function that refers to
itself (`Compositor._arrange_root` defines `add_widget`, which calls itself), so each
layout leaves a small reference cycle behind, and through its closure that cycle keeps
the map and the set of every widget the layout placed. The cycle is garbage as soon as
the layout returns, but only the cyclic collector frees it; if the GC pacing freezes
the heap before a collection has seen it (`state/gcpacing.py`: a layout that ran just
before a freeze, or one that lived through a young collection while it ran), the cycle
is frozen, and with it every widget that was on screen then. A transcript block pruned
later, a closed dialog, a re-rendered Markdown list: the reaper (`unmounted.py`) finds
them held from outside and leaves them, and they stay in memory until every agent is
idle (a whole working day while agents keep running). It was the cause of
`tests/ui/test_reclaim.py`'s pruned blocks surviving in about one run of ten.

`install()` wraps `_arrange_root`: the compositor gets a copy of the map and of the set,
and the originals, the ones the leftover cycle keeps, are emptied as the layout returns,
so that cycle, frozen or not, keeps only empty containers (and a set of the widgets CSS
made `visibility: hidden`, which this app's CSS never does). The copies cost a few
microseconds per layout (a dict and a set of the placed widgets), next to the layout
itself. Checked against the Textual release line pinned in pyproject.toml; on another
release nothing is patched and the leftovers wait for the collector, as before.

Upstream: the fix belongs in Textual (`add_widget` need not refer to itself through
its own closure, or `_arrange_root` could drop it before returning).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual._compositor import Compositor

from .textual_line import textual_is

CHECKED_ON = "8.2."
"""The Textual release line whose `Compositor._arrange_root` this was read against."""
_INSTALLED = "_dsh_arrange_leaves_no_widgets"


def install() -> bool:
    """Make each layout's leftovers keep no widget (idempotent); False if this Textual is
    not the one it was written against."""
    if getattr(Compositor, _INSTALLED, False):
        return True
    if not textual_is(CHECKED_ON):
        return False
    arrange_root: Callable[..., tuple[Any, Any]] = Compositor._arrange_root

    def arrange_root_leaving_nothing(self: Compositor, *args: Any,
                                     **kwargs: Any) -> tuple[Any, Any]:
        placed, widgets = arrange_root(self, *args, **kwargs)
        if not (isinstance(placed, dict) and isinstance(widgets, set)):
            return placed, widgets  # not the shapes this was written for
        kept_map, kept_widgets = dict(placed), set(widgets)
        placed.clear()  # the leftover cycle's: nothing reads them again
        widgets.clear()
        return kept_map, kept_widgets

    arrange_root_leaving_nothing.__doc__ = arrange_root.__doc__
    Compositor._arrange_root = arrange_root_leaving_nothing  # type: ignore[method-assign]
    setattr(Compositor, _INSTALLED, True)
    return True
