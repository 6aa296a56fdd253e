"""A real terminal for tests: the installed `dsh-tui` in a pseudo-terminal, read by `pyte`.

Scripted Pilot tests press one key per event-loop tick in a roomy virtual screen; people
and terminals do not. `Terminal` starts the console script of this venv (the same binary
a person runs) in a pty of a chosen size, with its own HOME, config file and data dir and
no API key (so the demo model answers). Keys go in as raw bytes, one `os.write` per
burst, exactly as a terminal delivers a fast typist, a paste or key repeat. What the app
writes is kept verbatim (`raw`) and fed to a `pyte` screen, so a test judges by what a
person would see (`text()`, `wait_for`) and by the session files (`session_events`).

Rules that keep it robust:
- nothing sleeps a fixed time: waits poll the output until a condition holds or a timeout
  (a failure, with the screen in the message) expires;
- the child is always ended: `Terminal` is a context manager and `close()` is idempotent;
  it hangs up a child still running, then kills its process group (see `close`);
- `cpu_seconds()` reads the child's own user+system time from /proc, so an idle check
  measures the app, not the (shared, noisy) machine's wall clock.
"""

from __future__ import annotations

import codecs
import fcntl
import json
import os
import select
import signal
import struct
import subprocess
import sys
import termios
import time
import warnings
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pyte

BINARY = Path(sys.executable).with_name("dsh-tui")
"""The venv's console script: the installed app, not a module run from the tree."""

DEFAULT_TIMEOUT = 15.0

KEYS: dict[str, bytes] = {
    "enter": b"\r", "tab": b"\t", "escape": b"\x1b", "backspace": b"\x7f", "space": b" ",
    "up": b"\x1b[A", "down": b"\x1b[B", "right": b"\x1b[C", "left": b"\x1b[D",
    "home": b"\x1b[H", "end": b"\x1b[F", "pageup": b"\x1b[5~", "pagedown": b"\x1b[6~",
    "insert": b"\x1b[2~", "delete": b"\x1b[3~", "shift+delete": b"\x1b[3;2~",
    "shift+up": b"\x1b[1;2A", "shift+down": b"\x1b[1;2B", "shift+right": b"\x1b[1;2C",
    "shift+left": b"\x1b[1;2D", "shift+tab": b"\x1b[Z",
    "f1": b"\x1bOP", "f2": b"\x1bOQ", "f3": b"\x1bOR", "f4": b"\x1bOS",
    "f5": b"\x1b[15~", "f6": b"\x1b[17~", "f7": b"\x1b[18~", "f8": b"\x1b[19~",
    "f9": b"\x1b[20~", "f10": b"\x1b[21~",
}


def key(name: str) -> bytes:
    """The bytes a terminal sends for a key name (`enter`, `ctrl+j`, `shift+up`, `f9`)."""
    if name in KEYS:
        return KEYS[name]
    if name.startswith("ctrl+") and len(name) == 6:
        return bytes([ord(name[5].lower()) & 0x1F])
    raise KeyError(f"no byte sequence known for key {name!r}")


def burst(*parts: str | bytes) -> bytes:
    """Text and key names as one byte string: `burst("hi", key("enter"))`. A `str` part is
    typed as text (UTF-8); use `key()` for named keys."""
    out = bytearray()
    for part in parts:
        out += part.encode() if isinstance(part, str) else part
    return bytes(out)


HANG_UP_GRACE = 5.0
"""Seconds a child still running at the end of a test has to exit after its terminal hung
up (it takes well under one), before its process group is killed anyway."""


class ChildIgnoredHangUp(UserWarning):
    """The app did not exit after its terminal hung up (found at a test's teardown)."""


class TerminalError(AssertionError):
    """A wait that timed out or a child that died; the message shows the screen."""


