"""interrupted_turn_closers as a pure function (dicts and SessionEvents alike)."""

from __future__ import annotations

from typing import Any

from dsh_tui.harness import Session
from dsh_tui.harness.persistence import interrupted_turn_closers
from dsh_tui.harness.persistence.repair import NOT_STARTED_TEXT

from .conftest import assistant, tool_call, tool_result


def ev(seq: int, type_: str, data: Any, time: int = 0) -> dict[str, Any]:
    return {"type": type_, "seq": seq, "time": time or 10 + seq, "data": data}


def test_balanced_and_turnless_logs_need_no_closers() -> None:
    assert interrupted_turn_closers([]) == []
    assert interrupted_turn_closers([ev(0, "session/title", {})]) == []
    assert interrupted_turn_closers([ev(0, "turn/start", {"turn": 1}),
                                     ev(1, "turn/end", {"turn": 1, "reason": {}})]) == []


def test_an_open_turn_without_a_step_gets_only_a_turn_end() -> None:
    closers = interrupted_turn_closers([ev(0, "turn/start", {"turn": 3}),
                                        ev(1, "agent/inbox/spliced", {}, time=99)])
    assert closers == [{"type": "turn/end", "seq": 2, "time": 99,
                        "data": {"turn": 3, "reason": {"kind": "interrupted"}}}]


def test_pending_calls_close_in_transcript_order_before_the_step() -> None:
    events = [ev(0, "turn/start", {"turn": 1}), ev(1, "step/start", {"turn": 1, "step": 1}),
              ev(2, "assistant/message", assistant(1, 1, "", ("b", "a"))),
              ev(3, "tool/call", tool_call(1, 1, "a")),
              ev(4, "step/end", {"turn": 1, "step": 1}),  # clears what step 1 left pending
              ev(5, "step/start", {"turn": 1, "step": 2}),
              ev(6, "assistant/message", assistant(1, 2, "", ("z", "y", "x"))),
              ev(7, "tool/call", tool_call(1, 2, "y")),
              ev(8, "tool/result", tool_result(1, 2, "x"))]
    closers = interrupted_turn_closers(events)
    assert [(c["type"], c["seq"]) for c in closers] == [
        ("tool/result", 9), ("tool/result", 10), ("step/end", 11), ("turn/end", 12)]
    z, y = closers[0], closers[1]
    assert z["data"]["message"]["source"] == {"kind": "tool", "callId": "z"}
    assert z["data"]["message"]["content"][0]["content"][0]["text"] == NOT_STARTED_TEXT
    assert z["data"]["step"] == 2 and "sourceEventSeqs" not in z
    assert y["sourceEventSeqs"] == [7]
    assert {c["time"] for c in closers} == {18}


def test_only_the_last_turn_matters() -> None:
    events = [ev(0, "turn/start", {"turn": 1}), ev(1, "step/start", {"turn": 1, "step": 1}),
              ev(2, "assistant/message", assistant(1, 1, "", ("old",))),
              ev(3, "turn/start", {"turn": 2})]
    assert [c["type"] for c in interrupted_turn_closers(events)] == ["turn/end"]


def test_session_events_work_too() -> None:
    session = Session("s")
    session.append("turn/start", {"turn": 1})
    session.append("step/start", {"turn": 1, "step": 1})
    closers = interrupted_turn_closers(session.events)
    assert [c["type"] for c in closers] == ["step/end", "turn/end"]
    for closer in closers:  # appendable as they are
        session.append(closer["type"], closer["data"])
    assert interrupted_turn_closers(iter(session.events)) == []
