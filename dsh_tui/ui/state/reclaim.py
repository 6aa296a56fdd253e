"""Free a dead island of objects now, by reference counting, without a full collection.

Why: while anything streams, the GC pacing freezes the heap every half second
(`gcpacing.py`), so collections never rescan long-lived objects. Objects that were
alive at a freeze and die later in a reference cycle are then never collected until
everything is idle, which a working day of agents never is. Widgets are such objects:
every Textual node refers to its styles and its styles to the node, and a removed
transcript block (or a Markdown list the stream re-rendered) is a tree of them, with
their caches. Measured by `benchmarks/bench_soak.py`, that garbage grew RSS by about
45 bytes per event, and a full collection to free it pauses the app 330-650 ms.

`reclaim(roots)` runs the cycle collector's own test, on a small part of the heap:
the objects reachable from `roots` (at most `limit` of them, not entering types,
modules, module globals, or whatever the caller's `boundary` names). For each, it
counts the references it gets from inside that part (`gc.get_referents`, the very
traversal the collector uses) against its reference count; an object with more
references than that is held from outside, and so is everything it reaches. Whatever
is left is referenced only from inside the island: no callback, timer or queue can
ever reach it again (each would be a reference from outside), and the collector would
free it at its next full collection. `reclaim` frees it now: it empties the
containers and instance attributes of those objects, and reference counting frees the
lot. The test is right for any part of the heap (a reference from outside the part
only makes an object count as held), so the limit bounds the cost, never the safety:
an object still in use (a widget with a pending callback, a block about to be mounted
again) is never touched.

What it leaves to the collector, as before (the whole island, untouched): one that
would run code of its own while it is freed and could see an emptied object (an object
whose class defines `__del__`, a suspended generator or coroutine, a task or future not
done), one holding a weak reference with a callback that could outlive the emptying,
and one larger than `limit`. Other threads and the collector are kept out while the
counts are taken (a bigger switch interval, the collector disabled): a count taken
while another thread moves a reference could be off.
"""

from __future__ import annotations

import asyncio
import gc
import sys
import types
import weakref
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

LIMIT = 20_000
"""The most objects one call examines (a removed transcript block is a few hundred to a
few thousand)."""
_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class defined in Python


@dataclass
class Reclaimed:
    """What one `reclaim` call did."""

    examined: int = 0
    freed: int = 0
    """Objects found dead and emptied (they are freed as the call returns)."""
    held: int = 0
    """Roots still referenced from outside (in use, or waiting for a late callback)."""
    full: bool = False
    """The search stopped at `limit` objects (what lies beyond counts as held)."""
    declined: str = ""
    """Why a dead island was left to the collector ("" if none was)."""


def _count(members: list[object], index: int) -> int:
    return sys.getrefcount(members[index])


def _base() -> int:
    """References `_count` sees to an object only the members list holds."""
    return _count([[]], 0)


_BASE = _base()


def module_namespaces() -> set[int]:
    """The ids of every loaded module's namespace (never entered by `reclaim`)."""
    return {id(vars(module)) for module in list(sys.modules.values())
            if module is not None and hasattr(module, "__dict__")}


ALWAYS_STOP: tuple[type, ...] = (type, types.ModuleType, types.CodeType, types.FrameType,
                                 asyncio.AbstractEventLoop)


@dataclass(frozen=True)
class Boundary:
    """What `reclaim` does not search through: objects known to be alive and to lead to
    most of the heap. Reaching one only counts as a reference from outside, so a
    boundary changes the cost of a search, never whether what it frees is dead."""

    always: tuple[type, ...] = ()
    """Instances of these are never entered (besides types, modules, code, frames and
    event loops)."""
    checked: tuple[type, ...] = ()
    """Instances of these are not entered if `alive(obj)` says so."""
    alive: Callable[[object], bool] | None = None
    modules: set[int] = field(default_factory=module_namespaces)
    """The ids of the module namespaces (taken when the boundary is made)."""


def _verdict(kind: type, boundary: Boundary) -> int:
    """0: enter instances of `kind`; 1: never; 2: ask `boundary.alive`; 3: a dict (a
    module namespace is not entered)."""
    if issubclass(kind, ALWAYS_STOP + boundary.always):
        return 1
    if boundary.alive is not None and issubclass(kind, boundary.checked):
        return 2
    return 3 if issubclass(kind, dict) else 0


def _edges(members: list[object], index: dict[int, int], limit: int,
           boundary: Boundary) -> tuple[list[list[int]], bool]:
    """Every member's references to members, adding what they reach (breadth first)."""
    edges: list[list[int]] = []
    full = False
    verdicts: dict[type, int] = {}
    get, tracked, referents = index.get, gc.is_tracked, gc.get_referents
    alive, modules = boundary.alive, boundary.modules
    position = 0
    while position < len(members):
        out: list[int] = []
        for ref in referents(members[position]):
            slot = get(id(ref))
            if slot is None:
                if not tracked(ref):
                    continue  # atoms (str, int) and containers of atoms: never in a cycle
                kind = type(ref)
                verdict = verdicts.get(kind)
                if verdict is None:
                    verdict = verdicts[kind] = _verdict(kind, boundary)
                if verdict == 1 or (verdict == 3 and id(ref) in modules) or (
                        verdict == 2 and alive is not None and alive(ref)):
                    continue
                if len(members) >= limit:
                    full = True
                    continue
                slot = len(members)
                index[id(ref)] = slot
                members.append(ref)
            out.append(slot)
        edges.append(out)
        position += 1
    return edges, full


