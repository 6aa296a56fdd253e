"""The private Textual names the app still reads, all of them, behind one version guard.

Each use has a canary in tests/ui/test_textual_compat.py that fails when a Textual
release changes what it relies on. `install()` runs the guard once (the app calls it);
on another Textual line every helper falls back to Textual's own behaviour: keys go
straight through, a key is posted instead of forwarded, the driver is Textual's.
Nothing here replaces a method of a Textual class; the driver is a subclass.
"""

from __future__ import annotations

from collections import deque
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from typing import IO, Any

from textual import events
from textual.driver import Driver
from textual.message import Message
from textual.message_pump import MessagePump
from textual.widget import Widget

from dsh_tui.harness.safe_text import one_line

NOTIFICATION_CHARS = 120
"""A desktop notification's longest text."""

TESTED = "8.2."
"""The Textual release line whose private names are read here (pyproject.toml pins it)."""

_state: dict[str, bool | None] = {"fits": None}


def install() -> bool:
    """Check the installed Textual once; True when the private reads below are on."""
    try:
        found = version("textual").startswith(TESTED)
    except PackageNotFoundError:
        found = False
    _state["fits"] = found
    return found


def fits() -> bool:
    """Whether the installed Textual is the line this module was written against."""
    known = _state["fits"]
    return install() if known is None else known


# -- keys in order (ui/keygate.py) ---------------------------------------------------------
# Upstream: Textual forwards every key of one terminal read to the widget focused when the
# read was parsed (Textualize/textual#1199 is one face of it: enter "bleeds" into a newly
# focused field). The gate needs to know when a key's effects have settled, which Textual
# has no public API for.

def gate_fits(app: Any) -> bool:
    """Are the fields `pump_busy`, `screen_waits` and `key_stopped` read what they were?"""
    if not fits():
        return False
    try:
        return (isinstance(app._next_callbacks, list)
                and isinstance(app._message_queue.values, deque)
                and all(isinstance(screen._callbacks, list) for screen in app.screen_stack)
                and isinstance(events.Key("a", "a")._stop_propagation, bool))
    except Exception:  # an attribute gone, or a property that now raises
        return False


def pump_busy(pump: MessagePump, painting: tuple[type[Message], ...]) -> bool:
    """Has `pump` a callback queued (`call_next`) or a message other than a repaint?"""
    if pump._next_callbacks:
        return True
    if pump.message_queue_size == 0:
        return False
    queued: Any = pump._message_queue.values
    return not all(isinstance(message, painting) for message in queued)


def screen_waits(screen: Any) -> bool:
    """Has `screen` callbacks waiting for its next refresh (`call_after_refresh`)?"""
    return bool(screen._callbacks)


def key_stopped(event: events.Event) -> bool:
    """Was `event.stop()` called (Textual has no getter)?"""
    return bool(event._stop_propagation)


def forward(widget: Widget, event: events.Event) -> None:
    """Deliver `event` to `widget` as Textual forwards a key to the focus (marked
    forwarded, so the key gate does not hold it a second time); posted plainly on
    another Textual."""
    if fits():
        widget._forward_event(event)
    else:
        widget.post_message(event)


# -- the terminal driver -------------------------------------------------------------------
# Upstream (no issue found; to be filed): LinuxDriver resumes application mode on every
# SIGCONT, suspended or not, and its output thread dies on the first failed write (EIO
# after a hang-up), after which the 31st queued write blocks the event loop for ever.

class TerminalOutput:
    """The file the output thread writes to. Once a write or flush fails (the terminal
    hung up: EIO; a closed pipe: EPIPE) the terminal is gone for good, and everything
    after it is dropped, so the thread keeps emptying its queue and no writer blocks."""

    def __init__(self, file: IO[str]) -> None:
        self.file = file
        self.gone = False
        """True once the terminal refused a write: nothing is written to it again."""

    def write(self, text: str) -> int:
        if self.gone:
            return len(text)
        try:
            return self.file.write(text)
        except OSError:
            self.gone = True
            return len(text)

    def flush(self) -> None:
        if self.gone:
            return
        try:
            self.file.flush()
        except OSError:
            self.gone = True

    def fileno(self) -> int:
        return self.file.fileno()

    def isatty(self) -> bool:
        return self.file.isatty()


def terminal_driver_class(chosen: type[Driver]) -> type[Driver]:
    """`TerminalDriver` where Textual chose its LinuxDriver (POSIX only: termios), anything
    else (headless tests, inline mode, a TEXTUAL_DRIVER of the person's own) as chosen."""
    from textual.drivers.linux_driver import LinuxDriver

    if chosen is not LinuxDriver or not fits():
        return chosen
    return _terminal_driver()


@cache
def _terminal_driver() -> type[Driver]:
    from textual.drivers.linux_driver import LinuxDriver

    class TerminalDriver(LinuxDriver):
        """LinuxDriver, safe at a hang-up: writes to a gone terminal are dropped, and
        SIGCONT resumes application mode only after a suspend the app made itself. It
        tells the app it exists (`driver_ready`), which may ask it for a desktop
        notification."""

        def __init__(self, app: Any, *args: Any, **kwargs: Any) -> None:
            super().__init__(app, *args, **kwargs)
            if self._file is not None:  # None: no stderr at all, nothing to guard
                self._file = TerminalOutput(self._file)  # type: ignore[assignment]
            self.suspended = False
            ready = getattr(app, "driver_ready", None)
            if callable(ready):
                ready(self)

        def desktop_notification(self, text: str) -> None:
            """Ask the terminal for a desktop notification (OSC 9: iTerm2, WezTerm,
            Windows Terminal, Ghostty, kitty; others ignore it). The text is one safe
            line: an agent name cannot end the sequence early or smuggle one in."""
            self.write(f"\x1b]9;{one_line(text, NOTIFICATION_CHARS)}\x07")

        def _sigtstp_application(self, *args: Any) -> None:
            self.suspended = True  # before the stop: SIGCONT may run as soon as it returns
            super()._sigtstp_application(*args)

        def _sigcont_application(self, *args: Any) -> None:
            if not self.suspended:
                return  # a hang-up's SIGCONT, or a stray `kill -CONT`: nothing to resume
            self.suspended = False
            super()._sigcont_application(*args)

    return TerminalDriver
