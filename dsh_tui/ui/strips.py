"""Textual's `Strip` without reference cycles.

`Strip.divide(cuts)` with the single cut at the strip's own length returns `[self]`,
and `Strip.crop_extend(0, length, style)` returns `self`; both results are also
stored in the strip's own cache, so the strip refers to itself. Every line the
compositor divides that way becomes cyclic garbage: it is freed only by the
cyclic collector instead of when its last reference goes, and a strip that was
frozen by the GC pacing (`gcpacing.py`) while alive is not freed at all until the
next full collection. Returning `self` without caching it gives the same results
with no cycle. Most of what the soak benchmark (20 agents streaming nonstop) found
held as garbage at its end was such strips, their seven caches and segments.

`install()` is idempotent and is called by `DshApp`. It patches only the Strip it
was written against: Textual 8.2 (pinned in pyproject.toml), with the two cache slots
it relies on. Any other Textual version is left alone, unpatched.

Upstream: in Textual 8.2.8 `Strip.crop_extend` stores its result in
`self._crop_extend_cache` and `Strip.divide` stores `[self]` in `self._divide_cache`
even when the result is the strip itself (textual/strip.py, `crop_extend` and
`divide`). The fix belongs there: return `self` (or `[self]`) before caching, as this
patch does. When a Textual release does that, drop this module and the pin's guard.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from textual.strip import Strip

from .textual_line import textual_is

_INSTALLED = "_dsh_no_self_cache"
PATCHED_FOR = "8.2."
"""The Textual release line whose Strip this patch was read against."""


def install() -> None:
    """Patch Strip.divide/crop_extend so a strip never caches itself (see above)."""
    if getattr(Strip, _INSTALLED, False):
        return
    if not textual_is(PATCHED_FOR):
        return  # another Textual: its Strip may differ, so it is not touched
    if not {"_divide_cache", "_crop_extend_cache"} <= set(getattr(Strip, "__slots__", ())):
        return  # not the Strip this was written for: leave it alone
    divide = Strip.divide
    crop_extend = Strip.crop_extend

    def divide_no_self_cache(self: Strip, cuts: Iterable[int]) -> Sequence[Strip]:
        length = self.cell_length
        kept = [cut for cut in cuts if cut <= length]
        if kept == [length]:
            return [self]
        return divide(self, kept)

    def crop_extend_no_self_cache(self: Strip, start: int, end: int, style: Any) -> Strip:
        if start <= 0 and end == self.cell_length:
            return self
        return crop_extend(self, start, end, style)

    divide_no_self_cache.__doc__ = divide.__doc__
    crop_extend_no_self_cache.__doc__ = crop_extend.__doc__
    Strip.divide = divide_no_self_cache  # type: ignore[method-assign]
    Strip.crop_extend = crop_extend_no_self_cache  # type: ignore[method-assign]
    setattr(Strip, _INSTALLED, True)
