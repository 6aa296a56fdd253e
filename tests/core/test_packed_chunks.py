"""Packed stream chunks (issue 14): a finished step's chunks stop being live objects, and
`session.events` reads exactly as before: contiguous seqs, equal events, cheap views."""

from __future__ import annotations

import gc
import json
import tracemalloc

from hypothesis import given, settings
from hypothesis import strategies as st

from dsh_tui.harness import Session
from dsh_tui.harness.eventlog import LIVE_TYPES, MIN_RUN, EventLog, forget_decoded
from dsh_tui.harness.session import SessionEvent


def _step(session: Session, turn: int, step: int, chunks: int, *, interleave: int = 0) -> None:
    """One streamed step as the loop logs it: chunks, the assembled message, step/end."""
    session.append("step/start", {"turn": turn, "step": step})
    seqs = []
    session_text = []
    for i in range(chunks):
        piece = f" w{i}é"
        seqs.append(session.append("assistant/chunk", {"turn": turn, "step": step, "chunk": {
            "type": "text-delta", "index": 0, "text": piece}}).seq)
        session_text.append(piece)
        if interleave and i % interleave == interleave - 1:
            session.append("agent/inbox/spliced", {"target": "next-turn", "start": 0,
                                                   "inserted": [{
                "id": f"q{turn}.{step}.{i}", "role": "user", "source": {"kind": "user"},
                "content": [{"type": "text", "text": f"q{i}"}]}]})
    message = {"id": f"a{turn}.{step}", "role": "assistant",
               "source": {"kind": "model", "provider": "p", "model": "m"},
               "content": [{"type": "text", "text": "".join(session_text)}]}
    session.append("assistant/message", {"turn": turn, "step": step, "message": message},
                   surface_op="append", source_event_seqs=seqs)
    session.append("step/end", {"turn": turn, "step": step})


def _long_session(steps: int = 6, chunks: int = 300, interleave: int = 0) -> Session:
    session = Session("packed")
    session.append("turn/start", {"turn": 1})
    for step in range(1, steps + 1):
        _step(session, 1, step, chunks, interleave=interleave)
    session.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    return session


def _records(session: Session) -> list[dict]:
    return [json.loads(json.dumps(e.to_json())) for e in session.events]


def test_rule_finished_chunks_are_packed_and_read_back_equal():
    """Appended events, written out before and after packing, are the same records; seqs stay
    contiguous; indexing, negative indexes, slices, reversed and a held view all agree."""
    Session.compact_chunks = False
    try:
        plain = _long_session(interleave=37)
    finally:
        Session.compact_chunks = True
    packed = _long_session(interleave=37)
    assert packed._log.packed_runs > 0 and plain._log.packed_runs == 0
    expected = _records(plain)
    for record in expected:  # times differ between the two runs; compare everything else
        record["time"] = 0
    got = _records(packed)
    for record in got:
        record["time"] = 0
    assert got == expected
    events = packed.events
    assert [e.seq for e in events] == list(range(len(events)))
    assert [e.seq for e in reversed(events)] == list(range(len(events) - 1, -1, -1))
    assert [events[i].seq for i in range(len(events))] == list(range(len(events)))
    assert events[-1].type == "turn/end" and events[-len(events)].seq == 0
    middle = events[100:900]
    assert [e.seq for e in middle] == list(range(100, 900))
    assert [e.seq for e in events[5:900:7]] == list(range(5, 900, 7))
    assert events == list(events)  # equality against a plain list of the same events
    assert packed.derive_messages() == plain.derive_messages()


def test_rule_packed_chunks_keep_their_times_and_messages_their_sources():
    """A packed chunk reads back with its own time; the assistant message still cites every
    chunk seq, as one list, in order."""
    session = _long_session(steps=1, chunks=200)
    live = [e for e in session.events if e.type == "assistant/chunk"]
    assert session._log.packed_runs == 1
    message = next(e for e in session.events if e.type == "assistant/message")
    assert message.source_event_seqs == [e.seq for e in live]
    assert message.to_json()["sourceEventSeqs"] == [e.seq for e in live]
    assert all(isinstance(e.time, int) for e in live)
    assert all(isinstance(e, SessionEvent) for e in live)


def test_rule_an_open_step_is_not_packed_and_short_runs_stay_live():
    """Chunks of a step that has not ended stay live objects (the same objects the append
    returned), and runs shorter than MIN_RUN are never packed."""
    session = Session("open")
    session.append("turn/start", {"turn": 1})
    _step(session, 1, 1, MIN_RUN - 1)
    assert session._log.packed_runs == 0
    session.append("step/start", {"turn": 1, "step": 2})
    appended = [session.append("assistant/chunk", {"turn": 1, "step": 2, "chunk": {
        "type": "text-delta", "index": 0, "text": str(i)}}) for i in range(100)]
    assert session._log.packed_runs == 0
    assert all(session.events[e.seq] is e for e in appended)