def _dead(members: list[object], edges: list[list[int]]) -> list[int] | None:
    """Indices of the members no reference from outside reaches (None: a count is off)."""
    internal = [0] * len(members)
    for out in edges:
        for slot in out:
            internal[slot] += 1
    held = [False] * len(members)
    todo: list[int] = []
    for slot in range(len(members)):
        outside = _count(members, slot) - _BASE - internal[slot]
        if outside < 0:
            return None
        if outside:
            held[slot] = True
            todo.append(slot)
    while todo:
        for slot in edges[todo.pop()]:
            if not held[slot]:
                held[slot] = True
                todo.append(slot)
    return [slot for slot in range(len(members)) if not held[slot]]


def _runs_code(item: object) -> str:
    """Why freeing `item` could run code that sees an emptied object ("" if it cannot)."""
    kind = type(item)
    if isinstance(getattr(kind, "__del__", None), types.FunctionType):
        return f"{kind.__qualname__} defines __del__"
    if isinstance(item, (types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType)):
        frame = getattr(item, "gi_frame", None) or getattr(item, "cr_frame", None) or \
            getattr(item, "ag_frame", None)
        if frame is not None:
            return f"a suspended {kind.__qualname__}"
    if isinstance(item, asyncio.Future) and not item.done():
        return f"a pending {kind.__qualname__}"
    return ""


def _clearable(item: object) -> bool:
    if isinstance(item, (dict, list, set, deque, types.CellType)):
        return True
    return bool(type(item).__flags__ & _HEAPTYPE)


def _empty(item: object) -> None:
    """Drop every reference `item` holds that can be dropped from Python."""
    if isinstance(item, dict):
        dict.clear(item)
    elif isinstance(item, list):
        list.clear(item)
    elif isinstance(item, set):
        set.clear(item)
    elif isinstance(item, deque):
        deque.clear(item)
    elif isinstance(item, types.CellType):
        try:
            del item.cell_contents
        except ValueError:
            pass
        return
    kind = type(item)
    if not kind.__flags__ & _HEAPTYPE:
        return
    try:
        attributes = object.__getattribute__(item, "__dict__")
    except AttributeError:
        attributes = None
    if isinstance(attributes, dict):
        attributes.clear()
    for cls in kind.__mro__:
        if not cls.__flags__ & _HEAPTYPE:
            continue
        for descriptor in list(vars(cls).values()):
            if isinstance(descriptor, types.MemberDescriptorType):
                try:
                    descriptor.__delete__(item)
                except AttributeError:
                    pass


def _declined(members: list[object], edges: list[list[int]], dead: list[int]) -> str:
    """Why this dead island must be left to the collector ("" if it may be freed now)."""
    callbacks: set[int] = set()
    for slot in dead:
        item = members[slot]
        reason = _runs_code(item)
        if reason:
            return reason
        if isinstance(item, weakref.ReferenceType) and item.__callback__ is not None:
            callbacks.add(slot)
    if callbacks:
        # A dead weak reference with a callback must go before what it refers to, or its
        # callback runs on an emptied owner: it does if only emptied objects hold it.
        for slot in dead:
            if not _clearable(members[slot]) and callbacks.intersection(edges[slot]):
                return "a weak reference with a callback held by " \
                       f"{type(members[slot]).__qualname__}"
    return ""


def _free(doomed: list[object]) -> None:
    """Empty the dead objects, then let them go: weak references first, so that none
    of their callbacks runs on an emptied owner."""
    weak = [item for item in doomed if isinstance(item, weakref.ReferenceType)]
    rest = [item for item in doomed if not isinstance(item, weakref.ReferenceType)]
    doomed.clear()
    for item in rest:
        _empty(item)
    weak.clear()


def reclaim(roots: Iterable[weakref.ReferenceType[object]], limit: int = LIMIT,
            boundary: Boundary | None = None) -> Reclaimed:
    """Free whatever is dead among the objects the weakly referenced `roots` reach.

    The roots are given by weak reference, so the caller holds none of them: a root is
    dead only if nothing but its own island refers to it."""
    result = Reclaimed()
    if boundary is None:
        boundary = Boundary()
    members: list[object] = []
    index: dict[int, int] = {}
    for ref in roots:
        root = ref()
        if root is not None and gc.is_tracked(root) and id(root) not in index:
            index[id(root)] = len(members)
            members.append(root)
        del root
    if not members:
        return result
    roots_count = len(members)
    switch = sys.getswitchinterval()
    enabled = gc.isenabled()
    gc.disable()
    sys.setswitchinterval(1000.0)  # no other thread moves a reference mid-count
    try:
        edges, result.full = _edges(members, index, limit, boundary)
        result.examined = len(members)
        dead = _dead(members, edges)
        if dead is None:
            result.declined = "a reference count changed while it was read"
            return result
        dead_set = set(dead)
        result.held = sum(1 for slot in range(roots_count) if slot not in dead_set)
        if not dead:
            return result
        reason = _declined(members, edges, dead)
        if reason:
            result.declined = reason
            return result
        doomed = [members[slot] for slot in dead]
        # What the dead refer to beyond the part examined (the limit) is kept until they
        # are gone: if it dies with them, its own finalizers never see an emptied object.
        beyond = [ref for item in doomed for ref in gc.get_referents(item)
                  if gc.is_tracked(ref) and id(ref) not in index] if result.full else []
        members.clear()
        index.clear()
        result.freed = len(doomed)
        _free(doomed)
        beyond.clear()
    finally:
        sys.setswitchinterval(switch)
        if enabled:
            gc.enable()
    return result
