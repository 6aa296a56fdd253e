"""The transcript title fitted to its width (dsh_tui/ui/state/titles.py): the parts get
shorter, least needed first, and the agent's name and state stay."""

from __future__ import annotations

from dsh_tui.ui.state.session_rows import cells
from dsh_tui.ui.state.titles import TranscriptTitle

RUNNING = TranscriptTitle(
    name="demo", state=("running · turn 3 step 2", "running · t3 s2", "running"), waited=12,
    inbox=(1, 4), inbox_keys="^o", figures="ctx 1.5k · in 3.0k · out 800")


def test_a_wide_pane_shows_everything() -> None:
    assert RUNNING.fit(200) == (
        "Transcript · demo · running · turn 3 step 2 · waiting for the model… (12s) · "
        "escape stops · inbox ⚑1 ↵4 (^o) · ctx 1.5k · in 3.0k · out 800")
    assert RUNNING.fit(None) == RUNNING.fit(200)  # width not known yet: the full title
    assert RUNNING.fit(0) == RUNNING.fit(200)


def test_each_width_gets_the_longest_title_that_fits_and_keeps_name_state_and_counts() -> None:
    full = cells(RUNNING.fit(None))
    previous = full
    for width in range(full, 20, -1):
        title = RUNNING.fit(width)
        assert cells(title) <= width or title == RUNNING.fit(1), (width, title)
        assert cells(title) <= previous
        previous = cells(title)
        assert title.startswith(("Transcript · demo · ", "demo · ")), title
        assert "running" in title and "⚑1 ↵4" in title, title


def test_the_order_in_which_parts_get_shorter() -> None:
    assert RUNNING.fit(130) == ("Transcript · demo · running · turn 3 step 2 · waiting for the "
                                "model… (12s) · escape stops · inbox ⚑1 ↵4 (^o) · ctx 1.5k")
    assert RUNNING.fit(107) == ("demo · running · turn 3 step 2 · waiting for the model… (12s) · "
                                "escape stops · inbox ⚑1 ↵4 (^o)")
    assert RUNNING.fit(94) == ("demo · running · turn 3 step 2 · waiting 12s · escape stops · "
                               "inbox ⚑1 ↵4 (^o)")
    assert RUNNING.fit(77) == "demo · running · turn 3 step 2 · waiting 12s · escape stops · ⚑1 ↵4 (^o)"
    assert RUNNING.fit(71) == "demo · running · t3 s2 · waiting 12s · escape stops · ⚑1 ↵4 (^o)"
    assert RUNNING.fit(63) == "demo · running · t3 s2 · waiting 12s · ⚑1 ↵4 (^o)"
    assert RUNNING.fit(48) == "demo · running · t3 s2 · waiting 12s · ⚑1 ↵4"
    assert RUNNING.fit(30) == "demo · running · waiting 12s · ⚑1 ↵4"  # the shortest


def test_an_idle_agent_with_the_inbox_pane_shown_is_just_its_name() -> None:
    assert TranscriptTitle(name="demo").fit(40) == "Transcript · demo"
    assert TranscriptTitle(name="demo").fit(10) == "demo"
