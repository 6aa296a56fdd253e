"""Paged reading of a huge log (issue 14): `dsh-tui view` holds a window of whole-line pages
and moves it a page at a time, never reading the file whole; every window reads exactly
as the whole reader reads the same lines."""

from __future__ import annotations

from pathlib import Path

from dsh_tui.harness import dumps_compact
from dsh_tui.harness.persistence import read_session_log
from dsh_tui.harness.persistence.header import header_line
from dsh_tui.harness.persistence.pages import MAX_PAGES, open_pages


def write_log(path: Path, events: int, *, torn: bool = False) -> None:
    lines = [dumps_compact(header_line({"id": "big", "version": 0, "createdAt": 0}))]
    for seq in range(events):
        if seq % 3 == 0:
            data = {"turn": seq, "chunk": {"type": "text-delta", "index": 0,
                                           "text": f"word {seq} " * (1 + seq % 17)}}
            kind = "assistant/chunk"
        else:
            kind, data = "turn/start", {"turn": seq}
        lines.append(dumps_compact({"type": kind, "seq": seq, "time": 1000 + seq,
                                    "data": data}))
    text = "\n".join(lines) + "\n"
    path.write_text(text + ('{"type":"turn/st' if torn else ""), encoding="utf-8")


def _seqs(events) -> list[int]:
    return [e.seq for e in events]


def test_a_window_of_pages_walks_the_whole_log_and_stays_bounded(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    write_log(path, 3000, torn=True)
    _header, whole = read_session_log(path)
    page = 9_000
    header, events, pages = open_pages(path, page)
    assert pages is not None and header["id"] == "big"
    assert _seqs(events) == _seqs(whole[-len(events):]) and events[-1].seq == 2999
    assert pages.before > 0 and pages.after == len('{"type":"turn/st')
    most = 0
    while pages.earlier():
        window = pages.events
        most = max(most, len(pages.pages))
        first = window[0].seq
        assert _seqs(window) == list(range(first, first + len(window)))
        assert [e.to_json() for e in window] == [e.to_json() for e in whole[first:first + len(window)]]
        for piece in pages.pages:  # whole lines: every page ends after a newline
            assert piece.end - piece.start <= page + 400
    assert most == MAX_PAGES and pages.events[0].seq == 0 and pages.before == 0
    assert pages.earlier() == 0  # the start of the file
    while pages.later() >= 0:
        window = pages.events
        first = window[0].seq
        assert _seqs(window) == list(range(first, first + len(window)))
        assert len(pages.pages) <= MAX_PAGES
    assert pages.events[-1].seq == 2999 and pages.later() == -1


def test_small_logs_are_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    write_log(path, 50)
    header, events, pages = open_pages(path, 1024 * 1024)
    assert pages is None and (header, events) == read_session_log(path)


def test_a_line_longer_than_a_page_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    write_log(path, 400)
    text = path.read_text(encoding="utf-8").splitlines()
    big = dumps_compact({"type": "user/message", "seq": 400, "time": 5, "data": {
        "id": "u", "role": "user", "content": [{"type": "text", "text": "x" * 20_000}]}})
    tail = [dumps_compact({"type": "turn/start", "seq": 401 + n, "time": 6, "data": {}})
            for n in range(30)]
    path.write_text("\n".join([*text, big, *tail]) + "\n", encoding="utf-8")
    _header, whole = read_session_log(path)
    _h, events, pages = open_pages(path, 2_000)
    assert pages is not None
    visited = set(_seqs(events))
    while pages.earlier():
        visited.update(_seqs(pages.events))
    assert visited == set(_seqs(whole))
    visited = set(_seqs(pages.events))
    while pages.later() >= 0:
        visited.update(_seqs(pages.events))
    assert visited == set(_seqs(whole))
