"""The model-request retry policy, run on the `agent/request-error` waterfall.

This is upstream's `llm-retry` plugin: on a retryable failure it waits (exponential
backoff with jitter, or the provider's `Retry-After` within the cap) and answers
`{"kind": "retry"}`, and the loop re-requests inside the same step over the same durable
history. Budgets are counted from the session log itself (its `llm/retry` records), so a
resumed session keeps them. Its place on the waterfall and what it writes are on
`install_retry_policy`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import random as random_module
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from dsh_tui.harness.llm_types import DEFAULT_RETRYABLE_CODES
from dsh_tui.harness.signal import CancelSignal

log = logging.getLogger("dsh_tui.llm.retry")

Sleep = Callable[[float], Awaitable[Any]]


@dataclass(frozen=True)
class RetryPolicy:
    """Upstream's defaults: 5 retries, 500 ms doubling to a 10 s cap, ±10 % jitter."""

    mode: Literal["normal", "always"] = "normal"
    max_retries: int = 5
    retryable_codes: frozenset[str] = field(default=DEFAULT_RETRYABLE_CODES)
    initial_delay_ms: float = 500.0
    max_delay_ms: float = 10_000.0
    jitter_ratio: float = 0.1

    def __post_init__(self) -> None:
        if self.mode not in ("normal", "always"):
            raise ValueError(f'retry mode must be "normal" or "always", not {self.mode!r}')
        if type(self.max_retries) is not int or self.max_retries < 0:
            raise ValueError("max_retries must be a non-negative integer")
        if not (math.isfinite(self.initial_delay_ms) and self.initial_delay_ms > 0):
            raise ValueError("initial_delay_ms must be a positive finite number")
        if not (math.isfinite(self.max_delay_ms) and self.max_delay_ms >= self.initial_delay_ms):
            raise ValueError("max_delay_ms must be finite and at least initial_delay_ms")
        if not 0 <= self.jitter_ratio <= 1:
            raise ValueError("jitter_ratio must be between 0 and 1")
        object.__setattr__(self, "retryable_codes", frozenset(self.retryable_codes))

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> RetryPolicy:
        """Upstream's JSON shape: `{mode, maxRetries?, retryableCodes?, backoff?: {…}}`."""
        backoff = config.get("backoff") or {}
        defaults = cls()
        return cls(
            mode=config.get("mode", "normal"),
            max_retries=config.get("maxRetries", defaults.max_retries),
            retryable_codes=frozenset(config.get("retryableCodes", defaults.retryable_codes)),
            initial_delay_ms=backoff.get("initialDelayMs", defaults.initial_delay_ms),
            max_delay_ms=backoff.get("maxDelayMs", defaults.max_delay_ms),
            jitter_ratio=backoff.get("jitterRatio", defaults.jitter_ratio),
        )

    @property
    def key(self) -> str:
        """Identifies the policy in `llm/retry` records, so budgets never mix policies."""
        if self.mode == "always":
            return json.dumps([self.mode, self.initial_delay_ms, self.max_delay_ms,
                               self.jitter_ratio], separators=(",", ":"))
        return json.dumps([self.mode, self.max_retries, sorted(self.retryable_codes),
                           self.initial_delay_ms, self.max_delay_ms, self.jitter_ratio],
                          separators=(",", ":"))

    def backoff_ms(self, retry: int, sample: float) -> float:
        """The local delay before retry number `retry` (1-based); `sample` is in [0, 1]."""
        exponential = min(self.initial_delay_ms * 2 ** min(retry - 1, 1024), self.max_delay_ms)
        jitter = 1 - self.jitter_ratio + 2 * self.jitter_ratio * sample
        return min(exponential * jitter, self.max_delay_ms)

    def delay_ms(self, retry: int, provider_retry_after_ms: Any, sample: float) -> float | None:
        """The wait before `retry`, or None when a too-long `Retry-After` means "give up"."""
        hint = provider_retry_after_ms
        if isinstance(hint, int | float) and not isinstance(hint, bool) \
                and math.isfinite(hint) and hint > 0:
            if hint <= self.max_delay_ms:
                return float(hint)
            if self.mode == "normal":
                return None
        return self.backoff_ms(retry, sample)


def _policy_of(value: Any, fallback: RetryPolicy) -> RetryPolicy:
    """The provider's policy from the payload, else the installed one."""
    if isinstance(value, RetryPolicy):
        return value
    if isinstance(value, Mapping):
        return RetryPolicy.from_config(value)
    return fallback


def _prior_retry(agent: Any, turn: Any, step: Any, provider: Any, key: str) -> Mapping[str, Any]:
    """The latest `llm/retry` record of this step, provider and policy ({} if none).

    Records are only written inside an open step, so the scan stops at the
    step's own `step/start` instead of walking a long log to its beginning.
    """
    session = getattr(agent, "session", None)
    for event in reversed(session.events if session is not None else ()):
        data = event.data
        if not isinstance(data, Mapping) or data.get("turn") != turn \
                or data.get("step") != step:
            continue
        if event.type == "step/start":
            break
        if event.type == "llm/retry" and data.get("provider") == provider \
                and data.get("policyKey") == key:
            return data
    return {}


