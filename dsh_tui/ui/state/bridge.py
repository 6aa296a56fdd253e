"""The bridge: the one place that listens to the world, and the reason the UI keeps up.

Listeners on the root context only record: they append to plain-Python per-agent view
models and mark them dirty, a few attribute writes even at 5,000 chunks a second. One
scheduled flush, at most ~60 times a second, folds the new events into the models and
hands one batch of changes to the screen, so widgets render once per flush. No Textual:
the scheduler is injected, so the coalescing is tested without a terminal.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from dsh_tui.harness.agent import Agent
from dsh_tui.harness.surface import ContextSurface

from .agent_view import AgentView
from .inbox_rows import Tombstone
from .lanes import lane_of
from .log_ring import LineRing

FLUSH_INTERVAL = 1 / 60
"""The shortest time between two flushes: the ~60 repaints a second ceiling."""

LOG_LIMIT = 5_000
"""Lines the event log remembers besides stream chunks (a `LineRing`: fixed arrays)."""
CHUNK_LOG_LIMIT = 5_000
"""Stream chunks the event log remembers: as many as it shows (MAX_LINES). Chunks are
most events; with them in the main ring it would hold 50,000 of them, which is the
one thing in the app that grew with every chunk, and push out everything else."""
READ_BUDGET = 0.006
"""Seconds of one flush spent reading a log for its receipts and timeline (a big log is
read over several flushes, so no frame waits for all of it)."""
DISCARD_TTL = 8.0
CLAIM_TTL = 2.5

Scheduler = Callable[[float, Callable[[], Any]], Any]


@dataclass(slots=True, eq=False)
class LogEntry:
    """One line of the event log: a durable session event or a live notification.

    A durable line keeps its session and seq, not the event: the log holds up to
    LOG_LIMIT entries, and a session packs its finished chunks and the bookkeeping
    between them (`harness/eventlog.py`); holding the event here would keep it live
    for as long as the line is remembered (minutes of 20 agents, hours of one),
    so the line reads its event back only when it is shown.
    """

    serial: int
    agent_id: str
    durable: bool
    type: str
    seq: int | None
    data: Any

    @property
    def event(self) -> Any:
        """The durable event of this line (None for a notification or a lost session)."""
        if not self.durable:
            return None
        data = self.data
        if data is None or hasattr(data, "type"):
            return data
        events = getattr(data, "events", None)
        seq = self.seq
        if events is None or seq is None or not 0 <= seq < len(events):
            return None
        event = events[seq]
        return event if event.seq == seq else None


@dataclass(frozen=True, slots=True)
class MessageNote:
    """What an inbox line shows of a message: its id and the start of its text (the line
    shows 120 characters of it), not the message, which the line would keep for minutes."""

    id: str
    text: str


NOTE_TEXT = 240
"""Characters of a message an inbox line keeps (`compact_json` cuts there too)."""


def _noted(data: Any) -> Any:
    """A notification's payload as a line keeps it: a message becomes a `MessageNote`."""
    message_id = getattr(data, "id", None)
    text = getattr(data, "text", None)
    if isinstance(message_id, str) and isinstance(text, str):
        return MessageNote(message_id, text[:NOTE_TEXT])
    return data


@dataclass(slots=True)
class FlushBatch:
    """What changed since the previous flush, by agent id."""

    structure: bool = False
    agents: set[str] = field(default_factory=set)
    transcripts: set[str] = field(default_factory=set)
    inboxes: set[str] = field(default_factory=set)
    log_from: int = 0
    log_to: int = 0


