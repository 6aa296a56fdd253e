"""Log lines with huge strings: the same bytes as before, each huge text encoded once."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dsh_tui.harness.jsonvalue import dumps_compact, json_equal
from dsh_tui.harness.persistence import read_session_log
from dsh_tui.harness.persistence.lines import LineEncoder
from dsh_tui.harness.session import SessionEvent

from .conftest import World, assistant, chunk

# Text as a model may send it: any code point, lone surrogates, controls and quotes included.
TEXT = st.text(st.characters(codec=None, categories=None), max_size=12)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-2**53 + 1, 2**53 - 1)
    | st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: str(f) != "-0.0")
    | TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=12)


def old_bytes(events: list[SessionEvent]) -> bytes:
    """The batch as the writer produced it before huge strings were split out."""
    return ("\n".join(dumps_compact(event.to_json()) for event in events) + "\n").encode()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(JSON, min_size=1, max_size=4), st.integers(0, 6))
def test_any_batch_is_byte_identical_whatever_counts_as_huge(datas: list[Any], big: int) -> None:
    events = [SessionEvent("x/y", seq, 100, data) for seq, data in enumerate(datas)]
    assert b"".join(LineEncoder(big=big).encode(events)) == old_bytes(events)


def test_read_only_views_are_written_like_plain_json() -> None:
    frozen = MappingProxyType({"list": ("a" * 10, 1, None), "k": MappingProxyType({"z": "é"})})
    events = [SessionEvent("x/y", 0, 1, frozen)]
    plain = [SessionEvent("x/y", 0, 1, {"list": ["a" * 10, 1, None], "k": {"z": "é"}})]
    for big in (1, 5, 1000):
        assert b"".join(LineEncoder(big=big).encode(events)) == old_bytes(plain)


def test_one_huge_text_in_three_events_is_encoded_once_and_shared() -> None:
    text = "line with \"quotes\", a tab\t and é\n" * 4000  # ~136,000 characters
    events = [SessionEvent("assistant/chunk", 0, 1, chunk(1, 1, text)),
              SessionEvent("assistant/chunk", 1, 1, {"turn": 1, "step": 1, "chunk": {
                  "type": "block-end", "index": 0, "block": {"type": "text", "text": text}}}),
              SessionEvent("assistant/message", 2, 1, assistant(1, 1, text), "append")]
    encoder = LineEncoder()
    pieces = encoder.encode(events)
    huge = [piece for piece in pieces if len(piece) > len(text)]
    assert len(huge) == 3 and huge[0] is huge[1] is huge[2]
    assert b"".join(pieces) == old_bytes(events)
    # The next batch of the same reply finds it again; a batch without one forgets it.
    again = encoder.encode([SessionEvent("assistant/chunk", 3, 1, chunk(1, 2, text))])
    assert any(piece is huge[0] for piece in again)
    small = [SessionEvent("step/end", 4, 1, {"turn": 1, "step": 1})]
    assert encoder.encode(small) == [old_bytes(small)]
    later = encoder.encode([SessionEvent("assistant/chunk", 5, 1, chunk(1, 3, text))])
    assert not any(piece is huge[0] for piece in later)


def test_a_5mb_reply_is_stored_and_read_back_whole(world: World) -> None:
    text = ("Huge input must not freeze the screen.\n" * 140_000)[:5 * 1_048_576 - 1] + "\ud800"
    session = world.session()
    session.append("turn/start", {"turn": 1})
    session.append("assistant/chunk", chunk(1, 1, text))
    session.append("assistant/message", assistant(1, 1, text), surface_op="append")
    session.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    path = world.persistence.path_for(session.header)
    _, stored = read_session_log(path)
    assert json_equal([e.data for e in stored[1:3]], [chunk(1, 1, text), assistant(1, 1, text)])
    assert path.read_bytes().count(b"\\ud800") == 2  # the lone surrogate as JSON.stringify writes it


def test_a_huge_string_of_every_awkward_character_is_written_as_json_stringify_writes_it() -> None:
    """The huge-string encoder (orjson, stdlib for lone surrogates) against the reference."""
    awkward = "".join(chr(c) for c in range(0x20)) + '"\\/\x7f\u2028\u2029é😀\ufeff'
    for text in (awkward * 3000, awkward * 3000 + "\ud800", "\udfff" + awkward * 3000):
        events = [SessionEvent("assistant/chunk", 0, 1, chunk(1, 1, text))]
        assert b"".join(LineEncoder().encode(events)) == old_bytes(events)
