"""The inbox timeline of one agent (f5): every inbox operation on one time axis, and why.

Turns and steps, each claim (how long the item waited, what ran when it came) and every
insert, edit (with its word diff), move, re-file, removal, merge, split and put-back with
who made it. It answers "why did my steer land after the tool call". The lines are a
line-API view (`widgets/timeline_view.py`) over `state/timeline.py`, live or in
`dsh-tui view`. Keys: `m` message, `l` lane, `a` actor, `b` boundaries, enter jumps to the
transcript, escape or f5 back; it dismisses with the `Jump` to show (None: just closed).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Static

from ..state.inbox_log import ACTORS, Fact
from ..state.lanes import LANES
from ..state.text import compact_json, short_id, visible, visible_label
from ..state.timeline import Jump, Timeline, TimelineFilter, word_diff
from ..widgets.key_bar import KeyBar
from ..widgets.timeline_view import TimelineView

POLL_SECONDS = 0.25
"""How often the screen looks for new entries of a live agent (one integer compared)."""


def _cycle(current: frozenset[str], choices: Sequence[str]) -> frozenset[str]:
    """all → each choice in turn → all."""
    if not current:
        return frozenset({choices[0]})
    one = next(iter(current))
    index = choices.index(one) + 1 if one in choices else len(choices)
    return frozenset({choices[index]}) if index < len(choices) else frozenset()


def event_at(events: Sequence[Any], seq: int) -> Any | None:
    """The event of `seq` in a log (a paged window of one need not start at seq 0)."""
    if 0 <= seq < len(events) and getattr(events[seq], "seq", None) == seq:
        return events[seq]
    index = bisect_left(events, seq, key=lambda event: getattr(event, "seq", -1))
    if index < len(events) and getattr(events[index], "seq", None) == seq:
        return events[index]
    return None


class TimelineScreen(Screen[Jump | None]):
    """`TimelineScreen(name, timeline, events, message=None)`: `events` reads the agent's
    log (for the raw event of an entry); `message` opens it filtered to one message, the
    cursor on the entry at `at_seq` (else the last)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,f5", "close", "Back", id="timeline_close"),
        Binding("enter", "goto", "Transcript", id="timeline_goto"),
        Binding("m", "message", "This message", id="timeline_message"),
        Binding("l", "lane", "Lane", id="timeline_lane"),
        Binding("a", "actor", "Actor", id="timeline_actor"),
        Binding("b", "boundaries", "Turns/steps", id="timeline_boundaries"),
    ]

    CSS_PATH = Path(__file__).with_name("timeline.tcss")

    def __init__(self, name: str, timeline: Timeline, events: Callable[[], Sequence[Any]],
                 message: str | None = None,
                 current: Callable[[], Timeline] | None = None,
                 progress: Callable[[], float] | None = None,
                 at_seq: int | None = None) -> None:
        super().__init__()
        self.agent_name = name
        self.timeline = timeline
        self.events = events
        self.current = current
        """The agent's timeline now (a paged `view` log builds a new one per page)."""
        self.progress = progress
        """How much of the log is read (the bridge reads a big one a slice per flush)."""
        self._version = -1
        self._shown_progress = -1.0
        self._at_seq = at_seq
        """The entry the cursor starts on, once the log is read that far."""
        if message is not None:
            timeline.set_filter(TimelineFilter(message=message))

    @property
    def lines(self) -> TimelineView:
        return self.query_one("#timeline-lines", TimelineView)

    def compose(self) -> ComposeResult:
        with Vertical(id="timeline-box"):
            yield Static(id="timeline-title")
            yield TimelineView(self.timeline, id="timeline-lines")
            yield Static(id="timeline-detail")
        yield KeyBar()

    def on_mount(self) -> None:
        self.lines.focus()
        self.poll()
        self.set_interval(POLL_SECONDS, self.poll)

    def on_unmount(self) -> None:
        self.timeline.set_filter(TimelineFilter())  # the next opening starts unfiltered

    # -- following the agent -----------------------------------------------------------------

    def poll(self) -> None:
        """Take in what the agent did since (the bridge folds it into the timeline)."""
        if self.current is not None:
            latest = self.current()
            if latest is not self.timeline:
                latest.set_filter(self.timeline.filter)
                self.timeline = self.lines.timeline = latest
                self._version = -1
        progress = self.progress() if self.progress is not None else 1.0
        if self.timeline.version != self._version or progress != self._shown_progress:
            self._version = self.timeline.version
            self._shown_progress = progress
            at_seq = self._at_seq
            if progress >= 1.0:
                self._at_seq = None
            self.lines.sync(keep=at_seq)
            self._show_title()

    def _show_title(self) -> None:
        timeline = self.timeline
        shown, total = len(timeline), len(timeline.entries)
        count = f"{total:,} entries" if shown == total else f"{shown:,} of {total:,} entries"
        if self._shown_progress < 1.0:
            count += f" · reading the log… {self._shown_progress:.0%}"
        self.query_one("#timeline-title", Static).update(Content.assemble(
            ("Inbox timeline", "bold"), " · ", (visible_label(self.agent_name), "bold"),
            " · ", (timeline.filter.describe(), "$accent"), " · ", (count, "$text-muted")))

    # -- the entry at the cursor ---------------------------------------------------------------

    def cursor_entry(self) -> Fact | None:
        """The entry under the cursor (None when the filter keeps none)."""
        lines = self.lines
        if not len(self.timeline):
            return None
        return self.timeline.entry(min(lines.cursor, len(self.timeline) - 1))

    def on_timeline_view_moved(self, _: TimelineView.Moved) -> None:
        self._show_detail()

    def _show_detail(self) -> None:
        detail = self.query_one("#timeline-detail", Static)
        entry = self.cursor_entry()
        if entry is None:
            detail.update(Content.styled("No entry matches the filter (l, a, m, b change it).",
                                         "$text-muted"))
            return
        lines: list[Content] = []
        who = f"{entry.actor}: {entry.why}" if entry.why else entry.actor
        about = f"#{short_id(entry.message_id)} " if entry.message_id else ""
        lines.append(Content.assemble((f"{about}{entry.kind}", "bold"), " · ",
                                      (visible(who), "$text-muted")))
        if entry.kind == "edit" and entry.before is not None:
            parts: list[tuple[str, str] | str] = [("change: ", "$text-muted")]
            for op, text in word_diff(entry.before, entry.text):
                shown = visible(text)
                parts.append((shown, "strike $error") if op == "-" else
                             (shown, "bold $success") if op == "+" else shown)
            lines.append(Content.assemble(*parts))
        elif entry.text:
            lines.append(Content(visible(" ".join(entry.text.split()))[:400]))
        event = event_at(self.events(), entry.seq) if entry.seq >= 0 else None
        if event is not None:
            lines.append(Content.assemble(
                (f"raw · seq {event.seq} · {visible_label(str(event.type))} ", "$text-muted"),
                compact_json(getattr(event, "data", None), 600)))
        elif entry.seq < 0:
            lines.append(Content.styled("live only: not in the durable log", "$text-muted"))
        detail.update(Content("\n").join(lines))

    # -- keys ----------------------------------------------------------------------------------

    def _refilter(self, new: TimelineFilter) -> None:
        entry = self.cursor_entry()
        self.timeline.set_filter(new)
        self._version = self.timeline.version
        self.lines.sync(keep=entry.seq if entry is not None else None)
        self._show_title()
        self._show_detail()

    def action_message(self) -> None:
        current = self.timeline.filter
        if current.message is not None:
            self._refilter(TimelineFilter(lanes=current.lanes, actors=current.actors,
                                          boundaries=current.boundaries))
            return
        entry = self.cursor_entry()
        if entry is None or entry.message_id is None:
            self.notify("This entry is about no one message: put the cursor on one.",
                        markup=False)
            return
        self._refilter(TimelineFilter(message=entry.message_id, lanes=current.lanes,
                                      actors=current.actors, boundaries=current.boundaries))

    def action_lane(self) -> None:
        current = self.timeline.filter
        self._refilter(TimelineFilter(current.message, _cycle(current.lanes, LANES),
                                      current.actors, current.boundaries))

    def action_actor(self) -> None:
        current = self.timeline.filter
        self._refilter(TimelineFilter(current.message, current.lanes,
                                      _cycle(current.actors, ACTORS), current.boundaries))

    def action_boundaries(self) -> None:
        current = self.timeline.filter
        self._refilter(TimelineFilter(current.message, current.lanes, current.actors,
                                      not current.boundaries))

    def action_goto(self) -> None:
        entry = self.cursor_entry()
        jump = self.timeline.jump(entry) if entry is not None else None
        if jump is None:
            self.notify("This entry is live only (an editor opened or closed): it has no "
                        "place in the log.", markup=False)
            return
        self.dismiss(jump)

    def action_close(self) -> None:
        self.dismiss(None)
