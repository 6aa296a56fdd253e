"""The terminal driver: Textual's LinuxDriver, made to let go of a terminal that is gone.

Closing the terminal window (a hang-up) must leave the app as ctrl+q does (the cli's SIGHUP
handler asks it to exit). With Textual 8.2.8 the installed app sometimes never exited
after a hang-up (tests/tty/test_quit.py [hang-up]: 2 of 10 runs on main, 2 of 6 with the
key gate), stuck in the driver's `close()`. Two things in the driver add up to that:

1. Its output thread dies on the first write that fails, and once the terminal is gone
   every write fails (EIO). Its queue holds at most 30 writes, so after the thread died
   the 31st write from the event loop (a repaint of a streaming reply, the mode resets of
   the shutdown, or the `None` that `close()` queues to stop the thread) blocks the event
   loop for ever: the app never gets to exit.
2. Its SIGCONT handler starts application mode again whenever the process is continued,
   suspended or not. A hang-up sends SIGHUP *and* SIGCONT to the terminal's session leader
   (the app, when a terminal, tmux or ssh runs it directly), so a second output thread and
   a second input thread were started on the dead terminal; the second output thread
   died at once, taking the queue the app writes to with it (cause 1, at every hang-up).

`TerminalDriver` keeps the output thread alive (writes to a gone terminal are dropped,
not raised: nobody can see them) and resumes application mode only after a suspend it
made itself. It overrides `_sigtstp_application`/`_sigcont_application` (Textual 8.2.8
registers them by name in `LinuxDriver.__init__`) and wraps the file it writes to
(`_file`, handed to the output thread in `start_application_mode`); should those names
change, the overrides are simply not called and the driver behaves as Textual's own.
"""

from __future__ import annotations

from typing import IO, Any

from textual.driver import Driver
from textual.drivers.linux_driver import LinuxDriver


class TerminalOutput:
    """The file the output thread writes to. Once a write or flush fails (the terminal
    hung up: EIO; a closed pipe: EPIPE) the terminal is gone for good, and everything
    after it is dropped, so the thread keeps emptying its queue and no writer blocks."""

    def __init__(self, file: IO[str]) -> None:
        self._file = file
        self.gone = False
        """True once the terminal refused a write: nothing is written to it again."""

    def write(self, text: str) -> int:
        if self.gone:
            return len(text)
        try:
            return self._file.write(text)
        except OSError:
            self.gone = True
            return len(text)

    def flush(self) -> None:
        if self.gone:
            return
        try:
            self._file.flush()
        except OSError:
            self.gone = True

    def fileno(self) -> int:
        return self._file.fileno()

    def isatty(self) -> bool:
        return self._file.isatty()


class TerminalDriver(LinuxDriver):
    """Textual's LinuxDriver, safe at a hang-up (see the module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self._file is not None:  # None: no stderr at all, nothing to guard
            self._file = TerminalOutput(self._file)  # type: ignore[assignment]
        self._stopped = False
        """Set by our own SIGTSTP (the app stopped itself): only then does SIGCONT resume."""

    def _sigtstp_application(self, *args: Any) -> None:
        self._stopped = True  # before the stop: SIGCONT may run as soon as it returns
        super()._sigtstp_application(*args)

    def _sigcont_application(self, *args: Any) -> None:
        if not self._stopped:
            return  # a hang-up's SIGCONT, or a stray `kill -CONT`: nothing to resume
        self._stopped = False
        super()._sigcont_application(*args)


def terminal_driver_class(chosen: type[Driver]) -> type[Driver]:
    """The driver an app runs with: `TerminalDriver` where Textual chose its LinuxDriver;
    anything else (headless tests, inline mode, a TEXTUAL_DRIVER of the person's own) as
    chosen. An App's `get_driver_class` calls it on POSIX only (this module needs termios)."""
    return TerminalDriver if chosen is LinuxDriver else chosen
