"""The status a session list shows is the log's at its last write (issue 13): pending
items folded from the inbox splices, interrupted when a turn was left open or closed as
interrupted; found without reading every stream chunk, and never fooled by text."""

from __future__ import annotations

import json
from pathlib import Path

from dsh_tui.harness.persistence.activity import last_activity
from dsh_tui.harness.persistence.catalog import last_write_status


def _log(path: Path, records: list[dict], tail: str = "") -> Path:
    path.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records)
                    + tail, encoding="utf-8")
    return path


def _splice(seq: int, inserted: int, removed: int = 0) -> dict:
    data: dict = {"target": "next-turn", "start": 0}
    if removed:
        data["removedCount"] = removed
    data["inserted"] = [{"id": f"m{seq}-{i}", "role": "user",
                         "content": [{"type": "text", "text": "hi"}]} for i in range(inserted)]
    return {"type": "agent/inbox/spliced", "seq": seq, "time": 1, "data": data}


HEADER = {"type": "session", "version": 0, "id": "s", "createdAt": 1, "delegationDepth": 0}


def test_pending_and_an_open_turn_at_the_last_write(tmp_path: Path) -> None:
    sneaky = {"type": "assistant/chunk", "seq": 3, "time": 1,
              "data": {"text": '{"type":"turn/end","data":{}} and "type":"agent/inbox/spliced"'}}
    path = _log(tmp_path / "a.jsonl", [
        HEADER, _splice(0, 3), {"type": "turn/start", "seq": 1, "time": 1, "data": {}},
        _splice(2, 0, 1), sneaky, _splice(4, 1)],
        tail='{"type":"turn/end","seq":5,"time":1,"data":{"reason":{"kind":"compl')  # torn
    assert last_write_status(path) == ("interrupted", 3)


def test_a_finished_turn_is_idle_and_one_closed_as_interrupted_is_not(tmp_path: Path) -> None:
    start = {"type": "turn/start", "seq": 1, "time": 1, "data": {}}
    done = {"type": "turn/end", "seq": 2, "time": 1, "data": {"reason": {"kind": "completed"}}}
    cut = {"type": "turn/end", "seq": 2, "time": 1, "data": {"reason": {"kind": "interrupted"}}}
    assert last_write_status(_log(tmp_path / "b.jsonl", [HEADER, _splice(0, 1), start,
                                                           _splice(1, 0, 1), done])) == ("idle", 0)
    assert last_write_status(_log(tmp_path / "c.jsonl", [HEADER, start, cut]))[0] == "interrupted"
    assert last_write_status(tmp_path / "missing.jsonl") == ("unknown", None)


def test_last_activity_passes_over_what_a_resume_writes(tmp_path: Path) -> None:
    """"last active" is the time of the last record that is not a resume's end-seed: a
    packed chunk row counts to its last delta, a log of nothing since its header counts
    from `createdAt`, and a torn last line is not a record yet."""
    seed_end = {"type": "session/end-seed", "seq": 9, "time": 99_000, "data": {}}
    row = {"type": "text-chunks", "seq0": 2, "time0": 1_000,
           "data": {"turn": 1, "step": 1, "index": 0, "dt": [5, 7], "texts": ["a", "b", "c"]}}
    chunked = _log(tmp_path / "d.jsonl", [HEADER, _splice(0, 1), row, seed_end, seed_end],
                   tail='{"type":"turn/end","seq":10,"time":500000,"da')
    assert last_activity(chunked) == 1_012
    fresh = _log(tmp_path / "e.jsonl", [{**HEADER, "createdAt": 4_000}, seed_end])
    assert last_activity(fresh) == 4_000
    queued = _log(tmp_path / "f.jsonl", [HEADER, {**_splice(0, 1), "time": 7_000}, seed_end])
    assert last_activity(queued) == 7_000
    assert last_activity(tmp_path / "missing.jsonl") == 0