class Terminal:
    """`dsh-tui` in a pty of `cols`x`rows`, with an isolated home under `root`.

    `args` are extra command-line arguments; `config` is TOML text for the config file
    (`demo_speed` slows the demo model so a turn stays running while a test acts)."""

    def __init__(self, root: Path, *, cols: int = 100, rows: int = 30,
                 args: Iterable[str] = (), config: str = "",
                 env: dict[str, str] | None = None) -> None:
        self.root = root
        self.cols, self.rows = cols, rows
        self.data_dir = root / "data"
        self.config_path = root / "config.toml"
        self.args = list(args)
        self.config = config
        self.extra_env = env or {}
        self.raw = bytearray()
        """Every byte the app wrote, in order (hostile-input checks assert on these)."""
        self.screen = pyte.Screen(cols, rows)
        self._stream = pyte.Stream(self.screen)
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.process: subprocess.Popen[bytes] | None = None
        self._master: int | None = None

    # -- life cycle ----------------------------------------------------------------------------

    def start(self) -> Terminal:
        """Start the app (once: a second start would leave the first child running,
        its terminal never closed)."""
        if self.process is not None:
            raise RuntimeError("this Terminal was started already (the with-block starts it)")
        home = self.root / "home"
        for path in (home, self.data_dir):
            path.mkdir(parents=True, exist_ok=True)
        if not self.config_path.exists():
            self.config_path.write_text(self.config, encoding="utf-8")
        env = {key: value for key, value in os.environ.items()
               if not key.endswith("_API_KEY") and not key.startswith(("TEXTUAL", "PYTEST"))}
        env.update({
            "TERM": "xterm-256color", "COLORTERM": "truecolor", "LANG": "C.UTF-8",
            "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_DATA_HOME": str(home / ".local/share"), "XDG_CACHE_HOME": str(home / ".cache"),
            "DSH_TUI_CONFIG": str(self.config_path), "COLUMNS": str(self.cols),
            "LINES": str(self.rows), **self.extra_env,
        })
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", self.rows, self.cols, 0, 0))
        argv = [str(BINARY), "--data-dir", str(self.data_dir), *self.args]
        try:
            self.process = subprocess.Popen(
                argv, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=self.root,
                start_new_session=True, preexec_fn=_take_controlling_tty, close_fds=True)
        finally:
            os.close(slave)
        os.set_blocking(master, False)
        self._master = master
        return self

    def close(self) -> None:
        """End the child and release the pty; safe to call twice. A child still running
        first gets the chance to leave as a person's closed window makes it (a hang-up,
        which saves and exits); then its whole process group is killed whatever its
        state, so nothing it started outlives the test. A child that ignored the hang-up
        is a bug of the app: it is killed all the same and reported as a warning (a test
        that asserts an exit does so itself, with `wait_exit`)."""
        process = self.process
        if process is None:
            return
        if process.poll() is None:
            self.hang_up()
            try:
                process.wait(timeout=HANG_UP_GRACE)
            except subprocess.TimeoutExpired:
                warnings.warn(ChildIgnoredHangUp(
                    f"dsh-tui (pid {process.pid}) was still running {HANG_UP_GRACE:.0f} s "
                    f"after its terminal hung up; killed\n{self.text()}"), stacklevel=2)
        try:
            os.killpg(process.pid, signal.SIGKILL)  # the group: children of the app too
        except (ProcessLookupError, PermissionError):
            pass  # the group is gone already
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass  # unkillable (uninterruptible sleep): nothing more a test can do
        self.hang_up()

    def __enter__(self) -> Terminal:
        return self.start() if self.process is None else self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def pid(self) -> int:
        assert self.process is not None, "the terminal was not started"
        return self.process.pid

    # -- input ---------------------------------------------------------------------------------

    def write(self, data: bytes) -> None:
        """One `os.write` of the whole burst: the app reads it as one chunk, as it would
        a paste, key repeat or a fast typist."""
        assert self._master is not None
        written = os.write(self._master, data)
        assert written == len(data), f"short write to the pty: {written} of {len(data)}"

    def type(self, text: str) -> None:
        self.write(text.encode())

    def press(self, *names: str) -> None:
        """Named keys, all in one write."""
        self.write(b"".join(key(name) for name in names))

    def hang_up(self) -> None:
        """Close the terminal, as closing its window does: the kernel sends SIGHUP."""
        if self._master is not None:
            os.close(self._master)
            self._master = None

    def signal(self, signum: int) -> None:
        assert self.process is not None
        self.process.send_signal(signum)

    # -- output --------------------------------------------------------------------------------

    def pump(self, timeout: float = 0.05) -> bool:
        """Read what the app wrote within `timeout` into the screen; True if anything came."""
        if self._master is None:
            return False
        got = False
        deadline = time.monotonic() + timeout
        while True:
            remaining = max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([self._master], [], [], remaining)
            if not ready:
                return got
            try:
                chunk = os.read(self._master, 65536)
            except BlockingIOError:
                continue
            except OSError:  # EIO: the child closed the terminal
                return got
            if not chunk:
                return got
            got = True
            self.raw += chunk
            self._stream.feed(self._decoder.decode(chunk))
            deadline = time.monotonic() + 0.005  # keep reading while the burst lasts

    def lines(self) -> list[str]:
        return [line.rstrip() for line in self.screen.display]

    def text(self) -> str:
        return "\n".join(self.lines())

    def background(self, y: int, x: int) -> str:
        """The background colour of one cell ("default" or a hex colour): a highlighted row
        (a tree or list cursor) differs from its neighbours only in this."""
        return str(self.screen.buffer[y][x].bg)

    def highlighted(self, labels: Iterable[str], columns: int | None = None) -> list[str]:
        """Which of the rows showing `labels` are drawn on a background of their own (the
        cursor row): each label's first cell is compared with the others'. `columns`
        limits the search to the left part of the screen (a pane)."""
        found: dict[str, str] = {}
        for label in labels:
            for y, line in enumerate(self.lines()):
                x = line[:columns].find(label)
                if x >= 0:
                    found[label] = self.background(y, x)
                    break
        counts: dict[str, int] = {}
        for colour in found.values():
            counts[colour] = counts.get(colour, 0) + 1
        return [label for label, colour in found.items() if counts[colour] == 1]

    def wait_until(self, condition: Callable[[], bool], what: str,
                   timeout: float = DEFAULT_TIMEOUT) -> None:
        """Poll the output until `condition()` holds; fail with the screen after `timeout`."""
        deadline = time.monotonic() + timeout
        while True:
            self.pump(0.05)
            if condition():
                return
            if self.process is not None and self.process.poll() is not None:
                self.pump(0.05)
                if condition():
                    return
                raise TerminalError(f"dsh-tui exited ({self.process.returncode}) while "
                                    f"waiting for {what}\n{self.text()}")
            if time.monotonic() > deadline:
                raise TerminalError(f"timed out after {timeout:.0f} s waiting for {what}\n"
                                    f"{self.text()}")

    def wait_for(self, text: str, timeout: float = DEFAULT_TIMEOUT) -> None:
        """Wait until `text` is on the screen."""
        self.wait_until(lambda: text in self.text(), repr(text), timeout)

    def wait_gone(self, text: str, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.wait_until(lambda: text not in self.text(), f"{text!r} to go", timeout)

    def wait_ready(self, timeout: float = DEFAULT_TIMEOUT) -> None:
        """The app is up when the composer's title names its target (`→ name`)."""
        self.wait_for("→ ", timeout)

    def wait_exit(self, timeout: float = DEFAULT_TIMEOUT) -> int:
        """Wait for the child to exit (draining its output); its return code."""
        assert self.process is not None
        deadline = time.monotonic() + timeout
        while self.process.poll() is None:
            if not self.pump(0.05) and self._master is None:
                time.sleep(0.05)  # nothing to read any more (hung up): just wait for the exit
            if time.monotonic() > deadline:
                raise TerminalError(f"dsh-tui did not exit within {timeout:.0f} s\n{self.text()}")
        self.pump(0.05)
        return self.process.returncode

    def settle(self, quiet: float = 0.3, timeout: float = DEFAULT_TIMEOUT) -> str:
        """Wait until the screen's text has not changed for `quiet` seconds; return it.
        (The text only: a blinking cursor changes a cell's style, not its character.)"""
        deadline = time.monotonic() + timeout
        last = self.text()
        since = time.monotonic()
        while time.monotonic() - since < quiet:
            self.pump(0.05)
            now = self.text()
            if now != last:
                last, since = now, time.monotonic()
            if time.monotonic() > deadline:
                raise TerminalError(f"the screen kept changing for {timeout:.0f} s\n{now}")
        return last

    def watch(self, seconds: float) -> tuple[set[str], float]:
        """Keep reading for `seconds`: (every distinct screen text seen, CPU seconds the
        child used meanwhile). A still, idle app gives one screen and almost no CPU."""
        seen = {self.text()}
        before = self.cpu_seconds()
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.pump(0.05)
            seen.add(self.text())
        return seen, self.cpu_seconds() - before

    # -- the child -----------------------------------------------------------------------------

    def cpu_seconds(self) -> float:
        """User + system CPU time of the child so far (/proc/PID/stat, fields 14 and 15)."""
        stat = Path(f"/proc/{self.pid}/stat").read_text()
        fields = stat[stat.rindex(")") + 2:].split()
        ticks = int(fields[11]) + int(fields[12])
        return ticks / os.sysconf("SC_CLK_TCK")

    # -- session files -------------------------------------------------------------------------

    def session_files(self) -> list[Path]:
        return sorted(self.data_dir.rglob("session.jsonl"))

    def sessions(self) -> dict[str, list[dict[str, Any]]]:
        """Session id → its records (header first), from the files on disk."""
        out: dict[str, list[dict[str, Any]]] = {}
        for path in self.session_files():
            records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
                       if line.strip()]
            if records:
                out[str(records[0].get("id"))] = records
        return out


