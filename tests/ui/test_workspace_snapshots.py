"""SVG snapshots of the workspace screens (issue 13): the `--resume` picker, the f3
sessions tree (filtered too) and the name dialog, at the reference size and at 80x24.

The catalog is built by hand with fixed ids, times, sizes and directories (a real store
would carry this run's temp paths and clock), and times are shown in UTC, so the pictures
do not depend on where or when they are taken.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from dsh_tui.harness.persistence.catalog import SessionEntry, WorkspaceEntry
from dsh_tui.ui.screens.name import NameScreen
from dsh_tui.ui.screens.sessions import PickerApp, SessionsScreen

from .scenes import SIZE, freeze, freeze_time, idle_scene

T0 = 1_764_600_000_000  # 2025-12-01 14:40 UTC


def _session(id_: str, title: str, *, status: str = "idle", pending: int = 0,
             minutes: int = 0, size: int = 4096, parent: str | None = None,
             preview: str | None = None, children: list[SessionEntry] | None = None,
             ) -> SessionEntry:
    header: dict[str, Any] = {"id": id_, "createdAt": T0, "version": 0}
    if parent:
        header.update(parentSession=parent, origin="subagent")
    return SessionEntry(id=id_, header=header, title=title, preview=preview, bytes=size,
                        last_activity=T0 + minutes * 60_000, status=status, pending=pending,
                        children=children or [])


def catalog() -> list[WorkspaceEntry]:
    cache = WorkspaceEntry(id="ws-3f2a9c1e", cwd="/home/ana/projects/cache", created_at=T0,
                           last_activity=T0 + 42 * 60_000, roots=[
        _session("demo-5c1e0b7a", "demo", pending=2, minutes=42, size=182_431,
                 preview="compare two designs for a cache", children=[
                     _session("demo-5c1e0b7a.researcher-91ab02", "researcher",
                              status="interrupted", minutes=40, size=48_120,
                              parent="demo-5c1e0b7a"),
                     _session("demo-5c1e0b7a.researcher-3d77e4", "researcher 2", minutes=41,
                              size=12_002, parent="demo-5c1e0b7a")]),
        _session("agent-7e3b10c4", "writer", pending=1, minutes=38, size=9_870,
                 preview="draft the README section from the notes")])
    notes = WorkspaceEntry(id="ws-8b07d4aa", cwd="/home/ana/notes", created_at=T0,
                           last_activity=T0 + 5 * 60_000, roots=[
        _session("main-0d9e4f21", "planner", minutes=5, size=2_300_411,
                 preview="plan the week")])
    loose = WorkspaceEntry(id=None, cwd=None, created_at=T0, last_activity=T0, roots=[
        _session("demo-1df29488", "demo", minutes=0, size=880, preview="hello")])
    return [cache, notes, loose]


@pytest.fixture(autouse=True)
def utc(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def picker_scene(typed: str = "") -> tuple[Any, Callable[[Any], Awaitable[None]]]:
    app = PickerApp(catalog())

    async def run_before(pilot: Any) -> None:
        for _ in range(100):
            if isinstance(pilot.app.screen, SessionsScreen):
                break
            await pilot.pause(0.01)
        if typed:
            await pilot.press(*typed)
        await pilot.pause()

    return app, run_before


def f3_scene() -> tuple[Any, Callable[[Any], Awaitable[None]]]:
    app, before = idle_scene()

    async def run_before(pilot: Any) -> None:
        await before(pilot)
        shown = catalog()
        pilot.app.push_screen(SessionsScreen(shown, {"agent-7e3b10c4"},
                                             on_action=lambda chosen: ("", shown)))
        await pilot.pause()
        await pilot.pause()

    return app, run_before


def name_scene() -> tuple[Any, Callable[[Any], Awaitable[None]]]:
    app, before = idle_scene()

    async def run_before(pilot: Any) -> None:
        await before(pilot)
        await pilot.press("ctrl+n")
        for _ in range(100):
            if isinstance(pilot.app.screen, NameScreen):
                break
            await pilot.pause(0.01)
        await freeze(pilot, "#name-input")
        pilot.app.screen.query_one("#name-input").cursor_blink = False
        await pilot.pause()

    return app, run_before


SCENES = {"picker": picker_scene, "picker-filtered": lambda: picker_scene("research"),
          "sessions-tree": f3_scene, "name-dialog": name_scene}


@pytest.mark.parametrize("size", ["reference", "80x24"])
@pytest.mark.parametrize("name", list(SCENES))
def test_workspace_screens(name: str, size: str, snap_compare: Any,
                           monkeypatch: pytest.MonkeyPatch) -> None:
    freeze_time(monkeypatch)
    app, run_before = SCENES[name]()
    terminal = SIZE if size == "reference" else (80, 24)
    assert snap_compare(app, terminal_size=terminal, run_before=run_before)
