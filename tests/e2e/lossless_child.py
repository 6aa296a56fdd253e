"""Child of test_lossless: real agents writing real session files, killed at chosen instants.

`lossless_child.py ROOT SCENARIO [SEED]`. The agents run on the full stack (composition
root, loop, JSONL persistence, the app's breakpoint class). Every message is reported as
`ACCEPTED <id>` only after the public call returned; `AT <point>` says the chosen instant
has come. At a "frozen" point the child blocks the whole process right there (nothing
else can run, not even the batched writes), so the parent's SIGKILL lands exactly at it;
at a "live" point the child keeps running and the kill lands somewhere after it. If ROOT
already holds the session tree from an earlier round, it is resumed first.
"""

from __future__ import annotations

import asyncio
import os
import random
import sys
import time
from typing import Any

from dsh_tui.compose import build_context
from dsh_tui.harness import AgentOptions, UserMessage, user_message
from dsh_tui.harness.persistence import JsonlPersistence
from dsh_tui.loop.tools import ToolOutput, tool
from dsh_tui.ui.state.breakpoints import Breakpoints
from dsh_tui.ui.state.unsent import UnsentTracker
from dsh_tui.ui.state.world import create_agent, resume_tree, spawn_child

ROOT_ID = "root"


def say(*words: str) -> None:
    sys.stdout.write(" ".join(words) + "\n")
    sys.stdout.flush()


def freeze(point: str) -> None:
    """The worst instant: report it and stop the process dead (the event loop included)."""
    say("AT", point)
    time.sleep(3600)


class Model:
    """Streams a few words, or a tool call when the last user text asks for one."""

    name = "m"

    def __init__(self, words: int = 20) -> None:
        self.words = words

    async def stream(self, request: Any) -> Any:
        last = request["messages"][-1] if request.get("messages") else {}
        asked = any(block.get("type") == "text" and "use the tool" in block.get("text", "")
                    for block in last.get("content", ()) if isinstance(block, dict))
        if asked and last.get("role") == "user":
            yield {"type": "block-start", "index": 0, "blockType": "tool-call"}
            call_id = f"c{time.time_ns()}"
            yield {"type": "tool-call-delta", "index": 0, "id": call_id, "name": "wait",
                   "argumentsDelta": "{}"}
            yield {"type": "block-end", "index": 0, "block": {
                "type": "tool-call", "id": call_id, "name": "wait", "arguments": "{}"}}
            yield {"type": "finish", "reason": {"kind": "tool-calls"}}
            return
        yield {"type": "block-start", "index": 0, "blockType": "text"}
        for _ in range(self.words):
            yield {"type": "text-delta", "index": 0, "text": "word "}
            await asyncio.sleep(0.002)
        yield {"type": "finish", "reason": {"kind": "stop"}}


@tool("wait", "Waits a while, as a slow command would")
async def wait_tool(call: Any) -> ToolOutput:
    say("AT", "mid-tool")
    await asyncio.sleep(3600)
    return ToolOutput.text("done")


class Driver:
    def __init__(self, root: str, words: int) -> None:
        self.persistence = JsonlPersistence(root)
        self.ctx = build_context(providers={"m": Model(words)}, persistence=self.persistence,
                                 tools=[wait_tool], retry=False, system_prompt=None)
        self.options = AgentOptions(provider="m", model="m")
        # As the CLI does: a session killed before its first request header reached the
        # disk resumes on the app's current route.
        self.ctx.services["loop"].default_options = self.options

    async def agents(self) -> tuple[Any, Any]:
        """The root agent and its sub-agent, resumed when an earlier round left them."""
        headers = self.persistence.list_sessions()
        if any(h.get("id") == ROOT_ID for h in headers):
            root = (await resume_tree(self.ctx, ROOT_ID, headers)).agent
        else:
            root = (await create_agent(self.ctx, provider="m", model="m", title="root",
                                       session_id=ROOT_ID)).agent
        kids = [a for a in self.ctx.agents.list() if a is not root]
        if kids:  # a sub-agent whose log had nothing to keep was never written
            return root, kids[0]
        kid = await spawn_child(root, title="kid")
        return root, kid.agent

    @staticmethod
    def send(agent: Any, lane: str, text: str) -> Any:
        message = user_message(text)
        {"followup": agent.followup, "steer": agent.steer, "inject": agent.inject}[lane](message)
        say("ACCEPTED", message.id, agent.id)
        return message


async def first_claim(d: Driver, root: Any, kid: Any) -> None:
    d.send(root, "followup", "hello")  # idle: opens the turn and claims before returning
    freeze("first-claim")


async def boundary_claim(d: Driver, root: Any, kid: Any) -> None:
    def claimed(payload: Any) -> None:
        if payload["turn"] == 2:
            freeze("boundary-claim")

    root.ctx.on("agent/inbox/claimed", claimed)
    d.send(root, "followup", "one")
    d.send(root, "followup", "two")  # queued; claimed at the turn boundary
    await asyncio.sleep(30)


async def breakpoint_pause(d: Driver, root: Any, kid: Any) -> None:
    points = Breakpoints(d.ctx, lambda pause: say("AT", "breakpoint"), lambda pause: None)
    points.toggle(root.id)
    d.send(root, "followup", "look at me first")
    d.send(root, "steer", "and this")
    await asyncio.sleep(30)


