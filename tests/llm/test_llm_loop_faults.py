"""Every provider fault, end to end: a real agent, real HTTP, a real session file.

The adapter tests check each fault chunk by chunk; these check what a person
running the app sees after one: the turn either retries within bounds and
completes, or ends with a clear `turn/end` error, the driver stops, the work
queued behind the failing turn is still in the inbox (or ran, after a retry),
and the API key appears nowhere in the session log on disk.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from fake_server import FakeServer, Reply, data_lines, json_reply, sse_reply
from transcripts import ERROR_401, ERROR_402, T1

from dsh_tui.compose import build_context
from dsh_tui.harness import AgentOptions, CreateAgentOptions, user_message
from dsh_tui.harness.persistence import JsonlPersistence
from dsh_tui.llm.deepseek import DeepSeekProvider
from dsh_tui.llm.retry import install_retry_policy

KEY = "sk-fault-suite-0123456789abcdef"

HALF = data_lines([{"choices": [{"delta": {"content": "Hello"}}]},
                   {"choices": [{"delta": {"content": " wor"}}]}], done=False)
MALFORMED = 'data: {"choices":[{"delta":{"content":"ok"}}]}\n\ndata: {"choices": [tru\n\n'


async def _no_sleep(_seconds: float) -> None:
    await asyncio.sleep(0)


def _stall() -> Reply:
    return Reply(parts=[b'data: {"choices":[{"delta":{"content":"Hel"}}]}\n\n'], ending="hang")


FAULTS: dict[str, tuple[list[Reply], str | None]] = {
    # name: (replies in order, the error code the turn ends with; None = retried to success)
    "401": ([json_reply(401, ERROR_401)], "AUTH"),
    "402": ([json_reply(402, ERROR_402)], "QUOTA"),
    "429-retry-after": ([json_reply(429, '{"error":{"message":"busy"}}', {"Retry-After": "1"}),
                         sse_reply(T1)], None),
    "500-then-ok": ([json_reply(500, '{"error":{"message":"internal"}}'), sse_reply(T1)], None),
    "503-persistent": ([json_reply(503, "<html>down</html>")] * 6, "SERVER"),
    "reset-mid-stream": ([sse_reply(HALF, ending="reset"), sse_reply(T1)], None),
    "malformed-line": ([sse_reply(MALFORMED)], "MALFORMED_RESPONSE"),
    "eof-before-done": ([sse_reply(HALF), sse_reply(T1)], None),
    "stall": ([_stall(), sse_reply(T1)], None),
}


async def _run_fault(tmp_path: Path, replies: list[Reply]
                     ) -> tuple[list[str], list[Any], Path]:
    persistence = JsonlPersistence(tmp_path)
    async with FakeServer(replies) as server:
        provider = DeepSeekProvider(api_key=KEY, base_url=server.base_url, idle_timeout=0.3)
        ctx = build_context(providers={"deepseek": provider}, persistence=persistence,
                            tools=[], retry=False, system_prompt=None)
        install_retry_policy(ctx, sleep=_no_sleep)
        handle = await ctx.agents.create(CreateAgentOptions(
            session_id="faulty", agent_options=AgentOptions(provider="deepseek",
                                                            model="deepseek-v4-flash")))
        agent = handle.agent
        agent.followup(user_message("first", id="m-first"))
        agent.followup(user_message("queued behind it", id="m-queued"))
        await asyncio.wait_for(agent.when_idle(), 20)
        await ctx.sessions.flush(agent.session)
        events = list(agent.session.events)
        pending = [m.id for m in agent.inbox.next_turn]
        path = persistence.path_for(agent.session.header)
        await handle.dispose()
        await provider.aclose()
    return pending, events, path


@pytest.mark.parametrize("fault", list(FAULTS))
async def test_a_fault_ends_clearly_and_loses_nothing(tmp_path: Path, fault: str) -> None:
    replies, error_code = FAULTS[fault]
    if error_code is None:
        replies = [*replies, sse_reply(T1)]  # the queued prompt's own turn
    pending, events, path = await _run_fault(tmp_path, replies)
    ends = [e.data["reason"] for e in events if e.type == "turn/end"]
    user_texts = [e.data["content"][0]["text"] for e in events if e.type == "user/message"]
    if error_code is None:
        # retried inside the same step, then both turns ran
        assert ends == [{"kind": "completed"}, {"kind": "completed"}]
        assert user_texts == ["first", "queued behind it"]
        assert any(e.type == "llm/retry" for e in events)
    else:
        # one clear error; the driver stopped and the queued prompt is still pending
        assert len(ends) == 1 and ends[0]["kind"] == "error"
        assert ends[0]["error"]["code"] == error_code and ends[0]["error"]["message"]
        assert user_texts == ["first"]
        assert not any(e.data.get("outcome") == "canceled" for e in events
                       if e.type == "agent/inbox/spliced")
    assert pending == ([] if error_code is None else ["m-queued"])
    log = path.read_text(encoding="utf-8")
    assert KEY not in log
    assert '"type":"turn/end"' in log
