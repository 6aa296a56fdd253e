"""Issue 25 §3: every label (model, route, title, id, tool name) reaches the terminal through
the one sanitiser, whichever way it came in: a config's `model = "<ESC>…"`, an agent made
with a hostile model, or a recorded log's `source.model` / `request/header` opened
read-only. Judged on the bytes the compositor writes to a terminal."""

from __future__ import annotations

from typing import Any

import pytest

from dsh_tui.harness import new_world
from dsh_tui.harness.readonly import register_log_agent
from dsh_tui.harness.session import SessionEvent
from dsh_tui.ui.state.agent_view import AgentView
from dsh_tui.ui.state.config import UiConfig
from dsh_tui.ui.state.routes import Route

from .conftest import SIZE, make_app, settle, world
from .hostile_corpus import HOSTILE, PAYLOADS, planted_in, unsafe_in
from .test_hostile_text import assert_clean, rendered_bytes


def _tree_rows(app: Any) -> list[str]:
    """The tree's rows and the titles that name the selected agent and its route: where a
    model or route label is shown (a row names its route only while more than one is in
    use and the pane has room; the composer's title names it whenever routes are offered)."""
    main = app.main
    tree = main.agent_tree
    titles = [str(widget.border_title or "") for widget in (main.transcript, main.composer)]
    return [*(tree.row_text(agent_id) for agent_id in tree.listed), *titles]


async def test_a_hostile_model_name_reaches_the_tree_only_as_visible_symbols() -> None:
    from dsh_tui.ui.state.world import create_agent

    ctx, _ = world([])
    handle = await create_agent(ctx, provider="mock", model=f"PWN-MODEL {HOSTILE}",
                                title="plain", session_id="hostile-model")
    # a second model in use: rows name their route and model
    other = await create_agent(ctx, provider="mock", model="plain-model", title="other",
                               session_id="plain-model")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        app.main.select_agent(handle.agent.id)
        await settle(pilot)
        rows = _tree_rows(app)
        for row in rows:
            assert unsafe_in(row, label=True) == [], row
        assert_clean(app, "a hostile model in the tree")
    await other.dispose()
    await handle.dispose()
    await ctx.scope.dispose()


@pytest.mark.parametrize("with_routes", [False, True], ids=["model only", "routes"])
async def test_a_configured_model_and_route_names_are_shown_through_the_sanitiser(
        with_routes: bool) -> None:
    """`model = "\\x1b[2J…"` in the config: the agents made from it show the label safely,
    and so does a route whose name and model are hostile (the route chooser, the tree)."""
    ctx, _ = world([])
    config = UiConfig(provider="mock", model=f"PWN-MODEL {HOSTILE}")
    if not with_routes:  # a second model in use: rows name each agent's model
        from dsh_tui.ui.state.world import create_agent

        await create_agent(ctx, provider="mock", model="plain-model", title="other",
                           session_id="plain-model")
    if with_routes:
        hostile_route = Route(name=f"PWN-ROUTE{PAYLOADS['csi']}", provider="mock",
                              model=f"PWN-RMODEL {HOSTILE}")
        config.routes = {hostile_route.name: hostile_route,
                         "mock": Route(name="mock", provider="mock", model="mock")}
    app = make_app(ctx, config)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.main.action_new_agent()
        await settle(pilot)
        if app.screen is not app.main:  # a chooser or a name dialog: take its default
            assert planted_in(rendered_bytes(app)) == [], "the name dialog"
            await pilot.press("enter")
            await settle(pilot)
        if app.screen is not app.main:
            assert_clean(app, "the route chooser")
            await pilot.press("enter")
            await settle(pilot)
        await app.workers.wait_for_complete()
        await settle(pilot)
        rows = _tree_rows(app)
        assert any("PWN" in row for row in rows), rows
        for row in rows:
            assert unsafe_in(row, label=True) == [], row
        assert_clean(app, "an agent on a hostile configured model")
    for agent in ctx.agents.list():
        await ctx.agents.dispose(agent.id)
    await ctx.scope.dispose()


def _hostile_log() -> list[SessionEvent]:
    events: list[SessionEvent] = []

    def add(type_: str, data: Any) -> None:
        events.append(SessionEvent(type_, len(events), 1_000 + len(events), data))

    add("turn/start", {"turn": 1})
    add("step/start", {"turn": 1, "step": 1})
    add("request/header", {"turn": 1, "step": 1, "header": {
        "config": {"provider": f"PWN-PROV{PAYLOADS['osc0']}", "model": f"PWN-HDR {HOSTILE}"}}})
    add("assistant/message", {"turn": 1, "step": 1, "message": {
        "id": "a1", "role": "assistant", "content": [{"type": "text", "text": "an answer"}],
        "source": {"kind": "model", "provider": "p",
                   "model": "PWN-SRC \x1b[2J\x1b[6n" + HOSTILE}}})
    add("step/end", {"turn": 1, "step": 1})
    add("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    return events


async def test_a_recorded_logs_model_label_is_shown_safely_under_view() -> None:
    ctx = new_world(read_only=True)
    register_log_agent(ctx, {"id": "crafted\x1b]0;PWN\x07", "version": 0, "createdAt": 0},
                       _hostile_log())
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        rows = _tree_rows(app)
        assert any("PWN" in row for row in rows), rows  # the crafted id, as a label
        for row in rows:
            assert unsafe_in(row, label=True) == [], row
        data = rendered_bytes(app)
        assert b"\x1b[2J" not in data and b"\x1b[6n" not in data
        assert_clean(app, "dsh-tui view of a crafted log")


@pytest.mark.parametrize("name", sorted(PAYLOADS))
def test_every_label_property_of_a_view_is_safe(name: str) -> None:
    ctx = new_world(read_only=True)
    payload = PAYLOADS[name]
    agent = register_log_agent(ctx, {"id": f"id{payload}", "version": 0, "createdAt": 0},
                               [SessionEvent("assistant/message", 0, 0, {
                                   "turn": 1, "step": 1, "message": {
                                       "id": "a", "role": "assistant", "content": [],
                                       "source": {"kind": "model", "model": f"m{payload}"}}})])
    view = AgentView(agent)
    view.catch_up()
    for label in (view.name, view.model, view.route_label):
        assert unsafe_in(label, label=True) == [], (name, label)


def test_a_lone_surrogate_from_a_non_utf8_path_is_shown_as_a_mark() -> None:
    from dsh_tui.harness.safe_text import visible, visible_label

    path = "/home/caf\udce9/\udcff"  # bytes 0xE9 and 0xFF as Python decodes a path
    for shown in (visible(path), visible_label(path)):
        assert shown == "/home/caf\ufffd/\ufffd"
        shown.encode("utf-8")  # a terminal can be sent it
