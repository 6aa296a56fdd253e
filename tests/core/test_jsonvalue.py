"""`snapshot_json`'s fast path agrees with the exact, cycle-tracking copy."""

from __future__ import annotations

import math
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dsh_tui.harness.jsonvalue import _FAST_DEPTH, NotJsonError, _copy, snapshot_json

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53 - 1), 2**53 - 1)
    | st.floats(allow_nan=False, allow_infinity=False).filter(
        lambda x: not (x == 0.0 and math.copysign(1.0, x) < 0)) | st.text(),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=5), children, max_size=4),
    max_leaves=30)


@given(json_values)
def test_fast_copy_equals_exact_copy(value: Any) -> None:
    copied = snapshot_json(value)
    assert copied == _copy(value, set())
    if isinstance(value, (dict, list)) and value:
        assert copied is not value


def _nested(depth: int) -> list[Any]:
    value: list[Any] = ["leaf"]
    for _ in range(depth):
        value = [{"k": value}]
    return value


def test_deep_values_beyond_the_fast_depth_are_accepted() -> None:
    value = _nested(_FAST_DEPTH * 2)
    assert snapshot_json(value) == value


def test_a_cycle_deep_inside_is_still_reported_as_a_cycle() -> None:
    value = _nested(_FAST_DEPTH + 5)
    inner = value[0]
    while isinstance(inner["k"][0], dict):
        inner = inner["k"][0]
    inner["k"].append(value)
    with pytest.raises(NotJsonError, match="cycle"):
        snapshot_json(value)


def test_shared_subvalues_are_not_cycles_and_are_copied() -> None:
    shared = {"a": [1, 2]}
    copied = snapshot_json({"x": shared, "y": [shared, MappingProxyType(shared)]})
    assert copied == {"x": shared, "y": [shared, shared]}
    assert copied["x"] is not shared and copied["y"][1] is not copied["x"]


@pytest.mark.parametrize("bad", [{"a": [math.nan]}, {1: "x"}, [{"a": 2**53}], {"z": -0.0},
                                 [{"s": {1, 2}}], {"b": b"x"}])
def test_rejections_match_the_exact_copy(bad: Any) -> None:
    with pytest.raises(NotJsonError) as fast:
        snapshot_json(bad)
    with pytest.raises(NotJsonError) as exact:
        _copy(bad, set())
    assert str(fast.value) == str(exact.value)
