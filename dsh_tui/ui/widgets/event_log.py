"""The event log (`#event-log`, f2): raw durable events and live notifications.

The visual debugger of inbox and steering: every `session/event` (with its seq)
and every live `agent/*` notification (marked `~`), for the selected agent or for
all of them, filtered by type and agent. The filter is a list of words: an event
is shown when its type contains every plain word and none of the `-`words (the
default, `-chunk`, hides the stream deltas); an `@`word keeps the agents whose id
contains it (and looks at all agents, not only the selected one). The lines are a line
view over the picked entries (`event_lines.py`): each is formatted when it is drawn.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical
from textual.reactive import var
from textual.widget import Widget
from textual.widgets import Checkbox, Input

from ..bindings import bind
from ..state.bridge import Bridge, LogEntry
from ..state.text import compact_json, short_id, visible, visible_label
from .event_lines import EventLines

DEFAULT_FILTER = "-chunk"
MAX_LINES = 5000
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


def _format(entry: LogEntry, with_agent: bool) -> str:
    return format_entry(entry, with_agent=with_agent)


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

    shown = var(False)
    """Shown under the panes (f2)."""

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
        self._viewed: tuple[Any, ...] | None = None
        """(agent, filter, scope) of the lines in the view, kept while the log is hidden."""

    def compose(self) -> ComposeResult:
        with Horizontal():
            yield Input(DEFAULT_FILTER, placeholder="filter: inbox turn/ -chunk @agent",
                        id="event-filter")
            yield Checkbox("all agents", False, id="event-all")
        yield EventLines(_format, MAX_LINES, id="event-lines")

    @property
    def log_widget(self) -> EventLines:
        return self.query_one("#event-lines", EventLines)

    def watch_shown(self, shown: bool) -> None:
        # `display` itself, not a class the stylesheet matches: a class change applied the
        # whole stylesheet to the log's widgets again on every f2 (~5 ms).
        self.display = shown

    def set_filter(self, text: str) -> None:
        self.words = text.split()
        self._wanted_types = {}
        self.reload()

    def open(self, agent_id: str | None) -> None:
        """Shown again (f2) for `agent_id`: the lines kept, and those logged while it was
        hidden added, when they are of the same agent, filter and scope and the bridge
        dropped none of them; else a reload."""
        self.agent_id = agent_id
        rings = [self.bridge.log, self.bridge.chunk_log] if self._keeps_chunks() \
            else [self.bridge.log]
        if self._viewed == self._view_key() and \
                all(ring.dropped_serial <= self.serial for ring in rings):
            self.append_new()
        else:
            self.reload()

    def _view_key(self) -> tuple[Any, ...]:
        return self.agent_id, tuple(self.words), self.all_agents

    def _keeps_chunks(self) -> bool:
        return matches(CHUNK_TYPE, [w for w in self.words if not w.startswith("@")])

    def show_agent(self, agent_id: str | None) -> None:
        self.agent_id = agent_id
        if self.display and not self.all_agents:
            self.reload()

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
        """Show the newest MAX_LINES matching entries of the bridge's log, from the end.

        Only the lines on screen are formatted (`EventLines`): formatting a line can read
        a packed chunk back, and 5,000 of them at once held the event loop 100-500 ms
        while 20 agents streamed (benchmarks/bench_soak.py's read-back)."""
        picked = self._pick()
        self.reloads += 1
        self._viewed = self._view_key()
        self.log_widget.reset(picked, self._with_agent())
        self.lines_written += len(picked)
        self.serial = self.bridge.log_serial

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
        if self._keeps_chunks():
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

    def append_new(self) -> None:
        """Write the entries logged since the last call (called from the flush)."""
        fresh = self.bridge.entries_since(self.serial, chunks=self._keeps_chunks())
        self.serial = self.bridge.log_serial
        self._write(e for e in fresh if self._wanted(e))

    def _write(self, entries: Iterable[LogEntry]) -> None:
        fresh = list(entries)
        if fresh:
            self.lines_written += len(fresh)
            self.log_widget.append(fresh)

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
