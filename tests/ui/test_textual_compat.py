"""Canaries of every private Textual name the app reads (`ui/textual_compat.py`): each
fails when a Textual release changes what it relies on. And the terminal driver's own
behaviour: it lets go of a terminal that hung up (Textual's output thread died on the first
write to it, and its queue of 30 writes then blocked the event loop for ever)."""

from __future__ import annotations

import contextlib
import inspect
import os
import signal
import threading
from typing import Any

from textual import events
from textual.app import App
from textual.drivers._writer_thread import MAX_QUEUED_WRITES, WriterThread
from textual.widgets import Input

from dsh_tui.ui import textual_compat
from dsh_tui.ui.app import DshApp
from dsh_tui.ui.textual_compat import TerminalOutput, terminal_driver_class


class Probe(App[None]):
    def compose(self) -> Any:
        yield Input(id="field")


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

    assert textual_compat.install()  # the pinned Textual line: every private read is on
    driver = terminal_driver_class(LinuxDriver)
    assert driver is not LinuxDriver and issubclass(driver, LinuxDriver)
    assert terminal_driver_class(LinuxDriver) is driver
    assert terminal_driver_class(HeadlessDriver) is HeadlessDriver
    assert DshApp.get_driver_class(DshApp.__new__(DshApp)) is driver


async def test_canary_the_linux_driver_registers_its_signal_handlers_by_name_and_file(
) -> None:
    """`TerminalDriver` overrides `_sigtstp_application`/`_sigcont_application` (Textual's
    LinuxDriver registers them by name when made) and wraps `_file` (the file its output
    thread writes to)."""
    from textual.drivers.linux_driver import LinuxDriver

    saved = signal.getsignal(signal.SIGTSTP), signal.getsignal(signal.SIGCONT)
    try:
        app = Probe()
        async with app.run_test():  # (a driver is made on a running loop)
            driver: Any = terminal_driver_class(LinuxDriver)(app)
            assert isinstance(driver._file, TerminalOutput)
            assert signal.getsignal(signal.SIGCONT) == driver._sigcont_application
            assert signal.getsignal(signal.SIGTSTP) == driver._sigtstp_application
            assert "self._file" in inspect.getsource(LinuxDriver.start_application_mode)
    finally:
        signal.signal(signal.SIGTSTP, saved[0])
        signal.signal(signal.SIGCONT, saved[1])


async def test_canary_the_key_gate_reads_what_it_expects() -> None:
    """`pump_busy` (a pump's `_next_callbacks` and `_message_queue`), `screen_waits` (a
    screen's `_callbacks`), `key_stopped` (a message's `_stop_propagation`)."""
    app = Probe()
    async with app.run_test() as pilot:
        assert textual_compat.gate_fits(app)
        await pilot.pause()
        field = app.query_one(Input)
        assert not textual_compat.pump_busy(field, ())
        field.call_next(lambda: None)
        assert textual_compat.pump_busy(field, ())
        await pilot.pause()
        assert not textual_compat.pump_busy(field, ())
        field.post_message(events.Focus())
        assert textual_compat.pump_busy(field, ())
        assert not textual_compat.pump_busy(field, (events.Focus,))  # only "painting" left
        await pilot.pause()
        screen = app.screen
        seen: list[bool] = []
        field.call_after_refresh(lambda: None)  # (handed to the screen's list by the field)
        field.call_later(lambda: seen.append(textual_compat.screen_waits(screen)))
        await pilot.pause()
        assert seen == [True] and not textual_compat.screen_waits(screen)
        key = events.Key("a", "a")
        assert not textual_compat.key_stopped(key)
        key.stop()
        assert textual_compat.key_stopped(key)


async def test_canary_a_forwarded_key_reaches_the_widget_marked_forwarded() -> None:
    """`forward` is Textual's `_forward_event`: the key arrives, marked forwarded."""
    app = Probe()
    async with app.run_test() as pilot:
        field = app.query_one(Input)
        field.focus()
        await pilot.pause()
        key = events.Key("x", "x")
        textual_compat.forward(field, key)
        await pilot.pause()
        assert key.is_forwarded and field.value == "x"