class Bridge:
    """Records what the world says; flushes it to `on_flush` at most ~60 times a second."""

    def __init__(self, ctx: ContextSurface, schedule: Scheduler,
                 clock: Callable[[], float] = time.monotonic,
                 flush_interval: float = FLUSH_INTERVAL) -> None:
        self.ctx = ctx
        self.flush_interval = flush_interval
        """Seconds between two flushes. 0 turns coalescing off: every change is flushed
        (and the visible transcript re-rendered) at the next turn of the event loop, which
        is the one-render-per-chunk baseline `benchmarks/bench_stream.py` compares with."""
        self.views: dict[str, AgentView] = {}
        self.log = LineRing(LOG_LIMIT, LogEntry)
        self.chunk_log = LineRing(CHUNK_LOG_LIMIT, LogEntry)
        self.log_serial = 0
        self.flush_count = 0
        self.on_flush: Callable[[FlushBatch], Any] | None = None
        self._schedule_cb = schedule
        self._clock = clock
        self._offs: list[Callable[[], None]] = []
        self._structure = False
        self._agents: set[str] = set()
        self._sessions: set[str] = set()
        self._inboxes: set[str] = set()
        self._log_mark = 0
        self._scheduled = False
        self._wake_deadline: float | None = None
        self._last_flush = float("-inf")
        self._suppressed: set[str] = set()
        self._reading: set[str] = set()
        """Agents whose log is being read for receipts and the timeline (`want_reading`)."""
        self._batch = 0
        self._stopped = False

    # -- lifecycle ----------------------------------------------------------------------------

    def start(self) -> None:
        """Register the listeners and adopt the agents that already exist."""
        on = self.ctx.on
        self._offs = [
            on("agent/created", self._on_created),
            on("agent/disposed", self._on_disposed),
            on("agent/status", self._on_status),
            on("agent/inbox/inserted", self._on_inserted),
            on("agent/inbox/claimed", self._on_claimed),
            on("agent/inbox/discarded", self._on_discarded),
            on("agent/inbox/held", self._on_hold),
            on("agent/inbox/released", self._on_hold),
            on("agent/error", self._on_error),
            on("session/event", self._on_session_event),
            on("agent/assistant-stream", self._on_stream),
        ]
        for agent in self.ctx.agents.list():
            self._adopt(agent)
        self._structure = True
        self._schedule()

    def stop(self) -> None:
        """Unhook every listener and drop pending wakes: the app is closing and must not
        be called back into by agents that outlive it."""
        self._stopped = True
        for off in self._offs:
            try:
                off()
            except Exception:
                pass
        self._offs = []

    def _adopt(self, agent: Agent) -> AgentView:
        view = self.views.get(agent.id)
        if view is None or view.agent is not agent:
            view = AgentView(agent)
            self.views[agent.id] = view
        self._sessions.add(agent.id)
        self._agents.add(agent.id)
        self._inboxes.add(agent.id)
        return view

    # -- scheduling ---------------------------------------------------------------------------

    def _schedule_wake(self, delay: float) -> None:
        """A flush when the next tombstone expires (one pending wake-up, not one per item)."""
        if self._stopped:
            return
        deadline = self._clock() + delay
        if self._wake_deadline is not None and self._wake_deadline <= deadline:
            return
        self._wake_deadline = deadline
        self._schedule_cb(delay, self._wake)

    def _schedule(self) -> None:
        if self._stopped or self._scheduled:
            return
        self._scheduled = True
        wait = max(0.0, self._last_flush + self.flush_interval - self._clock())
        try:
            self._schedule_cb(wait, self._scheduled_flush)
        except Exception:
            self._scheduled = False

    def _scheduled_flush(self) -> None:
        """The scheduled flush. It is not held while the person types: folding events into
        the models is cheap in small slices and dear in big ones (a step's chunks are packed
        once it ends, and reading them back unpacks them)."""
        if self._scheduled:
            self.flush()

    def _wake(self) -> None:
        now = self._clock()
        if self._wake_deadline is not None and self._wake_deadline > now + 0.01:
            return  # superseded by an earlier wake-up that will reschedule
        self._wake_deadline = None
        later: list[float] = []
        for view in self.views.values():
            if view.tombstones:
                self._inboxes.add(view.id)
                self._agents.add(view.id)
                later.extend(t.expires for t in view.tombstones if t.expires > now)
        self._schedule()
        if later:
            self._schedule_wake(min(later) - now + 0.05)

    def suppress_tombstones(self, *message_ids: str) -> None:
        """The UI is about to move these items itself: their removal is not a discard."""
        self._suppressed.update(message_ids)

    def want_reading(self, agent_id: str) -> bool:
        """Read this agent's log for its receipts and timeline, a slice per flush, if it
        is not read yet; True when it already is. The flush that finishes it marks the
        agent's inbox (the pane then lists the receipts)."""
        view = self.views.get(agent_id)
        if view is None:
            return False
        if view.want_reading():
            return True
        self._reading.add(agent_id)
        self._schedule()
        return False

    def mark_inbox(self, agent_id: str) -> None:
        """This agent's inbox rows must be rebuilt at the next flush (a change the inbox
        listeners did not see, e.g. a put-back or a dismissed offer)."""
        self._inboxes.add(agent_id)
        self._agents.add(agent_id)
        self._schedule()

    # -- listeners: record and mark, nothing else ----------------------------------------------

    def _note(self, agent_id: str, kind: str, data: Any) -> None:
        self.log_serial += 1
        self.log.append(self.log_serial, agent_id, kind, None, _noted(data))

    def _log_durable(self, agent_id: str, session: Any, event: Any) -> None:
        """One durable line (the serial is already taken); chunks go to their own ring.
        The line keeps the session, not the event (`LogEntry`)."""
        ring = self.chunk_log if event.type == "assistant/chunk" else self.log
        ring.append(self.log_serial, agent_id, event.type, event.seq, session)

    def _on_created(self, payload: Mapping[str, Any]) -> None:
        agent = payload["agent"]
        self._adopt(agent)
        self._structure = True
        self._note(agent.id, "agent/created", None)
        self._schedule()

    def _on_disposed(self, payload: Mapping[str, Any]) -> None:
        agent = payload["agent"]
        view = self.views.get(agent.id)
        if view is not None and view.agent is agent:
            view.disposed = True
        self._structure = True
        self._note(agent.id, "agent/disposed", None)
        self._schedule()

    def _on_status(self, payload: Mapping[str, Any]) -> None:
        agent = payload["agent"]
        self._agents.add(agent.id)
        self._note(agent.id, "agent/status", payload.get("status"))
        self._schedule()

    def _on_inserted(self, payload: Mapping[str, Any]) -> None:
        agent = payload["agent"]
        self._note(agent.id, "agent/inbox/inserted", payload.get("message"))
        self.mark_inbox(agent.id)

    def _on_claimed(self, payload: Mapping[str, Any]) -> None:
        agent = payload["agent"]
        message = payload.get("message")
        view = self.views.get(agent.id)
        if view is not None and message is not None:
            turn = payload.get("turn")
            view.claimed[message.id] = turn if isinstance(turn, int) else None
            target = view.transcript.targets.get(message.id)
            view.tombstones.append(Tombstone(
                message, target or "", 0, lane_of(message.source, target), "claimed",
                self._clock() + CLAIM_TTL, turn if isinstance(turn, int) else None))
            self._schedule_wake(CLAIM_TTL + 0.05)
        self._note(agent.id, "agent/inbox/claimed", message)
        self.mark_inbox(agent.id)

    def _on_discarded(self, payload: Mapping[str, Any]) -> None:
        agent = payload["agent"]
        self._note(agent.id, "agent/inbox/discarded", payload.get("message"))
        self.mark_inbox(agent.id)

    def _on_hold(self, payload: Mapping[str, Any]) -> None:
        """An edit hold began or ended (docs/contract.md §3.8): the item's badge, the tree
        row's and the title change."""
        agent = payload["agent"]
        message = payload.get("message")
        message_id = getattr(message, "id", None) or payload.get("message_id")
        reason = payload.get("reason")
        self._note(agent.id, "agent/inbox/released" if reason else "agent/inbox/held",
                   {"id": message_id, "reason": reason} if reason else {"id": message_id})
        view = self.views.get(agent.id)
        if view is not None and view.reading_ready and isinstance(message_id, str):
            # live only (the log records the waits, not the editor): the timeline shows it
            view.timeline.note("release" if reason else "hold", int(time.time() * 1000),
                               message_id, "system" if reason == "lapsed" else "person",
                               detail=str(reason or ""))
        self.mark_inbox(agent.id)

    def _on_error(self, payload: Mapping[str, Any]) -> None:
        agent = payload["agent"]
        error = payload.get("error")
        view = self.views.get(agent.id)
        if view is not None:
            view.last_error = str(error)
        self._agents.add(agent.id)
        self._note(agent.id, "agent/error", str(error))
        self._schedule()

    def _on_stream(self, payload: Mapping[str, Any]) -> None:
        """A live reply frame of an agent whose chunks are not durable (a dsh runtime's):
        its view folds it at the next flush, among the session events (`live_stream.py`)."""
        view = self.views.get(payload["agent"].id)
        frame = payload.get("frame")
        if view is not None and isinstance(frame, Mapping) and view.live(frame):
            self._sessions.add(view.id)
            self._schedule()

    def _on_session_event(self, session: Any, event: Any) -> None:
        view = self.views.get(session.id)
        if view is None:
            return  # caught up from session.events when its agent is created
        if event.type == "agent/inbox/spliced":
            data = event.data
            # The durable splice is published before the projection changes, so the
            # removed messages (and where they were) can still be read here.
            removed = data.get("removedCount", 0) if isinstance(data, Mapping) else 0
            if removed and data.get("outcome") == "canceled":
                target = data.get("target")
                start = data.get("start", 0)
                inbox = view.agent.inbox
                items = inbox.next_turn if target == "next-turn" else inbox.next_step
                for offset, message in enumerate(items[start:start + removed]):
                    view.removed_pending.append((message, str(target), start + offset))
            self._inboxes.add(view.id)
        view.arrived(event)
        if view.logged == event.seq:  # logged now, so it sits in order among notifications
            self.log_serial += 1
            self._log_durable(view.id, session, event)
            view.logged = event.seq + 1
        self._sessions.add(view.id)
        self._schedule()

    # -- the flush ----------------------------------------------------------------------------

    def flush(self) -> FlushBatch:
        """Fold recorded changes into the view models and hand one batch to `on_flush`."""
        self._scheduled = False
        if self._stopped:
            return FlushBatch()
        now = self._clock()
        self._last_flush = now
        self.flush_count += 1
        batch = FlushBatch(structure=self._structure, agents=self._agents,
                           inboxes=self._inboxes, log_from=self._log_mark)
        self._structure = False
        self._agents = set()
        self._inboxes = set()
        sessions, self._sessions = self._sessions, set()
        for agent_id in sessions:
            view = self.views.get(agent_id)
            if view is None:
                continue
            title = view.transcript.title
            start = view.applied
            unsent = view.unsent.version
            receipts = view.receipts_version
            live = view.live_applied
            fresh = view.catch_up()
            if view.unsent.version != unsent:
                batch.inboxes.add(agent_id)  # claimed-never-sent messages came or went
                batch.agents.add(agent_id)
            elif view.receipts_version != receipts:
                batch.inboxes.add(agent_id)  # a sent message's receipt moved on (answered)
            if view.live_applied != live:
                batch.transcripts.add(agent_id)  # live chunks of a remote reply
            if fresh:
                batch.transcripts.add(agent_id)
                for index, event in enumerate(fresh, start):
                    if index < view.logged:
                        continue  # the listener logged it as it happened
                    self.log_serial += 1
                    self._log_durable(agent_id, view.agent.session, event)
                view.logged = max(view.logged, view.applied)
                if view.transcript.title != title:
                    batch.agents.add(agent_id)
        for agent_id in list(self._reading):
            view = self.views.get(agent_id)
            if view is None or view.read_some(READ_BUDGET):
                self._reading.discard(agent_id)
                batch.inboxes.add(agent_id)
                batch.agents.add(agent_id)
                batch.transcripts.add(agent_id)  # its sent messages' receipts
            else:
                batch.agents.add(agent_id)  # (the timeline shows how far it has read)
        if self._reading:
            self._schedule()  # the next slice at the next flush
        self._batch += 1
        for agent_id in batch.inboxes:
            view = self.views.get(agent_id)
            if view is not None:
                self._settle_tombstones(view, now)
        for view in self.views.values():
            if view.tombstones and any(t.expires <= now for t in view.tombstones):
                view.tombstones = [t for t in view.tombstones if t.expires > now]
                batch.inboxes.add(view.id)
        self._suppressed.clear()
        if batch.structure:
            for agent_id in [a for a, v in self.views.items() if v.disposed]:
                del self.views[agent_id]
        batch.log_to = self.log_serial
        self._log_mark = self.log_serial
        if self.on_flush is not None:
            self.on_flush(batch)
        return batch

    def _settle_tombstones(self, view: AgentView, now: float) -> None:
        inbox = view.agent.inbox
        if any(t.kind == "discarded" and inbox.get(t.message.id) is not None
               for t in view.tombstones):  # back in the inbox (an undo, a put-back)
            view.tombstones = [t for t in view.tombstones
                               if t.kind != "discarded" or inbox.get(t.message.id) is None]
        pending, view.removed_pending = view.removed_pending, []
        if not pending:
            return
        added = False
        for message, target, index in pending:
            if message.id in self._suppressed or inbox.get(message.id) is not None:
                continue  # an edit (replace) or a move: the item is still pending
            view.tombstones.append(Tombstone(message, target, index,
                                             lane_of(message.source, target), "discarded",
                                             now + DISCARD_TTL, batch=self._batch))
            added = True
        if added:
            self._schedule_wake(DISCARD_TTL + 0.05)

    # -- reading ------------------------------------------------------------------------------

    def entries_since(self, serial: int, chunks: bool = True) -> list[LogEntry]:
        """Log entries with a serial above `serial` (the event log's incremental feed);
        without `chunks`, the chunk ring is not read (a filter hiding stream chunks)."""
        fresh: list[LogEntry] = self.log.newer_than(serial)
        if chunks:
            fresh += self.chunk_log.newer_than(serial)
            fresh.sort(key=lambda entry: entry.serial)
        return fresh

    def entries_newest_first(self) -> Iterator[LogEntry]:
        """Every remembered entry, newest first (both rings merged by serial)."""
        return heapq.merge(reversed(self.log), reversed(self.chunk_log),
                           key=lambda entry: -entry.serial)
