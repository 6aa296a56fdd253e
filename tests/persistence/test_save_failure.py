"""Saving that fails is visible, keeps everything in memory, and catches up by itself.

Tests run as root, for whom chmod does not make a directory read-only. Two real
kernel-enforced failures are used instead: a regular file where the data
directory should be (every mkdir/open under it fails with ENOTDIR, as on a
read-only or unmounted data dir), and RLIMIT_FSIZE in a child process (a write
past the limit fails with EFBIG, as on a full disk); lowering and raising a soft
limit needs no privilege. Nothing is injected at the Python file layer.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from dsh_tui.harness import Inbox, new_world, user_message
from dsh_tui.harness.persistence import JsonlPersistence

REPO = Path(__file__).resolve().parents[2]


def _on_disk(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()[1:]]


async def _until(condition: object, seconds: float = 10.0) -> None:
    """Poll `condition()` while the loop runs (the retry is a loop timer)."""
    for _ in range(int(seconds / 0.05)):
        if condition():  # type: ignore[operator]
            return
        await asyncio.sleep(0.05)


async def test_an_unwritable_data_dir_is_reported_and_caught_up_later(tmp_path: Path) -> None:
    blocker = tmp_path / "data"
    blocker.write_text("a file where the data directory should be")
    ctx = new_world()
    persistence = JsonlPersistence(blocker / "sessions")
    detach = persistence.attach(ctx)
    try:
        session = ctx.sessions.create("s", meta={"cwd": "/p"})
        inbox = Inbox(session)
        for text in ("one", "two", "three"):
            inbox.append("next-turn", user_message(text))  # accepted: kept in memory
        failure = persistence.save_failure
        assert failure is not None and "Not a directory" in failure
        assert len(inbox) == 3
        blocker.unlink()  # the data dir becomes usable again
        await _until(lambda: persistence.save_failure is None)
        assert persistence.save_failure is None  # nobody typed: the retry timer wrote it
        path = persistence.path_for(session.header)
        assert _on_disk(path) == [event.to_json() for event in session.events]
    finally:
        detach()
    assert persistence.lost_on_exit is None


async def test_an_exit_with_unwritten_events_says_so(tmp_path: Path) -> None:
    blocker = tmp_path / "data"
    blocker.write_text("not a directory")
    ctx = new_world()
    persistence = JsonlPersistence(blocker)
    detach = persistence.attach(ctx)
    session = ctx.sessions.create("s", meta={"cwd": "/p"})
    Inbox(session).append("next-turn", user_message("kept only in memory"))
    detach()
    assert persistence.lost_on_exit is not None
    assert str(blocker) in persistence.lost_on_exit and "1 session" in persistence.lost_on_exit
    assert len(persistence.lost_on_exit.splitlines()) == 1


FULL_DISK = textwrap.dedent("""
    import asyncio, json, resource, signal, sys
    from dsh_tui.harness import Inbox, new_world, user_message
    from dsh_tui.harness.persistence import JsonlPersistence

    async def main(root):
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails: EFBIG
        soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
        ctx = new_world()
        persistence = JsonlPersistence(root)
        persistence.attach(ctx)
        session = ctx.sessions.create("full", meta={"cwd": "/p"})
        inbox = Inbox(session)
        inbox.append("next-turn", user_message("before the disk filled"))
        path = persistence.path_for(session.header)
        resource.setrlimit(resource.RLIMIT_FSIZE, (path.stat().st_size + 600, hard))
        for index in range(20):
            inbox.append("next-turn", user_message(f"while full {index} " + "x" * 100))
        print("FAILING", persistence.save_failure, flush=True)
        print("PENDING", len(inbox), flush=True)
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))  # space returns
        for _ in range(200):
            if persistence.save_failure is None:
                break
            await asyncio.sleep(0.05)
        print("FAILING", persistence.save_failure, flush=True)
        on_disk = [json.loads(line) for line in path.read_text().splitlines()[1:]]
        print("EQUAL", on_disk == [event.to_json() for event in session.events], flush=True)

    asyncio.run(main(sys.argv[1]))
