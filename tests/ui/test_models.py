"""The pure view models and the bridge's coalescing, without a terminal."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest

from dsh_tui.compose import build_context
from dsh_tui.harness import AgentOptions, CreateAgentOptions
from dsh_tui.llm.scripted import ScriptedModel, fail, hang, reasoning, text, tool_call
from dsh_tui.loop import Tool, ToolOutput
from dsh_tui.ui.state.agent_view import AgentView
from dsh_tui.ui.state.bridge import Bridge
from dsh_tui.ui.state.inbox_rows import inbox_rows
from dsh_tui.ui.state.lanes import lane_of, source_for, source_label, with_lane
from dsh_tui.ui.state.text import last_line, visible
from dsh_tui.ui.state.transcript import TranscriptModel

from .conftest import msg, world


def ev(seq: int, type_: str, data: Any, time: int = 1000) -> Any:
    return SimpleNamespace(type=type_, seq=seq, time=time, data=data, ignorable=False)


def kinds(model: TranscriptModel) -> list[str]:
    return [item.kind for item in model.items]


def test_visible_keeps_text_but_shows_controls() -> None:
    assert visible("[bold]x[/bold]") == "[bold]x[/bold]"
    assert visible("a\x1b[31mb\tc\nd") == "a␛[31mb\tc\nd"
    assert "\x07" not in visible("bell\x07") and "\x9b" not in visible("csi\x9b")


def test_lanes_and_sources() -> None:
    assert lane_of(source_for("steer"), "next-step") == "steer"
    assert lane_of(source_for("inject"), "next-step") == "inject"
    assert lane_of({"kind": "user"}, "next-turn") == "follow-up"
    assert lane_of({"kind": "user"}, "next-step") == "steer"
    assert lane_of({"kind": "plugin", "plugin": "notes"}, "next-step") == "context"
    assert lane_of({"kind": "tool", "callId": "c"}, "next-step") == "context"
    # a lane that contradicts the list the item is in is not believed
    assert lane_of(source_for("steer"), "next-turn") == "follow-up"
    assert source_label(source_for("inject")) == "you"
    assert source_label({"kind": "plugin", "plugin": "spawn_agent"}) == "spawn_agent"
    assert with_lane(source_for("follow-up"), "inject") == source_for("inject")
    assert with_lane({"kind": "plugin", "plugin": "x"}, "steer") == {
        "kind": "plugin", "plugin": "x", "lane": "steer"}


async def test_transcript_from_a_scripted_session() -> None:
    script = [reasoning("plan\nsecond line", then=tool_call("c1", "echo", {"x": 1})),
              text("done **bold**")]

    async def echo(call: Any) -> Any:
        return ToolOutput.text("echoed")

    ctx = build_context(providers={"mock": ScriptedModel(script)}, retry=False,
                        system_prompt=None, tools=[Tool("echo", "echo", {"type": "object"}, echo)])
    handle = await ctx.agents.create(CreateAgentOptions(
        session_id="a", agent_options=AgentOptions(provider="mock", model="mock")))
    handle.agent.followup(msg("hello", "m1", "follow-up"))
    await handle.agent.when_idle()
    model = TranscriptModel()
    model.apply_all(handle.agent.session.events)
    assert kinds(model) == ["turn", "user", "reasoning", "tool", "step", "text", "turn-end"]
    user, reason, tool, _, answer, end = model.items[1:]
    assert (user.lane, user.source, user.message_id, user.text) == ("follow-up", "you", "m1",
                                                                   "hello")
    assert reason.current_text() == "plan\nsecond line" and not reason.streaming
    assert tool.name == "echo" and tool.arguments == '{"x":1}' and tool.result == "echoed"
    assert tool.duration is not None and tool.duration >= 0 and not tool.is_error
    assert answer.current_text() == "done **bold**"
    assert end.reason_kind == "completed" and end.text == "completed"
    assert model.turn == 1 and model.input_tokens > 0


async def test_end_reasons_show_cause_and_error_message() -> None:
    ctx, _ = world([hang(), fail("RATE_LIMIT", "slow down")])
    handle = await ctx.agents.create(CreateAgentOptions(
        session_id="a", agent_options=AgentOptions(provider="mock", model="mock")))
    agent = handle.agent
    agent.followup(msg("one", "m1"))
    await asyncio.sleep(0.01)
    agent.cancel()
    await agent.when_idle()
    agent.followup(msg("two", "m2"))
    await agent.when_idle()
    model = TranscriptModel()
    model.apply_all(agent.session.events)
    ends = [i for i in model.items if i.kind == "turn-end"]
    assert ends[0].reason_kind == "aborted" and "cancelled by you" in ends[0].text
    assert ends[1].reason_kind == "error" and "slow down" in ends[1].text
    assert "RATE_LIMIT" in ends[1].text
    notices = [i.text for i in model.items if i.kind == "notice"]
    assert any("reply interrupted" in n for n in notices)
    assert any("model request failed: slow down" in n for n in notices)


def test_upstream_shapes_are_understood() -> None:
    model = TranscriptModel()
    model.apply_all([
        ev(0, "user/message", {"content": [{"type": "text", "text": "hi"}],
                               "source": {"kind": "user", "rpcId": "x"}}),
        ev(1, "assistant/chunk", {"turn": 1, "step": 1, "chunk": {
            "type": "block-start", "index": 0, "blockType": "reasoning"}}),
        ev(2, "reasoning-chunks", {"turn": 1, "step": 1, "index": 0, "dt": [1, 2],
                                   "texts": ["thin", "king"]}),
        ev(3, "assistant/message", {"turn": 1, "step": 1, "content": [
            {"type": "reasoning", "text": "thinking"},
            {"type": "tool-call", "id": "c1", "name": "bash", "arguments": "{}"}],
            "provenance": {"provider": "deepseek-official", "model": "deepseek-v4-flash"}}),
        ev(4, "tool/call", {"turn": 1, "step": 1, "callId": "c1", "name": "bash",
                            "arguments": "{}"}, time=1000),
        ev(5, "tool/result", {"turn": 1, "step": 1, "callId": "c1",
                              "content": [{"type": "text", "text": "OK"}], "isError": False},
           time=2500),
        ev(6, "assistant/chunk", {"turn": 1, "step": 2, "chunk": {
            "type": "block-start", "index": 0, "blockType": "text"}}),
        ev(7, "assistant/chunk", {"turn": 1, "step": 2, "chunk": {
            "type": "text-delta", "index": 0, "text": "DONE"}}),
        ev(8, "assistant/chunk", {"turn": 1, "step": 2, "chunk": {
            "type": "finish", "reason": {"kind": "stop"}}}),
        ev(9, "tool/code-dispatch", {"name": "bash"}),
    ])
    assert kinds(model) == ["user", "reasoning", "tool", "text", "notice"]
    assert model.items[1].current_text() == "thinking"
    tool = model.items[2]
    assert tool.result == "OK" and tool.duration == 1500
    assert model.items[3].current_text() == "DONE" and not model.items[3].streaming
    assert model.items[4].text.startswith("tool/code-dispatch")


def test_a_broken_event_becomes_a_visible_notice() -> None:
    model = TranscriptModel()
    model.apply(ev(0, "tool/result", {"message": {"content": 5}}))
    model.apply(ev(1, "turn/end", "not a mapping"))
    assert kinds(model) == ["tool", "turn-end"]


def test_streaming_deltas_are_joined_lazily() -> None:
    model = TranscriptModel()
    model.apply(ev(0, "assistant/chunk", {"turn": 1, "step": 1, "chunk": {
        "type": "block-start", "index": 0, "blockType": "reasoning"}}))
    for n in range(500):
        model.apply(ev(n + 1, "assistant/chunk", {"turn": 1, "step": 1, "chunk": {
            "type": "reasoning-delta", "index": 0, "text": f"line {n}\n"}}))
    item = model.items[0]
    assert item.streaming and len(item.chunks) == 500
    assert last_line(item.current_text()) == "line 499" and item.chunks == []
    assert model.drain() == {0} and model.drain() == set()


def test_inbox_rows_mark_a_paused_inbox() -> None:
    first, second = msg("a", "m1", "steer"), msg("b", "m2")
    rows = inbox_rows((first,), (second,), (), paused=True)
    assert [r.kind for r in rows] == ["banner", "header", "item", "header", "item"]
    assert (rows[2].lane, rows[4].lane) == ("steer", "follow-up")
    assert [r.kind for r in inbox_rows((), (), (), paused=False)] == ["header", "header", "hint"]


async def test_bridge_coalesces_a_stream_into_few_flushes() -> None:
    """Thousands of chunks, one scheduled flush at a time: listeners only record."""
    ctx, _ = world([text("x" * 3000)])
    scheduled: list[Any] = []
    bridge = Bridge(ctx, lambda delay, callback: scheduled.append(callback))
    bridge.start()
    handle = await ctx.agents.create(CreateAgentOptions(
        session_id="a", agent_options=AgentOptions(provider="mock", model="mock")))
    handle.agent.followup(msg("go", "m1"))
    await handle.agent.when_idle()
    events = len(handle.agent.session.events)
    assert events > 3000
    flushes = [callback for callback in scheduled if callback == bridge._scheduled_flush]
    assert len(flushes) == 1  # nothing flushed yet: still the one pending flush
    flushes[0]()
    view = bridge.views["a"]
    assert view.applied == events
    text_items = [i for i in view.transcript.items if i.kind == "text"]
    assert text_items[0].current_text() == "x" * 3000
    assert bridge.flush_count == 1
    bridge.stop()


async def test_bridge_event_log_keeps_few_chunks_and_reads_packed_ones_back() -> None:
    """Stream chunks go to the event log's own small ring (they are most events and would
    push everything else out); a chunk line keeps its session, not the event, and reads its
    chunk back from the packed log when shown; both rings merge in serial order."""
    from dsh_tui.ui.state.bridge import CHUNK_LOG_LIMIT
    from dsh_tui.ui.widgets.event_log import summarize

    ctx, _ = world([text("y" * (CHUNK_LOG_LIMIT + 500))])
    bridge = Bridge(ctx, lambda delay, callback: None)
    bridge.start()
    handle = await ctx.agents.create(CreateAgentOptions(
        session_id="a", agent_options=AgentOptions(provider="mock", model="mock")))
    handle.agent.followup(msg("go", "m1"))
    await handle.agent.when_idle()
    bridge.flush()
    session = handle.agent.session
    assert session._log.packed_runs >= 1  # the step ended: its chunks are packed
    assert all(entry.type != "assistant/chunk" for entry in bridge.log)
    assert len(bridge.chunk_log) == CHUNK_LOG_LIMIT
    assert [e.type for e in bridge.log if e.durable][-1] == "turn/end"
    newest = list(bridge.entries_newest_first())
    assert [e.serial for e in newest] == sorted((e.serial for e in newest), reverse=True)
    since = bridge.entries_since(newest[40].serial)
    assert [e.serial for e in since] == [e.serial for e in reversed(newest[:40])]
    chunk = bridge.chunk_log[-1]
    assert chunk.data is session and chunk.event == session.events[chunk.seq]
    delta = next(e for e in reversed(bridge.chunk_log)
                 if e.event.data["chunk"]["type"] == "text-delta")
    assert summarize(delta) == 'text-delta "y"'
    bridge.stop()


async def test_bridge_event_log_lines_do_not_keep_packed_bookkeeping_alive() -> None:
    """A durable line of any type keeps its session and seq, not the event, so the step
    and turn records a session packs are not held live by the event log's ring; shown,
    a line reads its record back equal to what was logged."""
    from dsh_tui.harness.eventlog import RecordRun
    from dsh_tui.ui.widgets.event_log import summarize

    ctx, _ = world([text("a" * 40), text("b" * 40), text("c" * 40)])
    bridge = Bridge(ctx, lambda delay, callback: None)
    bridge.start()
    handle = await ctx.agents.create(CreateAgentOptions(
        session_id="a", agent_options=AgentOptions(provider="mock", model="mock")))
    for n in range(3):
        handle.agent.followup(msg(f"go {n}", f"m{n}"))
        await handle.agent.when_idle()
        bridge.flush()
    session = handle.agent.session
    assert session._log.packed_records > 0
    durable = [e for e in bridge.log if e.durable]
    assert durable and all(e.data is session for e in durable)
    log = session._log
    packed = {seq for start, seg in zip(log._starts, log._segs, strict=True)
              if isinstance(seg, RecordRun) for seq in range(start, start + seg.count)}
    step_start = next(e for e in durable if e.type == "step/start" and e.seq in packed)
    record = session.events[step_start.seq]
    assert step_start.event == record and record.type == "step/start"
    assert summarize(step_start) == '{"turn":1,"step":1}'
    bridge.stop()


def test_bridge_flush_interval_paces_flushes_and_zero_turns_coalescing_off() -> None:
    """The next flush waits out `flush_interval` after the previous one; 0 means at once."""
    ctx, _ = world([])
    now = [10.0]
    delays: list[float] = []
    paced = Bridge(ctx, lambda delay, callback: delays.append(delay), clock=lambda: now[0])
    assert paced.flush_interval == pytest.approx(1 / 60)
    paced.flush()
    paced.mark_inbox("a")
    assert delays == [pytest.approx(1 / 60)]
    eager = Bridge(ctx, lambda delay, callback: delays.append(delay), clock=lambda: now[0],
                   flush_interval=0)
    eager.flush()
    eager.mark_inbox("a")
    assert delays[-1] == 0


async def test_bridge_tombstones_discards_but_not_edits_or_moves() -> None:
    ctx, _ = world([])
    scheduled: list[Any] = []
    bridge = Bridge(ctx, lambda delay, callback: scheduled.append(callback))
    bridge.start()
    handle = await ctx.agents.create(CreateAgentOptions(
        session_id="a", agent_options=AgentOptions(provider="mock", model="mock")))
    inbox = handle.agent.inbox
    inbox.append("next-turn", msg("one", "m1"))
    inbox.append("next-turn", msg("two", "m2"))
    inbox.append("next-turn", msg("three", "m3"))
    inbox.replace("m1", inbox.get("m1").with_text("one!"))  # an edit
    inbox.move("m3", "next-turn", 0)  # a move
    inbox.remove("m2")  # a discard
    bridge.flush()
    tombstones = bridge.views["a"].tombstones
    assert [(t.message.id, t.kind, t.target, t.index) for t in tombstones] == [
        ("m2", "discarded", "next-turn", 2)]
    bridge.stop()


def test_a_huge_queue_shows_its_head_and_a_count() -> None:
    queue = tuple(msg(f"item {n}", f"q{n}") for n in range(10_000))
    rows = inbox_rows((), queue, (), paused=False, limit=100)
    assert [r.kind for r in rows].count("item") == 100
    assert rows[1].count == 10_000  # the NEXT TURN header keeps the true count
    assert rows[-1].kind == "hint" and "9,900 more queued" in rows[-1].text


async def test_retries_read_as_one_line_per_failed_request() -> None:
    from dsh_tui.llm.retry import install_retry_policy

    ctx, model_ = world([fail("RATE_LIMIT", "too many requests", status=429),
                         fail("SERVER", "boom", status=503), text("ok")])

    async def no_wait(_seconds: float) -> None:
        return None

    install_retry_policy(ctx, sleep=no_wait)
    handle = await ctx.agents.create(CreateAgentOptions(
        session_id="a", agent_options=AgentOptions(provider="mock", model="mock")))
    handle.agent.followup(msg("hi", "m1"))
    await handle.agent.when_idle()
    types = [e.type for e in handle.agent.session.events]
    assert types.count("llm/retry") == 2 and types.count("llm/retry-started") == 2
    model = TranscriptModel()
    model.apply_all(handle.agent.session.events)
    notices = [i.text for i in model.items if i.kind == "notice"]
    assert notices == ["model request failed: too many requests (RATE_LIMIT) · retry 1 of 5 sent",
                       "model request failed: boom (SERVER) · retry 2 of 5 sent"]
    assert not any("{" in n for n in notices)  # no raw JSON record in the transcript
    assert kinds(model)[-2:] == ["text", "turn-end"] and len(model_.requests) == 3


def test_a_tool_call_of_an_ended_turn_no_longer_says_running() -> None:
    model = TranscriptModel()
    model.apply_all([
        ev(0, "turn/start", {"turn": 1}),
        ev(1, "step/start", {"turn": 1, "step": 1}),
        ev(2, "tool/call", {"callId": "c1", "name": "slow", "arguments": "{}"}),
        ev(3, "turn/end", {"turn": 1, "reason": {"kind": "aborted",
                                                 "reason": {"kind": "user"}}}),
    ])
    tool = next(i for i in model.items if i.kind == "tool")
    assert tool.result is None and tool.interrupted and tool.reason_kind == "aborted"
    from dsh_tui.ui.transcript_items import ItemLook, tool_lines

    shown = "\n".join(line.plain for line in tool_lines(tool, 100, ItemLook()))
    assert "running" not in shown and "no result · the turn aborted" in shown


def test_collapsed_multi_line_json_arguments_show_on_one_line() -> None:
    from dsh_tui.ui.transcript_items import _one_line_args

    pretty = '{\n  "path": "notes.md",\n  "lines": [1, 2]\n}'
    assert _one_line_args(pretty) == '{"path": "notes.md", "lines": [1, 2]}'
    assert _one_line_args("first line\n  second line") == "first line second line"
    assert _one_line_args("") == "{}"


async def _paced_bridge() -> tuple[Bridge, Any, list[float], list[tuple[float, Any]], list[Any]]:
    """A started bridge on a fake clock over one agent "a", flushed once: the bridge, the
    agent, the clock, the scheduled (delay, callback) pairs and the flushed batches."""
    ctx, _ = world([])
    now = [10.0]
    scheduled: list[tuple[float, Any]] = []
    bridge = Bridge(ctx, lambda delay, callback: scheduled.append((delay, callback)),
                    clock=lambda: now[0])
    flushed: list[Any] = []
    bridge.on_flush = flushed.append
    bridge.start()
    handle = await ctx.agents.create(CreateAgentOptions(
        session_id="a", agent_options=AgentOptions(provider="mock", model="mock")))
    bridge.flush()
    flushed.clear()
    scheduled.clear()
    now[0] = 11.0
    return bridge, handle.agent, now, scheduled, flushed


async def test_bridge_flushes_an_event_within_one_interval() -> None:
    """The bridge folds a streamed event into the models at its next paced flush."""
    bridge, agent, _now, scheduled, flushed = await _paced_bridge()
    agent.session.append("test/streamed", {"n": 1})
    delay, callback = scheduled.pop()
    assert delay < 0.02  # one flush interval at most
    callback()
    assert [batch.transcripts for batch in flushed] == [{"a"}] and not scheduled
    bridge.stop()


async def test_bridge_catch_up_folds_the_events_it_heard_not_the_packed_log() -> None:
    """A step's chunks are packed once it ends; the flush after that folds the chunk
    objects its listener was handed instead of decoding their packed run (10-50 ms for
    a long step, at every step end of every agent). The model is the same either way."""
    from dsh_tui.harness.eventlog import ChunkRun
    from dsh_tui.llm.scripted import text as scripted_text

    reply = "Packed at the step's end, folded from what was heard. " * 2
    ctx, _ = world([scripted_text(reply)])
    bridge = Bridge(ctx, lambda delay, callback: None)
    bridge.start()
    handle = await ctx.agents.create(CreateAgentOptions(
        session_id="a", agent_options=AgentOptions(provider="mock", model="mock")))
    bridge.flush()
    agent = handle.agent
    agent.followup(msg("go", "m1"))
    await asyncio.wait_for(agent.when_idle(), 10)  # no flush meanwhile: the step ended
    assert agent.session._log.packed_runs >= 1
    decoded: list[int] = []
    unpack = ChunkRun.unpack

    def counted(self: ChunkRun, *args: Any) -> Any:
        decoded.append(self.count)
        return unpack(self, *args)

    ChunkRun.unpack = counted  # type: ignore[method-assign]
    try:
        bridge.flush()
        assert not decoded
        fresh = AgentView(agent)
        fresh.catch_up()  # a view that heard nothing reads the packed log back
        assert decoded
    finally:
        ChunkRun.unpack = unpack  # type: ignore[method-assign]
    view = bridge.views["a"]
    assert view.applied == len(agent.session.events)
    shown = [item.current_text() for item in view.transcript.items]
    assert shown == [item.current_text() for item in fresh.transcript.items]
    assert reply in shown
    bridge.stop()


def test_a_long_result_line_is_never_cut_silently() -> None:
    """A collapsed tool call shows at most 200 characters of a result line; a longer one
    ends in `…` and the block says it expands (it was cut mid-word with no sign)."""
    from dsh_tui.ui.transcript_items import RESULT_PREVIEW_WIDTH, ItemLook, tool_lines

    model = TranscriptModel()
    long_line = "word " * 100
    model.apply_all([
        ev(0, "turn/start", {"turn": 1}),
        ev(1, "step/start", {"turn": 1, "step": 1}),
        ev(2, "tool/call", {"callId": "c1", "name": "read", "arguments": "{}"}),
        ev(3, "tool/result", {"callId": "c1", "content": [{"type": "text", "text": long_line}],
                              "isError": False}),
    ])
    tool = next(i for i in model.items if i.kind == "tool")
    assert tool.result == long_line
    shown = "".join(line.plain for line in tool_lines(tool, 1000, ItemLook()))
    assert long_line[: RESULT_PREVIEW_WIDTH - 1] + "…" in shown
    assert "(click to expand)" in shown


def _turn_events(seq: int, turn: int, deltas: int) -> list[Any]:
    """One turn as a session logs it: a user message, a streamed reply, its message."""
    out = [ev(seq, "turn/start", {"turn": turn}),
           ev(seq + 1, "step/start", {"turn": turn, "step": 1}),
           ev(seq + 2, "user/message", {"id": f"u{turn}", "role": "user",
                                        "content": [{"type": "text", "text": f"go {turn}"}],
                                        "source": {"kind": "user"}})]
    for i in range(deltas):
        out.append(ev(seq + 3 + i, "assistant/chunk", {"turn": turn, "step": 1, "chunk": {
            "type": "text-delta", "index": 0, "text": f"w{i} "}}))
    text = "".join(f"w{i} " for i in range(deltas))
    n = seq + 3 + deltas
    out += [ev(n, "assistant/message", {"turn": turn, "step": 1, "message": {
        "role": "assistant", "content": [{"type": "text", "text": text}],
        "source": {"kind": "model", "provider": "p", "model": "m"}}}),
        ev(n + 1, "step/end", {"turn": turn, "step": 1}),
        ev(n + 2, "turn/end", {"turn": turn, "reason": {"kind": "completed"}})]
    return out


def test_a_transcript_nobody_shows_keeps_a_bounded_set_of_changes() -> None:
    """Only the shown transcript is drained; a hidden one's changed indexes stop at
    DIRTY_LIMIT, and the next drain then names every item (nothing is missed)."""
    from dsh_tui.ui.state.transcript import DIRTY_LIMIT

    model = TranscriptModel()
    seq = 0
    for turn in range(1, 600):
        events = _turn_events(seq, turn, 5)
        model.apply_all(events)
        seq += len(events)
        assert len(model.dirty) <= DIRTY_LIMIT
    assert len(model.items) > DIRTY_LIMIT
    assert model.drain() == set(range(len(model.items)))
    model.apply_all(_turn_events(seq, 600, 5))
    assert model.drain() == set(range(len(model.items) - 4, len(model.items)))


def test_items_that_no_longer_stream_keep_no_list_of_their_own() -> None:
    """Rows that never stream, and replies once whole, share one empty `chunks`; a
    streaming reply has its own list until its message arrives."""
    model = TranscriptModel()
    events = _turn_events(0, 1, 30)
    model.apply_all(events[:10])
    reply = model.items[-1]
    assert reply.streaming and reply.chunks == [f"w{i} " for i in range(7)]
    model.apply_all(events[10:])
    assert reply.current_text() == "".join(f"w{i} " for i in range(30))
    assert len({id(item.chunks) for item in model.items}) == 1
    assert not model.items[0].chunks
