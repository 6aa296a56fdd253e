"""kill -9 at the worst instants loses nothing accepted; neither does an exit without dispose.

A child process (`lossless_child.py`) drives a root agent and its sub-agent on the full
stack, writing real session files. The parent kills it with SIGKILL at a chosen point,
then resumes the tree the way `dsh-tui --resume` does and checks the one promise: every
message whose public call returned is pending in an inbox or recorded as a `user/message`
of some turn (and never both), or, when a stop or a skipped step ended its turn before it
was sent, offered back by the app ("claimed, never sent", read from the log).
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from dsh_tui.compose import build_context
from dsh_tui.harness import AgentOptions, Inbox, Session, user_message
from dsh_tui.harness.persistence import JsonlPersistence
from dsh_tui.ui.state.unsent import UnsentTracker
from dsh_tui.ui.state.world import dispose_all, resume_tree

CHILD = Path(__file__).with_name("lossless_child.py")
REPO = Path(__file__).resolve().parents[2]


def run_child(root: Path, scenario: str, seed: int = 0, linger: float = 0.0
              ) -> tuple[dict[str, set[str]], str | None]:
    """Run the child until its `AT` point (plus `linger` seconds), SIGKILL it.

    Returns the accepted message ids per agent and the point reached (None if the
    child exited by itself).
    """
    child = subprocess.Popen([sys.executable, str(CHILD), str(root), scenario, str(seed)],
                             stdout=subprocess.PIPE, text=True,
                             env={**os.environ, "PYTHONPATH": str(REPO)})
    accepted: dict[str, set[str]] = {}
    point = None

    def take(line: str) -> None:
        words = line.split()
        if words and words[0] == "ACCEPTED":
            accepted.setdefault(words[2], set()).add(words[1])

    try:
        assert child.stdout is not None
        for line in child.stdout:
            take(line)
            if line.startswith("AT "):
                point = line.split()[1]
                break
        if point is not None and point != "exit":
            if linger:
                time.sleep(linger)
            child.send_signal(signal.SIGKILL)  # no flush, no finally, no atexit
        child.wait(timeout=30)
        for line in child.stdout:  # whatever it accepted after the point, before the kill
            take(line)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    if point == "exit":
        assert child.returncode == 0
    else:
        assert child.returncode == -signal.SIGKILL, f"child ended by itself: {scenario}"
    return accepted, point


Seen = tuple[set[str], set[str], set[str]]
"""Per agent: ids recorded as user/message, ids pending, ids offered back (claimed by a
turn that ended before sending them: a stop or a skipped step; the app lists them as
"claimed, never sent" and puts them back with one key)."""


def offered(session: Any) -> set[str]:
    tracker = UnsentTracker()
    for event in session.events:
        tracker.apply(event)
    return {u.id for u in tracker.unsent}


def state(session: Any, inbox: Any) -> Seen:
    entered = {e.data["id"] for e in session.events if e.type == "user/message"}
    pending = {m.id for m in (*inbox.next_turn, *inbox.next_step)}
    return entered, pending, offered(session)


def states(agents: list[Any]) -> dict[str, Seen]:
    return {agent.id: state(agent.session, agent.inbox) for agent in agents}


def lost(accepted: dict[str, set[str]], seen: dict[str, Seen]) -> list[str]:
    missing = []
    for agent_id, ids in accepted.items():
        entered, pending, back = seen.get(agent_id, (set(), set(), set()))
        assert not entered & pending, "a message is both sent and pending"
        assert not back & (entered | pending), "an offered message is also sent or pending"
        missing += sorted(ids - entered - pending - back)
    return missing


async def resume_and_check(root: Path, accepted: dict[str, set[str]]) -> dict[str, Seen]:
    """Resume the whole tree as the app does and assert nothing accepted was lost."""
    from lossless_child import Model, wait_tool  # type: ignore[import-not-found]

    persistence = JsonlPersistence(root)
    ctx = build_context(providers={"m": Model()}, persistence=persistence, tools=[wait_tool],
                        retry=False, system_prompt=None)
    ctx.services["loop"].default_options = AgentOptions(provider="m", model="m")
    try:
        await resume_tree(ctx, "root", persistence.list_sessions())
        agents = ctx.agents.list()
        seen = states(agents)
        assert set(accepted) <= set(seen)  # sub-agents came back under their parent
        assert lost(accepted, seen) == []
        for agent in agents:
            assert agent.status == "idle"  # nothing runs until someone asks
        return seen
    finally:
        await dispose_all(ctx)
        await ctx.scope.dispose()


@pytest.fixture(autouse=True)
def _child_importable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(CHILD.parent))


@pytest.mark.parametrize("scenario", ["first-claim", "boundary-claim", "breakpoint",
                                      "move-between", "move-same", "mid-stream", "mid-tool"])
async def test_sigkill_at_the_worst_instant_loses_no_accepted_message(tmp_path: Path,
                                                                      scenario: str) -> None:
    accepted, point = run_child(tmp_path, scenario, linger=0.05 if scenario in (
        "mid-stream", "breakpoint", "mid-tool") else 0.0)
    assert point == scenario
    assert accepted
    if scenario == "first-claim":
        # killed before the first request header was written: the resumed agent still
        # has a route (the app's), so the message put back is sent on the next wake
        await check_resumed_agent_works(tmp_path)
    seen = await resume_and_check(tmp_path, accepted)
    entered, pending, _ = seen["root"]
    if scenario in ("boundary-claim", "breakpoint"):
        # claimed, never recorded: back in the inbox rather than gone
        assert accepted["root"] - entered <= pending and pending
    if scenario in ("move-between", "move-same"):
        assert len(pending) == 5  # busy was claimed; three queued + context, none lost


async def test_an_exit_that_disposes_nothing_keeps_every_inbox(tmp_path: Path) -> None:
    accepted, point = run_child(tmp_path, "exit")
    assert point == "exit"
    seen = await resume_and_check(tmp_path, accepted)
    assert len(seen) == 2
    assert len(seen["root"][1]) >= 2  # the queued prompt and the context, both back
    kid = next(agent_id for agent_id in seen if agent_id != "root")
    assert seen[kid][1]  # the sub-agent's inbox came back too


async def check_resumed_agent_works(root: Path) -> None:
    from lossless_child import Model  # type: ignore[import-not-found]

    ctx = build_context(providers={"m": Model()}, persistence=JsonlPersistence(root), tools=[],
                        retry=False, system_prompt=None)
    ctx.services["loop"].default_options = AgentOptions(provider="m", model="m")
    try:
        agent = (await resume_tree(ctx, "root", JsonlPersistence(root).list_sessions())).agent
        assert [m.text for m in agent.inbox.next_turn] == ["hello"]
        agent.followup(user_message("and now?"))
        await agent.when_idle()
        ends = [e.data["reason"]["kind"] for e in agent.session.events if e.type == "turn/end"]
        assert ends[-1] == "completed", ends
        sent = [e.data["content"][0]["text"] for e in agent.session.events
                if e.type == "user/message"]
        assert sent[-2:] == ["hello", "and now?"]
    finally:
        await dispose_all(ctx)
        await ctx.scope.dispose()


def check_on_disk(root: Path, accepted: dict[str, set[str]]) -> tuple[list[str], int]:
    """The same check through the strict loader alone (repairing, as a resume would).
    Returns the accepted ids lost and how many were offered back at that point."""
    persistence = JsonlPersistence(root)
    seen = {}
    try:
        for agent_id in [h["id"] for h in persistence.list_sessions()]:
            header, events = persistence.load(agent_id)
            session = Session(agent_id, seed=events, header=header, restore=True)
            seen[agent_id] = state(session, Inbox(session))
    finally:
        persistence.release()
    return lost(accepted, seen), sum(len(entry[2]) for entry in seen.values())


async def test_random_kills_lose_no_accepted_message(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """Seeded rounds on one session tree: random work, SIGKILL at a random instant, resume."""
    seed = int(os.environ.get("DSH_TUI_CRASH_SEED", "9"))
    rounds = int(os.environ.get("DSH_TUI_CRASH_ROUNDS", "18"))
    rng = random.Random(seed)
    accepted: dict[str, set[str]] = {}
    missing: list[str] = []
    kills = back = 0
    for round_no in range(rounds):
        got, point = run_child(tmp_path, "random", seed * 1000 + round_no,
                               linger=rng.choice((0.0, 0.005, 0.02, 0.05, 0.1, 0.2, 0.4)))
        assert point == "random"
        kills += 1
        for agent_id, ids in got.items():
            accepted.setdefault(agent_id, set()).update(ids)
        gone, offered_now = check_on_disk(tmp_path, accepted)  # (an unwritten agent
        missing += gone  # accepted nothing)
        back += offered_now
    await resume_and_check(tmp_path, accepted)
    total = sum(len(ids) for ids in accepted.values())
    with capsys.disabled():
        print(f"\n{kills} kills, {len(missing)} accepted messages lost ({total} accepted; "
              f"after the kills {back} times a message was offered back, seed {seed})")
    assert missing == []
