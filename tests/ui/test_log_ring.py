"""The event log's ring (issue 14): reads like a bounded deque of lines, costs nothing per
line once allocated, and lets go of what only old lines used."""

from __future__ import annotations

import gc
import tracemalloc
from collections import deque

from hypothesis import given, settings
from hypothesis import strategies as st

from dsh_tui.harness import AgentOptions, CreateAgentOptions
from dsh_tui.llm.scripted import text
from dsh_tui.ui.state.bridge import Bridge, LogEntry, MessageNote
from dsh_tui.ui.state.log_ring import LineRing
from dsh_tui.ui.widgets.event_log import summarize

from .conftest import msg, world


class _Session:
    """Stands for a session: the ring only keeps it and hands it back."""


def _rows(entries: object) -> list[tuple[object, ...]]:
    return [(e.serial, e.agent_id, e.durable, e.type, e.seq, e.data) for e in entries]


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 12), st.lists(st.tuples(st.integers(0, 3), st.booleans(),
                                              st.sampled_from(["a/x", "b/y", "é/z"])),
                                    max_size=60))
def test_property_the_ring_reads_like_a_bounded_deque_of_entries(maxlen, lines):
    sessions = [_Session() for _ in range(4)]
    ring = LineRing(maxlen, LogEntry)
    model: deque[LogEntry] = deque(maxlen=maxlen)
    dropped = 0
    for serial, (owner, durable, kind) in enumerate(lines, 1):
        agent = f"agent{owner}"
        if len(model) == maxlen:
            dropped = model[0].serial
        if durable:
            ring.append(serial * 3, agent, kind, serial, sessions[owner])
            model.append(LogEntry(serial * 3, agent, True, kind, serial, sessions[owner]))
        else:
            ring.append(serial * 3, agent, kind, None, f"note {serial}")
            model.append(LogEntry(serial * 3, agent, False, kind, None, f"note {serial}"))
        assert len(ring) == len(model)
        assert ring.dropped_serial == dropped  # the newest line it let go of
        assert _rows([ring[-1], ring[0]]) == _rows([model[-1], model[0]])
    assert _rows(ring) == _rows(model)
    assert _rows(reversed(ring)) == _rows(reversed(model))
    for agent in (None, "agent1"):
        picked = ring.newest_first(lambda kind: kind != "b/y", agent)
        assert _rows(picked) == _rows(e for e in reversed(model) if e.type != "b/y" and
                                      agent in (None, e.agent_id))
    for since in range(0, 3 * len(lines) + 2, 2):
        assert _rows(ring.newer_than(since)) == _rows(e for e in model if e.serial > since)
    kept = {id(e.data) for e in model if e.durable}
    held = {id(owner[1]) for owner in ring.owners.values if owner and owner[1] is not None}
    assert held == kept  # the sessions only older lines used are let go


def test_a_full_ring_costs_no_more_than_an_empty_one():
    """Lines are numbers in arrays allocated up front: filling the ring (and going on past
    full) leaves the heap where it was, whatever the serials and seqs."""
    session = _Session()
    ring = LineRing(2_000, LogEntry)
    ring.append(1, "agent", "step/start", 0, session)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for serial in range(2, 7_000):
            ring.append(10**9 + serial, "agent", "step/start" if serial % 2 else "turn/end",
                        10**8 + serial, session)
            ring.append(10**9 + serial, "agent", "agent/status", None, "running")
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(ring) == 2_000
    assert grown < 2_000  # bytes, for 2,000 lines (a line as an object cost ~150)
    assert ring[-2].seq == 10**8 + 6_999 and ring[-2].data is session


async def test_an_inbox_line_keeps_the_message_id_and_text_not_the_message() -> None:
    ctx, _ = world([text("ok")])
    bridge = Bridge(ctx, lambda delay, callback: None)
    bridge.start()
    handle = await ctx.agents.create(CreateAgentOptions(
        session_id="a", agent_options=AgentOptions(provider="mock", model="mock")))
    message = msg("please " + "x" * 1000, "m1")
    handle.agent.followup(message)
    await handle.agent.when_idle()
    bridge.flush()
    lines = [e for e in bridge.log if not e.durable and e.type.startswith("agent/inbox/")]
    assert {e.type for e in lines} >= {"agent/inbox/inserted", "agent/inbox/claimed"}
    for line in lines:
        assert line.data == MessageNote("m1", message.text[:240])
        kept = LogEntry(line.serial, line.agent_id, False, line.type, None, message)
        assert summarize(line) == summarize(kept)  # the line reads as it did
    bridge.stop()
