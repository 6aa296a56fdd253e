"""Textual's `LRUCache.clear()` without leaving a ring of cyclic garbage behind.

Textual's LRUCache keeps its entries in a circular doubly linked list of small lists
(`[prev, next, key, value]`). `clear()` forgets the dict and the head, but the ring
still refers to itself, so every entry it held (for the line caches of the agent
tree, the inbox's option list and the event log: rendered `Strip`s, each with seven
caches of its own) becomes cyclic garbage. These caches are cleared whenever their
widget is refreshed: the agent tree's, ten times a second while agents run. While
anything streams the GC pacing freezes the heap every half second (`state/gcpacing.py`),
so each ring that was frozen stayed in memory until every agent was idle: the largest
part of the cyclic garbage the soak benchmark (`benchmarks/bench_soak.py`) found once
removed widgets were freed (`unmounted.py`).

`install()` makes `clear()` empty every link first, so the entries are freed by
reference counting at once. Eviction (`set` on a full cache) and `discard` unlink one
entry from the ring and need nothing. It patches only the LRUCache it was written
against: Textual 8.2 (pinned in pyproject.toml), with the `_cache` dict of link lists.

Upstream: in Textual 8.2.8 `LRUCache.clear` (textual/cache.py) drops `_cache` and
`_head` without unlinking; the fix belongs there.
"""

from __future__ import annotations

from textual.cache import LRUCache

from .textual_line import textual_is

_INSTALLED = "_dsh_clear_unlinks"
PATCHED_FOR = "8.2."
"""The Textual release line whose LRUCache this patch was read against."""


def install() -> bool:
    """Patch LRUCache.clear to unlink its entries (idempotent); False if not patched."""
    if getattr(LRUCache, _INSTALLED, False):
        return True
    if not textual_is(PATCHED_FOR) or "_cache" not in getattr(LRUCache, "__slots__", ()):
        return False
    clear = LRUCache.clear

    def clear_unlinked(self: LRUCache[object, object]) -> None:
        links = self._cache
        if isinstance(links, dict):
            for link in links.values():
                if isinstance(link, list):
                    link.clear()
        clear(self)

    clear_unlinked.__doc__ = clear.__doc__
    LRUCache.clear = clear_unlinked  # type: ignore[method-assign,assignment]
    setattr(LRUCache, _INSTALLED, True)
    return True
