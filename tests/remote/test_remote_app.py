"""The same app over an attached runtime (Pilot): remote sessions in the tree, a reply that
streams, a queued item edited from the inbox pane and stored by the runtime, a gesture
the runtime lacks greyed out and explained, and the link's state in the agents title."""

from __future__ import annotations

from typing import Any

import pytest
from remote_support import attached, describe, events_of, new_agent, texts, wait_for

from dsh_tui.ui.app import DshApp
from dsh_tui.ui.keys import bound_keys
from dsh_tui.ui.screens.edit import EditScreen

SIZE = (150, 42)


@pytest.fixture(autouse=True)
def _isolated_config(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DSH_TUI_CONFIG", str(tmp_path / "no-user-config.toml"))


def shown(app: DshApp) -> str:
    from rich.console import Console

    console = Console(record=True, width=app.size.width, height=app.size.height,
                      color_system=None, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(app.screen._compositor.render_update(full=True))
    return console.export_text()


async def test_the_app_drives_remote_sessions_and_edits_a_remote_inbox(runtime) -> None:
    world = await attached(runtime)
    agent = await new_agent(world, "app")
    other = await new_agent(world, "app-other")
    app = DshApp(world.ctx)
    try:
        async with app.run_test(size=SIZE) as pilot:
            main = app.main

            async def until(check: Any, what: str, timeout: float = 30) -> Any:
                async def paused() -> None:
                    app.bridge.flush()
                    await pilot.pause(0.02)

                return await wait_for(lambda: check(), what, timeout, pump=paused,
                                      state=lambda: (describe(agent),
                                                     [n.text for n in world.notices]))

            await until(lambda: {agent.id, other.id} <= set(main.agent_tree.listed),
                        "both remote sessions in the tree")
            assert f"Agents · {world.connection.where}" in shown(app)
            main.select_agent(agent.id)
            main.composer.focus()
            await pilot.press(*"first [words=150] [pause=0.1]", "enter")
            await until(lambda: agent.status == "running", "the remote agent to run")
            await until(lambda: "w3," in shown(app), "the reply to stream on screen")
            await pilot.press(*"queued one", "enter")
            await until(lambda: texts(agent.inbox.runtime_pending("next-turn")) == ["queued one"],
                        "the follow-up queued in the runtime")
            queued = agent.inbox.runtime_pending("next-turn")[0]
            main.inbox.focus()
            main.inbox.highlight_message(queued.id)
            await pilot.pause()
            await pilot.press("enter")
            assert isinstance(app.screen, EditScreen)
            await pilot.press(*" v2", "ctrl+s")
            await until(lambda: texts(agent.inbox.runtime_pending("next-turn")) ==
                        ["queued one v2"], "the runtime to store the edit")
            edit = [e.data for e in events_of(agent, "agent/inbox/spliced")][-1]
            assert edit["inserted"][0]["id"] == queued.id and edit["removedCount"] == 1
            await until(lambda: "queued one v2" in shown(app), "the edited item on screen")

            # What the runtime cannot do: greyed out, and pressed, it says why.
            main.composer.focus()
            await pilot.press(*"some context")
            assert main.check_action("inject", ()) is None
            await pilot.press(bound_keys(app, "inject")[0])
            await until(lambda: any("Inject is not available for" in n.message and
                                    "without waking" in n.message for n in app._notifications),
                        "the refusal line")
            assert main.composer.text == "some context"  # nothing typed is lost
            assert main.check_action("steer", ()) is True

            # The link drops: the agents title says so, then it is back.
            await world.mux.drop()
            await until(lambda: "reconnecting" in shown(app) or world.mux.reconnects,
                        "the reconnecting title")
            await until(lambda: world.connection.state == "connected" and
                        "reconnecting" not in shown(app), "the link back")
            main.select_agent(agent.id)
            agent.cancel(None, keep_inbox=True)
            await until(lambda: agent.status == "idle", "the stop")
    finally:
        await world.close()