def test_rule_retained_memory_per_finished_chunk_is_small():
    """What a finished chunk still costs on the heap: the bytes its step leaves behind after
    packing, per chunk, are a small fraction of what the same chunks cost unpacked."""
    def retained(compact: bool) -> float:
        Session.compact_chunks = compact
        try:
            gc.collect()
            forget_decoded()
            tracemalloc.start()
            try:
                before = tracemalloc.get_traced_memory()[0]
                session = _long_session(steps=10, chunks=500)
                forget_decoded()
                gc.collect()
                after = tracemalloc.get_traced_memory()[0]
            finally:
                tracemalloc.stop()
            return (after - before) / session.seq
        finally:
            Session.compact_chunks = True

    unpacked = retained(False)
    packed = retained(True)
    assert packed < 64, packed
    assert packed * 5 < unpacked, (packed, unpacked)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.tuples(st.just("chunks"), st.integers(0, 60)),
                          st.tuples(st.just("other"), st.integers(1, 3)),
                          st.tuples(st.just("live"), st.integers(1, 2)),
                          st.tuples(st.just("compact"), st.integers(1, 200))), max_size=25))
def test_property_event_log_reads_like_a_list(operations):
    """Whatever mix of appends and packing, the log reads exactly like a plain list."""
    model: list[SessionEvent] = []
    log = EventLog(SessionEvent)

    def add(kind: str, data: dict) -> None:
        event = SessionEvent(kind, len(model), 1000 + len(model) * 3, data)
        model.append(event)
        log.append(event)

    for op, n in operations:
        if op == "chunks":
            for i in range(n):
                add("assistant/chunk", {"chunk": {"type": "text-delta", "text": f"t{i}"}})
        elif op == "other":
            for k in range(n):
                add("step/end", {"turn": 1, "k": [k, 0.5, None, "é\u2028"]})
        elif op == "live":
            for _ in range(n):
                add("turn/start", {"turn": 1})
        else:
            log.compact(budget=n)
        assert len(log) == len(model)
    log.compact()
    want = [e.to_json() for e in model]
    assert [e.to_json() for e in log.iter(0, len(log))] == want
    assert [e.to_json() for e in log.riter(len(log))] == want[::-1]
    assert [log[i].to_json() for i in range(len(log))] == want
    live = [e.to_json() for e in log.iter_live(0, len(log))]
    assert [r for r in want if r["type"] in LIVE_TYPES] == \
        [r for r in live if r["type"] in LIVE_TYPES]  # what the session scans for is all there
    assert [r["seq"] for r in live] == sorted(r["seq"] for r in live)
    assert all(want[r["seq"]] == r for r in live)
    assert [e.to_json() for e in log.riter_live(len(log))] == live[::-1]
    for start in range(0, len(model), 7):
        assert [e.seq for e in log.iter(start, start + 11)] == \
            list(range(start, min(len(model), start + 11)))


def test_rule_a_seed_is_packed_over_later_step_ends_or_at_once_by_pack():
    """A resumed log is not packed while it is seeded (the loader's events stay as given);
    step ends pack it a budget at a time, and `pack()` packs it at once, leaving the chunks
    of a step still streaming alone."""
    source = _long_session(steps=8, chunks=300)
    seed = [event.to_json() for event in source.events]
    resumed = Session("packed", seed, source.header, restore=True)
    assert resumed._log.packed_runs == 0
    resumed.append("turn/start", {"turn": 2})
    resumed.append("step/start", {"turn": 2, "step": 1})
    open_chunks = [resumed.append("assistant/chunk", {"turn": 2, "step": 1, "chunk": {
        "type": "text-delta", "index": 0, "text": str(i)}}) for i in range(40)]
    packed = resumed.pack()
    # Every chunk run, and the records between them; the records since the last message
    # (the last step's and the turn's end, the seed's end, the open turn's and step's
    # start) wait as one run in front of the open step's chunks.
    records = 8 + 7 + 1  # step starts, all but the last step end, the first turn start
    assert packed == 8 * 300 + records
    assert resumed._log.packed_runs == 8 and resumed._log.packed_records == records
    assert all(resumed.events[e.seq] is e for e in open_chunks)
    assert [e.to_json() for e in resumed.events[:len(seed)]] == seed
    assert resumed.pack() == 0