def _take_controlling_tty() -> None:
    """In the child, after setsid: make the pty its controlling terminal (SIGHUP, job
    control and /dev/tty behave as in a real terminal)."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


def events_of(records: list[dict[str, Any]], type_: str) -> list[dict[str, Any]]:
    """The `data` of every record of one event type, in order."""
    return [r.get("data", {}) for r in records if r.get("type") == type_]


def accepted(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every message an inbox accepted: the items its durable splices inserted, in order
    (`user/message` is written in a batch later, so acceptance is the splice)."""
    return [item for data in events_of(records, "agent/inbox/spliced")
            for item in data.get("inserted", [])]


def accepted_texts(records: list[dict[str, Any]]) -> list[str]:
    return [item["content"][0]["text"] for item in accepted(records)]


def discards(term: Terminal) -> list[dict[str, Any]]:
    """Every inbox splice that threw work away (`outcome: canceled`), in any session."""
    return [data for records in term.sessions().values()
            for data in events_of(records, "agent/inbox/spliced")
            if data.get("outcome") == "canceled"]


def wait_running(term: Terminal) -> None:
    """Wait until the selected agent's first turn runs (the transcript title says so:
    `turn 1 step 1`, or `t1 s1` when the title is short of room)."""
    term.wait_until(lambda: "turn 1" in term.text() or "t1 s1" in term.text(),
                    "the first turn running")


def queue_behind_a_turn(term: Terminal, *follow_ups: str) -> None:
    """Start a turn ("first task") on the selected agent and queue `follow_ups` behind it,
    each seen in the tree's count (a slow demo keeps the turn running meanwhile)."""
    term.write(burst("first task", key("enter")))
    wait_running(term)
    for count, text in enumerate(follow_ups, 1):
        term.write(burst(text, key("enter")))
        term.wait_for(f"↵{count}")


PANE_KEYS = {"tree": "Spawn child", "transcript": "Reasoning", "inbox": "Lane"}
"""A footer label only each pane offers: how a test knows which pane has the focus."""


def focus_pane(term: Terminal, pane: str) -> None:
    """tab until the footer offers the pane's own keys."""
    for _ in range(4):
        footer = term.lines()[-1]
        term.press("tab")
        term.wait_until(lambda: term.lines()[-1] != footer, "the focus to move")  # noqa: B023
        if PANE_KEYS[pane] in term.lines()[-1]:
            return
    raise AssertionError(f"could not focus the {pane}: {term.lines()[-1]}")
