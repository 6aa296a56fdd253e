"""Keys apply in the order they arrive (issue 10), however many come in one read: a paste,
a macro, key repeat or a fast typist. Each burst below is one `os.write` to the pty."""

from __future__ import annotations

from collections.abc import Callable

from .terminal import Terminal, accepted_texts, burst, events_of, key

SLOW = "demo_speed = 0.05\n"


def _sent(term: Terminal) -> list[str]:
    (records,) = term.sessions().values()
    return [m["content"][0]["text"] for m in events_of(records, "user/message")] + \
        accepted_texts(records)


def test_two_messages_and_a_newline_in_one_burst_arrive_in_order(
        terminal: Callable[..., Terminal]) -> None:
    term = terminal(cols=100, rows=30, config=SLOW)
    term.write(burst("msgONE", key("enter"), "msgTWO", key("enter"),
                     "one", key("ctrl+j"), "two", key("enter")))
    term.wait_for("↵2")  # msgONE runs; msgTWO and the two-line one wait in the inbox
    term.press("ctrl+q")
    assert term.wait_exit() == 0
    sent = _sent(term)
    assert "msgONE" in sent and "msgTWO" in sent and "one\ntwo" in sent, sent
    assert sent.index("msgONE") < sent.index("msgTWO") < sent.index("one\ntwo")
