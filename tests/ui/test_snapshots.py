"""SVG snapshots of the main screens (pytest-textual-snapshot).

Deterministic by construction (see `scenes.py`): fixed terminal size, ids and
clock, no animation or cursor blink, notifications cleared. Regenerate after an
intended visual change with `pytest tests/ui/test_snapshots.py --snapshot-update`.
"""

from __future__ import annotations

from typing import Any

import pytest

from .scenes import SCENES, SIZE, freeze_time


@pytest.mark.parametrize("name", list(SCENES))
def test_scene(name: str, snap_compare: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    freeze_time(monkeypatch)
    app, run_before = SCENES[name]()
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
