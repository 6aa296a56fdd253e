"""Scripted scenes of the app, shared by the snapshot tests and `scripts/screenshots.py`.

Each scene builds a world with fixed agent and message ids, drives it to a known
state inside `run_test`, and freezes what would otherwise move: a fixed clock for
event times, no animation (the running spinner shows ●), no cursor blink, no
notifications.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Awaitable, Callable
from typing import Any

from dsh_tui.compose import build_context
from dsh_tui.harness import user_message
from dsh_tui.llm.scripted import ScriptedModel, fail, hang, reasoning, text, tool_call
from dsh_tui.loop import Tool, ToolOutput
from dsh_tui.ui.app import DshApp
from dsh_tui.ui.state import bridge as bridge_module
from dsh_tui.ui.state.lanes import source_for
from dsh_tui.ui.state.world import create_agent

SIZE = (150, 42)


class SceneApp(DshApp):
    """The app, plus a tidy exit: agents still streaming are stopped with it."""

    async def on_unmount(self) -> None:
        super().on_unmount()
        for agent in self.ctx.agents.list():
            if agent.status == "running":
                agent.cancel(None, keep_inbox=True)
                await asyncio.wait_for(agent.when_idle(), 5)

ANSWER = """Both designs work; they differ in **where the state lives**.

1. *Write-through*: every update goes to the store first. Simple, slower writes.
2. *Write-back*: updates stay in memory and are flushed in batches.

```python
def flush(batch):
    store.write_many(batch)
```

