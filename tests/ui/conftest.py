"""Shared helpers for the UI tests: a scripted world, an app over it, and settling.

Tests never read the person's files: DSH_TUI_CONFIG points into tmp_path, and
the app gets `config=None` (the defaults) unless a test passes its own.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable
from typing import Any

import pytest

from dsh_tui.compose import build_context
from dsh_tui.harness import user_message
from dsh_tui.harness.session import SessionEvent
from dsh_tui.llm.scripted import ScriptedModel
from dsh_tui.ui.app import DshApp
from dsh_tui.ui.state.world import create_agent

SIZE = (150, 42)


@pytest.fixture(autouse=True)
def _isolated_config(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DSH_TUI_CONFIG", str(tmp_path / "no-user-config.toml"))
    monkeypatch.delenv("DEEPSEEK_API_KEY", raising=False)


def world(script: Iterable[Any] = (), tools: Iterable[Any] = ()) -> tuple[Any, ScriptedModel]:
    model = ScriptedModel(list(script))
    ctx = build_context(providers={"mock": model}, tools=list(tools), retry=False,
                        system_prompt=None)
    return ctx, model


def long_log(turns: int, needle_turns: Iterable[int] = ()) -> list[SessionEvent]:
    """A finished session of `turns` question/answer turns, built as log events (fast);
    the answers of `needle_turns` also say "mentions the Needle here"."""
    needles = set(needle_turns)
    events: list[SessionEvent] = []

    def add(type_: str, data: Any) -> None:
        events.append(SessionEvent(type_, len(events), 1_000 + len(events), data))

    for turn in range(1, turns + 1):
        add("turn/start", {"turn": turn})
        add("user/message", {"id": f"u{turn}", "role": "user",
                             "content": [{"type": "text", "text": f"question {turn}"}],
                             "source": {"kind": "user"}})
        answer = f"answer {turn}" + (" mentions the Needle here" if turn in needles else "")
        add("assistant/message", {"turn": turn, "step": 1, "message": {
            "id": f"a{turn}", "role": "assistant",
            "content": [{"type": "text", "text": answer}],
            "source": {"kind": "model", "provider": "p", "model": "m"}}})
        add("turn/end", {"turn": turn, "reason": {"kind": "completed"}})
    return events


async def add_agent(ctx: Any, agent_id: str, title: str | None = None, owner: Any = None,
                    ) -> Any:
    meta = None
    where = ctx
    if owner is not None:
        where = owner.ctx
        meta = {"parentSession": owner.id, "origin": "subagent", "delegationDepth": 1}
    handle = await create_agent(where, provider="mock", model="mock", title=title,
                                session_id=agent_id, meta=meta)
    return handle.agent


def msg(text: str, id: str, lane: str | None = None) -> Any:
    from dsh_tui.ui.state.lanes import source_for

    return user_message(text, id=id, source=source_for(lane) if lane else None)


async def settle(pilot: Any, rounds: int = 3) -> None:
    """Flush the bridge now and let every queued widget update run."""
    app = pilot.app
    for _ in range(rounds):
        app.bridge.flush()
        await pilot.pause()


async def wait_until(pilot: Any, predicate: Callable[[], bool], rounds: int = 400,
                     timeout: float = 15.0) -> None:
    """Poll (pausing the app between checks) until `predicate()`; fail if it never holds.

    It gives up after `rounds` checks *and* `timeout` seconds, whichever comes later: on a
    loaded machine a few hundred short pauses can pass before a timer in the app fires."""
    deadline = time.monotonic() + timeout
    done = 0
    while done < rounds or time.monotonic() < deadline:
        if predicate():
            return
        await pilot.pause(0.005)
        done += 1
    assert predicate(), "condition never became true"


async def idle(pilot: Any, *agents: Any, timeout: float = 10) -> None:
    for agent in agents:
        await asyncio.wait_for(agent.when_idle(), timeout)
    await settle(pilot)


def make_app(ctx: Any, config: Any = None) -> DshApp:
    app = DshApp(ctx, config)
    return app


def screen_text(app: Any) -> str:
    """Everything visible on the screen, as plain text (for 'is it shown' checks)."""
    from rich.console import Console

    console = Console(record=True, width=app.size.width, height=app.size.height,
                      color_system=None, file=open("/dev/null", "w"))  # noqa: SIM115
    lines = app.screen._compositor.render_update(full=True)
    console.print(lines)
    return console.export_text()


def region_text(app: Any, widget: Any) -> str:
    """What is visible of `widget` alone: the screen's text cut to its region (another
    pane may quote the same words, e.g. the inbox's receipts quote sent messages)."""
    region = widget.region
    rows = screen_text(app).splitlines()[region.y:region.y + region.height]
    return "\n".join(row[region.x:region.x + region.width] for row in rows)


def renderable_text(renderable: Any, width: int = 140) -> str:
    from rich.console import Console

    console = Console(record=True, width=width, color_system=None,
                      file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(renderable)
    return "\n".join(line.rstrip() for line in console.export_text().splitlines()) + "\n"