async def _sleep_unless_aborted(sleep: Sleep, seconds: float, *signals: CancelSignal) -> bool:
    """Sleep, ending early (False) as soon as any signal aborts."""
    if any(signal.aborted for signal in signals):
        return False
    sleeper = asyncio.ensure_future(sleep(seconds))
    waiters = [asyncio.ensure_future(signal.wait()) for signal in signals]
    try:
        await asyncio.wait({sleeper, *waiters}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (sleeper, *waiters):
            task.cancel()
    return not any(signal.aborted for signal in signals)


def install_retry_policy(ctx: Any, policy: RetryPolicy | None = None, *,
                         sleep: Sleep = asyncio.sleep,
                         random: Callable[[], float] = random_module.random) -> Callable[[], None]:
    """Register the policy on `ctx` (root: every agent; `agent.ctx`: that agent only).

    `sleep` and `random` exist so tests can run the backoff without waiting and
    with known jitter. Returns `off()`, which removes the listener and ends any
    wait in progress (the interrupted recovery answers None).

    Order on the waterfall follows upstream. In `normal` mode the policy decides first
    for the codes it owns and hands everything else (non-retryable codes, an exhausted
    budget, a `Retry-After` beyond the cap) to `next()`, so a more specific listener (a
    compaction plugin for `CONTEXT_WINDOW_EXCEEDED`, say) still gets those. In `always`
    mode the downstream listeners are asked first and the policy is only the fallback.

    Budgets are counted from the `llm/retry` records of the same (turn, step, provider,
    policy), so each agent, turn and step has its own count. Each retry writes
    `llm/retry` before the wait and `llm/retry-started` after it, exactly as upstream.
    """
    installed = policy if policy is not None else RetryPolicy()
    lifetime = CancelSignal()

    async def backoff(payload: Mapping[str, Any], chosen: RetryPolicy, prior: Mapping[str, Any],
                      delay_ms: float) -> dict[str, str] | None:
        agent, signal = payload["agent"], payload.get("signal")
        signals = [lifetime] + ([signal] if isinstance(signal, CancelSignal) else [])
        if any(s.aborted for s in signals):
            return None
        retry = int(prior.get("retry", 0)) + 1
        retry_id = prior.get("retryId") or str(uuid.uuid4())
        turn, step = payload.get("turn"), payload.get("step")
        data: dict[str, Any] = {"retryId": retry_id, "turn": turn, "step": step,
                                "provider": payload.get("provider"), "mode": chosen.mode,
                                "policyKey": chosen.key, "retry": retry}
        if chosen.mode == "normal":
            data["maxRetries"] = chosen.max_retries
        data["delayMs"] = delay_ms
        data["failure"] = dict(payload["failure"])
        agent.session.append("llm/retry", data)
        log.info("retry %d of %s after %s: waiting %.0f ms", retry, payload.get("provider"),
                 data["failure"].get("code"), delay_ms)
        if not await _sleep_unless_aborted(sleep, delay_ms / 1000.0, *signals):
            return None
        agent.session.append("llm/retry-started",
                             {"retryId": retry_id, "turn": turn, "step": step, "retry": retry})
        return {"kind": "retry"}

    async def recover(payload: Mapping[str, Any], proceed: Callable[[], Awaitable[Any]]) -> Any:
        if lifetime.aborted:
            return None
        chosen = _policy_of(payload.get("retry_policy"), installed)
        failure: Mapping[str, Any] = payload.get("failure") or {}
        signal = payload.get("signal")
        if chosen.mode == "always":
            if isinstance(signal, CancelSignal) and signal.aborted:
                return None
            try:
                downstream = await proceed()
            except Exception:
                log.warning("retry policy: a downstream request-error listener failed",
                            exc_info=True)
                downstream = None
            if lifetime.aborted or (isinstance(signal, CancelSignal) and signal.aborted):
                return None
            if isinstance(downstream, Mapping) and downstream.get("kind") == "retry":
                return downstream
        elif failure.get("code") not in chosen.retryable_codes:
            return await proceed()
        prior = _prior_retry(payload["agent"], payload.get("turn"), payload.get("step"),
                             payload.get("provider"), chosen.key)
        retry = int(prior.get("retry", 0)) + 1
        if chosen.mode == "normal" and retry > chosen.max_retries:
            return await proceed()
        delay = chosen.delay_ms(retry, failure.get("providerRetryAfterMs"), random())
        if delay is None:
            return await proceed()
        return await backoff(payload, chosen, prior, delay)

    remove_listener = ctx.on("agent/request-error", recover)
    remove_effect = ctx.effect(lambda: lifetime.abort({"kind": "disposed"}))

    def off() -> None:
        remove_listener()
        remove_effect()
        lifetime.abort({"kind": "disposed"})

    return off
