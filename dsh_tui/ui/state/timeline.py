"""The inbox timeline: an agent's turns, steps, claims and inbox operations on one time axis.

Built from the same reading of the log as the receipts (`inbox_log.InboxLogReader`), so
live, resumed and stored logs (ours or upstream's) show the same way. It answers where a
claim fell relative to a steer's arrival, who did what (person, model, system) and what
an edit changed (a word diff), filtered by message, lane or actor. Plain Python: a view
asks for `line(i)` of the rows it draws, so 10,000 operations cost one fold to open.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass

from .inbox_log import INBOX_KINDS, MODEL, PERSON, SYSTEM, Fact, InboxLogReader
from .text import one_line, short_id

MESSAGE_KINDS = INBOX_KINDS | {"sent"}
"""Entries about one message (a filter by message, lane or actor applies to these)."""

_VERBS = {
    "insert": "queued", "edit": "edited", "refile": "re-filed", "move": "moved",
    "remove": "removed", "merge": "merged", "split": "split off", "claim": "claimed",
    "put-back": "put back", "sent": "sent", "turn-start": "turn starts",
    "turn-end": "turn ends", "step-start": "step starts", "step-end": "step ends",
    "request": "request", "reply": "reply", "tool-call": "tool call",
    "tool-result": "tool result", "hold-wait": "waits for an edit",
    "hold-end": "stops waiting", "hold": "editor opened", "release": "editor closed",
}


@dataclass(frozen=True, slots=True)
class TimelineFilter:
    """Which entries to keep: message entries matching every set filter; boundaries
    (turns, steps, requests, tools, hold waits) only when `boundaries` is on."""

    message: str | None = None
    lanes: frozenset[str] = frozenset()
    actors: frozenset[str] = frozenset()
    boundaries: bool = True

    def keeps(self, entry: Fact) -> bool:
        """Whether `entry` passes."""
        if entry.kind not in MESSAGE_KINDS and entry.kind not in ("hold", "release"):
            if not self.boundaries:
                return False
            if self.message is not None and entry.kind in ("hold-wait",):
                return self.message in entry.related
            return True
        if self.message is not None and entry.message_id != self.message and \
                self.message not in entry.related:
            return False
        if self.lanes and entry.lane not in self.lanes:
            return False
        return not (self.actors and entry.actor not in self.actors)

    @property
    def active(self) -> bool:
        """Whether anything is filtered out."""
        return self.message is not None or bool(self.lanes) or bool(self.actors) or \
            not self.boundaries

    def describe(self) -> str:
        """The filter in words, for the view's title ("all entries" when none)."""
        parts = []
        if self.message is not None:
            parts.append(f"message #{short_id(self.message)}")
        if self.lanes:
            parts.append("lanes " + ", ".join(sorted(self.lanes)))
        if self.actors:
            parts.append("by " + ", ".join(sorted(self.actors)))
        if not self.boundaries:
            parts.append("inbox only")
        return " · ".join(parts) or "all entries"


@dataclass(frozen=True, slots=True)
class Jump:
    """Where an entry's step into the transcript lands: the event `seq` to show, and
    whether it is the message's own `user/message` (`entered`: where the message entered
    the model's context) or only the moment the entry happened."""

    seq: int
    message_id: str | None = None
    entered: bool = False


