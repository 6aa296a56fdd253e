"""One of this app's logs with the steering a person does: edits, moves, a re-file, a
removal and its undo, a steer during a tool call, and a crash put-back.

Written through the public surface by a real agent with `JsonlPersistence`, so the file
on disk is exactly what the app writes; the "crash" stops the persistence mid-turn (the
file keeps what a kill would leave) and a second world resumes a copy of it, whose
loader repair closes the turn `interrupted` and puts the claimed prompt back.
"""

from __future__ import annotations

import asyncio
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dsh_tui.compose import STOP_SAVING, build_context
from dsh_tui.harness import AgentOptions, CreateAgentOptions, ResumeAgentOptions, user_message
from dsh_tui.harness.persistence import JsonlPersistence
from dsh_tui.llm.scripted import ScriptedModel, text, tool_call
from dsh_tui.loop import Tool
from dsh_tui.ui.state.inbox_rules import refile

ROUTE = AgentOptions(provider="mock", model="mock")
GUARD = 5.0


def person(text_: str, lane: str = "follow-up") -> Any:
    """A message as the app files what a person types in `lane`."""
    return user_message(text_, source={"kind": "user", "lane": lane})


@dataclass
class SteeringLog:
    """Where the log is and the messages it holds (by role in the story)."""

    path: Path
    start: Any
    steer: Any
    edited: Any  # F1: queued, then edited
    refiled: Any  # F2: queued, re-filed to steer, removed, put back (undo)
    moved: Any  # F3: queued last, moved to the top; claimed when the crash came
    live_lines: list[str]
    live_count: int


async def write_steering_log(root: Path, session_id: str = "steering") -> SteeringLog:
    """Run the story and return the resumed, finished log's path (under `root/after`)."""
    from dsh_tui.ui.state.timeline import Timeline

    started, release = asyncio.Event(), asyncio.Event()

    async def slow(_call: Any) -> str:
        started.set()
        await release.wait()
        return "tool done"

    first_root = root / "before"
    model = ScriptedModel([tool_call("c1", "slow", {}), text("used the cache")])
    ctx = build_context(providers={"mock": model}, tools=[
        Tool("slow", "waits", {"type": "object", "properties": {}}, slow)], retry=False,
        system_prompt=None, persistence=JsonlPersistence(first_root))
    live = Timeline()
    ctx.on("session/event", lambda _s, event: live.apply(event))
    handle = await ctx.agents.create(CreateAgentOptions(
        session_id=session_id, agent_options=ROUTE, meta={"cwd": "/work/project"}))
    agent = handle.agent

    async def stuck_on_turn_two(payload: Any, proceed: Any) -> Any:
        if payload["turn"] == 2:
            aborted = asyncio.Event()
            payload["signal"].add_listener(lambda _reason: aborted.set())
            await aborted.wait()
        return await proceed()

    ctx.on("agent/pre-step", stuck_on_turn_two)
    start = person("build the report")
    agent.followup(start)
    await asyncio.wait_for(started.wait(), GUARD)
    steer = person("use the cache", "steer")
    agent.steer(steer)
    edited, refiled, moved = person("then summarise"), person("check the totals"), \
        person("email it")
    for message in (edited, refiled, moved):
        agent.inbox.append("next-turn", message)
    agent.inbox.replace(edited.id, edited.with_text("then summarise it in three lines"))
    agent.inbox.move(moved.id, "next-turn", 0)
    refile(agent.inbox, agent.inbox.get(refiled.id), "follow-up", "next-turn")
    where = agent.inbox.locate(refiled.id)
    assert where is not None
    taken = agent.inbox.get(refiled.id)
    agent.inbox.remove(refiled.id)
    agent.inbox.splice(where[0], where[1], 0, [taken])  # the person's undo
    release.set()
    for _ in range(5000):  # turn 2 opens and claims `moved`; its pre-step hangs
        if agent.current_turn == 2 and agent.inbox.get(moved.id) is None:
            break
        await asyncio.sleep(0)
    live.settle()
    live_lines = [live.line(i) for i in range(len(live))]
    live_count = len(agent.session.events)
    ctx.services[STOP_SAVING]()  # the crash: nothing after this reaches the file
    after = root / "after"
    shutil.copytree(first_root, after, ignore=shutil.ignore_patterns("*.lock", "lock*"))
    await asyncio.wait_for(handle.dispose(), GUARD)

    model2 = ScriptedModel([text("emailed"), text("summarised")])
    ctx2 = build_context(providers={"mock": model2}, retry=False, system_prompt=None,
                         persistence=JsonlPersistence(after))
    resumed = await ctx2.agents.resume(ResumeAgentOptions(resume_session_id=session_id,
                                                          agent_options=ROUTE))
    resumed.agent.wake()
    await asyncio.wait_for(resumed.agent.when_idle(), GUARD)
    await asyncio.wait_for(resumed.dispose(), GUARD)
    path = JsonlPersistence(after).path_for(session_id)
    return SteeringLog(path, start, steer, edited, refiled, moved, live_lines, live_count)


def copy_of(log: SteeringLog, where: Path) -> Path:
    """A copy of the finished log file (for a test that must not touch the original)."""
    where.mkdir(parents=True, exist_ok=True)
    return Path(shutil.copy(log.path, where / "session.jsonl"))
