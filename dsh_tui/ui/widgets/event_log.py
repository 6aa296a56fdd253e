"""The event log (`#event-log`, f2): raw durable events and live notifications.

The visual debugger of inbox and steering: every `session/event` (with its seq)
and every live `agent/*` notification (marked `~`), for the selected agent or for
all of them, filtered by type and agent. The filter is a list of words: an event
is shown when its type contains every plain word and none of the `-`words (the
default, `-chunk`, hides the stream deltas); an `@`word keeps the agents whose id
contains it (and looks at all agents, not only the selected one). Lines are plain text in a `Log`, which stays
fast with thousands of them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical
from textual.reactive import var
from textual.widget import Widget
from textual.widgets import Checkbox, Input, Log

from ..bindings import bind
from ..state.bridge import Bridge, LogEntry
from ..state.text import compact_json, short_id, visible, visible_label

DEFAULT_FILTER = "-chunk"
MAX_LINES = 5000
FIRST_LINES = 200
"""Lines a reload formats at once: the newest, where the log shows its end."""
FORMAT_SLICE = 100
"""Older lines formatted per tick after a reload."""
CHUNK_TYPE = "assistant/chunk"
"""The one type of the bridge's chunk ring (`Bridge.chunk_log`)."""


def _serial(entry: LogEntry) -> int:
    return entry.serial


def matches(entry_type: str, words: list[str], agent_id: str = "") -> bool:
    agents = [w[1:] for w in words if w.startswith("@") and len(w) > 1]
    if agents and not any(a in agent_id for a in agents):
        return False
    for word in words:
        if word.startswith("@"):
            continue
        if word.startswith("-"):
            if word[1:] and word[1:] in entry_type:
                return False
        elif word not in entry_type:
            return False
    return True


def summarize(entry: LogEntry) -> str:
    data = entry.data
    if entry.durable:
        event = entry.event
        if event is None:
            return ""
        payload = event.data
        if entry.type == "assistant/chunk" and isinstance(payload, dict):
            chunk = payload.get("chunk") or {}
            if isinstance(chunk, dict) and "text" in chunk:
                return f"{chunk.get('type')} {compact_json(chunk.get('text'), 80)}"
        return compact_json(payload, 200)
    if entry.type.startswith("agent/inbox/") and data is not None:
        return f"#{short_id(getattr(data, 'id', None))} {compact_json(getattr(data, 'text', ''), 120)}"
    if data is None:
        return ""
    return visible(str(data))[:200]


def format_entry(entry: LogEntry, *, with_agent: bool) -> str:
    marker = f"{entry.seq:>6}" if entry.durable and entry.seq is not None else "     ~"
    # The type and agent id come from the log (a crafted `dsh-tui view` file): never raw.
    who = f"{visible_label(entry.agent_id[:18]):<18} " if with_agent else ""
    return f"{marker} {who}{visible_label(entry.type):<24} {summarize(entry)}"


class EventLogRoom(Widget):
    """The rows the open event log covers in the centre column (main.tcss): shown with the
    log, so the transcript and the breakpoint panel end above it, where they are read, and
    only the centre column is laid out again. The agent tree and the inbox keep their size
    and their drawn lines; the log is drawn over their bottom rows."""


