"""Receipts: each message's life read from a real agent's log (and its live holds).

Every test drives a real agent through the public surface (`ctx.agents`, the inbox, the
scripted model, listeners) and reads the receipts the way the app does: a `ReceiptBook`
folding the agent's session events, overlaid with `agent.holds`.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest
from shared_fixtures import fixture

from dsh_tui.compose import STOP_SAVING, build_context
from dsh_tui.harness import AgentOptions, CreateAgentOptions, ResumeAgentOptions, user_message
from dsh_tui.harness.persistence import JsonlPersistence, read_session_log
from dsh_tui.llm.scripted import ScriptedModel, fail, hang, text, tool_call
from dsh_tui.loop import Tool
from dsh_tui.ui.state.receipts import (
    ANSWERED,
    CLAIMED,
    DISCARDED,
    HELD,
    OFFERED,
    PENDING,
    SENT,
    TOMBSTONED,
    ReceiptBook,
    receipts_of,
)

GUARD = 5.0


async def _bounded(awaitable: Any, what: str = "operation") -> Any:
    try:
        return await asyncio.wait_for(asyncio.ensure_future(awaitable), GUARD)
    except TimeoutError:
        pytest.fail(f"{what} did not settle")


async def _until(predicate: Any, what: str, ticks: int = 5000) -> None:
    for _ in range(ticks):
        if predicate():
            return
        await asyncio.sleep(0)
    pytest.fail(f"{what} not reached")


def _msg(text_: str, lane: str = "follow-up") -> Any:
    return user_message(text_, source={"kind": "user", "lane": lane})


def _gate() -> tuple[Tool, asyncio.Event, asyncio.Event]:
    started, release = asyncio.Event(), asyncio.Event()

    async def run(_call: Any) -> str:
        started.set()
        await release.wait()
        return "tool done"

    return Tool("slow", "waits", {"type": "object", "properties": {}}, run), started, release


class Agent:
    """One live agent and its receipts, read as the app reads them."""

    def __init__(self, script: list[Any], tools: list[Tool] = (), *,  # type: ignore[assignment]
                 persistence: Any = None) -> None:
        self.model = ScriptedModel(list(script))
        self.ctx = build_context(providers={"mock": self.model}, tools=list(tools),
                                 retry=False, system_prompt=None, persistence=persistence)
        self.handle: Any = None

    async def start(self, session_id: str = "a1") -> Any:
        self.handle = await self.ctx.agents.create(CreateAgentOptions(
            session_id=session_id, agent_options=AgentOptions(provider="mock", model="mock"),
            meta={"cwd": "/work/project"}))
        return self.handle.agent

    @property
    def agent(self) -> Any:
        return self.handle.agent

    def book(self) -> ReceiptBook:
        return receipts_of(self.agent.session.events)

    def of(self, message: Any) -> Any:
        found = self.book().receipt(message.id, self.agent.holds)
        assert found is not None, f"no receipt for {message.text!r}"
        return found

    async def close(self) -> None:
        if self.handle is not None:
            await _bounded(self.handle.dispose(), "dispose")


@pytest.fixture
async def make_agent():
    made: list[Agent] = []

    def factory(*args: Any, **kwargs: Any) -> Agent:
        made.append(Agent(*args, **kwargs))
        return made[-1]

    yield factory
    for one in made:
        try:
            await one.close()
        except Exception:
            pass


async def test_pending_receipts_give_the_list_and_the_position(make_agent) -> None:
    a = make_agent([])
    agent = await a.start()
    first, second, steer = _msg("first"), _msg("second"), _msg("steer", "steer")
    agent.inbox.append("next-turn", first)
    agent.inbox.append("next-turn", second)
    agent.inbox.append("next-step", steer)
    assert [(r.state, r.label()) for r in (a.of(first), a.of(second), a.of(steer))] == [
        (PENDING, "pending · next-turn 1"), (PENDING, "pending · next-turn 2"),
        (PENDING, "pending · next-step 1")]
    agent.inbox.move(second.id, "next-turn", 0)
    assert a.of(second).label() == "pending · next-turn 1"
    assert a.of(first).label() == "pending · next-turn 2"
    assert [f.kind for f in a.of(second).history] == ["insert", "move"]
    assert a.of(second).lane == "follow-up" and a.of(steer).lane == "steer"


async def test_a_steer_during_a_tool_call_is_claimed_at_the_next_step_and_answered(
        make_agent) -> None:
    """The race "did my steer land before or after the tool call": pending while the tool
    runs, claimed at the boundary after its result, sent in request 1 of step 2."""
    slow, started, release = _gate()
    a = make_agent([tool_call("c1", "slow", {}), text("steered")], [slow])
    agent = await a.start()
    agent.followup(_msg("start"))
    await _bounded(started.wait(), "tool start")
    steer = _msg("look here instead", "steer")
    agent.steer(steer)
    assert a.of(steer).label() == "pending · next-step 1"
    release.set()
    await _bounded(agent.when_idle())

    receipt = a.of(steer)
    assert receipt.state == ANSWERED
    assert (receipt.turn, receipt.step, receipt.request) == (1, 2, 1)
    assert receipt.label() == "answered · turn 1 step 2"
    events = agent.session.events
    result = next(e for e in events if e.type == "tool/result")
    assert result.seq < receipt.claim_seq < receipt.sent_seq < receipt.answer_seq
    assert events[receipt.sent_seq].type == "user/message"
    assert events[receipt.sent_seq].data["id"] == steer.id
    assert events[receipt.answer_seq].type == "assistant/message"
    assert events[receipt.answer_seq].data["step"] == 2
    assert [f.kind for f in receipt.history] == ["insert", "claim", "sent", "request", "reply"]
    assert receipt.request_number == 2  # the agent's second answered request


async def test_claimed_while_pre_step_waits_then_offered_back_then_tombstoned(
        make_agent) -> None:
    a = make_agent([])
    agent = await a.start()
    gate = asyncio.Event()

    async def breakpoint(payload: Any, proceed: Any) -> Any:
        await gate.wait()
        return {"kind": "reject"}

    a.ctx.on("agent/pre-step", breakpoint)
    prompt = _msg("skipped at a breakpoint")
    agent.followup(prompt)
    receipt = a.of(prompt)
    assert (receipt.state, receipt.turn, receipt.step) == (CLAIMED, 1, 1)
    assert receipt.label() == "claimed · turn 1 step 1"
    gate.set()
    await _bounded(agent.when_idle())
    book = a.book()
    offered = book.receipt(prompt.id)
    assert offered is not None and offered.state == OFFERED
    assert offered.label() == "offered back · turn 1 blocked before a step"
    book.dismiss([prompt.id])
    assert offered.state == TOMBSTONED


async def test_sent_in_the_request_that_reached_the_model_after_a_retry(make_agent) -> None:
    a = make_agent([fail("RATE_LIMIT"), text("second try")])
    agent = await a.start()
    retried: list[int] = []

    async def retry_once(payload: Any, proceed: Any) -> Any:
        if not retried:
            retried.append(1)
            return {"kind": "retry"}
        return await proceed()

    a.ctx.on("agent/request-error", retry_once)
    prompt = _msg("hello")
    agent.followup(prompt)
    await _bounded(agent.when_idle())
    receipt = a.of(prompt)
    assert (receipt.state, receipt.request, receipt.request_number) == (ANSWERED, 2, 1)
    assert receipt.label() == "answered · turn 1 step 1 · request 2"


async def test_sent_but_unanswered_when_the_turn_is_cancelled_mid_stream(make_agent) -> None:
    a = make_agent([hang()])
    agent = await a.start()
    prompt = _msg("will be cut")
    agent.followup(prompt)
    await _until(lambda: a.of(prompt).request == 1, "the model starts answering")
    assert a.of(prompt).label() == "sent · turn 1 step 1 · request 1"
    agent.cancel()
    await _bounded(agent.when_idle())
    receipt = a.of(prompt)
    assert receipt.state == SENT
    assert receipt.label() == "sent · turn 1 step 1 · request 1 · no answer: turn 1 " \
                              "aborted · cancelled by you"


async def test_discarded_by_a_removal_and_by_a_clear(make_agent) -> None:
    a = make_agent([])
    agent = await a.start()
    one, two, three = _msg("one"), _msg("two"), _msg("three")
    for message in (one, two, three):
        agent.inbox.append("next-turn", message)
    agent.inbox.remove(one.id)
    agent.inbox.clear()
    assert [(a.of(m).state, a.of(m).detail) for m in (one, two, three)] == [
        (DISCARDED, "removed"), (DISCARDED, "cleared (a clear, or a stop that cleared)"),
        (DISCARDED, "cleared (a clear, or a stop that cleared)")]
    agent.inbox.splice("next-turn", 0, 0, [one])  # an undo puts it back
    assert a.of(one).state == PENDING
    assert [f.kind for f in a.of(one).history] == ["insert", "remove", "put-back"]


async def test_an_item_held_while_its_editor_is_open_waits_then_sends_the_edit(
        make_agent) -> None:
    """Hold on: held (editing) while the tool runs; held and waited on, with a countdown,
    at the boundary; after the save and release it is sent with the new text."""
    slow, started, release = _gate()
    a = make_agent([tool_call("c1", "slow", {}), text("ok")], [slow])
    agent = await a.start()
    agent.followup(_msg("start"))
    await _bounded(started.wait(), "tool start")
    steer = _msg("old words", "steer")
    agent.steer(steer)
    hold = agent.hold(steer.id, limit=30)
    receipt = a.of(steer)
    assert (receipt.state, receipt.held, receipt.waiting) == (HELD, True, False)
    assert receipt.label() == "held · editing"
    release.set()
    await _until(lambda: a.of(steer).waiting, "the agent waits on the held item")
    receipt = a.of(steer)
    assert receipt.state == HELD and receipt.hold_remaining is not None
    assert 0 < receipt.hold_remaining <= 30
    assert receipt.label().startswith("held · agent waits · ")
    agent.inbox.replace(steer.id, steer.with_text("new words"))
    hold.release()
    await _bounded(agent.when_idle())
    receipt = a.of(steer)
    assert (receipt.state, receipt.turn, receipt.step) == (ANSWERED, 1, 2)
    edit = next(f for f in receipt.history if f.kind == "edit")
    assert (edit.before, edit.text) == ("old words", "new words")
    sent = agent.session.events[receipt.sent_seq]
    assert sent.data["content"] == [{"type": "text", "text": "new words"}]


async def test_without_a_hold_the_item_is_claimed_under_the_open_editor(make_agent) -> None:
    """Hold off: the boundary claims the item while its "editor" is open; the receipt says
    where it went and the edit can no longer land."""
    slow, started, release = _gate()
    a = make_agent([tool_call("c1", "slow", {}), text("ok")], [slow])
    agent = await a.start()
    agent.followup(_msg("start"))
    await _bounded(started.wait(), "tool start")
    steer = _msg("old words", "steer")
    agent.steer(steer)
    release.set()
    await _bounded(agent.when_idle())
    assert agent.inbox.replace(steer.id, steer.with_text("new words")) is False
    receipt = a.of(steer)
    assert (receipt.state, receipt.turn, receipt.step) == (ANSWERED, 1, 2)
    assert [f.kind for f in receipt.history] == ["insert", "claim", "sent", "request", "reply"]


async def test_a_claim_cut_by_a_crash_is_put_back_by_the_repair(make_agent,
                                                                tmp_path: Path) -> None:
    """Real session files: the process "dies" after the claim (persistence stops there),
    a new process resumes the log; the receipt reads claimed → offered back (turn 1
    interrupted) → put back by the crash repair (system) → pending again."""
    root = tmp_path / "sessions"
    a = make_agent([], persistence=JsonlPersistence(root))
    agent = await a.start("crashy")

    async def stuck(payload: Any, proceed: Any) -> Any:
        aborted = asyncio.Event()
        payload["signal"].add_listener(lambda _reason: aborted.set())
        await aborted.wait()
        return await proceed()

    a.ctx.on("agent/pre-step", stuck)
    prompt = _msg("claimed, then the process died")
    agent.followup(prompt)
    assert a.of(prompt).state == CLAIMED
    a.ctx.services[STOP_SAVING]()  # nothing after this reaches the file: a crash cut
    copy = tmp_path / "after-crash"
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns("*.lock", "lock*"))
    await a.close()

    b = make_agent([text("resumed")], persistence=JsonlPersistence(copy))
    b.handle = await b.ctx.agents.resume(ResumeAgentOptions(
        resume_session_id="crashy", agent_options=AgentOptions(provider="mock", model="mock")))
    receipt = b.of(prompt)
    assert receipt.state == PENDING and receipt.label() == "pending · next-turn 1"
    kinds = [(f.kind, f.actor) for f in receipt.history]
    assert kinds == [("insert", "person"), ("claim", "system"), ("turn-end", "system"),
                     ("put-back", "system")]
    assert receipt.history[2].detail.startswith("interrupted")
    assert "crash repair" in receipt.history[-1].why
    b.agent.wake()
    await _bounded(b.agent.when_idle())
    assert b.of(prompt).state == ANSWERED


def test_an_upstream_log_reads_as_sent_and_answered() -> None:
    """Upstream logs have no inbox records: a message is claimed and sent at once."""
    _header, events = read_session_log(fixture("upstream-logs", "fresh-round-trip.jsonl"))
    book = receipts_of(events)
    (receipt,) = book.all()
    assert receipt.state == ANSWERED and (receipt.turn, receipt.step) == (1, 1)
    assert [f.kind for f in receipt.history] == ["sent", "request", "reply"]
    assert "no inbox records" in receipt.history[0].why
