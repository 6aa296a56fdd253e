"""The SSE parser: line endings, comments, multi-line data, split reads, truncation."""

from __future__ import annotations

import json
import random

import pytest
from transcripts import T2, T3

from dsh_tui.llm.sse import SseComment, SseEvent, SseParser


def parse(*reads: bytes) -> list[SseEvent | SseComment]:
    parser = SseParser()
    out: list[SseEvent | SseComment] = []
    for read in reads:
        out.extend(parser.feed(read))
    return out


def datas(items: list[SseEvent | SseComment]) -> list[str]:
    return [item.data for item in items if isinstance(item, SseEvent)]


@pytest.mark.parametrize("newline", [b"\n", b"\r\n", b"\r"])
def test_every_line_ending_frames_events(newline: bytes) -> None:
    raw = b"data: one" + newline + newline + b"data: two" + newline + newline
    assert datas(parse(raw)) == ["one", "two"]


def test_crlf_split_between_reads_is_one_line_ending() -> None:
    # "\r" ends one read and "\n" starts the next: still one line break, not two.
    items = parse(b"data: a\r", b"\ndata: b\r\n\r\n")
    assert datas(items) == ["a\nb"]


def test_comments_are_reported_apart_from_data() -> None:
    items = parse(b": keep-alive\n\n:\n\ndata: x\n\n")
    assert items == [SseComment("keep-alive"), SseComment(""), SseEvent("x")]


def test_multi_line_data_joins_with_newline_and_fields_are_parsed() -> None:
    items = parse(b"event: delta\nid: 7\nretry: 10\ndata: {\"a\":\ndata:1}\nunknown: z\n\n")
    assert items == [SseEvent('{"a":\n1}', "delta", "7")]
    assert json.loads(items[0].data) == {"a": 1}


def test_data_without_space_and_with_extra_space() -> None:
    assert datas(parse(b"data:{}\n\ndata:  two\n\n")) == ["{}", " two"]


def test_unicode_line_separators_stay_inside_json() -> None:
    payload = json.dumps({"t": "a\u2028b\u2029c\x85d\x0be\x1cf"}, ensure_ascii=False)
    items = parse(f"data: {payload}\n\n".encode())
    assert json.loads(datas(items)[0])["t"] == "a\u2028b\u2029c\x85d\x0be\x1cf"


def test_utf8_sequence_split_byte_by_byte() -> None:
    raw = "data: 日本語 — 22°C 🙂\n\n".encode()
    assert datas(parse(*[raw[i:i + 1] for i in range(len(raw))])) == ["日本語 — 22°C 🙂"]


def test_leading_byte_order_mark_is_dropped_once() -> None:
    assert datas(parse(b"\xef\xbb", b"\xbfdata: a\n\n")) == ["a"]


def test_event_without_blank_line_is_not_dispatched_and_close_reports_truncation() -> None:
    parser = SseParser()
    assert list(parser.feed(b"data: complete\n\ndata: partial\n")) == [SseEvent("complete")]
    assert parser.close() is True
    clean = SseParser()
    list(clean.feed(b"data: x\n\n"))
    assert clean.close() is False


def test_empty_data_buffer_dispatches_nothing() -> None:
    assert parse(b"event: ping\n\n\n\n") == []


@pytest.mark.parametrize("transcript", [T2, T3], ids=["T2", "T3"])
def test_random_splits_give_the_same_events_as_one_read(transcript: str) -> None:
    raw = transcript.encode()
    whole = parse(raw)
    rng = random.Random(7)
    for _ in range(20):
        cuts, position = [], 0
        while position < len(raw):
            step = rng.randint(1, 40)
            cuts.append(raw[position:position + step])
            position += step
        assert parse(*cuts) == whole
    assert sum(isinstance(i, SseComment) for i in whole) == (2 if transcript is T2 else 0)
    assert datas(whole)[-1] == "[DONE]"
