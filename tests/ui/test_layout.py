"""The layout fits the terminal: 80x24 and 60x20 give the transcript the width, dialogs keep
their text and buttons on screen, very wide screens keep prose at a readable measure."""

from __future__ import annotations

from typing import Any

from dsh_tui.llm.scripted import hang, text

from .conftest import add_agent, idle, make_app, msg, screen_text, settle, wait_until, world


def inside(widget: Any, app: Any) -> bool:
    """Wholly on screen: a widget cut by the terminal edge is not."""
    region, screen = widget.region, app.screen.region
    return region.width > 0 and region.height > 0 and screen.contains_region(region)


async def test_80x24_gives_the_transcript_the_width_and_the_panes_become_toggles() -> None:
    ctx, _model = world([hang("streaming into a narrow terminal")])
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=(80, 24)) as pilot:
        app.main.select_agent("planner")
        agent.followup(msg("go", "m1"))
        agent.steer(msg("steer it", "s1", "steer"))
        await wait_until(pilot, lambda: "narrow terminal" in screen_text(app))
        await settle(pilot)
        assert not app.main.agent_tree.display and not app.main.inbox.display
        assert app.main.transcript.region.width >= 76  # was 6 with fixed 34 + 40 side panes
        assert "inbox ⚑1 ↵0 (^o)" in screen_text(app)  # the folded inbox stays in sight
        await pilot.press("ctrl+o")
        await settle(pilot)
        assert app.main.inbox.display and app.focused is app.main.inbox and inside(app.main.inbox, app)
        assert "steer it" in screen_text(app)
        assert app.main.transcript.region.width >= 30
        await pilot.press("ctrl+b")  # one side pane at a time when narrow
        await settle(pilot)
        assert app.main.agent_tree.display and not app.main.inbox.display and app.focused is app.main.agent_tree
        await pilot.press("f9")  # zoom: both folded, focus back in the composer
        await settle(pilot)
        assert not app.main.agent_tree.display and not app.main.inbox.display
        assert app.focused is app.main.composer
        agent.cancel(None, keep_inbox=True)
        await idle(pilot, agent)


async def test_a_shrinking_terminal_never_leaves_focus_in_a_hidden_pane() -> None:
    ctx, _model = world()
    await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=(150, 40)) as pilot:
        app.main.select_agent("planner")
        app.main.inbox.focus()
        await settle(pilot)
        assert app.main.inbox.display
        await pilot.resize_terminal(80, 24)
        await settle(pilot)
        await wait_until(pilot, lambda: app.focused is app.main.composer)
        assert not app.main.inbox.display


async def test_dialogs_keep_their_text_and_buttons_at_60x20() -> None:
    ctx, _model = world()
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=(60, 20)) as pilot:
        app.main.select_agent("planner")
        agent.inbox.append("next-turn", msg("a queued follow-up", "q1"))
        await settle(pilot)
        await pilot.press("ctrl+o")  # the inbox is a toggle here
        await settle(pilot)
        assert app.focused is app.main.inbox
        await pilot.press("enter")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "EditScreen")
        await settle(pilot)
        for selector in ("#edit-text", "#save", "#cancel"):
            assert inside(app.screen.query_one(selector), app), selector
        await pilot.press("escape")
        await settle(pilot)
        assert app.focused is app.main.inbox  # after a dialog, focus is where it was
        await pilot.press("ctrl+b")
        await settle(pilot)
        assert app.focused is app.main.agent_tree
        await pilot.press("delete")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "ConfirmScreen")
        await settle(pilot)
        assert "Dispose planner?" in screen_text(app)
        for button in app.screen.query("Button"):
            assert inside(button, app), button.id
        await pilot.press("escape")
        await settle(pilot)
        assert app.focused is app.main.agent_tree
        await pilot.press("f1")
        await settle(pilot)
        shown = screen_text(app)
        assert "Send as follow-up" in shown and "Queue the composer text" in shown


