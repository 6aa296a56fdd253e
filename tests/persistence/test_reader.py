"""read_session_log: every fixture log opens, damage is skipped, nothing is renumbered."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dsh_tui.harness import SessionEvent
from dsh_tui.harness.jsonvalue import dumps_compact
from dsh_tui.harness.messages import message_text
from dsh_tui.harness.persistence import SessionLogError, read_session_log

from .conftest import FIXTURES

UPSTREAM = FIXTURES / "upstream-logs"

# file, event count, first type, last type, a user prompt it contains
CASES = [
    ("upstream-logs/code-mode-round.jsonl", 239, "turn/start", "turn/end",
     "Using ONE run_code program: run bash `echo CODE_ROUND_OK`"),
    ("upstream-logs/cordis-tool-round.jsonl", 60, "turn/start", "assistant/chunk",
     "Use only Cordis tools. Call cordis_stop with pluginId \"snap-1\"."),
    ("upstream-logs/fresh-round-trip.jsonl", 94, "turn/start", "turn/end",
     "Use the bash tool to run exactly: echo WEB_E2E_OK."),
    ("upstream-logs/live-interactions.jsonl", 92, "turn/start", "turn/end",
     "Reply with a one-sentence description of event sourcing, then stop."),
    ("upstream-logs/minimal-preset.jsonl", 6, "user/message", "assistant/chunk",
     "Reply exactly MINIMAL_PRESET_REQUEST_OK and stop."),
    ("upstream-logs/seeded-history.seed.jsonl", 111, "turn/start", "turn/end",
     "Use the read tool twice in one assistant message: read a.txt and b.txt."),
    ("upstream-logs/web-search-round.jsonl", 11, "user/message", "assistant/chunk",
     "Use web_search once"),
    ("runtime-logs/tool-read.session.v4.jsonl.zstd", 23, "permission/preset", "turn/end",
     "Read notes.txt and tell me what it says."),
]


def user_texts(events: list[SessionEvent]) -> list[str]:
    return [message_text(event.data) for event in events if event.type == "user/message"]


@pytest.mark.parametrize(("name", "count", "first", "last", "prompt"), CASES,
                         ids=[case[0].split("/")[1] for case in CASES])
def test_fixture_logs_open(name: str, count: int, first: str, last: str, prompt: str) -> None:
    header, events = read_session_log(FIXTURES / name)
    assert "type" not in header and header["createdAt"] > 0
    assert all(isinstance(event, SessionEvent) for event in events)
    assert len(events) == count
    assert (events[0].type, events[-1].type) == (first, last)
    assert any(text.startswith(prompt) for text in user_texts(events))
    expected_seqs = sorted(event.seq for event in events)
    assert [event.seq for event in events] == expected_seqs  # file order, never renumbered


def test_packed_rows_expand_to_their_events() -> None:
    _, events = read_session_log(UPSTREAM / "fresh-round-trip.jsonl")
    by_seq = {event.seq: event for event in events}
    assert [event.seq for event in events] == list(range(94))
    reasoning = [by_seq[seq].data["chunk"]["text"] for seq in range(6, 23)]
    assert "".join(reasoning).startswith("The user wants me to run a simple bash command")
    call = by_seq[24].data["chunk"]
    assert call == {"type": "tool-call-delta", "index": 1,
                    "id": "call_00_BYXlxjFaalMg95YVqEeF2495", "name": "bash",
                    "argumentsDelta": ""}
    assert by_seq[7].time - by_seq[6].time == 199  # time0 + dt


def test_seq_gaps_and_shape_variants_are_kept() -> None:
    _, events = read_session_log(UPSTREAM / "cordis-tool-round.jsonl")
    seqs = [event.seq for event in events]
    assert seqs[5:8] == [5, 87, 99]
    result = next(event for event in events if event.type == "tool/result")
    assert "callId" in result.data and "message" not in result.data  # as recorded
    assert result.surface_op is None or result.surface_op == "append"


def test_the_runtime_v4_header_is_shown_as_recorded() -> None:
    header, events = read_session_log(FIXTURES / "runtime-logs" /
                                      "tool-read.session.v4.jsonl.zstd")
    assert header == {"version": 4, "id": "oracle-tool", "createdAt": 1796010098383,
                      "cwd": "/tmp/oracle/runs/tool-messages/work", "isSeeded": False,
                      "delegationDepth": 0}
    assert {"system/message", "session-log-deepseek/delivery-accepted"} <= {
        event.type for event in events}


def _write(path: Path, lines: list[str], tail: bytes = b"") -> Path:
    path.write_bytes(("\n".join(lines) + "\n").encode() + tail)
    return path


HEADER = dumps_compact({"type": "session", "version": 0, "id": "v", "createdAt": 1})


def test_damage_is_skipped_and_a_torn_tail_dropped(tmp_path: Path,
                                                   caplog: pytest.LogCaptureFixture) -> None:
    good = [dumps_compact({"type": "x/y", "seq": n, "time": n, "data": {"n": n}})
            for n in range(3)]
    path = _write(tmp_path / "log.jsonl", [
        HEADER, good[0], "{broken", '{"type":"text-chunks","seq0":1}', "[1, 2]", good[1],
        '{"type": "no-seq", "time": 1, "data": {}}', good[2]], tail=b'{"type":"x/y","seq":3')
    with caplog.at_level(logging.WARNING):
        _, events = read_session_log(path)
    assert [event.data for event in events] == [{"n": 0}, {"n": 1}, {"n": 2}]
    assert "line 3 is not JSON" in caplog.text
    assert "line 4: malformed text-chunks storage row" in caplog.text
    assert "line 5 is not an event record" in caplog.text


def test_wrapped_steering_shows_as_a_user_message(tmp_path: Path) -> None:
    message = {"id": "m1", "role": "user", "content": [{"type": "text", "text": "steer"}],
               "source": {"kind": "user"}}
    path = _write(tmp_path / "log.jsonl", [
        HEADER,
        dumps_compact({"type": "steering/message", "seq": 0, "time": 1,
                       "data": {"turn": 1, "message": message}}),
        dumps_compact({"type": "steering/message", "seq": 1, "time": 1,
                       "data": {"turn": 1, "content": [], "source": {"kind": "user"}}})])
    _, events = read_session_log(path)
    assert (events[0].type, events[0].data) == ("user/message", message)
    assert events[1].type == "steering/message"  # needs an invented id: kept as recorded


@pytest.mark.parametrize("content", [b"", b'{"type":"session"', b'{"type":"turn/start"}\n'])
def test_a_file_without_a_header_is_not_a_session_log(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(content)
    with pytest.raises(SessionLogError, match="session log"):
        read_session_log(path)


def test_damaged_zstd_frames_are_skipped_and_a_torn_frame_recovered(tmp_path: Path) -> None:
    compress = zstandard.ZstdCompressor(write_checksum=True).compress

    def frame(*seqs: int) -> bytes:
        return compress("".join(dumps_compact({"type": "x/y", "seq": s, "time": s, "data": s})
                                + "\n" for s in seqs).encode())

    damaged = bytearray(frame(2, 3))
    damaged[-1] ^= 0xFF  # checksum mismatch
    torn = frame(*range(4, 20004))  # several 128 KiB blocks, so half of it decodes
    path = tmp_path / "session.jsonl.zstd"
    path.write_bytes(compress((HEADER + "\n").encode()) + frame(0, 1) + bytes(damaged) +
                     torn[: len(torn) // 2])
    _, events = read_session_log(path)
    seqs = [event.seq for event in events]
    assert seqs[:3] == [0, 1, 4] and 4 < seqs[-1] < 20003
    assert seqs == [0, 1, *range(4, seqs[-1] + 1)]


junk_lines = st.lists(st.one_of(
    st.binary(max_size=40),
    st.just(b"[" * 100_000),
    st.sampled_from([b'{"type":"text-chunks","seq0":0,"time0":0,"data":{}}', b"null", b"{}",
                     b'{"type":"x","seq":true,"time":1,"data":1}', b"\xff\xfe\x00",
                     b'{"type":"turn/end","seq":0,"time":1e400,"data":{}}']),
    st.builds(lambda n: dumps_compact({"type": "x/y", "seq": n, "time": n, "data": n}).encode(),
              st.integers(0, 50))), max_size=12)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=junk_lines, tail=st.binary(max_size=20))
def test_any_damage_after_the_header_is_survivable(tmp_path: Path, lines: list[bytes],
                                                   tail: bytes) -> None:
    path = tmp_path / "fuzz.jsonl"
    path.write_bytes(HEADER.encode() + b"\n" + b"".join(line.replace(b"\n", b" ") + b"\n"
                                                         for line in lines) + tail)
    header, events = read_session_log(path)
    assert header["id"] == "v"
    good = [line for line in lines if line.startswith(b'{"type":"x/y"') and b"\n" not in line]
    assert [e.seq for e in events if e.type == "x/y"] == [
        json.loads(line)["seq"] for line in good]
