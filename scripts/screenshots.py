#!/usr/bin/env python3
"""Regenerate `screenshots/*.svg` from scripted runs of the app.

    python scripts/screenshots.py            (or: python3 dev.py shots)

Every screen is the same scripted scene the snapshot tests use
(`tests/ui/scenes.py`: fixed ids, fixed clock, no animation), saved with
`app.save_screenshot` inside `App.run_test`, plus `demo.svg`: the embedded demo
model answering a first question, the way a newcomer sees it. The `*-80x24.svg` shots
show the same scenes in an 80x24 terminal (panes folded into toggles).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "screenshots"
sys.path.insert(0, str(ROOT))


SMALL = (80, 24)
"""The classic terminal: side panes folded into toggles, the transcript takes the width."""
SMALL_SHOTS = {"main-80x24": "main-streaming", "inbox-80x24": "main-inbox-open",
               "breakpoint-80x24": "breakpoint", "edit-dialog-80x24": "edit-dialog"}


async def shoot(name: str, size: tuple[int, int] | None = None,
                filename: str | None = None) -> Path:
    import pytest

    from tests.ui.scenes import SCENES, SIZE, freeze_time, inbox_open_scene

    filename = filename or f"{name}.svg"
    with pytest.MonkeyPatch.context() as patch:
        freeze_time(patch)
        app, run_before = (inbox_open_scene() if name == "main-inbox-open" else SCENES[name]())
        async with app.run_test(size=size or SIZE) as pilot:
            await run_before(pilot)
            await pilot.pause()
            app.save_screenshot(filename=filename, path=str(OUT))
    return OUT / filename


async def shoot_demo() -> Path:
    """The real demo model (no pauses): one question, a streamed answer, a sub-agent."""
    import pytest

    from dsh_tui.compose import build_context
    from dsh_tui.llm.demo import DemoModel
    from dsh_tui.ui.app import DshApp
    from dsh_tui.ui.state.world import create_agent
    from tests.ui.scenes import SIZE, freeze_time, settle

    ctx = build_context(providers={"demo": DemoModel(speed=0)}, workspace=str(ROOT))
    app = DshApp(ctx)
    with pytest.MonkeyPatch.context() as patch:
        freeze_time(patch)
        ids = (f"{n:08x}-0000-4000-8000-000000000000" for n in range(0xC0FFEE, 0xC0FFEE + 10**6))
        patch.setattr("dsh_tui.harness.messages.new_id", lambda: next(ids))
        await _demo_run(app, ctx, SIZE, settle, create_agent)
    await ctx.scope.dispose()
    return OUT / "demo.svg"


async def _demo_run(app: Any, ctx: Any, size: tuple[int, int], settle: Any,
                    create_agent: Any) -> None:
    async with app.run_test(size=size) as pilot:
        agent = (await create_agent(ctx, provider="demo", model="demo", title="demo",
                                    session_id="demo")).agent
        await settle(pilot)
        await pilot.press(*"compare two designs for a cache")
        await pilot.press("enter")
        await asyncio.wait_for(agent.when_idle(), 60)
        await pilot.press(*"then write it up as a short design doc")
        await pilot.press("enter")
        await asyncio.wait_for(agent.when_idle(), 60)
        await settle(pilot)
        app.animation_level = "none"
        app.main.composer.cursor_blink = False
        app.clear_notifications()
        await pilot.pause()
        app.save_screenshot(filename="demo.svg", path=str(OUT))


async def main() -> int:
    from tests.ui.scenes import SCENES

    OUT.mkdir(exist_ok=True)
    written = [await shoot(name) for name in SCENES]
    for shot, scene in SMALL_SHOTS.items():
        written.append(await shoot(scene, SMALL, f"{shot}.svg"))
    written.append(await shoot_demo())
    for path in written:
        print(path.relative_to(ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
