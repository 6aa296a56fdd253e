"""The terminal driver lets go of a terminal that hung up (dsh_tui/ui/driver.py).

Textual's output thread died on the first write to a hung-up terminal (EIO), and its
queue of 30 writes then blocked the event loop for ever: the installed app sometimes never
exited after its terminal closed. Here a real pty is hung up (its master closed) and the
output thread is given more writes than its queue holds, then stopped as `close()` does.
"""

from __future__ import annotations

import contextlib
import os
import threading

from textual.drivers._writer_thread import MAX_QUEUED_WRITES, WriterThread

from dsh_tui.ui.app import DshApp
from dsh_tui.ui.driver import TerminalDriver, TerminalOutput, terminal_driver_class


def _hung_up_terminal() -> object:
    """A text file on the slave side of a pty whose master is already closed."""
    master, slave = os.openpty()
    os.close(master)
    return open(slave, "w", encoding="utf-8", closefd=True)


def test_the_output_thread_outlives_a_hung_up_terminal_and_stops() -> None:
    file = _hung_up_terminal()
    output = TerminalOutput(file)  # type: ignore[arg-type]
    writer = WriterThread(output)  # type: ignore[arg-type]
    writer.start()

    def write_then_stop() -> None:
        for n in range(MAX_QUEUED_WRITES * 4):
            writer.write(f"frame {n}\n")  # a streaming reply's repaints, after the hang-up
        writer.stop()  # what the driver's close() does: queue None, join

    worker = threading.Thread(target=write_then_stop, daemon=True)
    worker.start()
    worker.join(timeout=30)  # a liveness guard: with a dead output thread this never ends
    assert not worker.is_alive(), "writing to a hung-up terminal blocked (the queue filled up)"
    assert not writer.is_alive()
    assert output.gone
    with contextlib.suppress(OSError):  # its buffer still holds the text the pty refused
        file.close()  # type: ignore[attr-defined]


def test_a_write_to_a_live_terminal_goes_through() -> None:
    master, slave = os.openpty()
    try:
        with open(slave, "w", encoding="utf-8", closefd=False) as file:
            output = TerminalOutput(file)
            output.write("hello")
            output.flush()
            assert os.read(master, 100) == b"hello"
            assert not output.gone
    finally:
        os.close(slave)
        os.close(master)


def test_the_app_runs_on_the_terminal_driver_and_tests_stay_headless() -> None:
    from textual.drivers.headless_driver import HeadlessDriver
    from textual.drivers.linux_driver import LinuxDriver

    assert terminal_driver_class(LinuxDriver) is TerminalDriver
    assert terminal_driver_class(HeadlessDriver) is HeadlessDriver
    assert DshApp.get_driver_class(DshApp.__new__(DshApp)) is TerminalDriver
