"""The tty layer itself: the installed binary starts in a pty, shows its screen, takes a
burst, writes its session, quits on ctrl+q and is measured while idle."""

from __future__ import annotations

from collections.abc import Callable

from .terminal import Terminal, burst, events_of, key

SLOW = "demo_speed = 0.05\n"  # the demo model crawls: a turn stays running while we act


def test_the_installed_app_starts_takes_a_message_and_quits(
        terminal: Callable[..., Terminal]) -> None:
    term = terminal(cols=100, rows=30, config=SLOW)
    # at 100 columns the inbox folds (the transcript keeps 60); its title keeps the counts
    assert "Agents" in term.text() and "inbox ⚑0 ↵0 (^o)" in term.text()
    term.write(burst("hello from a pty", key("enter")))
    term.wait_for("hello from a pty")
    term.press("ctrl+q")
    assert term.wait_exit() == 0
    (records,) = term.sessions().values()
    sent = [m["content"][0]["text"] for m in events_of(records, "user/message")]
    assert sent == ["hello from a pty"]
    assert b"\x1b[?1049h" in term.raw  # the app took the alternate screen, and we saw it


def test_an_idle_app_is_still_and_uses_almost_no_cpu(terminal: Callable[..., Terminal]
                                                    ) -> None:
    term = terminal(cols=80, rows=24)
    assert term.cpu_seconds() > 0  # starting Python and Textual costs CPU: /proc was read
    # The footer lists the focused widget's keys once they are known: on a loaded machine
    # that is up to a second after the first frame, longer than settle()'s quiet time.
    term.wait_for("^p palette")
    term.settle()
    seen, used = term.watch(1.5)
    assert len(seen) == 1, "the screen of an idle app changed"
    assert used < 0.15, f"an idle app used {used:.2f} s of CPU in 1.5 s"
