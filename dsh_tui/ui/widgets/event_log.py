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

from collections.abc import Iterable
from typing import Any, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.reactive import var
from textual.widgets import Checkbox, Input, Log

from ..state.bridge import Bridge, LogEntry
from ..state.text import compact_json, short_id, visible, visible_label

DEFAULT_FILTER = "-chunk"
MAX_LINES = 5000


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


class EventLog(Vertical):
    """Filter row + log. Hidden until f2."""

    # Stays in default CSS: Checkbox's own `:focus` border must keep winning, as it did; a
    # .tcss rule would hide it.
    DEFAULT_CSS = """
    EventLog Checkbox { border: none; height: 1; padding: 0 1; width: auto; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+a", "toggle_scope", "All agents", id="event_log_scope",
                tooltip="Toggle the event log between the selected agent and all"),
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
        self.reload()

    def show_agent(self, agent_id: str | None) -> None:
        self.agent_id = agent_id
        if self.display and not self.all_agents:
            self.reload()

    def _wanted(self, entry: LogEntry) -> bool:
        named = any(w.startswith("@") and len(w) > 1 for w in self.words)
        if not self.all_agents and not named and entry.agent_id != self.agent_id:
            return False
        return matches(entry.type, self.words, entry.agent_id)

    def reload(self) -> None:
        """Re-render from the bridge's log (the newest MAX_LINES matching entries)."""
        log = self.log_widget
        log.clear()
        picked: list[LogEntry] = []
        for entry in self.bridge.entries_newest_first():
            if self._wanted(entry):
                picked.append(entry)
                if len(picked) >= MAX_LINES:
                    break
        picked.reverse()
        self._write(picked)
        self.serial = self.bridge.log_serial

    def append_new(self) -> None:
        """Write the entries logged since the last call (called from the flush)."""
        fresh = self.bridge.entries_since(self.serial)
        self.serial = self.bridge.log_serial
        self._write(e for e in fresh if self._wanted(e))

    def _write(self, entries: Iterable[LogEntry]) -> None:
        with_agent = self.all_agents or any(w.startswith("@") for w in self.words)
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