class Timeline:
    """One agent's timeline: `apply` each event (or `apply_all` a log), read `entries`,
    `visible` (the filtered indices) and `line(i)`."""

    def __init__(self, seed_length: int = 0, reader: InboxLogReader | None = None) -> None:
        self.reader = reader if reader is not None else InboxLogReader(seed_length)
        self.entries: list[Fact] = []
        self.origin: int | None = None
        """The time (epoch ms) the axis starts at: the first entry's."""
        self._filter = TimelineFilter()
        self._visible: list[int] | None = None
        self._arrived: dict[str, tuple[int, str | None, int | None]] = {}
        self._tool_open: dict[int | None, str] = {}
        self.version = 0

    # -- folding ------------------------------------------------------------------------------

    def apply(self, event: object) -> None:
        """Fold one session event."""
        for fact in self.reader.apply(event):
            self._add(fact)

    def apply_all(self, events: Iterable[object]) -> Timeline:
        """Fold a whole log, then settle; returns self."""
        add = self._add
        apply = self.reader.apply
        for event in events:
            for fact in apply(event):
                add(fact)
        self.settle()
        return self

    def settle(self) -> None:
        """Resolve a held-back removal (a claim) now."""
        for fact in self.reader.settle():
            self._add(fact)

    def note(self, kind: str, time: int, message_id: str, actor: str = PERSON,
             detail: str = "") -> None:
        """A live entry the log does not record: an editor opened (`hold`) or closed
        (`release`; `actor` system for a lapse)."""
        self._add(Fact(kind, -1, time, actor, "live: not in the durable log",
                       message_id=message_id, detail=detail))

    def add(self, fact: Fact) -> None:
        """Add one fact of the reader (a caller that folds the facts itself)."""
        self._add(fact)

    def _add(self, fact: Fact) -> None:
        entries = self.entries
        if self.origin is None and fact.time:
            self.origin = fact.time
        kind = fact.kind
        if kind == "tool-call":
            self._tool_open[fact.turn] = fact.detail
        elif kind in ("tool-result", "step-end", "turn-end"):
            self._tool_open.pop(fact.turn, None)
        elif kind == "insert" and fact.message_id is not None:
            tool = self._tool_open.get(fact.turn) if fact.turn is not None else None
            self._arrived[fact.message_id] = (fact.time, tool, fact.step)
            if tool and "during" not in fact.why:
                fact.why += f"; it arrived during the tool call {tool}"
        elif kind == "claim" and fact.message_id is not None:
            arrived = self._arrived.pop(fact.message_id, None)
            if arrived is not None:
                time, tool, step = arrived
                waited = max(0, fact.time - time) / 1000
                when = f"arrived {waited:.1f} s before"
                if tool:
                    when += f", during step {step}'s tool call {tool}"
                if fact.target == "next-step" and tool:
                    when += ": steering waits for the step boundary"
                elif fact.target == "next-turn" and fact.turn is not None and \
                        step is not None:
                    when += ": a follow-up waits for a turn of its own"
                fact.detail = (fact.detail + "; " if fact.detail else "") + when
        elif kind == "refile" and entries:
            last = entries[-1]
            if last.kind == "move" and last.message_id == fact.message_id and \
                    last.seq == fact.seq - 1:
                fact.from_target, fact.from_index = last.from_target, last.from_index
                entries.pop()
                if self._visible is not None and self._visible and \
                        self._visible[-1] == len(entries):
                    self._visible.pop()
        entries.append(fact)
        if self._visible is not None and self._filter.keeps(fact):
            self._visible.append(len(entries) - 1)
        self.version += 1

    # -- the filtered view --------------------------------------------------------------------

    @property
    def filter(self) -> TimelineFilter:
        """The filter in force."""
        return self._filter

    def set_filter(self, new: TimelineFilter) -> None:
        """Change the filter; `visible` is recomputed on next read."""
        if new != self._filter:
            self._filter = new
            self._visible = None
            self.version += 1

    @property
    def visible(self) -> list[int]:
        """Indices of the entries the filter keeps, in time order."""
        if self._visible is None:
            keeps = self._filter.keeps
            self._visible = [i for i, entry in enumerate(self.entries) if keeps(entry)] \
                if self._filter.active else list(range(len(self.entries)))
        return self._visible

    def __len__(self) -> int:
        return len(self.visible)

    def entry(self, row: int) -> Fact:
        """The entry drawn on visible row `row`."""
        return self.entries[self.visible[row]]

    def row_of_seq(self, seq: int) -> int | None:
        """The visible row of the first entry at or after `seq` (to land on an event)."""
        for row, index in enumerate(self.visible):
            if self.entries[index].seq >= seq:
                return row
        return None

    def entered_at(self, message_id: str, after: int = -1) -> int | None:
        """The seq where `message_id` entered the model's context (its `sent` entry): the
        first at or after `after` (the life an entry belongs to: an id re-queued after it
        was sent is sent again), else the last before it; None if it never was."""
        before = None
        for entry in self.entries:
            if entry.kind == "sent" and entry.message_id == message_id:
                if entry.seq >= after:
                    return entry.seq
                before = entry.seq
        return before

    def jump(self, entry: Fact) -> Jump | None:
        """Where `entry` steps into the transcript: its message's place in the model's
        context, else the moment it happened (None: a live entry, in no log)."""
        if entry.message_id is not None:
            sent = self.entered_at(entry.message_id, entry.seq)
            if sent is not None:
                return Jump(sent, entry.message_id, True)
        if entry.seq < 0:
            return None
        return Jump(entry.seq, entry.message_id, False)

    # -- drawing ------------------------------------------------------------------------------

    def clock(self, entry: Fact) -> str:
        """The entry's place on the axis: time since the first entry, `+m:ss.mmm`."""
        offset = max(0, entry.time - (self.origin or entry.time))
        minutes, ms = divmod(offset, 60_000)
        return f"+{minutes}:{ms / 1000:06.3f}"

    def line(self, row: int, width: int = 160) -> str:
        """The text of visible row `row` (plain; the caller sanitises and styles it)."""
        return describe(self.entry(row), self.clock(self.entry(row)), width)