def test_rule_a_long_streaming_step_is_packed_while_it_streams():
    """A step that streams thousands of chunks does not keep them all live until it ends:
    past HOT_LIMIT unexamined events the older ones are packed, the last HOT_KEEP stay the
    objects the appends returned, and the log still reads back every chunk in order."""
    from dsh_tui.harness.eventlog import HOT_KEEP, HOT_LIMIT

    session = Session("streaming")
    session.append("turn/start", {"turn": 1})
    session.append("step/start", {"turn": 1, "step": 1})
    appended = [session.append("assistant/chunk", {"turn": 1, "step": 1, "chunk": {
        "type": "text-delta", "index": 0, "text": f" t{i}"}}) for i in range(5 * HOT_LIMIT)]
    log = session._log
    assert log.packed_runs >= 4
    live = sum(1 for e in appended if log[e.seq] is e)
    assert HOT_KEEP <= live <= HOT_LIMIT
    assert all(log[e.seq] is e for e in appended[-HOT_KEEP:])
    assert [e.to_json() for e in session.events] == \
        [e.to_json() for e in (session.events[0], session.events[1], *appended)]
    _step(session, 1, 2, 40)  # the step's end packs the rest
    assert [e.seq for e in session.events] == list(range(session.seq))


def _turns_with_bookkeeping(turns: int) -> tuple[Session, list[SessionEvent]]:
    """Turns as the loop and inbox log them (splices, request records, a tool call, an
    ignorable marker); returns the session and every event as `append` returned it."""
    session = Session("records")
    appended = []

    def add(kind: str, data: object, **kw: object) -> SessionEvent:
        event = session.append(kind, data, **kw)
        appended.append(event)
        return event

    for turn in range(1, turns + 1):
        message = {"id": f"u{turn}", "role": "user", "source": {"kind": "user"},
                   "content": [{"type": "text", "text": f"go ✓ {turn} \u2028"}]}
        add("agent/inbox/spliced", {"target": "next-turn", "start": 0, "inserted": [message]})
        add("turn/start", {"turn": turn})
        add("agent/inbox/spliced", {"target": "next-turn", "start": 0, "removedCount": 1,
                                    "inserted": []})
        add("step/start", {"turn": turn, "step": 1})
        add("user/message", message, surface_op="append")
        if turn == 1:
            add("request/header", {"header": {"config": {"provider": "p", "model": "m"}},
                                   "reason": "initial"})
        seqs = [add("assistant/chunk", {"turn": turn, "step": 1, "chunk": {
            "type": "text-delta", "index": 0, "text": f"w{i}"}}).seq for i in range(20)]
        add("tool/call", {"turn": turn, "step": 1, "callId": f"c{turn}", "name": "read",
                          "arguments": {"path": "/x", "n": 1.5}})
        add("assistant/message", {"turn": turn, "step": 1, "message": {
            "id": f"a{turn}", "role": "assistant",
            "source": {"kind": "model", "provider": "p", "model": "m"},
            "content": [{"type": "text", "text": "".join(f"w{i}" for i in range(20))}]}},
            surface_op="append", source_event_seqs=seqs)
        add("ui/marker", {"turn": turn}, ignorable=True)
        add("step/end", {"turn": turn, "step": 1})
        add("turn/end", {"turn": turn, "reason": {"kind": "completed"}})
    return session, appended


def test_rule_the_bookkeeping_between_surface_events_is_packed_and_reads_back_equal():
    """Splices, step and turn starts and ends, tool calls and ignorable records of finished
    turns are packed too (record runs); what the session scans for and the model history
    stay the live objects `append` returned, and every event reads back as appended."""
    session, appended = _turns_with_bookkeeping(12)
    log = session._log
    assert log.packed_records > 12 * 5
    live_records = [e for e in log.iter_live(0, len(log))
                    if e.type not in LIVE_TYPES and e.type != "assistant/chunk"]
    # Only the last turn's closing records wait (a later step may extend their run).
    assert [e.type for e in live_records] == ["ui/marker", "step/end", "turn/end"]
    assert all(log[e.seq] is e for e in appended if e.type in LIVE_TYPES)
    assert [e.to_json() for e in session.events] == [e.to_json() for e in appended]
    assert [e.ignorable for e in session.events] == [e.ignorable for e in appended]
    assert [e.seq for e in reversed(session.events)] == list(range(session.seq))[::-1]
    assert session.last_turn() == 12
    assert session.request_header() == {"config": {"provider": "p", "model": "m"}}
    assert [m["id"] for m in session.derive_messages()] == \
        [x for t in range(1, 13) for x in (f"u{t}", f"a{t}")]


