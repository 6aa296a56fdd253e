"""Following one runtime session: a gap-free, duplicate-free copy of its log, across reconnects.

`session/follow` opens with a snapshot and then sends every later event in seq order,
interleaved with live `assistant-stream` frames, but it has no "resume from seq"
argument: after a drop the follower opens it again and reconciles what it holds with
what arrives. The reconciling rules (duplicates, mismatches, gaps, held frames, the live
reply resumed by chunk index) are on `Follower`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dsh_tui.harness.jsonvalue import json_equal

from .mux import Stream
from .stream import expand
from .wire import RemoteError

if TYPE_CHECKING:
    from .agent import RemoteAgent
    from .world import RemoteWorld

PAGE_MESSAGES = 500
"""Messages per history page when filling what a snapshot does not reach back to."""


@dataclass
class FollowStats:
    """What reconciling saw: every count but `resyncs` and `duplicates` must stay 0."""

    snapshots: int = 0
    resyncs: int = 0
    duplicates: int = 0
    """Events the runtime sent again after a reconnect, identical to the ones held."""
    mismatches: int = 0
    """Events sent again that differ from the ones held (a bug, reported)."""
    gaps: int = 0
    """Live events whose seq skipped ahead (repaired by reopening)."""


class Follower:
    """Keeps one agent's session in step with the runtime (see the module docstring).

    The snapshot holds the last ~N messages' events up to `cursor`, plus the live reply so
    far. Events the follower already holds must be exactly what it holds (counted as
    `duplicates`, not admitted again; a difference is a `mismatch`); events it lacks
    before the snapshot's first are read with `session/page`; anything out of order on the
    live stream is a `gap`, and the follower reopens to repair it. Frames that arrive
    while a snapshot is being reconciled wait and are handled after it, in arrival order.
    The live reply is resumed from the snapshot's `activeAttempt` by chunk index, so a
    chunk is shown once even when the socket dropped in the middle of it.
    """

    def __init__(self, world: RemoteWorld, agent: RemoteAgent,
                 address: Mapping[str, Any]) -> None:
        self.world = world
        self.agent = agent
        self.address = dict(address)
        self.stats = FollowStats()
        self.opened = asyncio.Event()
        """Set once the first snapshot is reconciled (the log is complete up to it)."""
        self.failed: RemoteError | None = None
        self._syncing = False
        self._held: list[Any] = []
        self._generation = 0
        self._revision: int | None = None
        self._attempts: dict[str, int] = {}
        """attemptId → the next chunk index this client has not passed on yet."""
        self.stream = Stream("session/follow", self._args, self._on_item,
                             on_error=self._on_error, on_reset=self._on_reset)

    def start(self) -> None:
        """Open the follow stream on the world's socket."""
        self.world.mux.open(self.stream)

    def stop(self) -> None:
        """Stop following."""
        self._generation += 1
        self.world.mux.end(self.stream)

    def _args(self) -> dict[str, Any]:
        return {"request": {"address": self.address, "assistantStream": True,
                            "maxMessages": PAGE_MESSAGES}}

    # -- the stream's frames --------------------------------------------------------------------

    def _on_reset(self) -> None:
        """The socket dropped: what was waiting belongs to the old stream."""
        self._generation += 1
        self._syncing = False
        self._held.clear()
        self._revision = None

    def _on_error(self, error: RemoteError) -> None:
        self.failed = error
        self.opened.set()
        self.world.notice(f"Stopped following {self.agent.name}: {error}", self.agent.id)

    def _on_item(self, value: Any) -> None:
        if not isinstance(value, Mapping):
            return
        if value.get("type") == "snapshot":
            self._syncing = True
            self._held.clear()
            generation = self._generation
            self.world.spawn(self._reconcile(value, generation))
        elif self._syncing:
            self._held.append(value)
        else:
            self._handle(value)

    def _handle(self, value: Mapping[str, Any]) -> None:
        kind = value.get("type")
        if kind == "event" and isinstance(value.get("event"), Mapping):
            self._live_event(value["event"])
        elif kind == "assistant-stream" and isinstance(value.get("frame"), Mapping):
            self._live_frame(value["frame"])

    def _live_event(self, record: Mapping[str, Any]) -> None:
        seq = record.get("seq")
        expected = self.agent.session.seq
        if type(seq) is not int:
            return
        if seq < expected:
            self._check_held(record)
        elif seq > expected:
            self.stats.gaps += 1
            self._resync()
        else:
            self.agent.admit(record)

    def _live_frame(self, frame: Mapping[str, Any]) -> None:
        revision = frame.get("revision")
        if type(revision) is int and self._revision is not None:
            if revision <= self._revision:
                return  # a frame the baseline already stood for
            if revision != self._revision + 1:
                self.stats.gaps += 1
                self._resync()
                return
        if type(revision) is int:
            self._revision = revision
        attempt = str(frame.get("attemptId"))
        if frame.get("type") == "start":
            self._attempts[attempt] = 0
        elif frame.get("type") == "chunk":
            index = frame.get("index")
            if type(index) is int:
                if index < self._attempts.get(attempt, 0):
                    return
                self._attempts[attempt] = index + 1
        elif frame.get("type") == "end":
            self._attempts.pop(attempt, None)
        self.agent.stream(frame)

    def _check_held(self, record: Mapping[str, Any]) -> None:
        held = self.agent.session.wire[int(record["seq"])]
        if json_equal(held, dict(record)):
            self.stats.duplicates += 1
        else:
            self.stats.mismatches += 1
            self.world.notice(f"{self.agent.name}: the runtime sent seq {record['seq']} again, "
                              "different from before; the first one is kept", self.agent.id)

    def _resync(self) -> None:
        """Reopen the follow stream: its snapshot repairs whatever was skipped."""
        self.stats.resyncs += 1
        self._generation += 1
        self._syncing = False
        self._held.clear()
        self.world.mux.end(self.stream)
        self.stream = Stream("session/follow", self._args, self._on_item,
                             on_error=self._on_error, on_reset=self._on_reset)
        self.world.mux.open(self.stream)

    # -- the snapshot ---------------------------------------------------------------------------

    async def _reconcile(self, snapshot: Mapping[str, Any], generation: int) -> None:
        try:
            records = await self._complete(snapshot, generation)
        except RemoteError as error:
            if generation == self._generation:
                self.world.notice(f"Could not read the history of {self.agent.name}: {error}",
                                  self.agent.id)
                self._syncing = False
                self.opened.set()
            return
        if generation != self._generation:
            return  # the socket dropped meanwhile: the next snapshot starts over
        self.stats.snapshots += 1
        header = snapshot.get("header")
        if isinstance(header, Mapping):
            self.agent.session.adopt_header(header)
        for record in records:
            self._live_event(record)
        baseline = snapshot.get("assistantStream")
        if isinstance(baseline, Mapping):
            self._baseline(baseline)
        self._syncing = False
        held, self._held = self._held, []
        for value in held:
            if self._syncing or generation != self._generation:
                break
            self._handle(value)
        self.opened.set()

    async def _complete(self, snapshot: Mapping[str, Any],
                        generation: int) -> list[Mapping[str, Any]]:
        """The snapshot's records, preceded by the pages between what is held and them."""
        records = [r["event"] for r in snapshot.get("records") or ()
                   if isinstance(r, Mapping) and isinstance(r.get("event"), Mapping)]
        cursor = snapshot.get("cursor")
        held = self.agent.session.seq
        first = records[0]["seq"] if records else (cursor + 1 if type(cursor) is int else held)
        while type(first) is int and first > held and type(cursor) is int:
            page = await self.world.rpc.call("session/page", {"request": {
                "address": self.address, "throughSeq": cursor, "beforeSeq": first,
                "maxMessages": PAGE_MESSAGES}})
            if generation != self._generation:
                return []
            earlier = [r["event"] for r in (page or {}).get("records") or ()
                       if isinstance(r, Mapping) and isinstance(r.get("event"), Mapping)]
            if not earlier or earlier[0]["seq"] >= first:
                break
            records = earlier + records
            first = earlier[0]["seq"]
            if not (page or {}).get("hasMore"):
                break
        return records

    def _baseline(self, baseline: Mapping[str, Any]) -> None:
        """Resume the live reply from the snapshot: the chunks not passed on yet."""
        revision = baseline.get("revision")
        self._revision = revision if type(revision) is int else None
        active = baseline.get("activeAttempt")
        attempt = str(active.get("attemptId")) if isinstance(active, Mapping) else None
        # An attempt that ended while the socket was down ended in the durable records just
        # admitted (its message closes what was shown): nothing more comes for it.
        self._attempts = {a: n for a, n in self._attempts.items() if a == attempt}
        if not isinstance(active, Mapping) or attempt is None:
            return
        if attempt not in self._attempts:
            self._attempts[attempt] = 0
            self.agent.stream({"type": "start", "attemptId": attempt, "turn": active.get("turn"),
                               "step": active.get("step"),
                               "startedAfterSeq": active.get("startedAfterSeq")})
        done = self._attempts[attempt]
        for index, (time, chunk) in enumerate(expand(active.get("stream"))):
            if index < done:
                continue
            self._attempts[attempt] = index + 1
            self.agent.stream({"type": "chunk", "attemptId": attempt, "index": index,
                               "time": time, "chunk": chunk})