_ACTOR_MARK = {PERSON: "person", MODEL: "model ", SYSTEM: "system"}


def where(entry: Fact) -> str:
    """`T3 S2` (turn and step) or blanks: the structure column."""
    turn = f"T{entry.turn}" if entry.turn is not None else ""
    step = f"S{entry.step}" if entry.step is not None else ""
    return f"{turn:>4} {step:<3}"


def describe(entry: Fact, clock: str, width: int = 160) -> str:
    """One timeline line: time, turn/step, actor, what happened, to which message, and
    the detail (a claim's wait, a move's from → to, an edit's change in brief)."""
    kind = entry.kind
    verb = _VERBS.get(kind, kind)
    head = f"{clock:>11} {where(entry)} {_ACTOR_MARK.get(entry.actor, entry.actor):6} "
    indent = "  " if kind in ("step-start", "step-end") else ""
    if kind in ("turn-start", "turn-end", "step-start", "step-end"):
        label = "turn" if kind.startswith("turn") else "step"
        number = entry.turn if label == "turn" else entry.step
        body = f"{indent}── {label} {number} {verb.split()[-1]}" + \
            (f" · {entry.detail}" if entry.detail else "")
    elif entry.message_id is not None:
        text = one_line(entry.text, 60)
        body = f"{verb:<10} #{short_id(entry.message_id)} {entry.lane:<9} “{text}”"
        extra = _message_detail(entry)
        if extra:
            body += f" · {extra}"
    else:
        body = verb + (f" · {entry.detail}" if entry.detail else "")
        if entry.related:
            body += " · " + ", ".join(f"#{short_id(i)}" for i in entry.related)
    line = head + body
    return line if len(line) <= width else line[:max(0, width - 1)] + "…"


def _place(target: str | None, index: int | None) -> str:
    if target is None:
        return "?"
    return f"{target} {index + 1}" if index is not None else target


def _message_detail(entry: Fact) -> str:
    kind = entry.kind
    if kind in ("move", "refile") and entry.from_target is not None:
        move = f"{_place(entry.from_target, entry.from_index)} → " \
               f"{_place(entry.target, entry.index)}"
        return f"{entry.detail} · {move}" if entry.detail else move
    if kind == "claim":
        return f"for step {entry.step}" + (f" · {entry.detail}" if entry.detail else "")
    if kind == "edit" and entry.before is not None:
        removed, added = change_counts(entry.before, entry.text)
        summary = f"−{removed} +{added} words"
        return f"{entry.detail} · {summary}" if entry.detail else summary
    if kind in ("insert", "put-back", "split") and entry.target is not None:
        return f"at {_place(entry.target, entry.index)}" + \
            (f" · {entry.detail}" if entry.detail else "")
    return entry.detail


_TOKENS = re.compile(r"\s+|[^\s]+")


def word_diff(before: str, after: str) -> list[tuple[str, str]]:
    """An edit as (op, text) runs: "=" kept, "-" removed, "+" added, word by word."""
    old = _TOKENS.findall(before)
    new = _TOKENS.findall(after)
    out: list[tuple[str, str]] = []
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        if op == "equal":
            out.append(("=", "".join(old[a0:a1])))
            continue
        if a1 > a0:
            out.append(("-", "".join(old[a0:a1])))
        if b1 > b0:
            out.append(("+", "".join(new[b0:b1])))
    return out


def change_counts(before: str, after: str) -> tuple[int, int]:
    """(words removed, words added) by an edit."""
    removed = added = 0
    for op, text in word_diff(before, after):
        words = len(text.split())
        if op == "-":
            removed += words
        elif op == "+":
            added += words
    return removed, added


def timeline_of(events: Iterable[object], seed_length: int = 0) -> Timeline:
    """A settled timeline over a whole log."""
    return Timeline(seed_length).apply_all(events)