class EventLog(Vertical):
    """Filter row + log. Hidden until f2."""

    # Stays in default CSS: Checkbox's own `:focus` border must keep winning, as it did; a
    # .tcss rule would hide it.
    DEFAULT_CSS = """
    EventLog Checkbox { border: none; height: 1; padding: 0 1; width: auto; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        bind("event_log_scope", action="toggle_scope"),
    ]

    shown = var(False, toggle_class="-visible")
    """Shown under the panes (f2; the `-visible` class follows it)."""

    def __init__(self, bridge: Bridge, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.bridge = bridge
        self.agent_id: str | None = None
        self.all_agents = False
        self.words = DEFAULT_FILTER.split()
        self.serial = 0
        self.lines_written = 0
        self.reloads = 0
        self._wanted_types: dict[str, bool] = {}

    def compose(self) -> ComposeResult:
        with Horizontal():
            yield Input(DEFAULT_FILTER, placeholder="filter: inbox turn/ -chunk @agent",
                        id="event-filter")
            yield Checkbox("all agents", False, id="event-all")
        yield Log(max_lines=MAX_LINES, highlight=False, id="event-lines")

    @property
    def log_widget(self) -> Log:
        return self.query_one("#event-lines", Log)

    def set_filter(self, text: str) -> None:
        self.words = text.split()
        self._wanted_types = {}
        self.reload()

    def show_agent(self, agent_id: str | None) -> None:
        self.agent_id = agent_id
        if self.display and not self.all_agents:
            self.reload()

    @staticmethod
    def _clear(log: Log) -> None:
        """Empty the log, scrolled to its top: Textual's `Log.clear` keeps the old scroll
        offset, past the end of no lines, and the next write then does not follow the end."""
        log.clear()
        log.scroll_to(y=0, animate=False, immediate=True)

    def _wanted(self, entry: LogEntry) -> bool:
        named = any(w.startswith("@") and len(w) > 1 for w in self.words)
        if not self.all_agents and not named and entry.agent_id != self.agent_id:
            return False
        if named:
            return matches(entry.type, self.words, entry.agent_id)
        wanted = self._wanted_types.get(entry.type)
        if wanted is None:  # a handful of types, thousands of entries: match each type once
            wanted = self._wanted_types[entry.type] = matches(entry.type, self.words)
        return wanted

    def _with_agent(self) -> bool:
        return self.all_agents or any(w.startswith("@") for w in self.words)

    def reload(self) -> None:
        """Re-render from the bridge's log (the newest MAX_LINES matching entries).

        Only the newest `FIRST_LINES` are formatted at once (a screenful and more, where
        the log shows its end); the older ones are formatted a slice at a time by a worker
        and put in front of them when all are done. Formatting a line can read a packed
        chunk back: 5,000 of them in one go held the event loop ~400 ms (every streaming
        agent and a typed key waited; benchmarks/bench_soak.py's read-back)."""
        log = self.log_widget
        self._clear(log)
        picked = self._pick()
        self.reloads += 1
        older, newest = picked[:-FIRST_LINES], picked[-FIRST_LINES:]
        self._write(newest)
        self.serial = self.bridge.log_serial
        if older:
            self.run_worker(self._write_older(older, self.reloads), group="event-log-older",
                            exclusive=True)

    def _pick(self) -> list[LogEntry]:
        """The newest MAX_LINES entries the filter wants, oldest first.

        Each ring is read on its own, newest first, skipping by their numbers the lines
        of other agents and types (`LineRing.newest_first`: no entry is made for them),
        and only what it gives is merged by serial. Merging both rings entry by entry
        (`entries_newest_first`) and testing every entry cost 40-60 ms of the event loop
        per filter or f2 with 10,000 lines remembered. The chunk ring holds only
        `assistant/chunk` lines, so a filter that hides them (the default) skips it."""
        self._wanted_types = {}
        words = self.words
        named = any(w.startswith("@") and len(w) > 1 for w in words)
        mine = None if self.all_agents or named else self.agent_id
        plain = [w for w in words if not w.startswith("@")]

        def keep_type(kind: str) -> bool:
            return matches(kind, plain)

        rings = [self.bridge.log]
        if keep_type(CHUNK_TYPE):
            rings.append(self.bridge.chunk_log)
        picked: list[LogEntry] = []
        for ring in rings:
            found = 0
            for entry in ring.newest_first(keep_type, mine):
                if named and not matches(entry.type, words, entry.agent_id):
                    continue
                picked.append(entry)
                found += 1
                if found >= MAX_LINES:
                    break
        if len(rings) > 1:
            picked.sort(key=_serial)
        else:
            picked.reverse()
        return picked[-MAX_LINES:]

    async def _write_older(self, entries: list[LogEntry], reload: int) -> None:
        """Format `entries` (older than every line shown) a slice per tick, then put them
        in front of the lines shown, keeping what the person looks at where it was."""
        with_agent = self._with_agent()
        lines: list[str] = []
        for start in range(0, len(entries), FORMAT_SLICE):
            await asyncio.sleep(0)
            if reload != self.reloads:
                return  # a newer reload (another filter, agent or scope) took over
            lines.extend(format_entry(e, with_agent=with_agent)
                         for e in entries[start:start + FORMAT_SLICE])
        if reload != self.reloads:
            return
        log = self.log_widget
        # At its end (or not scrolled yet: a reload's scroll to the end can still be
        # pending); else the person scrolled up meanwhile and stays on the same line.
        at_end = log.scroll_y >= log.max_scroll_y or log.scroll_y == 0
        shown = list(log.lines)
        top = log.scroll_y
        self._clear(log)
        log.write_lines(lines + shown, scroll_end=at_end)
        if not at_end:
            log.scroll_to(y=top + len(lines), animate=False, immediate=True)
        self.lines_written += len(lines)

    def append_new(self) -> None:
        """Write the entries logged since the last call (called from the flush)."""
        fresh = self.bridge.entries_since(self.serial)
        self.serial = self.bridge.log_serial
        self._write(e for e in fresh if self._wanted(e))

    def _write(self, entries: Iterable[LogEntry]) -> None:
        with_agent = self._with_agent()
        lines = [format_entry(e, with_agent=with_agent) for e in entries]
        if lines:
            self.lines_written += len(lines)
            self.log_widget.write_lines(lines)

    @on(Input.Changed, "#event-filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.set_filter(event.value)

    @on(Checkbox.Changed, "#event-all")
    def _scope_changed(self, event: Checkbox.Changed) -> None:
        event.stop()
        self.all_agents = event.value
        self.reload()

    def action_toggle_scope(self) -> None:
        checkbox = self.query_one("#event-all", Checkbox)
        checkbox.value = not checkbox.value
