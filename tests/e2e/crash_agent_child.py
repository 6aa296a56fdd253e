"""Child of test_crash_resume: a real agent streams forever while messages keep arriving.

Each message is reported on stdout only after the send call returned, so the
parent knows exactly which were accepted when it sends SIGKILL.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from dsh_tui.compose import build_context
from dsh_tui.harness import AgentOptions, CreateAgentOptions, user_message
from dsh_tui.harness.persistence import JsonlPersistence


class EndlessModel:
    """Streams text deltas until cancelled, yielding between chunks like a network would."""

    name = "endless"

    async def stream(self, request: Any) -> Any:
        yield {"type": "block-start", "index": 0, "blockType": "text"}
        while True:
            yield {"type": "text-delta", "index": 0, "text": "word "}
            await asyncio.sleep(0.001)


def say(*words: str) -> None:
    sys.stdout.write(" ".join(words) + "\n")
    sys.stdout.flush()


async def main(root: str) -> None:
    ctx = build_context(providers={"endless": EndlessModel()},
                        persistence=JsonlPersistence(root), tools=[], retry=False,
                        system_prompt=None)
    handle = await ctx.agents.create(CreateAgentOptions(
        session_id="crashy", agent_options=AgentOptions(provider="endless", model="e")))
    agent = handle.agent
    first = user_message("start streaming")
    agent.followup(first)
    say("ACCEPTED", first.id, "next-turn")
    await asyncio.sleep(0.05)
    index = 0
    while True:
        lane = ("next-turn", "next-step", "next-step")[index % 3]
        message = user_message(f"message {index}")
        if lane == "next-turn":
            agent.followup(message)
        elif index % 2:
            agent.steer(message)
        else:
            agent.inject(message)
        say("ACCEPTED", message.id, lane)
        index += 1
        await asyncio.sleep(0.003)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
