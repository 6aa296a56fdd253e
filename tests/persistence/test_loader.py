"""The strict loader behind resume(): committed prefix, refusals, durable crash repair."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dsh_tui.harness import Session
from dsh_tui.harness.jsonvalue import dumps_compact
from dsh_tui.harness.persistence import (
    TOOL_NOT_STARTED,
    TOOL_OUTCOME_UNKNOWN,
    JsonlPersistence,
    SessionFormatUnsupportedError,
    SessionLogCorruptError,
    SessionLogError,
    SessionNotFoundError,
    read_session_log,
)
from dsh_tui.harness.persistence.repair import OUTCOME_UNKNOWN_TEXT
from dsh_tui.harness.persistence.zstd_frames import scan_frames

from .conftest import FIXTURES, assistant, chunk, tool_call, tool_result

HEADER = {"type": "session", "version": 0, "id": "s", "createdAt": 5, "cwd": "/p",
          "delegationDepth": 0}


def ev(seq: int, type_: str, data: Any, **extra: Any) -> dict[str, Any]:
    return {"type": type_, "seq": seq, "time": 100 + seq, "data": data, **extra}


def balanced() -> list[dict[str, Any]]:
    return [ev(0, "turn/start", {"turn": 1}), ev(1, "step/start", {"turn": 1, "step": 1}),
            ev(2, "assistant/chunk", chunk(1, 1, "hi")),
            ev(3, "assistant/message", assistant(1, 1, "hi"), sourceEventSeqs=[2],
               surfaceOp="append"),
            ev(4, "step/end", {"turn": 1, "step": 1}),
            ev(5, "turn/end", {"turn": 1, "reason": {"kind": "completed"}})]


def store(root: Path, records: list[Any], header: dict[str, Any] | None = None,
          tail: bytes = b"") -> Path:
    header = header or HEADER
    path = JsonlPersistence(root).path_for(header)
    path.parent.mkdir(parents=True)
    lines = [dumps_compact(header), *(r if isinstance(r, str) else dumps_compact(r)
                                      for r in records)]
    path.write_bytes(("\n".join(lines) + "\n").encode() + tail)
    return path


def test_a_balanced_log_loads_unchanged(tmp_path: Path) -> None:
    path = store(tmp_path, balanced())
    before = path.read_bytes()
    header, events = JsonlPersistence(tmp_path).load("s")
    assert header == {"version": 0, "id": "s", "createdAt": 5, "cwd": "/p", "delegationDepth": 0}
    assert events == balanced()
    assert path.read_bytes() == before


def test_a_torn_last_line_is_cut_off(tmp_path: Path) -> None:
    path = store(tmp_path, balanced(), tail=b'{"type":"turn/start","seq":6,"ti')
    _, events = JsonlPersistence(tmp_path).load("s")
    assert events == balanced()
    assert path.read_bytes().endswith(b'"completed"}}}\n')


def test_an_open_turn_is_closed_durably_with_upstream_closers(tmp_path: Path) -> None:
    records = [*balanced(),
               ev(6, "turn/start", {"turn": 2}), ev(7, "step/start", {"turn": 2, "step": 1}),
               ev(8, "assistant/message", assistant(2, 1, "", ("started", "never", "done")),
                  sourceEventSeqs=[], surfaceOp="append"),
               ev(9, "tool/call", tool_call(2, 1, "started")),
               ev(10, "tool/call", tool_call(2, 1, "done")),
               ev(11, "tool/result", tool_result(2, 1, "done"), sourceEventSeqs=[10],
                  surfaceOp="append")]
    path = store(tmp_path, records, tail=b'{"type":"assistant/ch')
    _, events = JsonlPersistence(tmp_path).load("s")
    closers = events[len(records):]
    assert [(c["type"], c["seq"], c["time"]) for c in closers] == [
        ("tool/result", 12, 111), ("tool/result", 13, 111), ("step/end", 14, 111),
        ("turn/end", 15, 111)]
    unknown, not_started, step_end, turn_end = closers
    assert unknown["data"]["error"] == {"name": "ToolOutcomeUnknownError",
                                        "code": TOOL_OUTCOME_UNKNOWN}
    assert unknown["sourceEventSeqs"] == [9]
    assert unknown["data"]["message"]["id"] == "interrupted-tool-result-started-12"
    block = unknown["data"]["message"]["content"][0]
    assert block["isError"] is True and block["content"][0]["text"] == OUTCOME_UNKNOWN_TEXT
    assert not_started["data"]["error"]["code"] == TOOL_NOT_STARTED
    assert "sourceEventSeqs" not in not_started
    assert step_end["data"] == {"turn": 2, "step": 1}
    assert turn_end["data"] == {"turn": 2, "reason": {"kind": "interrupted"}}
    # The repair is in the file, in upstream's closer key order, torn bytes gone.
    tail = path.read_text().splitlines()[-4:]
    assert [json.loads(line) for line in tail] == closers
    assert list(json.loads(tail[0])) == ["type", "seq", "time", "data", "surfaceOp",
                                         "sourceEventSeqs"]
    # A second load finds a balanced log and changes nothing.
    before = path.read_bytes()
    assert JsonlPersistence(tmp_path).load("s").events == events
    assert path.read_bytes() == before
    # And the repaired log is a valid seed.
    Session("s", seed=events, header=JsonlPersistence(tmp_path).load("s").header, restore=True)


def test_a_bad_line_before_a_committed_turn_end_is_corruption(tmp_path: Path) -> None:
    records: list[Any] = balanced()
    records[2] = '{"type":"assistant/chunk","seq":2,'  # damaged in the middle
    path = store(tmp_path, records)
    with pytest.raises(SessionLogCorruptError) as caught:
        JsonlPersistence(tmp_path).load("s")
    assert str(path) in str(caught.value) and "line 4" in str(caught.value)
    assert "unparsable" in str(caught.value)


def test_a_seq_gap_before_a_committed_turn_end_is_corruption(tmp_path: Path) -> None:
    records = balanced()
    del records[2]
    store(tmp_path, records)
    with pytest.raises(SessionLogCorruptError, match=r"seq gap .* line 4 \(expected 2, got 3\)"):
        JsonlPersistence(tmp_path).load("s")


def _queued(seq: int, message_id: str) -> dict[str, Any]:
    return ev(seq, "agent/inbox/spliced", {"target": "next-turn", "start": 0, "inserted": [
        {"id": message_id, "role": "user", "source": {"kind": "user"},
         "content": [{"type": "text", "text": message_id}]}]})


@pytest.mark.parametrize("bad", ["not json", dumps_compact(ev(9, "session/title", {"t": 1})),
                                 '{"type":"agent/inbox/spliced","seq":6,'])
def test_damage_after_the_last_turn_end_is_refused_not_cut(tmp_path: Path, bad: str) -> None:
    """A complete bad line cannot come from a crash; the valid inbox records after it stay."""
    records: list[Any] = [*balanced(), bad, _queued(6, "kept-a"), _queued(7, "kept-b")]
    path = store(tmp_path, records)
    before = path.read_bytes()
    with pytest.raises(SessionLogCorruptError) as caught:
        JsonlPersistence(tmp_path).load("s")
    message = str(caught.value)
    assert len(message.splitlines()) == 1
    assert str(path) in message and "line 8" in message and f"dsh-tui view {path}" in message
    assert path.read_bytes() == before  # nothing deleted, nothing appended
    # The viewer still shows every valid record, the pending messages included.
    _, events = read_session_log(path)
    assert [e.data["inserted"][0]["id"] for e in events
            if e.type == "agent/inbox/spliced"] == ["kept-a", "kept-b"]


def test_only_a_torn_final_line_is_trimmed(tmp_path: Path) -> None:
    records: list[Any] = [*balanced(), _queued(6, "kept")]
    path = store(tmp_path, records, tail=b'{"type":"agent/inbox/spl')
    _, events = JsonlPersistence(tmp_path).load("s")
    assert events == records
    assert path.read_bytes().endswith(b"}]}}\n")


def test_unknown_types_need_the_ignorable_marker(tmp_path: Path) -> None:
    store(tmp_path, [ev(0, "ui/marker", {}, ignorable=True), ev(1, "session/title", {"t": 1})])
    assert len(JsonlPersistence(tmp_path).load("s").events) == 2
    other = tmp_path / "other"
    store(other, [ev(0, "future/thing", {})])
    with pytest.raises(SessionFormatUnsupportedError, match='"future/thing"'):
        JsonlPersistence(other).load("s")


def test_a_newer_format_version_is_refused_as_unsupported(tmp_path: Path) -> None:
    store(tmp_path, [], header={**HEADER, "version": 4, "isSeeded": False})
    with pytest.raises(SessionFormatUnsupportedError, match="version 4"):
        JsonlPersistence(tmp_path).load("s")


@pytest.mark.parametrize(("header", "message"), [
    ({k: v for k, v in HEADER.items() if k != "delegationDepth"}, "not a session header"),
    ({**HEADER, "sandboxMode": "x"}, "retired"),
])
def test_malformed_headers_are_corruption(tmp_path: Path, header: dict[str, Any],
                                          message: str) -> None:
    store(tmp_path, balanced(), header=header)
    with pytest.raises(SessionLogCorruptError, match=message):
        JsonlPersistence(tmp_path).load("s")


def test_an_invalid_envelope_names_its_line(tmp_path: Path) -> None:
    records = balanced()
    records[1] = {**records[1], "extra": True}
    store(tmp_path, records)
    with pytest.raises(SessionLogCorruptError, match=r"line 3: .*invalid event envelope"):
        JsonlPersistence(tmp_path).load("s")


def test_missing_duplicated_and_misplaced_logs(tmp_path: Path) -> None:
    persistence = JsonlPersistence(tmp_path)
    with pytest.raises(SessionNotFoundError, match='"s"'):
        persistence.load("s")
    path = store(tmp_path, balanced())
    twin = tmp_path / "--elsewhere--" / "s" / "session.jsonl"
    twin.parent.mkdir(parents=True)
    twin.write_bytes(path.read_bytes())
    with pytest.raises(SessionLogCorruptError, match="more than once"):
        persistence.load("s")
    path.unlink()
    with pytest.raises(SessionLogCorruptError, match="cwd identify"):
        persistence.load("s")


def test_a_header_for_another_id_is_refused(tmp_path: Path) -> None:
    path = store(tmp_path, balanced())
    wrong = path.parent.parent / "t" / "session.jsonl"
    wrong.parent.mkdir()
    path.rename(wrong)
    with pytest.raises(SessionLogCorruptError, match='requested id "t"'):
        JsonlPersistence(tmp_path).load("t")


def test_packed_chunk_rows_are_expanded(tmp_path: Path) -> None:
    row = {"type": "text-chunks", "seq0": 2, "time0": 50,
           "data": {"turn": 1, "step": 1, "index": 0, "dt": [3, -1], "texts": ["a", "b", "c"]}}
    records = [*balanced()[:2], row,
               ev(5, "assistant/message", assistant(1, 1, "abc"), sourceEventSeqs=[2, 3, 4],
                  surfaceOp="append")]
    store(tmp_path, records)
    _, events = JsonlPersistence(tmp_path).load("s")
    assert [(e["seq"], e["time"], e["data"]["chunk"]["text"]) for e in events[2:5]] == [
        (2, 50, "a"), (3, 53, "b"), (4, 52, "c")]
    assert events[-1]["type"] == "turn/end"  # the open turn was closed


def _zstd_log(path: Path, batches: list[list[dict[str, Any]]], torn: bytes = b"") -> None:
    compressor = zstandard.ZstdCompressor(write_checksum=True)
    frames = [compressor.compress((dumps_compact(HEADER) + "\n").encode())]
    frames += [compressor.compress(("\n".join(map(dumps_compact, batch)) + "\n").encode())
               for batch in batches]
    path.parent.mkdir(parents=True)
    path.write_bytes(b"".join(frames) + torn)


async def test_upstream_zstd_logs_load_repair_and_continue(tmp_path: Path) -> None:
    records = [*balanced(), ev(6, "turn/start", {"turn": 2}),
               ev(7, "step/start", {"turn": 2, "step": 1})]
    path = JsonlPersistence(tmp_path).path_for(HEADER).with_name("session.jsonl.zstd")
    big = zstandard.ZstdCompressor(write_checksum=True).compress(
        ("\n".join(dumps_compact(ev(8 + k, "assistant/chunk", chunk(2, 1, "x" * 50 + str(k))))
                   for k in range(3000)) + "\n").encode())
    _zstd_log(path, [records[:3], records[3:]], torn=big[: len(big) // 2])
    persistence = JsonlPersistence(tmp_path)
    assert persistence.path_for("s") == path
    header, events = persistence.load("s")
    recovered = [e for e in events if e["seq"] >= 8 and e["type"] == "assistant/chunk"]
    assert 0 < len(recovered) < 3000  # complete lines decoded from the torn frame
    assert [e["type"] for e in events[-2:]] == ["step/end", "turn/end"]
    # The repaired file is whole, checksummed frames again: header, 2 batches, 1 repair.
    data = path.read_bytes()
    scan = scan_frames(data)
    assert scan.torn_start is None and len(scan.frames) == 4
    assert read_session_log(path)[1] == events

    # Resuming it keeps writing frames to the same artifact.
    from .conftest import World

    world = World(tmp_path)
    try:
        session = world.ctx.sessions.prepare("s", seed=events, header=header, restore=True)
        world.ctx.sessions.enter(session)
        world.ctx.sessions.announce(session)
        session.append("turn/start", {"turn": 3})
        await world.ctx.sessions.flush(session)
    finally:
        world.detach()
    assert len(scan_frames(path.read_bytes()).frames) >= 5
    assert [e.type for e in read_session_log(path)[1][-2:]] == ["session/end-seed",
                                                               "turn/start"]


def test_a_damaged_complete_zstd_frame_is_corruption(tmp_path: Path) -> None:
    path = JsonlPersistence(tmp_path).path_for(HEADER).with_name("session.jsonl.zstd")
    _zstd_log(path, [balanced()[:3], balanced()[3:]])
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF  # the last frame's checksum
    path.write_bytes(bytes(data))
    with pytest.raises(SessionLogCorruptError, match="failed validation"):
        JsonlPersistence(tmp_path).load("s")


def test_an_upstream_log_resumes_after_legacy_upgrades(tmp_path: Path) -> None:
    lines = (FIXTURES / "upstream-logs" / "fresh-round-trip.jsonl").read_text().splitlines()
    header = {**json.loads(lines[0]), "id": "up", "cwd": "/work/up", "delegationDepth": 0}
    path = JsonlPersistence(tmp_path).path_for(header)
    path.parent.mkdir(parents=True)
    path.write_text("\n".join([dumps_compact(header), *lines[1:]]) + "\n")
    before = path.read_bytes()
    loaded_header, events = JsonlPersistence(tmp_path).load("up")
    assert path.read_bytes() == before  # upgrades happen in memory only
    assert events[0]["data"] == {"turn": 1}  # the legacy trigger is gone
    assert events[1]["data"]["id"] == "legacy-message:up:1"
    session = Session("up", seed=events, header=loaded_header, restore=True)
    messages = session.derive_messages()
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant"]
    assert messages[2]["content"][0]["toolCallId"] == "call_00_BYXlxjFaalMg95YVqEeF2495"
    assert messages[3]["content"][-1] == {"type": "text", "text": "DONE"}


def test_a_live_session_is_not_loaded_behind_its_back(tmp_path: Path) -> None:
    from .conftest import World

    world = World(tmp_path)
    try:
        session = world.session("live")
        session.append("turn/start", {"turn": 1})
        with pytest.raises(SessionLogError, match="is live"):
            world.persistence.load("live")
    finally:
        world.detach()


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(st.one_of(
    st.binary(max_size=30),
    st.sampled_from([b"[" * 100_000, b"null", b'{"type":"turn/end","seq":1}', b"NaN",
                     b'{"type":"text-chunks","seq0":0,"time0":0,"data":{}}']),
    st.builds(lambda n, kind: dumps_compact(ev(n, kind, {"turn": 1})).encode(),
              st.integers(0, 6), st.sampled_from(["turn/start", "turn/end", "session/title"]))),
    max_size=10))
def test_the_strict_loader_fails_only_with_its_own_errors(tmp_path: Path,
                                                          lines: list[bytes]) -> None:
    root = tmp_path / "fuzz"
    if root.exists():
        shutil.rmtree(root)
    path = JsonlPersistence(root).path_for(HEADER)
    path.parent.mkdir(parents=True)
    path.write_bytes((dumps_compact(HEADER) + "\n").encode() +
                     b"".join(line.replace(b"\n", b" ") + b"\n" for line in lines))
    try:
        header, events = JsonlPersistence(root).load("s")
    except SessionLogError:
        return
    assert [event["seq"] for event in events] == list(range(len(events)))
    Session("s", seed=events, header=header, restore=True)  # whatever loads is a valid seed
