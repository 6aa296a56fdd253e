"""One writer per session: a second process is refused by name; a dead holder's lock is free."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from dsh_tui.harness import Inbox, new_world, user_message
from dsh_tui.harness.persistence import (
    JsonlPersistence,
    SessionLockedError,
    lock_holder,
)

from .conftest import World, complete_turn

REPO = Path(__file__).resolve().parents[2]

# Resumes the session the way the app does (load, then a live session on it) and waits.
HOLDER = """
import sys, time
from dsh_tui.harness import new_world
from dsh_tui.harness.persistence import JsonlPersistence
p = JsonlPersistence(sys.argv[1])
ctx = new_world()
p.attach(ctx)
header, events = p.load(sys.argv[2])
session = ctx.sessions.prepare(sys.argv[2], seed=events, header=header, restore=True)
print("HOLDING", flush=True)
time.sleep(60)
"""


def _stored(root: Path, session_id: str = "shared") -> Path:
    world = World(root)
    session = world.session(session_id, cwd="/p")
    complete_turn(session, 1)
    Inbox(session).append("next-turn", user_message("still queued"))
    world.detach()
    return JsonlPersistence(root).path_for(session_id)


def _holder(root: Path, session_id: str = "shared") -> subprocess.Popen[str]:
    child = subprocess.Popen([sys.executable, "-c", HOLDER, str(root), session_id],
                             stdout=subprocess.PIPE, text=True,
                             env={**os.environ, "PYTHONPATH": str(REPO)})
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "HOLDING"
    return child


def test_a_second_process_is_refused_by_name_and_changes_nothing(tmp_path: Path) -> None:
    path = _stored(tmp_path)
    assert lock_holder(path) is None
    child = _holder(tmp_path)
    try:
        before = path.read_bytes()
        holder = lock_holder(path)
        assert holder is not None and holder.pid == child.pid and not holder.is_this_process
        assert JsonlPersistence(tmp_path).lock_holder("shared") == holder
        with pytest.raises(SessionLockedError, match=f"pid {child.pid}") as raised:
            JsonlPersistence(tmp_path).load("shared")
        assert raised.value.holder.pid == child.pid
        # A live session created over the same id (no load) is refused as well.
        ctx = new_world()
        JsonlPersistence(tmp_path).attach(ctx)
        with pytest.raises(SessionLockedError):
            ctx.sessions.create("shared", meta={"cwd": "/p"})
        assert path.read_bytes() == before
    finally:
        child.send_signal(signal.SIGKILL)  # the holder dies without releasing anything
        child.wait(timeout=10)
    # The kernel dropped the dead process's lock: the session opens again.
    assert lock_holder(path) is None
    persistence = JsonlPersistence(tmp_path)
    _header, events = persistence.load("shared")
    assert events[-1]["type"] == "agent/inbox/spliced"  # every record is still there
    assert len(events[-1]["data"]["inserted"]) == 1
    holder = lock_holder(path)
    assert holder is not None and holder.is_this_process


async def test_the_lock_is_held_while_live_and_released_on_dispose(tmp_path: Path) -> None:
    world = World(tmp_path)
    session = world.ctx.sessions.prepare("live", meta={"cwd": "/p"})
    dispose = world.ctx.sessions.enter(session)
    world.ctx.sessions.announce(session)
    path = world.persistence.path_for(session.header)
    assert lock_holder(path) is None  # nothing on disk yet, nothing locked
    Inbox(session).append("next-turn", user_message("first"))
    held = lock_holder(path)
    assert held is not None and held.is_this_process
    dispose()
    for _ in range(100):
        if lock_holder(path) is None:
            break
        await asyncio.sleep(0.01)
    assert lock_holder(path) is None
    world.detach()


def test_the_command_line_refuses_a_session_open_elsewhere(tmp_path: Path) -> None:
    path = _stored(tmp_path)
    child = _holder(tmp_path)
    try:
        before = path.read_bytes()
        result = subprocess.run(
            [sys.executable, "-m", "dsh_tui", "--data-dir", str(tmp_path), "--resume", "shared"],
            capture_output=True, text=True, timeout=60,
            env={**os.environ, "PYTHONPATH": str(REPO), "DSH_TUI_CONFIG": str(tmp_path / "none")})
        assert result.returncode != 0
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
        assert f"pid {child.pid}" in lines[0] and "shared" in lines[0]
        assert path.read_bytes() == before
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=10)