""")


def test_a_full_disk_is_reported_and_writing_resumes_when_space_returns(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-c", FULL_DISK, str(tmp_path)],
                            capture_output=True, text=True, timeout=60,
                            env={**os.environ, "PYTHONPATH": str(REPO)})
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("FAILING ") and "File too large" in lines[0], lines
    assert lines[1] == "PENDING 21"
    assert lines[2] == "FAILING None"
    assert lines[3] == "EQUAL True"


WORKSPACE_FULL = textwrap.dedent("""
    import asyncio, resource, signal, sys
    from pathlib import Path
    from dsh_tui.harness import new_world
    from dsh_tui.harness.persistence import JsonlPersistence
    from dsh_tui.harness.persistence.workspace import Workspace, read_state
    from dsh_tui.ui.state.workspace import start_workspace

    async def main(root):
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails: EFBIG
        soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
        ctx = new_world()
        persistence = JsonlPersistence(root)
        persistence.attach(ctx)
        workspace = start_workspace(ctx, persistence, Workspace.new(Path(root), "/p"))
        workspace.materialize()  # as the first session's creation does
        workspace.record("root", session="first")
        size = workspace.path.stat().st_size
        resource.setrlimit(resource.RLIMIT_FSIZE, (size + 10, hard))  # 10 bytes still fit
        workspace.record("root", session="second-" + "x" * 60)
        print("GREW", workspace.path.stat().st_size - size, flush=True)
        print("FAILING", persistence.save_failure, flush=True)
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))  # space returns
        for _ in range(100):  # nobody records anything: the retry alone catches up
            if persistence.save_failure is None:
                break
            await asyncio.sleep(0.05)
        print("FAILING", persistence.save_failure, flush=True)
        state, _ = read_state(workspace.path)
        print("ROOTS", " ".join(state.roots), flush=True)
        workspace.close()
        print("LOST", workspace.lost_on_exit, flush=True)

    asyncio.run(main(sys.argv[1]))
""")


def test_a_full_disk_cuts_a_workspace_record_back_and_writes_it_whole_later(
        tmp_path: Path) -> None:
    """The workspace record (which roots a `-c` reopens) under a full disk: the line that
    only partly fit is cut back, "not saved" covers it, and the retry writes it whole."""
    result = subprocess.run([sys.executable, "-c", WORKSPACE_FULL, str(tmp_path)],
                            capture_output=True, text=True, timeout=60,
                            env={**os.environ, "PYTHONPATH": str(REPO)})
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "GREW 0", lines  # no half line left for the retry to glue onto
    assert lines[1].startswith("FAILING ") and "File too large" in lines[1], lines
    assert lines[2] == "FAILING None", lines
    assert lines[3] == "ROOTS first second-" + "x" * 60, lines
    assert lines[4] == "LOST None", lines


async def test_a_workspace_that_cannot_be_created_is_not_saved_until_it_is(
        tmp_path: Path) -> None:
    from dsh_tui.harness.persistence.workspace import Workspace, read_state
    from dsh_tui.ui.state.workspace import start_workspace

    blocker = tmp_path / "data"
    blocker.write_text("a file where the data directory should be")
    ctx = new_world()
    persistence = JsonlPersistence(blocker / "sessions")
    detach = persistence.attach(ctx)
    workspace = start_workspace(ctx, persistence,
                                Workspace.new(blocker / "sessions", "/p"))
    try:
        workspace.materialize()  # its first session reached the disk (or tried to)
        workspace.record("root", session="s")
        assert persistence.save_failure is not None
        assert "Not a directory" in persistence.save_failure
        blocker.unlink()
        await _until(lambda: persistence.save_failure is None)
        assert persistence.save_failure is None
        state, _ = read_state(workspace.path)
        assert state is not None and state.roots == ["s"]
    finally:
        workspace.close()
        detach()
    assert workspace.lost_on_exit is None


def test_a_workspace_never_written_is_named_at_exit(tmp_path: Path) -> None:
    from dsh_tui.harness.persistence.workspace import Workspace

    blocker = tmp_path / "data"
    blocker.write_text("not a directory")
    workspace = Workspace.new(blocker, "/p")
    workspace.materialize()
    workspace.record("root", session="s")
    workspace.close()
    assert workspace.lost_on_exit is not None
    assert str(blocker) in workspace.lost_on_exit and "2 record(s)" in workspace.lost_on_exit
    assert len(workspace.lost_on_exit.splitlines()) == 1
