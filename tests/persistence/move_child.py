"""Child of test_requeue's kill -9 test: moves an item within its lane, and stops itself
(SIGSTOP) right after the move's first record (the removal) reached the file, so the
parent's SIGKILL lands exactly between the two records of the move."""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

from dsh_tui.harness import Inbox, new_world, user_message
from dsh_tui.harness.persistence import JsonlPersistence


def say(*words: str) -> None:
    sys.stdout.write(" ".join(words) + "\n")
    sys.stdout.flush()


def main(root: str) -> None:
    ctx = new_world()
    JsonlPersistence(root).attach(ctx)  # its listener writes each splice before ours runs
    session = ctx.sessions.create("moving", meta={"cwd": "/moving"})
    inbox = Inbox(session)
    items = [user_message(f"item {n}", id=f"m{n:02}") for n in range(20)]
    for item in items:
        inbox.append("next-turn", item)
        say("ACCEPTED", item.id)
    moving = False

    def between(_session: Any, event: Any) -> None:
        data = event.data
        if moving and event.type == "agent/inbox/spliced" and not data["inserted"]:
            say("BETWEEN", str(data["start"]))
            os.kill(os.getpid(), signal.SIGSTOP)  # the parent kills us here

    ctx.on("session/event", between)
    moving = True
    inbox.move(items[17].id, "next-turn", 2)
    say("MOVED")  # never reached: the parent kills the stopped process


if __name__ == "__main__":
    main(sys.argv[1])
