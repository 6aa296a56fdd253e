"""The retry policy on the `agent/request-error` waterfall, with a fake sleep (no real waiting)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from fake_server import FakeServer, json_reply, sse_reply
from transcripts import T1

from dsh_tui.harness import new_world
from dsh_tui.harness.events import AgentEvents
from dsh_tui.harness.session import Session
from dsh_tui.harness.signal import CancelSignal
from dsh_tui.llm.retry import RetryPolicy, install_retry_policy

RATE_LIMIT = {"message": "slow down", "code": "RATE_LIMIT", "status": 429}


class Agent:
    """Just what the policy touches: an id, a session, and no scope parent."""

    scope_parent = None

    def __init__(self, agent_id: str = "a1") -> None:
        self.id = agent_id
        self.session = Session(agent_id)


class Sleeps:
    def __init__(self) -> None:
        self.seconds: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.seconds.append(seconds)

    @property
    def ms(self) -> list[float]:
        return [round(s * 1000, 6) for s in self.seconds]


def world(policy: RetryPolicy | None = None, *, sample: float = 0.5
          ) -> tuple[Any, Sleeps, Callable[[], None]]:
    ctx = new_world()
    sleeps = Sleeps()
    off = install_retry_policy(ctx, policy, sleep=sleeps, random=lambda: sample)
    return ctx, sleeps, off


async def offer(ctx: Any, agent: Agent, failure: dict[str, Any] = RATE_LIMIT, *, turn: int = 1,
                step: int = 1, provider: str = "deepseek", policy: Any = None,
                signal: CancelSignal | None = None,
                default: Callable[[], Any] = lambda: None) -> Any:
    fields = {"turn": turn, "step": step, "provider": provider, "failure": failure,
              "retry_policy": policy, "signal": signal or CancelSignal()}
    return await AgentEvents(ctx.bus, agent).waterfall("agent/request-error", fields, default)


def records(agent: Agent, kind: str) -> list[Any]:
    return [e.data for e in agent.session.events if e.type == kind]


async def test_retryable_failure_sleeps_the_backoff_and_asks_for_a_retry() -> None:
    ctx, sleeps, _ = world()
    agent = Agent()
    assert await offer(ctx, agent) == {"kind": "retry"}
    assert sleeps.ms == [500.0]
    (retry,) = records(agent, "llm/retry")
    assert list(retry) == ["retryId", "turn", "step", "provider", "mode", "policyKey", "retry",
                           "maxRetries", "delayMs", "failure"]
    assert {k: retry[k] for k in ("turn", "step", "provider", "mode", "retry", "maxRetries",
                                  "delayMs", "failure")} == {
        "turn": 1, "step": 1, "provider": "deepseek", "mode": "normal", "retry": 1,
        "maxRetries": 5, "delayMs": 500.0, "failure": RATE_LIMIT}
    assert records(agent, "llm/retry-started") == [
        {"retryId": retry["retryId"], "turn": 1, "step": 1, "retry": 1}]
    assert not any(e.ignorable for e in agent.session.events)  # upstream knows these types


async def test_budget_is_five_doubling_retries_then_the_failure_stands() -> None:
    ctx, sleeps, _ = world()
    agent = Agent()
    answers = [await offer(ctx, agent) for _ in range(7)]
    assert answers == [{"kind": "retry"}] * 5 + [None, None]
    assert sleeps.ms == [500.0, 1000.0, 2000.0, 4000.0, 8000.0]
    retries = records(agent, "llm/retry")
    assert [r["retry"] for r in retries] == [1, 2, 3, 4, 5]
    assert len({r["retryId"] for r in retries}) == 1  # one retry series


@pytest.mark.parametrize(("sample", "first", "sixth_always"), [(0.0, 450.0, 9000.0),
                                                              (1.0, 550.0, 10_000.0)])
async def test_jitter_bounds_and_the_cap(sample: float, first: float, sixth_always: float) -> None:
    policy = RetryPolicy()
    assert policy.backoff_ms(1, sample) == pytest.approx(first)
    assert RetryPolicy(mode="always").backoff_ms(6, sample) == pytest.approx(sixth_always)


async def test_budgets_are_per_turn_step_and_provider() -> None:
    ctx, sleeps, _ = world(RetryPolicy(max_retries=1))
    agent = Agent()
    assert await offer(ctx, agent, turn=1, step=1) == {"kind": "retry"}
    assert await offer(ctx, agent, turn=1, step=1) is None
    assert await offer(ctx, agent, turn=1, step=2) == {"kind": "retry"}
    assert await offer(ctx, agent, turn=2, step=1) == {"kind": "retry"}
    assert await offer(ctx, agent, turn=2, step=1, provider="demo") == {"kind": "retry"}
    assert await offer(ctx, Agent("other"), turn=1, step=1) == {"kind": "retry"}
    assert len(sleeps.seconds) == 5


async def test_provider_retry_after_within_the_cap_is_used_verbatim() -> None:
    ctx, sleeps, _ = world(sample=0.0)
    agent = Agent()
    failure = {**RATE_LIMIT, "providerRetryAfterMs": 2000.0}
    assert await offer(ctx, agent, failure) == {"kind": "retry"}
    assert sleeps.ms == [2000.0]


async def test_retry_after_beyond_the_cap_hands_over_downstream() -> None:
    ctx, sleeps, _ = world()
    agent = Agent()
    later: list[Any] = []

    async def downstream(payload: Any, proceed: Callable[[], Any]) -> Any:
        later.append(payload["failure"]["code"])
        return {"kind": "retry", "by": "downstream"}

    ctx.on("agent/request-error", downstream)
    failure = {**RATE_LIMIT, "providerRetryAfterMs": 60_000.0}
    assert await offer(ctx, agent, failure) == {"kind": "retry", "by": "downstream"}
    assert later == ["RATE_LIMIT"] and sleeps.seconds == []
    assert records(agent, "llm/retry") == []


@pytest.mark.parametrize("code", ["AUTH", "QUOTA", "INVALID_REQUEST", "CONTEXT_WINDOW_EXCEEDED",
                                  "MALFORMED_RESPONSE", "CONTENT_FILTER", "HTTP_404"])
async def test_non_retryable_codes_go_downstream_untouched(code: str) -> None:
    ctx, sleeps, _ = world()
    agent = Agent()
    seen: list[str] = []

    async def compaction(payload: Any, proceed: Callable[[], Any]) -> Any:
        seen.append(payload["failure"]["code"])
        return await proceed()

    ctx.on("agent/request-error", compaction)
    answer = await offer(ctx, agent, {"message": "m", "code": code},
                         default=lambda: "loop default")
    assert answer == "loop default" and seen == [code]
    assert sleeps.seconds == [] and len(agent.session.events) == 0


@pytest.mark.parametrize("code", ["EMPTY_RESPONSE", "SERVER", "TIMEOUT", "TRANSPORT",
                                  "STREAM_CLOSED"])
async def test_the_default_retryable_codes(code: str) -> None:
    ctx, _, _ = world()
    assert await offer(ctx, Agent(), {"message": "m", "code": code}) == {"kind": "retry"}


async def test_a_retryable_failure_is_decided_before_downstream_listeners() -> None:
    ctx, _, _ = world()
    calls: list[str] = []

    async def downstream(payload: Any, proceed: Callable[[], Any]) -> Any:
        calls.append("downstream")
        return None

    ctx.on("agent/request-error", downstream)
    assert await offer(ctx, Agent()) == {"kind": "retry"}
    assert calls == []


async def test_cancellation_ends_the_wait_early_and_answers_nothing() -> None:
    ctx = new_world()
    install_retry_policy(ctx, sleep=lambda seconds: asyncio.Event().wait())  # never ends itself
    agent, signal = Agent(), CancelSignal()
    asyncio.get_running_loop().call_later(0.05, signal.abort, {"kind": "user"})
    assert await asyncio.wait_for(offer(ctx, agent, signal=signal), 5) is None
    assert len(records(agent, "llm/retry")) == 1
    assert records(agent, "llm/retry-started") == []


async def test_an_aborted_signal_writes_nothing() -> None:
    ctx, sleeps, _ = world()
    agent, signal = Agent(), CancelSignal()
    signal.abort({"kind": "user"})
    assert await offer(ctx, agent, signal=signal) is None
    assert sleeps.seconds == [] and len(agent.session.events) == 0


async def test_off_removes_the_listener_and_ends_a_wait_in_progress() -> None:
    ctx = new_world()
    off = install_retry_policy(ctx, sleep=lambda seconds: asyncio.Event().wait())
    agent = Agent()
    pending = asyncio.ensure_future(offer(ctx, agent))
    await asyncio.sleep(0.01)
    off()
    assert await asyncio.wait_for(pending, 5) is None
    assert await offer(ctx, agent, default=lambda: "no listener") == "no listener"


async def test_installed_through_an_agent_context_it_hears_only_that_agent() -> None:
    ctx = new_world()
    mine, theirs = Agent("mine"), Agent("theirs")
    install_retry_policy(ctx.derive(mine), sleep=Sleeps())
    assert await offer(ctx, mine) == {"kind": "retry"}
    assert await offer(ctx, theirs) is None


async def test_policy_from_the_payload_wins_over_the_installed_one() -> None:
    ctx, _, _ = world()
    agent = Agent()
    tight = RetryPolicy(max_retries=0)
    assert await offer(ctx, agent, policy=tight) is None
    custom = {"mode": "normal", "retryableCodes": ["AUTH"], "backoff": {"initialDelayMs": 100}}
    assert await offer(ctx, agent, {"message": "m", "code": "AUTH"}, policy=custom) \
        == {"kind": "retry"}
    assert records(agent, "llm/retry")[0]["delayMs"] == 100.0


async def test_always_mode_asks_downstream_first_and_retries_anything() -> None:
    ctx, sleeps, _ = world(RetryPolicy(mode="always"))
    agent = Agent()
    answers: list[Any] = [None, {"kind": "retry", "by": "downstream"}]

    async def downstream(payload: Any, proceed: Callable[[], Any]) -> Any:
        return answers.pop(0)

    ctx.on("agent/request-error", downstream)
    assert await offer(ctx, agent, {"message": "m", "code": "AUTH"}) == {"kind": "retry"}
    assert records(agent, "llm/retry")[0]["mode"] == "always"
    assert "maxRetries" not in records(agent, "llm/retry")[0]
    assert await offer(ctx, agent) == {"kind": "retry", "by": "downstream"}
    assert len(sleeps.seconds) == 1


def test_policy_validation_and_config() -> None:
    assert RetryPolicy.from_config({"mode": "normal"}) == RetryPolicy()
    with pytest.raises(ValueError):
        RetryPolicy(mode="sometimes")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        RetryPolicy(initial_delay_ms=20_000)
    assert RetryPolicy().key != RetryPolicy(max_retries=2).key


async def test_a_429_then_success_completes_the_turn_through_the_loop() -> None:
    from dsh_tui.compose import build_context
    from dsh_tui.harness import AgentOptions, CreateAgentOptions, user_message
    from dsh_tui.llm.deepseek import DeepSeekProvider

    replies = [json_reply(429, '{"error":{"message":"busy"}}', {"Retry-After": "1"}),
               json_reply(503, "<html>down</html>"), sse_reply(T1)]
    async with FakeServer(replies) as server:
        provider = DeepSeekProvider(api_key="k", base_url=server.base_url)
        ctx = build_context(providers={"deepseek": provider}, retry=False)
        sleeps = Sleeps()
        install_retry_policy(ctx, sleep=sleeps, random=lambda: 0.5)
        handle = await ctx.agents.create(CreateAgentOptions(
            session_id="r", agent_options=AgentOptions(provider="deepseek",
                                                       model="deepseek-flash")))
        handle.agent.followup(user_message("hi"))
        await asyncio.sleep(0)
        await asyncio.wait_for(handle.agent.when_idle(), 10)
        events = list(handle.agent.session.events)
        await handle.dispose()
        await provider.aclose()
    assert len(server.requests) == 3
    assert sleeps.ms == [1000.0, 1000.0]  # Retry-After verbatim, then the second local backoff
    assert [e.data["failure"]["code"] for e in events if e.type == "llm/retry"] == \
        ["RATE_LIMIT", "SERVER"]
    assert [e.data["reason"] for e in events if e.type == "turn/end"] == [{"kind": "completed"}]
    assert sum(e.type == "turn/start" for e in events) == 1
