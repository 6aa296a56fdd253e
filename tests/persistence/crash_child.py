"""Child process of test_crash: stream a turn until SIGKILL arrives.

It reports each inbox message on stdout only after `inbox.append` returned, so
the parent knows exactly which messages were accepted when it kills us.
"""

from __future__ import annotations

import asyncio
import sys

from dsh_tui.harness import Inbox, new_world, user_message
from dsh_tui.harness.persistence import JsonlPersistence


def say(*words: str) -> None:
    sys.stdout.write(" ".join(words) + "\n")
    sys.stdout.flush()


async def main(root: str) -> None:
    ctx = new_world()
    JsonlPersistence(root).attach(ctx)
    session = ctx.sessions.create("crash", meta={"cwd": "/crash"})
    inbox = Inbox(session)
    for index in range(5):
        message = user_message(f"queued {index}")
        inbox.append("next-turn", message)
        say("ACCEPTED", message.id)
    session.append("turn/start", {"turn": 1})
    inbox.claim("next-turn", 1)
    session.append("step/start", {"turn": 1, "step": 1})
    session.append("assistant/message", {
        "turn": 1, "step": 1, "message": {
            "id": "a1", "role": "assistant", "source": {"kind": "model", "provider": "mock",
                                                        "model": "mock"},
            "content": [{"type": "tool-call", "id": "slow", "name": "bash",
                         "arguments": "{}"}]}}, surface_op="append", source_event_seqs=[])
    session.append("tool/call", {"turn": 1, "step": 1, "callId": "slow", "name": "bash",
                                 "arguments": "{}"})
    await ctx.sessions.flush(session)  # as upstream's checkpoint policy does before a tool
    say("OPEN")
    index = 0
    while True:  # the tool runs; the user keeps steering; progress is streamed
        for _ in range(5):
            session.append("tool/progress", {"callId": "slow", "n": index}, ignorable=True)
            await asyncio.sleep(0.001)
        message = user_message(f"steer {index}")
        inbox.append("next-step", message)
        say("ACCEPTED", message.id)
        index += 1


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
