"""kill -9 in the middle of a streaming turn, restart, resume: nothing accepted is lost.

The whole stack as a user runs it (composition root, agent loop, JSONL persistence):
after the kill, `ctx.agents.resume` finds every accepted message either pending in the
inbox or already entered into the transcript, the open turn closed as interrupted, and
the agent works again.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

from dsh_tui.compose import build_context
from dsh_tui.harness import ResumeAgentOptions, user_message
from dsh_tui.harness.persistence import JsonlPersistence
from dsh_tui.llm.scripted import ScriptedModel, text

CHILD = Path(__file__).with_name("crash_agent_child.py")
REPO = Path(__file__).resolve().parents[2]


def _run_and_kill(root: Path, wanted: int) -> list[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    child = subprocess.Popen([sys.executable, str(CHILD), str(root)], stdout=subprocess.PIPE,
                             text=True, env=env)
    accepted: list[str] = []
    try:
        assert child.stdout is not None
        for line in child.stdout:
            word, message_id, _lane = line.split()
            if word == "ACCEPTED":
                accepted.append(message_id)
            if len(accepted) >= wanted:
                break
        child.send_signal(signal.SIGKILL)  # no flush, no finally, no atexit
        child.wait(timeout=10)
        accepted += [line.split()[1] for line in child.stdout if line.startswith("ACCEPTED")]
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == -signal.SIGKILL
    return accepted


async def test_kill_9_mid_stream_then_resume_keeps_every_accepted_message(tmp_path: Path
                                                                           ) -> None:
    accepted = _run_and_kill(tmp_path, wanted=40)

    model = ScriptedModel([text("back again")] * 40)
    ctx = build_context(providers={"endless": model}, persistence=JsonlPersistence(tmp_path),
                        tools=[], retry=False, system_prompt=None)
    handle = await ctx.agents.resume(ResumeAgentOptions(resume_session_id="crashy"))
    agent = handle.agent
    events = list(agent.session.events)

    entered = {e.data["id"] for e in events if e.type == "user/message"}
    pending = {m.id for m in (*agent.inbox.next_turn, *agent.inbox.next_step)}
    assert set(accepted) <= entered | pending, "an accepted message was lost"
    assert not entered & pending
    ends = [e.data["reason"] for e in events if e.type == "turn/end"]
    assert {"kind": "interrupted"} in ends
    assert events[-1].type == "session/end-seed"
    assert agent.status == "idle"  # nothing runs until someone sends

    agent.followup(user_message("continue"))
    await asyncio.wait_for(agent.when_idle(), 10)
    after = list(agent.session.events)[len(events):]
    assert next(e.data["reason"]["kind"] for e in after if e.type == "turn/end") == "completed"
    await handle.dispose()
