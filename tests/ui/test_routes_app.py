"""Routes in the app (issue 13): ctrl+n and spawn ask which route the new agent takes, the
route shows on the agent, and the header's token figures are honest."""

from __future__ import annotations

from typing import Any

from dsh_tui.compose import build_context
from dsh_tui.harness import AgentOptions, CreateAgentOptions
from dsh_tui.llm.scripted import Reply, ScriptedModel, max_tokens, text
from dsh_tui.ui.screens.route import RouteScreen
from dsh_tui.ui.state.config import UiConfig
from dsh_tui.ui.state.routes import Route
from dsh_tui.ui.state.transcript import TranscriptModel, token_figures

from .conftest import SIZE, add_agent, idle, make_app, screen_text, settle, wait_until

FAST = Route("fast", "openai-compatible", model="small", base_url="http://127.0.0.1:9/v1",
             max_tokens=300, temperature=0.2)
DEEP = Route("deep", "openai-compatible", model="big", base_url="http://127.0.0.1:9/v1",
             reasoning_effort="high")


def two_route_world(*scripts: list[Any]) -> tuple[Any, dict[str, ScriptedModel]]:
    models = {"fast": ScriptedModel(list(scripts[0]) if scripts else []),
              "deep": ScriptedModel(list(scripts[1]) if len(scripts) > 1 else [])}
    ctx = build_context(providers=models, tools=[], retry=False, system_prompt=None)
    return ctx, models


def config() -> UiConfig:
    return UiConfig(route="fast", routes={"fast": FAST, "deep": DEEP})


async def take_offered_name(pilot: Any) -> None:
    """ctrl+n and spawning ask for a name first; enter takes the one offered."""
    from dsh_tui.ui.screens.name import NameScreen

    await wait_until(pilot, lambda: isinstance(pilot.app.screen, NameScreen))
    await pilot.press("enter")


async def test_ctrl_n_and_spawn_ask_for_the_route_and_the_agent_shows_it() -> None:
    ctx, models = two_route_world([], [text("deep answer")])
    await ctx.agents.create(CreateAgentOptions(session_id="planner",
                                               agent_options=FAST.agent_options()))
    app = make_app(ctx, config())
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+n")
        await take_offered_name(pilot)  # the name first (workspaces), then the route
        await wait_until(pilot, lambda: isinstance(app.screen, RouteScreen))
        shown = screen_text(app)
        assert "fast · small · openai-compatible · max_tokens 300 · temperature 0.2" in shown
        assert "deep · big · openai-compatible · effort high" in shown
        await pilot.press("down", "enter")  # the selected agent's route is preselected
        await wait_until(pilot, lambda: len(ctx.agents.roots()) == 2)
        await app.workers.wait_for_complete()
        await settle(pilot)
        new = next(a for a in ctx.agents.roots() if a.id != "planner")
        assert (new.options.provider, new.options.model, new.options.reasoning_effort) == (
            "deep", "big", "high")
        assert app.main.selected_id == new.id
        assert "→ agent 2 (deep · big)" in app.main.composer.border_title
        row = app.main.agent_tree.row_text(new.id)
        assert row.startswith(" ○ agent 2 ") and row.endswith(" deep · big"), row
        await pilot.press(*"go deep", "enter")
        await idle(pilot, new)
        assert models["deep"].requests[0]["reasoningEffort"] == "high"
        assert not models["fast"].requests
        # Spawning from the new agent preselects its route; escape creates nothing.
        app.main.agent_tree.focus()
        await pilot.press("ctrl+k")
        await take_offered_name(pilot)
        await wait_until(pilot, lambda: isinstance(app.screen, RouteScreen))
        assert app.screen.query_one("OptionList").highlighted == 1
        await pilot.press("escape")
        await settle(pilot)
        assert not ctx.agents.children_of(new)
        await pilot.press("ctrl+k")
        await take_offered_name(pilot)
        await wait_until(pilot, lambda: isinstance(app.screen, RouteScreen))
        await pilot.press("up", "enter")
        await wait_until(pilot, lambda: len(ctx.agents.children_of(new)) == 1)
        child = ctx.agents.children_of(new)[0]
        assert (child.options.provider, child.options.max_tokens, child.options.temperature) \
            == ("fast", 300, 0.2)


