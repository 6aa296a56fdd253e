"""What a typed key waits for before it is on the screen, and what else a frame draws.

With 20 agents streaming (benchmarks/bench_keys.py) a key waited for the screen's next
frame, and that frame first laid out the screen and drew everything that had changed: a
reply, agent rows, the whole inbox. These check that the composer's change is painted on
its own, at once, and that the panes that change while agents stream draw only what
changed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from dsh_tui.llm.scripted import hang

from .conftest import SIZE, add_agent, idle, make_app, msg, screen_text, settle, wait_until, world
from .test_repaints import CallCounter, line_counter, reflow_counter


class Frames:
    """Records every frame the app hands to the terminal (`App._display`): whether the
    screen's own update made it (`Screen._compositor_refresh`), whether the composer had
    drawn `want` by then, and how many lines of the agent tree had been drawn."""

    def __init__(self, app: Any, want: str) -> None:
        self.want = want
        self.in_update = False
        self.drawn = False
        self.sent: list[tuple[bool, bool, int]] = []
        screen, composer = app.screen, app.main.composer
        self.tree_lines = line_counter(app.main.agent_tree)
        refresh, display, render_line = screen._compositor_refresh, app._display, \
            composer.render_line

        def screen_update() -> None:
            self.in_update = True
            try:
                refresh()
            finally:
                self.in_update = False

        def sent(screen: Any, update: Any) -> None:
            display(screen, update)
            if update is not None:
                self.sent.append((self.in_update, self.drawn, self.tree_lines.count))

        def drawn(y: int) -> Any:
            strip = render_line(y)
            self.drawn = self.drawn or self.want in strip.text
            return strip

        screen._compositor_refresh = screen_update
        app._display = sent
        composer.render_line = drawn

    def first_with_key(self) -> tuple[bool, bool, int]:
        return next(frame for frame in self.sent if frame[1])


@asynccontextmanager
async def typing_in_the_composer() -> AsyncIterator[tuple[Any, Any]]:
    """An app with one idle agent, the composer focused and everything settled."""
    ctx, _ = world()
    await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.main.composer.focus()
        await settle(pilot)
        yield app, pilot


async def test_a_typed_key_is_painted_at_once_not_behind_the_screens_next_frame() -> None:
    async with typing_in_the_composer() as (app, pilot):
        frames = Frames(app, "q")
        composer = app.main.composer
        edit = composer.edit

        def edit_while_the_tree_waits(change: Any) -> Any:
            app.main.agent_tree.refresh()  # other work waits: every line of the tree
            return edit(change)

        composer.edit = edit_while_the_tree_waits  # type: ignore[method-assign]
        await pilot.press("q")
        await wait_until(pilot, lambda: any(frame[1] for frame in frames.sent))
        in_update, _, tree_lines = frames.first_with_key()
        assert not in_update  # painted on its own, not by the screen's update
        assert tree_lines == 0  # the tree was left to that update
        await settle(pilot)
        assert frames.tree_lines.count > 0
        assert composer.text == "q"
        assert composer.key_paint.painted == 1


async def test_what_typing_held_too_long_runs_right_after_the_keys_own_paint() -> None:
    """Streamed text held back while the person types, once it has waited its longest,
    is shown right after the next key is painted, not after the screen's next frame: the
    layout and drawing it brings are done before the key after it comes."""
    async with typing_in_the_composer() as (app, pilot):
        composer = app.main.composer
        frames = Frames(app, "z")
        ran: list[list[tuple[bool, bool, int]]] = []
        app.keys_first.typed()
        assert app.keys_first.defer(lambda: ran.append(list(frames.sent)))
        app.keys_first._held_since = float("-inf")  # it has waited long enough
        edit = composer.edit

        def edit_while_the_tree_waits(change: Any) -> Any:
            app.main.agent_tree.refresh()  # the screen has a frame to make
            return edit(change)

        composer.edit = edit_while_the_tree_waits  # type: ignore[method-assign]
        await pilot.press("z")
        await wait_until(pilot, lambda: bool(ran))
        (sent,) = ran
        assert sent and sent[-1] == (False, True, 0)  # the key's own paint came just before
        await settle(pilot)
        assert app.keys_first.held == 0


async def test_keys_closer_than_a_frame_are_painted_by_the_screens_update() -> None:
    async with typing_in_the_composer() as (app, pilot):
        composer = app.main.composer
        composer.key_paint._clock = lambda: 100.0  # every key in the same instant
        await pilot.press("a", "b", "c")
        await settle(pilot)
        assert composer.key_paint.painted == 1
        assert composer.text == "abc"
        assert "abc" in screen_text(app)


async def test_typing_applies_the_css_to_the_composers_theme_only_when_the_css_changes() -> None:
    async with typing_in_the_composer() as (app, pilot):
        composer = app.main.composer
        applied = CallCounter(composer._theme, "apply_css")
        await pilot.press(*"hello world")
        await settle(pilot)
        assert "hello world" in screen_text(app)
        assert applied.count == 0
        app.theme = "textual-light"
        await settle(pilot)
        theme = composer._theme
        assert composer._styled is not None and composer._styled[0] is theme
        assert theme.base_style == composer.rich_style  # the light theme's colours


async def test_a_queued_message_redraws_only_the_inbox_lines_that_changed() -> None:
    ctx, _ = world([hang()])
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        agent.inbox.append("next-turn", msg("the first one", "q1"))
        await settle(pilot)
        inbox = app.main.inbox
        assert inbox.highlighted_id == "msg:q1"
        lines, layouts = line_counter(inbox), reflow_counter(app.screen)
        agent.inbox.append("next-turn", msg("the second one", "q2"))
        await settle(pilot)
        assert "the second one" in screen_text(app)
        # the NEXT TURN header, the new item's two lines, the title's row of the border
        assert lines.count <= 4
        assert layouts.count == 0
        assert inbox.highlighted_id == "msg:q1"

        # The highlighted item leaves: the first item left is highlighted.
        agent.inbox.remove("q1")
        await settle(pilot)
        assert inbox.highlighted_id == "msg:q2"
        assert "✗ removed" in screen_text(app)
        # What the changed lines drew is what drawing the whole pane again draws.
        shown = screen_text(app)
        inbox._clear_caches()
        await settle(pilot)
        assert screen_text(app) == shown
        agent.cancel()
        await idle(pilot, agent)


async def test_a_change_of_an_owners_row_redraws_that_row_not_its_sub_agents() -> None:
    ctx, _ = world()
    planner = await add_agent(ctx, "planner", "planner")
    for n in range(3):
        await add_agent(ctx, f"helper-{n}", f"helper {n}", owner=planner)
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        tree = app.main.agent_tree
        assert len(tree.nodes) == 4
        lines = line_counter(tree)
        planner.inbox.append("next-turn", msg("later", "q1"))
        await settle(pilot)
        assert "planner ↵1" in screen_text(app)
        assert lines.count == 1
        for n in range(3):
            assert f"helper {n}" in screen_text(app)