I would start with write-through and measure before adding batching."""

REASONING = ("The user wants the two cache designs compared.\nI should read the notes first, "
             "then weigh write-through against write-back.\nKeep it short.")


def freeze_time(monkeypatch: Any) -> None:
    """Event times from a counter (durations become stable), receipts vanish at once."""
    counter = itertools.count(1_750_000_000_000, 7)
    monkeypatch.setattr("dsh_tui.harness.session.now_ms", lambda: next(counter))
    # The tree's "time in state" reads a clock ten minutes after the first event.
    monkeypatch.setattr("dsh_tui.ui.controllers.fleet.wall_ms", lambda: 1_750_000_600_000)
    monkeypatch.setattr(bridge_module, "CLAIM_TTL", 0.0)
    monkeypatch.setattr(bridge_module, "DISCARD_TTL", 3600.0)


async def read_notes(call: Any) -> Any:
    return ToolOutput.text("# Cache notes\n- reads: 95%\n- writes: bursty\n- store: Postgres")


def make_world(script: list[Any]) -> Any:
    model = ScriptedModel(script)
    tools = [Tool("read_file", "Read a file", {"type": "object"}, read_notes)]
    return build_context(providers={"mock": model}, tools=tools, retry=False,
                         system_prompt=None)


async def until(pilot: Any, predicate: Callable[[], bool]) -> None:
    for _ in range(2000):
        if predicate():
            return
        await pilot.pause(0.005)
    raise AssertionError("scene never reached its state")


async def settle(pilot: Any) -> None:
    app = pilot.app
    for _ in range(4):
        app.bridge.flush()
        await pilot.pause()
    if hasattr(app, "workers"):
        await app.workers.wait_for_complete()
    await pilot.pause()


async def freeze(pilot: Any, focus: str = "#composer") -> None:
    app = pilot.app
    await settle(pilot)
    app.animation_level = "none"
    app.main.agent_tree.refresh_rows(app.bridge.views)
    app.main.composer.cursor_blink = False
    app.screen.query_one(focus).focus()  # the active screen: a dialog's own widgets too
    app.clear_notifications()
    await pilot.pause()


async def steady(pilot: Any) -> None:
    """Wait until the transcript's content and scroll position stop changing (the panel
    shrinks a followed transcript while its Markdown is still being laid out), then land
    on its end."""
    transcript = pilot.app.main.transcript
    last, same = None, 0
    for _ in range(200):
        await pilot.pause(0.01)
        now = (transcript.virtual_size, transcript.size, transcript.scroll_y)
        same = same + 1 if now == last else 0
        last = now
        if same >= 3:
            break
    transcript.scroll_end(animate=False, immediate=True)
    await pilot.pause()
    transcript.vertical_scrollbar.refresh()  # its thumb is drawn from the final position
    await pilot.pause()


def message(text_: str, id_: str, lane: str | None = None, **source: Any) -> Any:
    if source:
        return user_message(text_, id=id_, source=source)
    return user_message(text_, id=id_, source=source_for(lane) if lane else None)


async def _planner_with_history(pilot: Any) -> Any:
    app = pilot.app
    ctx = app.ctx
    planner = (await create_agent(ctx, provider="mock", model="mock", title="planner",
                                  session_id="planner")).agent
    researcher = (await create_agent(planner.ctx, provider="mock", model="mock",
                                     title="researcher", session_id="planner.researcher",
                                     meta={"parentSession": "planner", "origin": "subagent",
                                           "delegationDepth": 1})).agent
    await create_agent(researcher.ctx, provider="mock", model="mock", title="reader",
                       session_id="planner.researcher.reader",
                       meta={"parentSession": "planner.researcher", "origin": "subagent",
                             "delegationDepth": 2})
    await create_agent(ctx, provider="mock", model="mock", title="scratch",
                       session_id="scratch")
    await settle(pilot)
    app.main.select_agent("planner")
    planner.followup(message("Compare the two cache designs in notes.md", "3f2a1c9e"))
    await asyncio.wait_for(planner.when_idle(), 10)
    return planner


def history_script() -> list[Any]:
    return [reasoning(REASONING, then=tool_call("call-1", "read_file", {"path": "notes.md"})),
            text(ANSWER)]


# ---- scenes (each: a world factory and a run_before) ---------------------------------------


def idle_scene() -> tuple[DshApp, Callable[[Any], Awaitable[None]]]:
    app = SceneApp(make_world(history_script()))

    async def run_before(pilot: Any) -> None:
        await _planner_with_history(pilot)
        await freeze(pilot)

    return app, run_before


def streaming_scene() -> tuple[DshApp, Callable[[Any], Awaitable[None]]]:
    app = SceneApp(make_world([*history_script(), hang("Write-back needs a flush policy:")]))

    async def run_before(pilot: Any) -> None:
        planner = await _planner_with_history(pilot)
        planner.followup(message("Which one for bursty writes?", "7d41b0aa"))
        await until(pilot, lambda: "flush policy:" in _last_text(pilot.app))
        planner.steer(message("Mention the failure modes too", "c4e9d2f0", "steer"))
        await freeze(pilot)

    return app, run_before


def inbox_scene(edit: bool = False) -> tuple[DshApp, Callable[[Any], Awaitable[None]]]:
    app = SceneApp(make_world([*history_script(), hang("Write-back needs a flush policy:")]))

    async def run_before(pilot: Any) -> None:
        planner = await _planner_with_history(pilot)
        planner.followup(message("Which one for bursty writes?", "7d41b0aa"))
        await until(pilot, lambda: "flush policy:" in _last_text(pilot.app))
        planner.steer(message("Mention the failure modes too", "c4e9d2f0", "steer"))
        planner.inject(message("notes.md was updated: writes are now 30%", "5b8e1f77",
                               "inject"))
        planner.inbox.append("next-step", message(
            "lint: 2 warnings in cache.py", "9a0c3d55", kind="plugin", plugin="linter"))
        planner.followup(message("Then write it up as a short design doc", "e2b7c1d4"))
        planner.followup(message("And list open questions\nfor the review", "08f6a3b9"))
        planner.followup(message("draft a tweet about it", "b1d2e3f4"))
        planner.inbox.remove("b1d2e3f4")
        await settle(pilot)
        app.main.inbox.highlight_message("e2b7c1d4")
        await freeze(pilot, "#inbox")
        if edit:
            main = app.main
            if not main.inbox.display:  # folded (narrow): the focus it was given moves on
                await until(pilot, lambda: main.focused is main.composer)
                await settle(pilot)  # and the screen under the dialog shows that first
            await pilot.app.run_action("screen.edit_item")  # enter in the inbox (folded when narrow)
            await pilot.pause()
            await pilot.press(*" (two pages max)")
            app.screen.query_one("#edit-text").cursor_blink = False
            await pilot.pause()

    return app, run_before


def help_scene() -> tuple[DshApp, Callable[[Any], Awaitable[None]]]:
    app, before = idle_scene()

    async def run_before(pilot: Any) -> None:
        await before(pilot)
        await pilot.press("f1")
        await pilot.pause()

    return app, run_before


def event_log_scene() -> tuple[DshApp, Callable[[Any], Awaitable[None]]]:
    app, before = idle_scene()

    async def run_before(pilot: Any) -> None:
        await before(pilot)
        await pilot.press("f2")
        log = app.main.event_log
        log.query_one("#event-filter").value = "-chunk -request"
        await settle(pilot)
        await freeze(pilot, "#event-filter")
        log.query_one("#event-filter").cursor_blink = False
        await pilot.pause()

    return app, run_before


def search_scene() -> tuple[DshApp, Callable[[Any], Awaitable[None]]]:
    app, before = idle_scene()

    async def run_before(pilot: Any) -> None:
        await before(pilot)
        await pilot.press("ctrl+f", *"write-through")
        await settle(pilot)
        pilot.app.query_one("#search-input").cursor_blink = False
        await pilot.pause()

    return app, run_before


def breakpoint_scene() -> tuple[DshApp, Callable[[Any], Awaitable[None]]]:
    app = SceneApp(make_world([*history_script(), text("Write-through, then batch.")]))

    async def run_before(pilot: Any) -> None:
        planner = await _planner_with_history(pilot)
        pilot.app.main.select_agent("planner", focus_tree=True)
        await pilot.app.run_action("screen.toggle_breakpoint")  # f7 in the tree (folded when narrow)
        planner.inject(message("notes.md was updated: writes are now 30%", "5b8e1f77",
                               "inject"))
        planner.followup(message("Which one for bursty writes?", "7d41b0aa"))
        await until(pilot, lambda: pilot.app.main.breakpoint_panel.pause is not None)
        await steady(pilot)
        await freeze(pilot, "#continue")
        await steady(pilot)

    return app, run_before


def inbox_open_scene() -> tuple[DshApp, Callable[[Any], Awaitable[None]]]:
    """The inbox scene on a narrow screen, where the inbox is a toggle: opened with its key."""
    app, before = inbox_scene()

    async def run_before(pilot: Any) -> None:
        await before(pilot)
        if not pilot.app.main.inbox.display:
            await pilot.press("ctrl+o")
            await pilot.pause()
            await freeze(pilot, "#inbox")

    return app, run_before


def themed_scene(theme: str) -> tuple[DshApp, Callable[[Any], Awaitable[None]]]:
    app, before = inbox_scene()

    async def run_before(pilot: Any) -> None:
        pilot.app.theme = theme
        await before(pilot)

    return app, run_before


def timeline_scene() -> tuple[DshApp, Callable[[Any], Awaitable[None]]]:
    """The inbox scene after an edit and a move, with its timeline open (f5)."""
    app, before = inbox_scene()

    async def run_before(pilot: Any) -> None:
        await before(pilot)
        planner = pilot.app.ctx.agents.get("planner")
        planner.inbox.replace("e2b7c1d4", planner.inbox.get("e2b7c1d4").with_text(
            "Then write it up as a short design doc (two pages max)"))
        planner.inbox.move("08f6a3b9", "next-turn", 0)
        await settle(pilot)
        await pilot.press("f5")
        await pilot.pause()
        await freeze(pilot, "#timeline-lines")

    return app, run_before


def held_scene() -> tuple[DshApp, Callable[[Any], Awaitable[None]]]:
    """The inbox scene with a follow-up held for an edit: its badge, the tree's."""
    app, before = inbox_scene()

    async def run_before(pilot: Any) -> None:
        await before(pilot)
        pilot.app.ctx.agents.get("planner").hold("e2b7c1d4")
        await settle(pilot)
        await freeze(pilot, "#inbox")

    return app, run_before


