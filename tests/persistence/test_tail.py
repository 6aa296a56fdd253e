"""read_session_tail: a big log is opened by its last part, exactly as the whole reader reads it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from dsh_tui.harness.persistence import SessionLogError, read_session_log
from dsh_tui.harness.persistence.tail import read_session_tail

from .conftest import FIXTURES

LOGS = ["upstream-logs/code-mode-round.jsonl", "upstream-logs/seeded-history.seed.jsonl"]


@pytest.mark.parametrize("name", LOGS)
def test_tail_is_the_whole_read_from_the_first_line_inside_it(name: str) -> None:
    path = FIXTURES / name
    header, events = read_session_log(path)
    size = path.stat().st_size
    lines = path.read_bytes().split(b"\n")
    assert read_session_tail(path, size - 1)[1:] == (events, 0)  # header cut off: all events
    for limit in (size // 7, size // 3, size // 2):
        tail_header, tail, skipped = read_session_tail(path, limit)
        assert tail_header == header
        assert 0 < skipped < size and tail
        # The tail starts at the first line that begins inside the last `limit` bytes.
        offset, expected_first = len(lines[0]) + 1, None
        for line in lines[1:]:
            if offset >= size - limit:
                expected_first = line
                break
            offset += len(line) + 1
        assert skipped == offset - len(lines[0]) - 1
        assert expected_first is not None and f'"seq":{tail[0].seq},'.encode() in expected_first
        assert [e.to_json() for e in tail] == [e.to_json() for e in events[-len(tail):]]


def test_small_and_zstd_logs_are_read_whole(tmp_path: Path) -> None:
    plain = FIXTURES / LOGS[0]
    assert read_session_tail(plain, plain.stat().st_size)[2] == 0
    zstd = FIXTURES / "runtime-logs/tool-read.session.v4.jsonl.zstd"
    header, events, skipped = read_session_tail(zstd, 64)
    assert skipped == 0 and (header, events) == read_session_log(zstd)


def test_not_a_log_is_refused_even_when_big(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    shutil.copy(FIXTURES / LOGS[0], path)
    data = path.read_bytes()
    path.write_bytes(b'{"not":"a header"}\n' + data.split(b"\n", 1)[1])
    with pytest.raises(SessionLogError, match="not a session log"):
        read_session_tail(path, 100)
