"""kill -9 mid-stream: every accepted inbox message survives, the open turn is closed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from dsh_tui.harness import Inbox, Session
from dsh_tui.harness.persistence import TOOL_OUTCOME_UNKNOWN, JsonlPersistence

CHILD = Path(__file__).with_name("crash_child.py")
REPO = Path(__file__).resolve().parents[2]


def test_sigkill_mid_stream_loses_no_accepted_message(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    child = subprocess.Popen([sys.executable, str(CHILD), str(tmp_path)], stdout=subprocess.PIPE,
                             text=True, env=env)
    accepted: list[str] = []
    try:
        assert child.stdout is not None
        steering = 0
        for line in child.stdout:
            word, *rest = line.split()
            if word == "ACCEPTED":
                accepted.append(rest[0])
                steering += 1
            if steering >= 25:  # well into the streaming part
                break
        child.send_signal(signal.SIGKILL)  # no flush, no atexit, no finally
        child.wait(timeout=10)
        # Anything the child printed after our last read was accepted too.
        accepted += [line.split()[1] for line in child.stdout if line.startswith("ACCEPTED")]
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == -signal.SIGKILL

    header, events = JsonlPersistence(tmp_path).load("crash")
    spliced = {message["id"] for event in events if event["type"] == "agent/inbox/spliced"
               for message in event["data"]["inserted"]}
    assert set(accepted) <= spliced
    assert len(accepted) >= 25

    # The open turn is closed, then the prompt it claimed but never recorded as a
    # user/message is put back at the head of its lane with one ordinary splice.
    closers = events[-4:]
    assert [event["type"] for event in closers] == ["tool/result", "step/end", "turn/end",
                                                    "agent/inbox/spliced"]
    assert closers[0]["data"]["error"]["code"] == TOOL_OUTCOME_UNKNOWN
    assert closers[2]["data"] == {"turn": 1, "reason": {"kind": "interrupted"}}
    assert closers[3]["data"]["target"] == "next-turn" and closers[3]["data"]["start"] == 0
    assert [m["id"] for m in closers[3]["data"]["inserted"]] == accepted[:1]

    session = Session("crash", seed=events, header=header, restore=True)
    pending = Inbox(session)
    steered = {m.id for m in pending.next_step}
    queued = [m.id for m in pending.next_turn]
    assert set(accepted[5:]) == steered  # every steering message is still pending
    assert queued == accepted[:5]  # the claimed first prompt is back, in its place
    assert json.loads(JsonlPersistence(tmp_path).path_for("crash").read_text()
                      .splitlines()[-1])["type"] == "agent/inbox/spliced"