async def move_between_lanes(d: Driver, root: Any, kid: Any, same_lane: bool) -> None:
    d.send(root, "followup", "busy")  # keeps the agent running, so the rest stays queued
    queued = [d.send(root, "followup", f"queued {i}") for i in range(3)]
    d.send(root, "inject", "context")

    def spliced(session: Any, event: Any) -> None:
        data = event.data
        if session is not root.session or event.type != "agent/inbox/spliced" or \
                "outcome" in data or data["target"] != "next-turn":
            return
        if same_lane and data.get("removedCount") == 1 and data["start"] == 2:
            freeze("move-same")  # the removal is written, the insertion (at 0) is not
        if not same_lane and data.get("removedCount") == 1 and data["start"] == 1:
            freeze("move-between")  # the removal is written, the insertion is not

    d.ctx.on("session/event", spliced)
    if same_lane:
        root.inbox.move(queued[2].id, "next-turn", 0)
    else:
        root.inbox.move(queued[1].id, "next-step", 0)
    await asyncio.sleep(30)


async def mid_stream(d: Driver, root: Any, kid: Any) -> None:
    d.send(root, "followup", "talk")
    d.send(kid, "followup", "talk too")
    chunks = 0

    def chunk(session: Any, event: Any) -> None:
        nonlocal chunks
        if event.type == "assistant/chunk":
            chunks += 1
            if chunks == 30:
                say("AT", "mid-stream")

    d.ctx.on("session/event", chunk)
    for index in range(200):
        d.send((root, kid)[index % 2], ("followup", "steer", "inject")[index % 3], f"m{index}")
        await asyncio.sleep(0.003)


async def mid_tool(d: Driver, root: Any, kid: Any) -> None:
    d.send(root, "followup", "please use the tool")
    await asyncio.sleep(0.05)
    d.send(root, "steer", "while it runs")
    d.send(kid, "inject", "for the kid")
    await asyncio.sleep(30)


async def exit_without_dispose(d: Driver, root: Any, kid: Any) -> None:
    """Queue work in both inboxes, then leave the process as a quit that disposes nothing."""
    d.send(root, "followup", "busy")
    for agent in (root, kid):
        d.send(agent, "followup", "queued for later")
        d.send(agent, "inject", "context for later")
    await d.ctx.sessions.flush(root.session)
    say("AT", "exit")
    os._exit(0)


def put_back(agent: Any) -> None:
    """What the app's put-back does: the offered messages, one splice per lane, at its head."""
    tracker = UnsentTracker()
    for event in agent.session.events:
        tracker.apply(event)
    for target in ("next-step", "next-turn"):
        batch = [UserMessage.from_json(u.message) for u in tracker.unsent if u.target == target]
        if batch:
            agent.inbox.splice(target, 0, 0, batch)


async def randomly(d: Driver, root: Any, kid: Any, seed: int) -> None:
    """Random sends, steers, injects, moves, wakes, stops, breakpoint pauses (continued or
    skipped) and put-backs, forever."""
    rng = random.Random(seed)
    points = Breakpoints(d.ctx, lambda pause: None, lambda pause: None)
    if rng.random() < 0.5:
        points.toggle(root.id)
    say("AT", "random")
    index = 0
    while True:
        agent = rng.choice((root, kid))
        roll = rng.random()
        if roll < 0.5:
            d.send(agent, rng.choice(("followup", "steer", "inject")), f"r{seed}-{index}")
        elif roll < 0.7:
            pending = [*agent.inbox.next_turn, *agent.inbox.next_step]
            if pending:
                message = rng.choice(pending)
                agent.inbox.move(message.id, rng.choice(("next-turn", "next-step")),
                                 rng.randrange(0, 4))
        elif roll < 0.8:
            # mostly continue; a skip ends the turn with its batch (the app offers it back)
            for pause in list(points.paused.values()):
                pause.resolve("skip" if rng.random() < 0.15 else "continue")
        elif roll < 0.85:
            agent.wake()
        elif roll < 0.87:
            agent.cancel(keep_inbox=True)  # escape: a batch claimed, not sent, is offered back
        elif roll < 0.89:
            put_back(agent)  # ctrl+u
        index += 1
        await asyncio.sleep(rng.choice((0, 0.001, 0.004, 0.01)))


async def main(root: str, scenario: str, seed: int) -> None:
    driver = Driver(root, words=400 if scenario == "mid-stream" else 20)
    agent, kid = await driver.agents()
    say("READY")
    if scenario == "first-claim":
        await first_claim(driver, agent, kid)
    elif scenario == "boundary-claim":
        await boundary_claim(driver, agent, kid)
    elif scenario == "breakpoint":
        await breakpoint_pause(driver, agent, kid)
    elif scenario in ("move-between", "move-same"):
        await move_between_lanes(driver, agent, kid, scenario == "move-same")
    elif scenario == "mid-stream":
        await mid_stream(driver, agent, kid)
    elif scenario == "mid-tool":
        await mid_tool(driver, agent, kid)
    elif scenario == "exit":
        await exit_without_dispose(driver, agent, kid)
    elif scenario == "random":
        await randomly(driver, agent, kid, seed)
    await asyncio.sleep(3600)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 0))
