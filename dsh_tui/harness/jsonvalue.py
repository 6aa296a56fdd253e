"""Lossless JSON: the one gate every durable payload passes through.

The session log is the source of truth that both this project and the upstream
TypeScript harness read, so a value is accepted only if JSON (and JavaScript)
can carry it without loss. Validation and copying happen in one pass so a
caller cannot mutate what was stored afterwards.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

JsonValue = Any
"""null | bool | int | finite float | str | list | dict (lossless; no -0.0)."""

MAX_SAFE_INTEGER = 2**53 - 1


class NotJsonError(TypeError):
    """A value that cannot be stored losslessly as JSON."""


def _copy(value: Any, path: set[int]) -> Any:
    # Order matters: bool is a subclass of int.
    if value is None or value is True or value is False or type(value) is str:
        return value
    kind = type(value)
    if kind is int:
        if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
            return value
        raise NotJsonError("integer outside the safe range")
    if kind is float:
        if not math.isfinite(value):
            raise NotJsonError("non-finite number")
        if value == 0.0 and math.copysign(1.0, value) < 0:
            raise NotJsonError("negative zero")
        return value
    if kind is dict or kind is MappingProxyType:
        marker = id(value)
        if marker in path:
            raise NotJsonError("cycle")
        path.add(marker)
        out: dict[str, Any] = {}
        for key, item in value.items():
            if type(key) is not str:
                raise NotJsonError("non-string key")
            out[key] = _copy(item, path)
        path.discard(marker)
        return out
    if kind is list or kind is tuple:
        marker = id(value)
        if marker in path:
            raise NotJsonError("cycle")
        path.add(marker)
        out_list = [_copy(item, path) for item in value]
        path.discard(marker)
        return out_list
    if isinstance(value, str):  # str subclasses (enums) lose their class; store the text
        return str(value)
    to_json = getattr(value, "to_json", None)
    if callable(to_json) and getattr(value, "__json_value__", False):
        return _copy(to_json(), path)
    raise NotJsonError(f"unsupported type {kind.__name__}")


class _TooDeep(Exception):
    """The fast copy went deeper than any real payload: let `_copy` look for a cycle."""


_FAST_DEPTH = 64


def _fast(value: Any, depth: int) -> Any:
    """`_copy` without cycle bookkeeping, for the common case (every appended event).

    Leaves are checked inline, so a chunk costs one call per container rather than
    one per value; that was half of what logging a stream chunk cost (profiled in
    benchmarks/bench_loop.py). Cycles are not tracked here: a cyclic value only
    ever gets `_FAST_DEPTH` containers deep before `_TooDeep` hands it to `_copy`,
    which raises the precise error. Any other rejection is raised here exactly as
    `_copy` raises it.
    """
    kind = type(value)
    if kind is str or value is None or value is True or value is False:
        return value
    if kind is dict or kind is MappingProxyType:
        if depth > _FAST_DEPTH:
            raise _TooDeep
        out: dict[str, Any] = {}
        for key, item in value.items():
            if type(key) is not str:
                raise NotJsonError("non-string key")
            leaf = type(item)
            if leaf is str or item is None or item is True or item is False or (
                    leaf is int and -MAX_SAFE_INTEGER <= item <= MAX_SAFE_INTEGER):
                out[key] = item
            else:
                out[key] = _fast(item, depth + 1)
        return out
    if kind is list or kind is tuple:
        if depth > _FAST_DEPTH:
            raise _TooDeep
        out_list: list[Any] = []
        append = out_list.append
        for item in value:
            leaf = type(item)
            if leaf is str or item is None or item is True or item is False or (
                    leaf is int and -MAX_SAFE_INTEGER <= item <= MAX_SAFE_INTEGER):
                append(item)
            else:
                append(_fast(item, depth + 1))
        return out_list
    to_json = getattr(value, "to_json", None)
    if callable(to_json) and getattr(value, "__json_value__", False) and \
            not isinstance(value, str):
        return _fast(to_json(), depth + 1)
    return _copy(value, set())  # scalars, str subclasses and every rejection


def snapshot_json(value: Any) -> JsonValue:
    """Validate `value` as lossless JSON and return a detached plain copy.

    Raises NotJsonError (a TypeError) without side effects when the value holds
    a non-finite number, -0.0, an unsafe integer, a cycle, a non-string key or
    any object that is not a plain mapping or sequence.
    """
    try:
        return _fast(value, 0)
    except _TooDeep:
        return _copy(value, set())


def freeze_json(value: Any) -> Any:
    """Deep read-only view of a JSON value: mappings become MappingProxyType, lists tuples."""
    if isinstance(value, Mapping):
        return MappingProxyType({key: freeze_json(item) for key, item in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(freeze_json(item) for item in value)
    return value


def thaw_json(value: Any) -> Any:
    """Plain mutable copy of a (possibly frozen) JSON value."""
    if isinstance(value, Mapping):
        return {key: thaw_json(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [thaw_json(item) for item in value]
    return value


def json_equal(a: Any, b: Any) -> bool:
    """Deep equality that treats frozen and plain containers alike."""
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if type(a) is bool or type(b) is bool:
        return a is b
    return a == b


_SURROGATE = re.compile("[\ud800-\udfff]")


def fix_surrogates(text: str) -> str:
    """Escape lone surrogates as JSON.stringify does (lowercase \\udxxx).

    json.dumps with ensure_ascii=False leaves them raw, which UTF-8 cannot encode.
    One regex pass: a 5 MB text with a stray surrogate must not cost a Python loop
    per character on the event loop.
    """
    return _SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def dumps_compact(value: Any) -> str:
    """Compact JSON text as JavaScript's JSON.stringify writes it."""
    text = _ENCODER.encode(value)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = fix_surrogates(text)
    return text
