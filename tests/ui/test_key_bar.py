"""The key bar is one widget drawing one line (issue 14's read-back lag): a focus move
repaints that line instead of composing, mounting and laying out a widget per key, and
the bar still acts as Textual's footer did: a click presses a key, a greyed key beeps,
hovering shows the key's tooltip. Its look is held by the snapshots (unchanged by it)."""

from __future__ import annotations

from typing import Any

from textual import events

from dsh_tui.harness import new_world
from dsh_tui.harness.readonly import register_log_agent
from dsh_tui.ui.widgets.key_bar import KeyBar

from .conftest import SIZE, long_log, make_app, screen_text, settle, wait_until, world


def _x_of(bar: KeyBar, description: str) -> int:
    """A cell inside the key whose description is `description`."""
    for x in range(bar.size.width):
        key = bar.key_at(x)
        if key is not None and key.description == description:
            return x + 1
    raise AssertionError(f"no key {description!r} in {bar.shown}")


async def test_a_focus_move_repaints_the_bar_and_mounts_nothing() -> None:
    ctx = new_world(read_only=True)
    register_log_agent(ctx, {"id": "long", "version": 0, "createdAt": 0}, long_log(20))
    app = make_app(ctx)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        bar = app.main.query_one(KeyBar)
        mounted: list[Any] = []
        register = app._register

        def counting(parent: Any, *widgets: Any, **kwargs: Any) -> Any:
            mounted.extend(widgets)
            return register(parent, *widgets, **kwargs)

        app._register = counting  # type: ignore[method-assign]
        for _ in range(2):
            renders = bar.renders
            await pilot.press("ctrl+f")
            await wait_until(pilot, lambda: "Older match" in screen_text(app).splitlines()[-1])
            await pilot.press("escape")
            await wait_until(pilot, lambda: "Follow" in screen_text(app).splitlines()[-1])
            await pilot.press("f2")
            await wait_until(pilot, lambda: app.main.event_log.display)
            await pilot.press("f2")
            await settle(pilot)
            assert 4 <= bar.renders - renders <= 12
        assert not bar.children and not [w for w in mounted if bar in w.ancestors_with_self]


async def test_a_click_presses_the_key_and_a_greyed_key_beeps() -> None:
    ctx, _model = world()  # no agent: what acts on one is greyed out
    app = make_app(ctx)
    async with app.run_test(size=(160, 30)) as pilot:
        await settle(pilot)
        bar = app.main.query_one(KeyBar)
        bells: list[int] = []
        app.bell = lambda: bells.append(1)  # type: ignore[method-assign]
        steer = next(key for key in bar.shown if key.description == "Steer")
        assert not steer.enabled
        await pilot.click(KeyBar, offset=(_x_of(bar, "Steer"), 0))
        await settle(pilot)
        assert bells == [1]
        assert not app.main.event_log.display
        await pilot.click(KeyBar, offset=(_x_of(bar, "Events"), 0))
        await wait_until(pilot, lambda: app.main.event_log.display)
        assert bells == [1]


async def test_hovering_a_key_shows_its_tooltip_and_highlights_it() -> None:
    ctx, _model = world()
    app = make_app(ctx)
    async with app.run_test(size=(160, 30)) as pilot:
        await settle(pilot)
        bar = app.main.query_one(KeyBar)
        line = bar.render_line(0)
        x = _x_of(bar, "Events")
        await pilot.hover(KeyBar, offset=(x, 0))
        await settle(pilot)
        key = bar.key_at(x)
        assert key is not None and bar.hovered is key and key.tooltip
        assert bar.tooltip == key.tooltip
        hovered = bar.render_line(0)
        assert hovered.text == line.text and list(hovered) != list(line)
        await pilot.hover("#transcript")
        await settle(pilot)
        assert bar.hovered is None and bar.tooltip is None


async def test_the_bar_follows_the_focus_while_the_app_is_blurred() -> None:
    # A served app starts blurred although its page has the keyboard (the page's "focus"
    # arrives before the web driver's opening blur); the composer takes the focus after.
    # The bar showed the tree's keys until then, and kept them (issue 25).
    ctx, _model = world()
    app = make_app(ctx)
    async with app.run_test(size=(160, 30)) as pilot:
        await settle(pilot)
        bar = app.main.query_one(KeyBar)

        def descriptions() -> set[str]:
            return {key.description for key in bar.shown}

        app.main.agent_tree.focus()
        await wait_until(pilot, lambda: "Spawn child" in descriptions())
        app.post_message(events.AppBlur())
        await wait_until(pilot, lambda: not app.app_focus)
        assert "Spawn child" in descriptions()  # the blur itself changes nothing shown
        app.main.composer.focus()
        await wait_until(pilot, lambda: app.focused is app.main.composer)
        await settle(pilot)
        assert "Follow-up" in descriptions() and "Spawn child" not in descriptions()
        await pilot.press("x")  # a key marks the app focused again (no bindings signal)
        await wait_until(pilot, lambda: app.app_focus)
        assert "Follow-up" in descriptions()
