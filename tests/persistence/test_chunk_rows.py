"""Packed chunk rows expand to exactly their events; malformed rows are refused."""

from __future__ import annotations

from typing import Any

import pytest

from dsh_tui.harness.persistence.chunk_rows import MalformedRowError, expand_row


def test_text_and_reasoning_rows() -> None:
    row = {"type": "reasoning-chunks", "seq0": 4, "time0": 10,
           "data": {"turn": 1, "step": 2, "index": 0, "dt": [5, -2], "texts": ["a", "", "c"]}}
    assert expand_row(row) == [
        {"type": "assistant/chunk", "seq": 4 + k, "time": time,
         "data": {"turn": 1, "step": 2, "chunk": {"type": "reasoning-delta", "index": 0,
                                                  "text": text}}}
        for k, (time, text) in enumerate([(10, "a"), (15, ""), (13, "c")])]
    row["type"] = "text-chunks"
    assert {e["data"]["chunk"]["type"] for e in expand_row(row)} == {"text-delta"}


@pytest.mark.parametrize("named", [True, False])
def test_tool_call_rows_keep_name_presence(named: bool) -> None:
    data: dict[str, Any] = {"turn": 1, "step": 1, "index": 2, "id": "c", "dt": [0],
                            "args": ["{", "}"]}
    if named:
        data["name"] = "read"
    chunks = [e["data"]["chunk"] for e in expand_row(
        {"type": "tool-call-chunks", "seq0": 0, "time0": 0, "data": data})]
    assert [list(c) for c in chunks] == [
        ["type", "index", "id", *(["name"] if named else []), "argumentsDelta"]] * 2
    assert [c["argumentsDelta"] for c in chunks] == ["{", "}"]


GOOD = {"type": "text-chunks", "seq0": 0, "time0": 0,
        "data": {"turn": 1, "step": 1, "index": 0, "dt": [1], "texts": ["a", "b"]}}


@pytest.mark.parametrize(("change", "why"), [
    ({"extra": 1}, "envelope"),
    ({"seq0": -1}, "seq0"),
    ({"time0": 1.5}, "time0"),
    ({"data": {**GOOD["data"], "dt": []}}, "dt length"),
    ({"data": {**GOOD["data"], "texts": []}}, "non-empty"),
    ({"data": {**GOOD["data"], "texts": ["a", 1]}}, "string array"),
    ({"data": {**GOOD["data"], "dt": [True]}}, "safe integers"),
    ({"data": {**GOOD["data"], "name": "x"}}, "exactly"),
    ({"data": {**GOOD["data"], "turn": "1"}}, "numbers"),
    ({"time0": 2**53 - 1}, "member times"),
])
def test_malformed_rows_raise(change: dict[str, Any], why: str) -> None:
    with pytest.raises(MalformedRowError, match=why):
        expand_row({**GOOD, **change})
