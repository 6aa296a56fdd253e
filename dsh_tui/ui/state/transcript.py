"""The transcript model: one session's conversation as items, built incrementally from events.

No Textual here, so turning 100,000 log events into transcript items is plain dict work
that tests and benchmarks run alone. Every `apply` is O(1) amortised: deltas are
appended and joined only when a view asks for the text. The reader is tolerant on
purpose (`dsh-tui view` opens other harness versions' logs): an unexpected shape becomes
a visible item, never an exception.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from .lanes import lane_of, source_label
from .text import (
    compact_json,
    format_duration,
    format_tokens,
    message_text,
    reason_text,
    visible,
    visible_label,
)


def _result_text(blocks: Any) -> str:
    parts: list[str] = []
    for block in blocks or ():
        if not isinstance(block, Mapping):
            continue
        kind = block.get("type")
        if kind == "text":
            parts.append(str(block.get("text", "")))
        elif kind == "tool-result":
            parts.append(_result_text(block.get("content")))
        elif kind == "image":
            parts.append("[image]")
        else:
            parts.append(compact_json(block, 200))
    return "\n".join(p for p in parts if p)


def _tool_result_of(data: Mapping[str, Any]) -> tuple[str | None, str, bool]:
    """(call id, text, is_error) of a tool/result in any of the known shapes."""
    message = data.get("message")
    call_id: Any = data.get("callId")
    is_error = bool(data.get("isError"))
    text = ""
    if isinstance(message, Mapping):
        source = message.get("source")
        if isinstance(source, Mapping) and source.get("callId"):
            call_id = call_id or source.get("callId")
        call_id = call_id or message.get("toolCallId")
        is_error = is_error or bool(message.get("isError"))
        content = message.get("content")
        if isinstance(content, list):
            for block in content:
                if isinstance(block, Mapping) and block.get("type") == "tool-result":
                    call_id = call_id or block.get("toolCallId")
                    is_error = is_error or bool(block.get("isError"))
            text = _result_text(content)
    elif "content" in data:
        text = _result_text(data.get("content"))
    return (str(call_id) if call_id else None), text, is_error


class Stamp(NamedTuple):
    """A sent message's receipt as its transcript item shows it (`state/receipts.py`): the
    state (its glyph and colour), the way it came in words, the id its history is filed
    under in the timeline (the log's own, or `seq-N` for a message without one) and the
    seq of its `user/message`."""

    state: str
    text: str
    message_id: str
    seq: int


_NO_CHUNKS: Any = ()
"""The `chunks` of an item with no pending delta: shared, so the thousands of rows that
never stream (turns, user messages, ends) or have finished do not each keep an empty
list (issue 14). An item gets a list of its own while deltas arrive."""


@dataclass(slots=True, eq=False)
class Item:
    """One row of a transcript. `index` is its stable key; `version` grows on every change."""

    kind: str  # turn | turn-end | step | user | reasoning | text | tool | notice
    index: int
    version: int = 0
    text: str = ""
    chunks: list[str] = _NO_CHUNKS
    """Stream deltas not yet joined into `text` (empty and shared unless streaming)."""
    streaming: bool = False
    turn: int | None = None
    step: int | None = None
    time: int | None = None
    # user messages
    message_id: str | None = None
    lane: str = ""
    source: str = ""
    # tool calls
    call_id: str | None = None
    name: str = ""
    arguments: str = ""
    result: str | None = None
    is_error: bool = False
    started: int | None = None
    ended: int | None = None
    # turn ends and notices
    reason_kind: str = ""
    duration_ms: int | None = None
    level: str = "info"  # info | warning | error
    interrupted: bool = False
    # a sent message's receipt (set by the agent's view from the inbox reading)
    receipt: Stamp | None = None

    def __post_init__(self) -> None:
        if self.streaming and self.chunks is _NO_CHUNKS:
            self.chunks = []

    def current_text(self) -> str:
        """The text so far: pending stream deltas are joined once, here, not per chunk."""
        if self.chunks:
            self.text += "".join(self.chunks)
            if self.streaming:
                self.chunks.clear()
            else:
                self.chunks = _NO_CHUNKS
        return self.text

    def pending(self) -> list[str]:
        """The list stream deltas are added to (the item's own, made on first use)."""
        if self.chunks is _NO_CHUNKS:
            self.chunks = []
        return self.chunks

    @property
    def duration(self) -> int | None:
        """Milliseconds the item ran (None until it has both ends)."""
        if self.started is None or self.ended is None:
            return None
        return max(0, self.ended - self.started)


_SKIPPED_TYPES = frozenset({
    "request/header", "request/context", "session/end-seed", "session/title",
    "agent/inbox/spliced", "system/message", "permission/preset", "sandbox/mode",
    "approval/policy", "subagent/descriptor",
})
"""Bookkeeping records that are not conversation: the event log shows them instead."""

_BLOCK_KIND = {"text": "text", "reasoning": "reasoning", "tool-call": "tool"}

_WAIT_STARTS = frozenset({"step/start", "llm/retry-started"})
_WAIT_ENDS = frozenset({"assistant/chunk", "assistant/message", "step/end", "turn/end",
                        "tool/call"})
"""A request is sent at a step's start (or a retry's); anything back from it ends the wait."""


def token_figures(model: TranscriptModel) -> str:
    """`ctx 1.5k/1.0M · in 3.0k · out 800 · cached 6.0k`: the last request's context size
    (of the window, when the route knows it), then the session's cumulative counts."""
    parts = []
    if model.context_tokens is not None:
        window = f"/{format_tokens(model.context_window)}" if model.context_window else ""
        parts.append(f"ctx {format_tokens(model.context_tokens)}{window}")
    if model.input_tokens or model.output_tokens or model.cached_tokens:
        parts.append(f"in {format_tokens(model.input_tokens)}")
        parts.append(f"out {format_tokens(model.output_tokens)}")
        if model.cached_tokens:
            parts.append(f"cached {format_tokens(model.cached_tokens)}")
    return " · ".join(parts)


def waiting_seconds(model: TranscriptModel, now_ms: float) -> int | None:
    """Whole seconds the model has been silent in the current request (None: not waiting)."""
    if model.waiting_since is None:
        return None
    return max(0, int((now_ms - model.waiting_since) // 1000))


DIRTY_LIMIT = 256
"""Changed indexes a transcript remembers before it reports all of them changed."""


class TranscriptModel:
    """The transcript of one session as a list of items, grown one event at a time."""

    def __init__(self) -> None:
        self.items: list[Item] = []
        self.dirty: set[int] = set()
        self._all_dirty = False
        self.title: str | None = None
        self.model_label: str | None = None
        self.turn = 0
        self.step = 0
        self.last_end_kind: str | None = None
        self.input_tokens = 0
        """Input tokens the server processed anew (cache reads not included), all requests."""
        self.output_tokens = 0
        self.cached_tokens = 0
        """Input tokens read from the server's prompt cache, all requests."""
        self.context_tokens: int | None = None
        """The last request's prompt, cached part included: what the context holds now."""
        self.context_window: int | None = None
        self.targets: dict[str, str] = {}
        self._turn_started: int | None = None
        self._turn_open = False
        self._blocks: dict[int, Item] = {}
        self._attempt: list[Item] = []
        self._attempt_open = False
        self._attempt_key: tuple[Any, Any] | None = None
        self._attempt_usage = False
        self._tools: dict[str, Item] = {}
        self._streaming: set[int] = set()
        self._turn_tools: list[Item] = []
        self._retry_of = ""
        self._failed: tuple[Item, str, Any] | None = None
        """The last failed attempt's notice, its text and (turn, step): a retry joins it."""
        self.waiting_since: int | None = None
        """Event time (ms) a model request began that has sent nothing yet, else None."""
        self._seqs = array("q")
        self._firsts = array("q")
        """The seq of each event that made items and the first item it made (both
        ascending): an event's place in the transcript, 16 bytes an event."""

    # -- bookkeeping ---------------------------------------------------------------------------

    def _mark(self, index: int) -> None:
        dirty = self.dirty
        dirty.add(index)
        if len(dirty) > DIRTY_LIMIT:
            self.dirty = set()
            self._all_dirty = True

    def _add(self, kind: str, **fields: Any) -> Item:
        item = Item(kind, len(self.items), **fields)
        self.items.append(item)
        self._mark(item.index)
        if item.streaming:
            self._streaming.add(item.index)
        return item

    def note(self, text: str, level: str = "info") -> Item:
        """A notice row of the app's own (not from the log)."""
        return self._add("notice", text=text, level=level)

    def _touch(self, item: Item) -> None:
        item.version += 1
        self._mark(item.index)

    def _finish(self, item: Item) -> None:
        if not item.chunks:
            item.chunks = _NO_CHUNKS
        if item.streaming:
            item.streaming = False
            self._streaming.discard(item.index)
            self._touch(item)

    def _close_streaming(self) -> None:
        for index in list(self._streaming):
            self._finish(self.items[index])
        self._attempt_open = False
        self._blocks = {}

    def drain(self) -> set[int]:
        """Indexes changed since the last drain (what a widget has to repaint).

        Only the shown transcript is drained (at every flush); the others' would collect
        every index they ever touched, so past `DIRTY_LIMIT` the set is dropped and the
        next drain names every item (a transcript is rebuilt when it is shown anyway)."""
        dirty = self.dirty
        self.dirty = set()
        if self._all_dirty:
            self._all_dirty = False
            return set(range(len(self.items)))
        return dirty

    @property
    def streaming(self) -> bool:
        """Whether a reply is still arriving (the title and the block show it)."""
        return bool(self._streaming)

    # -- events and items ----------------------------------------------------------------------

    def item_at_seq(self, seq: int, exact: bool = False) -> int | None:
        """The first item the event `seq` made, else (unless `exact`) the first made by a
        later event: where that event's moment is in the transcript. None: no such item."""
        position = bisect_left(self._seqs, seq)
        if position >= len(self._seqs) or (exact and self._seqs[position] != seq):
            return None
        return self._firsts[position]

    def set_receipt(self, seq: int, stamp: Stamp) -> bool:
        """Show `stamp` on the user message the event `seq` recorded (its header is drawn
        again, nothing else); False when no such item is here."""
        index = self.item_at_seq(seq, exact=True)
        if index is None:
            return False
        item = self.items[index]
        if item.kind != "user" or item.receipt == stamp:
            return False
        item.receipt = stamp
        self._touch(item)
        return True

    # -- applying events -----------------------------------------------------------------------

    def apply_all(self, events: Iterable[Any]) -> None:
        """Apply a whole log in order (opening a session, replaying after a resume)."""
        for event in events:
            self.apply(event)

    def apply(self, event: Any) -> None:
        """Fold one session event (a SessionEvent or any object with type/seq/time/data)."""
        kind = event.type
        data = event.data
        made = len(self.items)
        if kind in _WAIT_STARTS:
            self.waiting_since = getattr(event, "time", None)
        elif kind in _WAIT_ENDS:
            self.waiting_since = None
        try:
            handler = _HANDLERS.get(kind)
            if handler is not None:
                handler(self, event, data if isinstance(data, Mapping) else {})
            elif kind not in _SKIPPED_TYPES and not getattr(event, "ignorable", False):
                self._add("notice", text=f"{kind} {compact_json(data, 100)}", level="dim",
                          time=event.time)
        except Exception as error:  # a malformed record must never break the screen
            self._add("notice", text=f"unreadable {kind} event (seq {event.seq}): {error}",
                      level="warning", time=getattr(event, "time", None))
        if len(self.items) > made:
            seq = getattr(event, "seq", None)
            if type(seq) is int and seq >= 0 and (not self._seqs or seq > self._seqs[-1]):
                self._seqs.append(seq)
                self._firsts.append(made)

    def _on_turn_start(self, event: Any, data: Mapping[str, Any]) -> None:
        self._close_streaming()
        turn = data.get("turn")
        self.turn = turn if isinstance(turn, int) else self.turn + 1
        self.step = 0
        self._turn_started = event.time
        self._turn_open = True
        self._turn_tools = []
        self._failed = None
        self._add("turn", turn=self.turn, time=event.time)

    def _on_turn_end(self, event: Any, data: Mapping[str, Any]) -> None:
        self._close_streaming()
        kind, words = reason_text(data.get("reason"))
        duration = None
        if self._turn_started is not None and isinstance(event.time, int):
            duration = max(0, event.time - self._turn_started)
        turn = data.get("turn")
        level = "error" if kind == "error" else "warning" if kind in (
            "aborted", "blocked", "max-tokens", "interrupted") else "info"
        for tool in self._turn_tools:
            if tool.result is None:  # the turn ended before this call had a result
                tool.interrupted = True
                tool.reason_kind = kind
                self._touch(tool)
        self._turn_tools = []
        self._failed = None
        self._add("turn-end", turn=turn if isinstance(turn, int) else self.turn, text=words,
                  reason_kind=kind, duration_ms=duration, level=level, time=event.time)
        self.last_end_kind = kind
        self._turn_open = False
        self._turn_started = None

    def _on_step_start(self, event: Any, data: Mapping[str, Any]) -> None:
        self._close_streaming()
        step = data.get("step")
        self.step = step if isinstance(step, int) else self.step + 1
        if self.step > 1:
            self._add("step", turn=self.turn, step=self.step, time=event.time)

    def _on_step_end(self, event: Any, data: Mapping[str, Any]) -> None:
        self._close_streaming()

    def _on_user_message(self, event: Any, data: Mapping[str, Any]) -> None:
        message_id = data.get("id")
        source = data.get("source")
        target = self.targets.get(message_id) if isinstance(message_id, str) else None
        self._add("user", text=message_text(data), message_id=message_id if isinstance(
            message_id, str) else None, lane=lane_of(source, target),
            source=source_label(source), time=event.time, turn=self.turn)

    def _on_splice(self, event: Any, data: Mapping[str, Any]) -> None:
        target = data.get("target")
        for message in data.get("inserted") or ():
            if isinstance(message, Mapping) and isinstance(message.get("id"), str):
                self.targets[message["id"]] = str(target)

    def _on_title(self, event: Any, data: Mapping[str, Any]) -> None:
        title = data.get("title")
        if isinstance(title, str) and title.strip():
            self.title = visible_label(title.strip())

    def _on_request_context(self, event: Any, data: Mapping[str, Any]) -> None:
        window = data.get("contextWindow")
        self.context_window = window if type(window) is int and window > 0 else None

    def _on_request_header(self, event: Any, data: Mapping[str, Any]) -> None:
        header = data.get("header")
        config = header.get("config") if isinstance(header, Mapping) else None
        if isinstance(config, Mapping) and config.get("model"):
            self.model_label = str(config.get("model"))

    # -- streamed chunks -------------------------------------------------------------------

    def _attempt_for(self, data: Mapping[str, Any]) -> None:
        key = (data.get("turn"), data.get("step"))
        if not self._attempt_open or key != self._attempt_key:
            if self._attempt_open:
                for item in self._attempt:
                    self._finish(item)
            self._blocks = {}
            self._attempt = []
            self._attempt_open = True
            self._attempt_usage = False
            self._attempt_key = key

    def _block(self, index: Any, block_type: str, time: int | None) -> Item:
        item = self._blocks.get(index)
        if item is None:
            kind = _BLOCK_KIND.get(block_type, "text")
            item = self._add(kind, streaming=True, time=time, turn=self.turn, step=self.step)
            if kind == "tool":
                item.started = None
                self._turn_tools.append(item)
            self._blocks[index] = item
            self._attempt.append(item)
        return item

    def _on_chunk(self, event: Any, data: Mapping[str, Any]) -> None:
        chunk = data.get("chunk")
        if not isinstance(chunk, Mapping):
            return
        self._attempt_for(data)
        kind = chunk.get("type")
        index = chunk.get("index")
        if kind == "block-start":
            self._block(index, str(chunk.get("blockType") or "text"), event.time)
        elif kind in ("text-delta", "reasoning-delta"):
            item = self._block(index, "text" if kind == "text-delta" else "reasoning", event.time)
            if item.streaming:
                item.pending().append(str(chunk.get("text", "")))
                self._touch(item)
        elif kind == "tool-call-delta":
            item = self._block(index, "tool-call", event.time)
            if item.streaming:
                if chunk.get("id"):
                    self._remember_tool(item, str(chunk["id"]))
                if chunk.get("name"):
                    item.name = str(chunk["name"])
                item.pending().append(str(chunk.get("argumentsDelta", "")))
                self._touch(item)
        elif kind == "block-end":
            block = chunk.get("block")
            if isinstance(block, Mapping):
                item = self._block(index, str(block.get("type") or "text"), event.time)
                self._set_block(item, block)
                self._finish(item)
        elif kind == "usage":
            self._count_usage(chunk.get("usage"))
            self._attempt_usage = True
        elif kind == "finish":
            reason = chunk.get("reason")
            for item in self._attempt:
                self._finish(item)
            self._attempt_open = False
            self._blocks = {}
            if isinstance(reason, Mapping) and reason.get("kind") in ("error", "aborted"):
                failure = reason.get("failure")
                message = "model request failed"
                if isinstance(failure, Mapping):
                    message = f"model request failed: {failure.get('message', '')}"
                    if failure.get("code"):
                        message += f" ({failure['code']})"
                notice = self._add("notice", text=visible(message), level="warning",
                                   time=event.time)
                self._failed = (notice, notice.text, (data.get("turn"), data.get("step")))
                self._attempt = []
            elif isinstance(reason, Mapping) and isinstance(reason.get("finishReason"), str):
                self._add("notice", level="warning", time=event.time, text=visible_label(
                    f"the model stopped early ({reason['finishReason']}); its text so far "
                    "is kept"))

    def _on_packed(self, event: Any, data: Mapping[str, Any]) -> None:
        """Upstream's packed rows (`text-chunks` …) when a reader left them unexpanded."""
        self._attempt_for(data)
        kind = event.type
        index = data.get("index")
        if kind == "tool-call-chunks":
            item = self._block(index, "tool-call", getattr(event, "time", None))
            if data.get("id"):
                self._remember_tool(item, str(data["id"]))
            if data.get("name"):
                item.name = str(data["name"])
            item.pending().extend(str(a) for a in data.get("args") or ())
        else:
            block_type = "reasoning" if kind == "reasoning-chunks" else "text"
            item = self._block(index, block_type, getattr(event, "time", None))
            item.pending().extend(str(t) for t in data.get("texts") or ())
        self._touch(item)

    def _set_block(self, item: Item, block: Mapping[str, Any]) -> None:
        item.chunks = _NO_CHUNKS  # the block is whole: its deltas are not needed
        if item.kind == "tool":
            item.arguments = str(block.get("arguments", ""))
            item.name = str(block.get("name") or item.name)
            if block.get("id"):
                self._remember_tool(item, str(block["id"]))
        else:
            item.text = str(block.get("text", ""))
        self._touch(item)

    def _remember_tool(self, item: Item, call_id: str) -> None:
        item.call_id = call_id
        self._tools[call_id] = item

    def _count_usage(self, usage: Any) -> None:
        """Cumulative input, output and cached tokens kept apart, and the last request's
        context size. Each request re-sends the whole history, so adding its cached input
        to a running total counts the same tokens again on every request: the context is
        the last prompt, not a sum."""
        if not isinstance(usage, Mapping):
            return

        def count(key: str) -> int:
            value = usage.get(key)
            return value if type(value) is int and value >= 0 else 0

        fresh = count("inputTokens") + count("cacheWriteTokens")
        cached = count("cacheReadTokens")
        self.input_tokens += fresh
        self.output_tokens += count("outputTokens")
        self.cached_tokens += cached
        if fresh or cached:
            self.context_tokens = fresh + cached

    # -- messages, tools ---------------------------------------------------------------------

    def _on_assistant_message(self, event: Any, data: Mapping[str, Any]) -> None:
        message = data.get("message")
        if not isinstance(message, Mapping):
            message = data  # upstream rows carry content (and provenance) at the top level
        content = message.get("content")
        pool: dict[str, list[Item]] = {"text": [], "reasoning": [], "tool": []}
        key = (data.get("turn"), data.get("step"))
        if self._attempt_key == key or self._attempt_key is None:
            for item in self._attempt:
                pool[item.kind].append(item)
        if not self._attempt_usage:
            self._count_usage(data.get("usage"))
        for block in content if isinstance(content, list) else ():
            if not isinstance(block, Mapping):
                continue
            kind = _BLOCK_KIND.get(str(block.get("type")))
            if kind is None:
                continue
            if pool[kind]:
                item = pool[kind].pop(0)
            else:
                item = self._add(kind, time=event.time, turn=self.turn, step=self.step)
            self._set_block(item, block)
            self._finish(item)
        for leftovers in pool.values():
            for item in leftovers:
                self._finish(item)
        if data.get("interrupted"):
            self._add("notice", text="reply interrupted", level="warning", time=event.time)
        self._attempt = []
        self._attempt_open = False
        self._blocks = {}
        if isinstance(message.get("source"), Mapping) and message["source"].get("model"):
            self.model_label = str(message["source"]["model"])

    def _on_tool_call(self, event: Any, data: Mapping[str, Any]) -> None:
        call_id = data.get("callId")
        item = self._tools.get(call_id) if isinstance(call_id, str) else None
        if item is None:
            item = self._add("tool", time=event.time, turn=self.turn, step=self.step)
            self._turn_tools.append(item)
            if isinstance(call_id, str):
                self._remember_tool(item, call_id)
        item.name = str(data.get("name") or item.name)
        arguments = data.get("arguments")
        if arguments is not None:
            item.arguments = arguments if isinstance(arguments, str) else compact_json(
                arguments, 10_000)
        item.started = event.time
        self._finish(item)
        self._touch(item)

    def _on_tool_result(self, event: Any, data: Mapping[str, Any]) -> None:
        call_id, text, is_error = _tool_result_of(data)
        item = self._tools.get(call_id) if call_id else None
        if item is None:
            item = self._add("tool", time=event.time, turn=self.turn, step=self.step,
                             name="tool")
            if call_id:
                self._remember_tool(item, call_id)
        item.result = text
        item.is_error = is_error
        item.ended = event.time
        if item.started is None:
            item.started = item.time
        self._touch(item)


def _retry_words(data: Mapping[str, Any], started: bool, of: str = "") -> str:
    retry = data.get("retry")
    if isinstance(data.get("maxRetries"), int):
        of = f" of {data['maxRetries']}"
    if started:
        return f"retry {retry}{of} sent"
    delay = data.get("delayMs")
    wait = f" in {format_duration(delay)}" if isinstance(delay, (int, float)) else ""
    return f"retry {retry}{of}{wait}"


def _on_retry(self: TranscriptModel, event: Any, data: Mapping[str, Any]) -> None:
    """`llm/retry` and `llm/retry-started` join the failed attempt's notice: one readable
    line per failing request ("model request failed: … (RATE_LIMIT) · retry 1 of 5 sent")."""
    started = event.type == "llm/retry-started"
    failed = self._failed
    words = _retry_words(data, started, self._retry_of)
    if not started:
        self._retry_of = f" of {data['maxRetries']}" if isinstance(
            data.get("maxRetries"), int) else ""
    if failed is not None and failed[2] == (data.get("turn"), data.get("step")):
        item, base, _where = failed
        item.text = f"{base} · {words}"
        self._touch(item)
        return
    if started:
        return  # its llm/retry line (or the failure it follows) already says it
    failure = data.get("failure")
    why = ""
    if isinstance(failure, Mapping):
        why = f": {failure.get('message', '')}" + (f" ({failure['code']})"
                                                   if failure.get("code") else "")
    item = self._add("notice", text=visible(f"model request failed{why} · {words}"),
                     level="warning", time=event.time)
    self._failed = (item, item.text.rsplit(" · ", 1)[0], (data.get("turn"), data.get("step")))


_HANDLERS: dict[str, Any] = {
    "llm/retry": _on_retry,
    "llm/retry-started": _on_retry,
    "turn/start": TranscriptModel._on_turn_start,
    "turn/end": TranscriptModel._on_turn_end,
    "step/start": TranscriptModel._on_step_start,
    "step/end": TranscriptModel._on_step_end,
    "user/message": TranscriptModel._on_user_message,
    "agent/inbox/spliced": TranscriptModel._on_splice,
    "session/title": TranscriptModel._on_title,
    "request/header": TranscriptModel._on_request_header,
    "request/context": TranscriptModel._on_request_context,
    "assistant/chunk": TranscriptModel._on_chunk,
    "text-chunks": TranscriptModel._on_packed,
    "reasoning-chunks": TranscriptModel._on_packed,
    "tool-call-chunks": TranscriptModel._on_packed,
    "assistant/message": TranscriptModel._on_assistant_message,
    "tool/call": TranscriptModel._on_tool_call,
    "tool/result": TranscriptModel._on_tool_result,
}
