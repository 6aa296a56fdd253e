"""SVG snapshots of the main screens (pytest-textual-snapshot).

Deterministic by construction (see `scenes.py`): fixed terminal size, ids and
clock, no animation or cursor blink, notifications cleared. Regenerate after an
intended visual change with `pytest tests/ui/test_snapshots.py --snapshot-update`.

Every scene is taken at the reference size; the main screen, the edit dialog, the
breakpoint panel and help are also taken at 80x24 and 60x20 (side panes folded
into toggles, dialogs fitting with their buttons), 120x40 and 250x60 (prose keeps
a readable measure), plus the inbox opened with its key at 80x24 and the inbox timeline
at 160x50 and 80x24.
"""

from __future__ import annotations

from typing import Any

import pytest

from .scenes import SCENES, SIZE, fleet_scene, freeze_time, inbox_open_scene

SIZES = {"80x24": (80, 24), "60x20": (60, 20), "120x40": (120, 40), "250x60": (250, 60)}
SIZED = ("main-streaming", "edit-dialog", "breakpoint", "help")


@pytest.mark.parametrize("name", list(SCENES))
def test_scene(name: str, snap_compare: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    freeze_time(monkeypatch)
    app, run_before = SCENES[name]()
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("name", SIZED)
def test_scene_sized(name: str, size: str, snap_compare: Any,
                     monkeypatch: pytest.MonkeyPatch) -> None:
    freeze_time(monkeypatch)
    app, run_before = SCENES[name]()
    assert snap_compare(app, terminal_size=SIZES[size], run_before=run_before)


@pytest.mark.parametrize("size", [(160, 50), (80, 24)], ids=["160x50", "80x24"])
def test_timeline_sized(size: tuple[int, int], snap_compare: Any,
                        monkeypatch: pytest.MonkeyPatch) -> None:
    freeze_time(monkeypatch)
    app, run_before = SCENES["timeline"]()
    assert snap_compare(app, terminal_size=size, run_before=run_before)


def test_inbox_opened_on_a_narrow_screen(snap_compare: Any,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    freeze_time(monkeypatch)
    app, run_before = inbox_open_scene()
    assert snap_compare(app, terminal_size=SIZES["80x24"], run_before=run_before)


@pytest.mark.parametrize(("size", "open_tree"), [("80x24", False), ("80x24", True),
                                                  ("160x50", False)])
def test_twenty_agents(size: str, open_tree: bool, snap_compare: Any,
                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The tree with 20 root agents and sub-agents in every state, three marked, four
    needing the person (the count leads the key bar); at 80x24 the tree is folded unless
    opened with its key."""
    freeze_time(monkeypatch)
    app, run_before = fleet_scene(open_tree)
    width, height = (160, 50) if size == "160x50" else SIZES[size]
    assert snap_compare(app, terminal_size=(width, height), run_before=run_before)