async def test_prose_keeps_a_readable_measure_on_a_very_wide_screen() -> None:
    ctx, _model = world([text("word " * 400)])
    agent = await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=(250, 60)) as pilot:
        app.main.select_agent("planner")
        agent.followup(msg("a long answer please", "m1"))
        await idle(pilot, agent)
        await settle(pilot)
        assert app.main.agent_tree.display and app.main.inbox.display
        transcript = app.main.transcript
        (reply,) = [item.index for item in transcript.lines.items if item.kind == "text"]
        rows = transcript.item_rows(reply)
        assert rows and all(len(row.text) <= 104 - 3 for row in rows)  # (frame: ▌ and padding)
        assert transcript.region.width > 140  # the space is there; the measure is kept


async def test_a_tree_row_too_long_for_its_pane_ends_in_an_ellipsis() -> None:
    ctx, _model = world()
    await add_agent(ctx, "long", "an agent whose title is far too long for the tree pane")
    app = make_app(ctx)
    async with app.run_test(size=(120, 30)) as pilot:
        app.main.select_agent("long")
        await settle(pilot)
        row = next(line for line in screen_text(app).splitlines()
                   if line.startswith("│") and "an agent whose" in line)
        tree_part = row.split("││")[0]
        assert tree_part.rstrip(" │").endswith("…"), row


async def test_the_key_bar_drops_what_does_not_fit_whole_and_says_so() -> None:
    """At 80 columns Textual's footer cut its last key mid-word ("^n New a") and left out
    f1 Help; the key bar keeps whole keys, then "…" and the help key, and resizes with the
    terminal."""
    from dsh_tui.ui.widgets.key_bar import KeyBar

    ctx, _model = world()
    await add_agent(ctx, "planner", "planner")
    app = make_app(ctx)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        bar = app.main.query_one(KeyBar)

        for size in ((80, 24), (60, 20)):
            await pilot.resize_terminal(*size)
            await settle(pilot)
            line = screen_text(app).splitlines()[-1]
            assert "… f1 Help" in line and bar.cut, line
            assert line.rstrip().endswith("▏^p palette"), line  # docked at the right
            for key in bar.shown:  # every key shown is shown whole, in order
                assert f"{key.key_display} {key.description}".strip() in line, (key, line)
            assert [k.action for k in bar.shown] == [
                k.action for k in bar.keys if k in bar.shown]
        await pilot.resize_terminal(200, 30)
        await settle(pilot)
        line = screen_text(app).splitlines()[-1]
        assert "…" not in line and "f2 Events" in line and "f1 Help" in line, line
        assert bar.shown == bar.keys and not bar.cut


def test_every_stylesheet_under_ui_is_loaded_by_the_app_or_its_screen() -> None:
    """A .tcss file nothing names would be ignored without a word: each widget's is in the
    app's CSS_PATH (WIDGET_CSS), each dialog's in its screen's CSS_PATH, and the main
    screen's in both (Textual does not load a default screen's own CSS_PATH)."""
    import importlib
    import pkgutil
    from pathlib import Path

    from textual.screen import Screen

    import dsh_tui.ui as ui
    from dsh_tui.ui.app import DshApp
    from dsh_tui.ui.screens.main import MainScreen

    root = Path(ui.__file__).parent
    by_app = {Path(path) for path in DshApp.CSS_PATH}
    by_screens: set[Path] = set()
    for module in pkgutil.iter_modules([str(root / "screens")]):
        for value in vars(importlib.import_module(f"dsh_tui.ui.screens.{module.name}")).values():
            if isinstance(value, type) and issubclass(value, Screen) and value.CSS_PATH:
                by_screens.add(Path(value.CSS_PATH))
    assert set(root.rglob("*.tcss")) == by_app | by_screens
    assert Path(MainScreen.CSS_PATH) in by_app
    assert all(path.is_file() for path in by_app | by_screens)
