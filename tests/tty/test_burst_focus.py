"""Keys in order across a change of focus (issue 10, and issue 13's dialogs): keys that come
in the same read as a key that opens a dialog, closes one or moves the focus go where that
key sent the focus, as they would if typed one at a time. Textual forwards every key of a
read to the widget that had the focus when the read was parsed; the app holds the rest of a
burst until each key's effect has settled (`ui/keygate.py`)."""

from __future__ import annotations

from collections.abc import Callable

from .terminal import (
    Terminal,
    accepted_texts,
    burst,
    events_of,
    focus_pane,
    key,
    queue_behind_a_turn,
)
from .test_routes import CONFIG


def test_one_burst_names_the_agent_and_picks_the_second_route(
        terminal: Callable[..., Terminal]) -> None:
    term = terminal(cols=80, rows=24, config=CONFIG)
    term.wait_for("→ main (quick · demo)")
    # ctrl+n opens the name dialog, enter takes the offered name and opens the route dialog,
    # down enter picks the second route: four keys, one read, two dialogs.
    term.write(burst(key("ctrl+n"), key("enter"), key("down"), key("enter")))
    term.wait_for("→ agent 2 (local · qwen3-8b)")
    term.wait_gone("Route for")
    assert "Name the new agent" not in term.text()


def test_text_typed_with_the_key_that_opens_search_is_searched_for(
        terminal: Callable[..., Terminal]) -> None:
    term = terminal(cols=80, rows=24, config="demo_speed = 0\n")
    term.write(burst("find the needle", key("enter")))
    term.wait_for("completed", timeout=30)
    term.write(burst(key("ctrl+f"), "needle"))
    term.wait_until(lambda: "│ needle" in term.text() and "of " in term.text(),
                    "the search bar to hold the query and count its matches")
    # The search bar is drawn over the composer: escape uncovers it, still empty. (Escape
    # alone: a terminal sends alt+t as ESC t, so ESC and text in one read are not escape.)
    term.write(key("escape"))
    term.wait_for("Message the selected agent")  # the composer stayed empty
    term.write(burst("typed after the search", key("enter")))
    term.wait_until(lambda: any("typed after the search" in accepted_texts(records)
                                for records in term.sessions().values()),
                    "the text typed after the search to be sent as it was typed")
    term.press("ctrl+q")
    assert term.wait_exit() == 0
    sent = [m["content"][0]["text"] for records in term.sessions().values()
            for m in events_of(records, "user/message")]
    assert "find the needle" in sent


def test_one_burst_opens_the_editor_edits_saves_and_types_on(
        terminal: Callable[..., Terminal]) -> None:
    term = terminal(cols=120, rows=30, config="demo_speed = 0.005\n")
    queue_behind_a_turn(term, "alpha", "beta")
    focus_pane(term, "inbox")
    # enter opens the edit dialog on "alpha", the text goes into it, ctrl+s saves and closes
    # it, and what follows is prose typed in the inbox: it lands in the composer.
    term.write(burst(key("enter"), " EDITED", key("ctrl+s"), "after the dialog"))
    term.wait_for("│ after the dialog")
    term.wait_for("alpha EDITED")
    assert "Edit queued message" not in term.text()
    term.press("ctrl+q")
    assert term.wait_exit() == 0
    (records,) = term.sessions().values()
    assert "alpha EDITED" in accepted_texts(records)  # the edit's splice, same id