async def test_one_route_asks_nothing_and_shows_no_route() -> None:
    ctx, _ = two_route_world()
    await add_agent(ctx, "planner", "planner")
    app = make_app(ctx, UiConfig(route="fast", routes={"fast": FAST}))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+n")
        await take_offered_name(pilot)
        await wait_until(pilot, lambda: len(ctx.agents.roots()) == 2)
        await app.workers.wait_for_complete()
        new = next(a for a in ctx.agents.roots() if a.id != "planner")
        assert new.options.provider == "fast" and new.options.max_tokens == 300
        await settle(pilot)
        assert "(fast" not in app.main.composer.border_title


def usage_reply(answer: str, fresh: int, cached: int, out: int) -> Reply:
    r = text(answer)
    r.usage = {"inputTokens": fresh, "outputTokens": out, "cacheReadTokens": cached}
    return r


async def test_header_shows_the_last_context_and_cumulative_figures_apart() -> None:
    # Three requests whose prompts grow to 1,500 tokens, most of each served from the
    # cache: summing cached input would claim 3.4k+ of context; the server holds 1.5k.
    script = [usage_reply("one", 500, 0, 40), usage_reply("two", 150, 850, 40),
              usage_reply("three", 100, 1400, 50)]
    ctx = build_context(providers={"mock": ScriptedModel(script)}, tools=[], retry=False,
                        system_prompt=None)
    handle = await ctx.agents.create(CreateAgentOptions(
        session_id="a", agent_options=AgentOptions(provider="mock", model="m")))
    agent = handle.agent
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        for turn, words in enumerate(("first", "second", "third"), 1):
            await pilot.press(*words, "enter")
            await wait_until(pilot, lambda t=turn: agent.status == "idle" and
                             agent.current_turn == t, rounds=1000)
            await idle(pilot, agent)
        assert agent.current_turn == 3
        title = app.main.transcript.border_title
        assert "ctx 1.5k · in 750 · out 130 · cached 2.2k" in title, title
    model = TranscriptModel()
    model.apply_all(agent.session.events)
    assert (model.context_tokens, model.input_tokens, model.output_tokens,
            model.cached_tokens) == (1500, 750, 130, 2250)


async def test_a_full_context_reads_as_such_not_as_the_output_limit() -> None:
    cut = max_tokens(text("and so"))
    cut.finish = {"kind": "max-tokens", "limit": "context"}
    ctx = build_context(providers={"mock": ScriptedModel([cut, max_tokens(text("capped"))])},
                        tools=[], retry=False, system_prompt=None)
    handle = await ctx.agents.create(CreateAgentOptions(
        session_id="a", agent_options=AgentOptions(provider="mock", model="m")))
    agent = handle.agent
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        for turn, words in enumerate(("ramble", "again"), 1):
            await pilot.press(*words, "enter")
            await wait_until(pilot, lambda t=turn: agent.status == "idle" and
                             agent.current_turn == t, rounds=1000)
            await idle(pilot, agent)
        shown = screen_text(app)
    assert "stopped: the context window is full (context-full)" in shown
    assert "stopped at the output limit (max-tokens)" in shown  # the second, a real cap
    ends = [e.data["reason"] for e in agent.session.events if e.type == "turn/end"]
    assert ends == [{"kind": "max-tokens", "limit": "context"}, {"kind": "max-tokens"}]


def test_token_figures_with_a_known_window() -> None:
    model = TranscriptModel()
    model.context_tokens, model.context_window = 1500, 1_000_000
    model.input_tokens, model.output_tokens = 2000, 300
    assert token_figures(model) == "ctx 1.5k/1.0M · in 2.0k · out 300"
    assert token_figures(TranscriptModel()) == ""