def test_rule_a_record_read_does_not_decode_the_chunk_run_being_read():
    """Reading one packed record decodes its small run only: the chunk run cached for an
    in-order read stays cached (the event log reads records between chunks)."""
    from dsh_tui.harness import eventlog

    session, appended = _turns_with_bookkeeping(3)
    forget_decoded()
    chunk = next(e for e in appended if e.type == "assistant/chunk")
    record = next(e for e in appended if e.type == "step/start")
    first = session.events[chunk.seq]
    assert session.events[record.seq].to_json() == record.to_json()
    assert session.events[chunk.seq] is first  # still the cached decode
    assert type(eventlog._decoded_records[0]) is eventlog.RecordRun
    assert len(eventlog._decoded_records[1]) < 5


_SCALAR = st.one_of(st.integers(-3, 3), st.text(max_size=3), st.none(), st.booleans(),
                    st.floats(allow_nan=False, allow_infinity=False).filter(
                        lambda f: f != 0 or str(f) == "0.0"))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(
    st.tuples(st.sampled_from([1, 2, "1"]), st.sampled_from([1, 7]),
              st.sampled_from(["text-delta", "reasoning-delta"]), st.sampled_from([0, 1, 30]),
              st.text(max_size=6)),  # a plain delta (any text: surrogates, U+2028, "")
    st.dictionaries(st.sampled_from(["turn", "step", "chunk", "x"]),
                    st.one_of(_SCALAR, st.dictionaries(st.sampled_from(
                        ["type", "index", "text", "block"]), _SCALAR, max_size=4)),
                    max_size=4)), min_size=1, max_size=40))
def test_property_a_chunk_run_reads_back_every_data_exactly(datas):
    """Plain deltas are stored by column (joined text, lengths, shapes) and anything else
    whole: either way each chunk reads back with the same JSON text (keys in order)."""
    from dsh_tui.harness.eventlog import ChunkRun

    events = []
    for i, data in enumerate(datas):
        if isinstance(data, tuple):
            turn, step, kind, index, piece = data
            data = {"turn": turn, "step": step,
                    "chunk": {"type": kind, "index": index, "text": piece}}
        events.append(SessionEvent("assistant/chunk", 40 + i, 1000 + 3 * i, data))
    run = ChunkRun.pack(events)
    assert run is not None and run.count == len(events)
    back = run.unpack(40, SessionEvent)
    assert [json.dumps(e.to_json()) for e in back] == [json.dumps(e.to_json()) for e in events]


def test_rule_a_packed_delta_costs_about_a_byte_beyond_its_text():
    """A streamed reply's deltas, packed: the run is about its compressed text plus a byte or
    so a chunk, not a compressed JSON object per chunk as before (about 3 bytes a chunk)."""
    import zlib

    from dsh_tui.harness.eventlog import ChunkRun

    words = ["the", "design", "keeps", "every", "agent's", "transcript", "in", "a", "plain",
             "model", "and", "only"]
    pieces = [f" {words[(i * 7) % len(words)]}" for i in range(600)]
    events = [SessionEvent("assistant/chunk", i, 1000 + 2 * i, {"turn": 3, "step": 1, "chunk": {
        "type": "text-delta", "index": 0, "text": piece}}) for i, piece in enumerate(pieces)]
    run = ChunkRun.pack(events)
    assert run is not None
    text = len(zlib.compress("".join(pieces).encode(), 6))
    as_objects = len(zlib.compress(json.dumps(
        [1000, [2] * 600, [e.data for e in events]], separators=(",", ":")).encode(), 6))
    assert len(run.blob) - text < 1.2 * len(events)
    assert len(run.blob) * 2 < as_objects


def test_rule_the_last_turn_is_known_without_reading_packed_history():
    """Turn starts are packed with the bookkeeping of their turn; the session keeps the
    last one's number as it appends or seeds (a start without an integer turn is skipped,
    as the scan it replaces skipped it)."""
    session, _ = _turns_with_bookkeeping(5)
    log = session._log
    assert not [e for e in log.iter_live(0, len(log)) if e.type == "turn/start"]
    assert session.last_turn() == 5
    session.append("turn/start", {"turn": "six"})
    assert session.last_turn() == 5
    session.append("turn/end", {"turn": "six", "reason": {"kind": "completed"}})
    session.append("turn/start", {"turn": 6})
    assert session.last_turn() == 6
    resumed = Session("records", [e.to_json() for e in session.events], session.header,
                      restore=True)
    assert resumed.last_turn() == 6
    assert Session("empty").last_turn() == 0