FLEET_ROOTS = ("planner", "reviewer", "writer", "tester", "scout", *(f"agent {n}" for n in
                                                                     range(6, 21)))


async def _forever(call: Any) -> Any:
    await call.signal.wait()  # a tool still working when the scene is taken (until a stop)
    return ToolOutput.text("stopped")


def fleet_scene(open_tree: bool = False) -> tuple[DshApp, Callable[[Any], Awaitable[None]]]:
    """Twenty root agents and four sub-agents in every state a row can show: running (in a
    tool, in a step), paused at a breakpoint, failed, finished and not yet seen, stopped
    with work kept, finished sub-agents; three agents marked; the person in the planner."""
    model = ScriptedModel([text("Found three sources on cache stampedes."),
                           text("Two of them disagree on TTLs."),
                           text("All 42 tests pass."), fail("SERVER_ERROR", "upstream 503"),
                           hang("Looking at"), tool_call("c1", "search_web", {"q": "cache"}),
                           hang("Reading")])
    tools = [Tool("search_web", "Search the web", {"type": "object"}, _forever)]
    app = SceneApp(build_context(providers={"mock": model}, tools=tools, retry=False,
                                 system_prompt=None))

    async def run_before(pilot: Any) -> None:
        ctx = app.ctx
        agents: dict[str, Any] = {}
        for name in FLEET_ROOTS:
            agents[name] = (await create_agent(ctx, provider="mock", model="mock", title=name,
                                               session_id=name.replace(" ", "-"))).agent
        for n, owner in ((1, "planner"), (2, "planner"), (3, "planner"), (1, "reviewer")):
            name = f"researcher {n}" if owner == "planner" else "linter"
            parent = agents[owner]
            agents[name] = (await create_agent(
                parent.ctx, provider="mock", model="mock", title=name,
                session_id=f"{parent.id}.{name.replace(' ', '-')}",
                meta={"parentSession": parent.id, "origin": "subagent",
                      "delegationDepth": 1})).agent
        await settle(pilot)
        for view in app.bridge.views.values():
            view.activity.live_from = 0  # the scene's clock is frozen in the past
        app.main.select_agent("planner")

        async def turn(name: str, text_: str, owner: bool = False) -> None:
            message_id = f"m-{name.replace(' ', '-')}"
            agents[name].followup(message(text_, message_id, kind="plugin", plugin="spawn_agent")
                                  if owner else message(text_, message_id, "follow-up"))
            await asyncio.wait_for(agents[name].when_idle(), 10)

        await turn("researcher 1", "Find sources on cache stampedes", owner=True)
        await turn("researcher 2", "Compare their TTL advice", owner=True)
        await turn("tester", "Run the test suite")
        await turn("writer", "Draft the design doc")
        scout = agents["scout"]
        scout.followup(message("Survey the caching libraries", "m-scout"))
        await until(pilot, lambda: any(e.type == "assistant/chunk" for e in scout.session.events))
        scout.followup(message("Then rank them", "m-scout-2"))
        scout.cancel(None, keep_inbox=True)
        await asyncio.wait_for(scout.when_idle(), 10)
        assert app.breakpoints is not None
        app.breakpoints.toggle("reviewer")
        agents["reviewer"].followup(message("Review the cache PR", "m-reviewer"))
        await until(pilot, lambda: "reviewer" in app.breakpoints.paused)
        agents["planner"].followup(message("Plan the cache rollout", "m-planner"))
        await until(pilot, lambda: app.bridge.views["planner"].activity.tool == "search_web")
        # its reply (the tool call) recorded: the message's receipt reads "answered"
        await until(pilot, lambda: any(e.type == "assistant/message"
                                       for e in agents["planner"].session.events))
        agents["researcher 3"].followup(message("Read the RFC", "m-r3", kind="plugin",
                                                plugin="spawn_agent"))
        await until(pilot, lambda: agents["researcher 3"].status == "running")
        for name in ("agent-7", "agent-8", "agent-9"):
            app.main.fleet.marks.toggle(name)
        await settle(pilot)
        app.main.fleet.observe(list(app.bridge.views))
        app.main.fleet.update_title()
        if open_tree and not app.main.agent_tree.display:
            await pilot.press("ctrl+b")
            await pilot.pause()
        focus = "#agent-tree" if app.main.agent_tree.display else "#composer"
        await freeze(pilot, focus)

    return app, run_before


def _last_text(app: DshApp) -> str:
    view = app.main.selected_view
    if view is None:
        return ""
    texts = [i for i in view.transcript.items if i.kind == "text"]
    return texts[-1].current_text() if texts else ""


SCENES: dict[str, Callable[[], tuple[DshApp, Callable[[Any], Awaitable[None]]]]] = {
    "main-idle": idle_scene,
    "main-streaming": streaming_scene,
    "main-inbox": inbox_scene,
    "edit-dialog": lambda: inbox_scene(edit=True),
    "help": help_scene,
    "event-log": event_log_scene,
    "search": search_scene,
    "breakpoint": breakpoint_scene,
    "theme-dark": lambda: themed_scene("dark"),
    "theme-light": lambda: themed_scene("light"),
    "theme-high-contrast": lambda: themed_scene("high-contrast"),
    "timeline": timeline_scene,
    "held-item": held_scene,
}
