"""B1: session ids and project paths become the same directory names as upstream's."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dsh_tui.harness.persistence import JsonlPersistence, encode_segment, project_key


@pytest.mark.parametrize(("raw", "encoded"), [
    ("..", "~002E~002E"),
    (".", "~002E"),
    ("a/b", "a~002Fb"),
    ("/etc/passwd", "~002Fetc~002Fpasswd"),
    ("a\x00b", "a~0000b"),
    ("plain-ID_1.2", "plain-ID_1.2"),
    ("a~b", "a~007Eb"),
    ("...", "..."),
    ("Ä", "~00C4"),
    ("😀", "~D83D~DE00"),  # astral characters are escaped as their UTF-16 pair
    ("\ud800", "~D800"),  # lone surrogates survive
])
def test_encode_segment_matches_upstream(raw: str, encoded: str) -> None:
    assert encode_segment(raw) == encoded


def test_encode_segment_rejects_empty() -> None:
    with pytest.raises(ValueError, match="empty"):
        encode_segment("")


def test_encoded_escape_is_not_confused_with_its_source() -> None:
    assert encode_segment("~002F") != encode_segment("/")
    assert encode_segment("\ud800") != encode_segment("\udc00")


@pytest.mark.parametrize(("cwd", "key"), [
    ("/home/a/proj", "--home-a-proj--"),
    ("/Users/qyj/work/deepseek-harness", "--Users-qyj-work-deepseek-harness--"),
    ("C:\\work\\agent", "--C-work-agent--"),
    ("/开发/~agent", "--~5F00~53D1-~007Eagent--"),
    ("/", "--root--"),
    ("//a::b\\\\c", "--a-b-c--"),
    ("/a b", "--a~0020b--"),
])
def test_project_key_matches_upstream(cwd: str, key: str) -> None:
    assert project_key(cwd) == key


def test_project_key_is_lossy_and_bounded() -> None:
    assert project_key("/a/b-c") == project_key("/a-b/c")
    assert len(project_key("/" + "x" * 1000)) == 255
    with pytest.raises(ValueError, match="empty project path"):
        project_key("")


def _decode_segment(segment: str) -> str:
    """Inverse of encode_segment (test oracle): proves no two ids share a directory."""
    if segment == "~002E":
        return "."
    if segment == "~002E~002E":
        return ".."
    units = []
    index = 0
    while index < len(segment):
        if segment[index] == "~":
            units.append(int(segment[index + 1:index + 5], 16))
            index += 5
        else:
            units.append(ord(segment[index]))
            index += 1
    raw = b"".join(unit.to_bytes(2, "little") for unit in units)
    return raw.decode("utf-16-le", "surrogatepass")


@settings(max_examples=200, deadline=None)
@given(st.text(st.characters(blacklist_categories=()), min_size=1))
def test_encode_segment_is_safe_and_invertible(raw: str) -> None:
    segment = encode_segment(raw)
    assert re.fullmatch(r"[A-Za-z0-9._~-]+", segment)
    assert segment not in (".", "..")
    assert _decode_segment(segment) == raw


def test_path_for_uses_the_upstream_layout(tmp_path: Path) -> None:
    p = JsonlPersistence(tmp_path)
    assert p.path_for({"id": "a/b", "cwd": "/home/a/proj"}) == \
        tmp_path / "--home-a-proj--" / "a~002Fb" / "session.jsonl"
    assert p.path_for({"id": "x"}) == tmp_path / "_no-cwd" / "x" / "session.jsonl"
