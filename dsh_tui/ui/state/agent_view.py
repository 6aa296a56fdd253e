"""The per-agent view: everything the screen knows about one agent, kept current by the bridge."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from dsh_tui.harness.agent import Agent
from dsh_tui.harness.messages import UserMessage

from .activity import Activity
from .inbox_reading import InboxReading
from .inbox_rows import Tombstone
from .live_stream import LiveChunk, LiveStream
from .receipts import ReceiptBook
from .text import visible_label
from .timeline import Timeline
from .transcript import Stamp, TranscriptModel
from .unsent import UnsentTracker


class AgentView:
    """Everything the screen knows about one agent, kept current by the bridge."""

    def __init__(self, agent: Agent, now_ms: float | None = None) -> None:
        self.agent = agent
        self.id: str = agent.id
        self.transcript = self._fresh_model()
        # Whole milliseconds, as event `time` fields are: a turn that ends within the
        # millisecond of adoption is live, not history.
        self.activity = Activity(time.time_ns() // 1_000_000 if now_ms is None else now_ms)
        """What the agent is doing, for its tree row and the needs-you count."""
        self.applied = 0
        self._arrived: list[Any] = []
        """Events handed to the bridge's listener since `applied`, in seq order: the next
        catch-up folds these objects instead of reading the session back."""
        self.logged = 0
        self.tombstones: list[Tombstone] = []
        self.removed_pending: list[tuple[UserMessage, str, int]] = []
        self.claimed: dict[str, int | None] = {}
        self.unsent = UnsentTracker()
        self._seed = int(agent.session.header.get("seedLength", 0) or 0)
        self.disposed = False
        self.last_error: str | None = None
        self._live: list[tuple[int, LiveChunk]] = []
        """Live reply chunks (`agent/assistant-stream`) since the last catch-up, each with
        how many durable events the session held when it came: where it goes among them."""
        self._stream = LiveStream()
        self.live_applied = 0
        """Live chunks folded so far (the bridge redraws a transcript when this moves)."""
        self._reading: InboxReading | None = None
        self._read_upto = 0
        """Events folded into the reading (it has caught up when this is `applied`)."""

    def _fresh_model(self) -> TranscriptModel:
        """An empty transcript, saying first how much of a huge log lies before the part
        loaded (`dsh-tui view` holds a window of a big log's pages)."""
        model = TranscriptModel()
        # Only a recorded log opened by its pages (`ReadOnlySession`) skips bytes.
        skipped = getattr(self.agent.session, "skipped_bytes", 0)
        if skipped:
            model.note(f"… {_amount(skipped)} earlier in this log are not loaded: scroll up "
                       "(home) to read them", level="warning")
        return model

    def page(self, earlier: bool) -> int | None:
        """Move a paged log's window one page (earlier or later) and rebuild the transcript
        from it. Returns the index of the item where the newly read page meets what was
        shown before (so the screen can stay there), or None when the log has no more
        pages that way (or is not paged)."""
        session = self.agent.session
        # Only a recorded log opened by its pages (`ReadOnlySession`) can move.
        move = getattr(session, "page_earlier" if earlier else "page_later", None)
        if getattr(session, "pages", None) is None or move is None:
            return None
        if earlier:
            added = move()
            if not added:
                return None
            before = session.events[:added]
        else:
            count = len(session.events)
            dropped = move()
            if dropped < 0:
                return None
            before = session.events[:count - dropped]
        probe = self._fresh_model()
        probe.apply_all(before)
        self.transcript = self._fresh_model()
        self.unsent = UnsentTracker()
        self._reading = None
        self.activity = Activity(self.activity.live_from)
        self.applied = 0
        self.catch_up()
        self.logged = self.applied
        later = getattr(session, "later_bytes", 0)
        if later:
            self.transcript.note(f"… {_amount(later)} later in this log are not loaded: "
                                 "scroll down to read them", level="warning")
        return len(probe.items)

    # -- the log read as inbox operations: receipts and the timeline ----------------------------

    @property
    def reading(self) -> InboxReading:
        """The log read as inbox operations (`state/inbox_reading.py`), possibly not read to
        its end yet (`reading_ready`). Made when first wanted (`want_reading`), read in
        slices (`read_some`, driven by the bridge's flushes: a 100,000-event log never
        holds a frame) and kept current by `catch_up` from then on; an agent nobody looks
        at costs nothing per event."""
        reading = self._reading
        if reading is None:
            reading = self._reading = InboxReading(self._seed)
            self._read_upto = 0
        return reading

    @property
    def reading_ready(self) -> bool:
        """Whether the reading has folded every event the view has applied."""
        return self._reading is not None and self._read_upto >= self.applied

    @property
    def reading_progress(self) -> float:
        """How much of the log the reading has folded (0..1)."""
        if self._reading is None:
            return 0.0
        return 1.0 if self._read_upto >= self.applied else self._read_upto / self.applied

    def want_reading(self) -> bool:
        """Make the reading if there is none; True when it is ready to show."""
        self.reading  # noqa: B018  (made on first use)
        return self.reading_ready

    def read_some(self, budget: float, clock: Callable[[], float] = time.perf_counter,
                  ) -> bool:
        """Fold events into the reading for about `budget` seconds; True when it has
        caught up (it is then settled and `catch_up` keeps it current)."""
        reading = self.reading
        events = self.agent.session.events
        end = min(self.applied, len(events))
        upto = self._read_upto
        deadline = clock() + budget
        apply = reading.apply
        while upto < end:
            stop = min(end, upto + READ_SLICE)
            for event in events[upto:stop]:
                apply(event)
            upto = stop
            if clock() >= deadline:
                break
        self._read_upto = max(upto, self._read_upto)
        if self._read_upto >= self.applied:
            reading.settle()
            self._stamp_transcript()
            return True
        return False

    @property
    def receipts(self) -> ReceiptBook:
        """Every message's receipt (`state/receipts.py`; complete once `reading_ready`)."""
        return self.reading.receipts

    @property
    def receipts_version(self) -> int:
        """The receipts' version (-1 while nobody reads the log): a flush that changes it
        redraws the inbox, whose sent messages show their receipts."""
        return self._reading.receipts.version if self._reading is not None else -1

    @property
    def timeline(self) -> Timeline:
        """The inbox timeline (`state/timeline.py`; complete once `reading_ready`)."""
        return self.reading.timeline

    @property
    def waiting_on(self) -> tuple[str, ...]:
        """Ids the agent waits on at a boundary for their edit (§3.8), per its log; ()
        until the reading is ready."""
        return self.reading.receipts.waiting_on if self.reading_ready else ()

    @property
    def name(self) -> str:
        """The display name: the latest `session/title`, else the agent id."""
        return self.transcript.title or visible_label(self.id)

    @property
    def model(self) -> str:
        """The model name shown for the agent: its route's, else the last one the log names.
        A label, so made safe to show (a config or a crafted log may name any string)."""
        return visible_label(str(self.agent.options.model or self.transcript.model_label or ""))

    @property
    def route(self) -> str:
        """The agent's route (its provider name: a `[routes.NAME]` or a built-in one)."""
        return str(getattr(getattr(self.agent, "options", None), "provider", None) or "")

    @property
    def route_label(self) -> str:
        """`route · model`, or just the model when the route is named after it."""
        route, model = visible_label(self.route), self.model
        if not route or route == model:
            return model
        return f"{route} · {model}" if model else route

    def arrived(self, event: Any) -> None:
        """The bridge's listener heard `event` appended: keep it for the next catch-up.

        Reading the session back instead costs little while the events are live objects,
        but a step's chunks are packed as soon as it ends (`harness/eventlog.py`), and the
        chunks that arrived since the last flush are then decoded with their whole run, up
        to hundreds of chunks: 10-50 ms in one flush, at every step end of every agent. Only
        an event that continues the run of kept ones is kept; any gap reads the session."""
        arrived = self._arrived
        if event.seq == self.applied + len(arrived):
            arrived.append(event)

    def live(self, frame: Mapping[str, Any]) -> bool:
        """The bridge heard a live reply frame: keep its chunk for the next catch-up, placed
        after the durable events the session holds now. False: the frame shows nothing."""
        chunk = self._stream.chunk_of(frame)
        if chunk is None:
            return False
        self._live.append((len(self.agent.session.events), chunk))
        return True

    def catch_up(self) -> list[Any]:
        """Apply session events appended since the last call (and live chunks, each where it
        came among them); returns the session events (for the event log)."""
        arrived, self._arrived = self._arrived, []
        live, self._live = self._live, []
        events = self.agent.session.events
        count = len(events)
        if live:
            return self._catch_up_live(events, count, live)
        if count <= self.applied:
            return []
        if arrived and arrived[0].seq == self.applied and len(arrived) == count - self.applied:
            fresh: Any = arrived  # every one was heard, in order (`arrived`)
        else:
            fresh = events[self.applied:count]
        apply = self.transcript.apply
        fold = self.unsent.apply
        track = self.activity.apply
        for index, event in enumerate(fresh, self.applied):
            apply(event)
            track(event)
            if index >= self._seed:  # the seed is the parent's history, not this inbox
                fold(event)
        self._fold_receipts(fresh)
        self.applied = count
        return list(fresh)


    def _catch_up_live(self, events: Any, count: int,
                       live: list[tuple[int, LiveChunk]]) -> list[Any]:
        fresh = list(events[self.applied:count]) if count > self.applied else []
        apply = self.transcript.apply
        fold = self.unsent.apply
        track = self.activity.apply  # durable events only: it ignores stream chunks
        self.live_applied += len(live)
        pending = iter(live)
        upcoming = next(pending, None)
        for index, event in enumerate(fresh, self.applied):
            while upcoming is not None and upcoming[0] <= index:
                apply(upcoming[1])
                upcoming = next(pending, None)
            apply(event)
            track(event)
            if index >= self._seed:
                fold(event)
        while upcoming is not None:
            apply(upcoming[1])
            upcoming = next(pending, None)
        self._fold_receipts(fresh)
        self.applied = max(self.applied, count)
        return fresh

    def _fold_receipts(self, fresh: Any) -> None:
        """Keep the reading current once it has caught up (before that, `read_some` folds
        these events in its turn)."""
        reading = self._reading
        if reading is not None and self._read_upto == self.applied:
            for event in fresh:
                reading.apply(event)
            reading.settle()  # a move's two halves are appended in one call: never split
            self._read_upto += len(fresh)
            self._stamp_transcript()

    def _stamp_transcript(self) -> None:
        """Each sent message whose receipt changed shows it again on its transcript item
        (that item alone is drawn again): the same reading as the inbox's receipts."""
        reading = self._reading
        if reading is None:
            return
        book = reading.receipts
        stamp = self.transcript.set_receipt
        for message_id in book.drain_changed():
            receipt = book.get(message_id)
            if receipt is not None and receipt.sent_seq is not None:
                stamp(receipt.sent_seq, Stamp(receipt.state, receipt.trail(), message_id,
                                            receipt.sent_seq))


READ_SLICE = 256
"""Events folded between two looks at the clock (`read_some`)."""


def _amount(size: int) -> str:
    return f"{size / 1e6:,.0f} MB" if size >= 1e6 else f"{size:,} bytes"
