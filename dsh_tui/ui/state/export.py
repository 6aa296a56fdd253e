"""A session log as Markdown or plain JSONL, for `dsh-tui export`.

The Markdown is the transcript the app shows, built by the same `TranscriptModel`, so an
export reads like the screen (what it holds is on `export_markdown`). Model and user text
goes through `visible()` like everything the app shows: an export printed to a terminal
cannot carry an escape sequence into it. The JSONL is the log as this build reads it,
decompressed and expanded, so any JSONL tool reads it. Nothing here imports Textual.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from dsh_tui.harness.jsonvalue import dumps_compact
from dsh_tui.harness.readonly import ReadOnlyInbox, ReadOnlySession
from dsh_tui.harness.safe_text import terminal_safe_json
from dsh_tui.harness.session import SessionEvent

from .lanes import lane_of
from .text import format_duration, visible, visible_label
from .transcript import Item, TranscriptModel, _tool_result_of

FORMATS = ("md", "jsonl")

_BACKTICKS = re.compile(r"`+")


def export_jsonl(header: Mapping[str, Any], events: Sequence[SessionEvent]) -> Iterator[str]:
    """The lines of the log (without newlines): the header as recorded, then every event.

    One header line, then one event per line with the upstream camelCase envelope. A
    zstd-framed upstream log comes out decompressed and packed chunk rows come out
    expanded."""
    yield terminal_safe_json(dumps_compact({"type": "session", **header}))
    for event in events:
        yield terminal_safe_json(dumps_compact(event.to_json()))


ChildLogs = Callable[[str], Sequence[tuple[Mapping[str, Any], Sequence[SessionEvent]]]]
"""`children(session_id)`: the (header, events) of each sub-agent session of that session."""

MAX_DEPTH = 16
"""Sub-agents nested deeper than this are named, not written out (a log cannot loop us)."""


def export_markdown(header: Mapping[str, Any], events: Sequence[SessionEvent],
                    children: ChildLogs | None = None) -> str:
    """The session as Markdown. With `children`, the whole tree: each sub-agent's transcript
    is nested (quoted, headings one level down) under the tool call that spawned it, and
    sub-agents no tool call names (spawned by the person) follow the transcript.

    It holds turns with how they ended, who sent each message and through which lane,
    reasoning folded away, tool calls with their arguments and results, what was still
    queued when the log ends and what the person discarded. The model's own headings are
    demoted below the export's turn and step headings, so they cannot pose as either."""
    lines = _session_lines(header, events, children, 0, set())
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines) + "\n"


def heading(level: int, text: str) -> str:
    """A Markdown heading; below level 6 (Markdown has no more) a bold line."""
    return f"{'#' * level} {text}" if level <= 6 else f"**{text}**"


def _session_lines(header: Mapping[str, Any], events: Sequence[SessionEvent],
                   children: ChildLogs | None, depth: int, seen: set[str]) -> list[str]:
    model = TranscriptModel()
    model.apply_all(events)
    session_id = visible_label(str(header.get("id", "session")))
    seen.add(str(header.get("id")))
    base = 3 * depth  # a sub-agent sits under a tool call, which sits under a step (level 3)
    title = model.title or session_id
    lines = [heading(1 + base, title if depth == 0 else f"Sub-agent: {title}"), ""]
    facts = [f"session `{session_id}`"]
    created = header.get("createdAt")
    if type(created) is int:
        facts.append(dt.datetime.fromtimestamp(created / 1000, dt.UTC).strftime(
            "%Y-%m-%d %H:%M UTC"))
    if model.model_label:
        facts.append(f"model {visible_label(model.model_label)}")
    if header.get("origin") == "subagent" and header.get("parentSession"):
        facts.append(f"sub-agent of `{visible_label(str(header['parentSession']))}`")
    if model.input_tokens or model.output_tokens or model.cached_tokens:
        cached = f", {model.cached_tokens:,} cached" if model.cached_tokens else ""
        facts.append(f"{model.input_tokens:,} tokens in{cached}, {model.output_tokens:,} out")
    if model.context_tokens is not None:
        facts.append(f"last context {model.context_tokens:,} tokens")
    lines += [" · ".join(facts), ""]
    kids = {str(h.get("id")): (h, e) for h, e in (children(str(header.get("id")))
                                                   if children is not None else ())}
    spawned = _spawned_by_call(events)
    for item in model.items:
        lines += _item_lines(item, base)
        child = kids.pop(spawned.get(item.call_id or "", ""), None) \
            if item.kind == "tool" else None
        if child is not None:
            lines += _nested(child, children, depth, seen)
    if kids:
        lines += [heading(2 + base, "Sub-agents started by the person"), ""]
        for child in kids.values():
            lines += _nested(child, children, depth, seen)
    lines += _queued_lines(header, events, base)
    lines += _discarded_lines(header, events, base)
    return lines


def _nested(child: tuple[Mapping[str, Any], Sequence[SessionEvent]],
            children: ChildLogs | None, depth: int, seen: set[str]) -> list[str]:
    header, events = child
    child_id = str(header.get("id"))
    if child_id in seen or depth + 1 > MAX_DEPTH:
        body = [f"Sub-agent `{visible_label(child_id)}` (not repeated here)"]
    else:
        body = _session_lines(header, events, children, depth + 1, seen)
    while body and not body[-1]:
        body.pop()
    return [*_quoted("\n".join(body)), ""]


def _spawned_by_call(events: Sequence[SessionEvent]) -> dict[str, str]:
    """Tool call id → the sub-agent session it started (`tool/result` meta `agentId`)."""
    out: dict[str, str] = {}
    for event in events:
        if event.type != "tool/result" or not isinstance(event.data, Mapping):
            continue
        meta = event.data.get("meta")
        agent_id = meta.get("agentId") if isinstance(meta, Mapping) else None
        call_id = _tool_result_of(event.data)[0]
        if isinstance(agent_id, str) and call_id:
            out[call_id] = agent_id
    return out


_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_NOT_PARAGRAPH = re.compile(r"^\s*$|^ {0,3}([-*+>|#]|\d+[.)])")


def demote_headings(text: str, top: int) -> str:
    """The model's own Markdown headings moved below the export's: its `#` becomes level
    `top`, `##` level `top + 1`, and so on (a bold line past level 6). Fenced code is left
    alone; setext headings (a line underlined with === or ---) are demoted too."""
    lines = text.split("\n")
    out: list[str] = []
    fence: str | None = None
    for index, line in enumerate(lines):
        opened = _FENCE.match(line)
        if fence is not None:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = None
            out.append(line)
            continue
        if opened:
            fence = opened.group(1)
            out.append(line)
            continue
        atx = _ATX.match(line)
        if atx:
            words = re.sub(r"[ \t]+#+$", "", atx.group(2) or "")
            out.append(heading(top + len(atx.group(1)) - 1, words))
            continue
        underline = _SETEXT.match(line)
        if underline and out and index > 0 and not _NOT_PARAGRAPH.match(lines[index - 1]) \
                and not out[-1].startswith(("#", "**")):
            level = 1 if underline.group(1)[0] == "=" else 2
            out[-1] = heading(top + level - 1, out[-1].strip())
            continue
        out.append(line)
    return "\n".join(out)


def _item_lines(item: Item, base: int = 0) -> list[str]:
    text = visible(item.current_text())
    if item.kind == "turn":
        return [heading(2 + base, f"Turn {item.turn}"), ""]
    if item.kind == "step":
        return [heading(3 + base, f"Step {item.step}"), ""]
    if item.kind == "turn-end":
        took = f" after {format_duration(item.duration_ms)}" if item.duration_ms else ""
        return [f"*Turn {item.turn}: {visible(item.text)}{took}.*", ""]
    if item.kind == "user":
        badge = item.source if item.lane in ("message", "follow-up") else \
            f"{item.source} · {item.lane}"
        return [f"**{visible(badge)}**", "", *_quoted(text), ""]
    if item.kind == "reasoning":
        if not text.strip():
            return []
        return ["<details><summary>Reasoning</summary>", "",
                demote_headings(text.strip(), 4 + base), "", "</details>", ""]
    if item.kind == "text":
        return [demote_headings(text.strip(), 4 + base), ""] if text.strip() else []
    if item.kind == "tool":
        return _tool_lines(item)
    if item.level == "dim":
        return []  # a record this build does not know: the JSONL export keeps it
    marker = {"error": "**Error:** ", "warning": "**Note:** "}.get(item.level, "")
    return [*_quoted(marker + text), ""]


def _tool_lines(item: Item) -> list[str]:
    took = item.duration
    head = f"**Tool `{visible_label(item.name or 'tool')}`**"
    if item.result is None:
        head += " (no result logged)"
    elif item.is_error:
        head += " failed"
    if took:
        head += f" · {format_duration(took)}"
    lines = [head, ""]
    arguments = visible(item.arguments or item.current_text())
    if arguments.strip():
        if _is_json(item.arguments or item.current_text()):
            lines += [*_fenced(arguments, "json"), ""]
        else:
            # An interrupted call's arguments stop mid-JSON: shown as the text they are.
            lines += ["Arguments as streamed before the call was cut off (incomplete, not "
                      "valid JSON):", "", *_fenced(arguments, "text"), ""]
    if item.result is not None:
        lines += [*_fenced(visible(item.result) or "(empty)"), ""]
    return lines


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _discarded_lines(header: Mapping[str, Any], events: Sequence[SessionEvent],
                     base: int = 0) -> list[str]:
    """Messages the person threw away from the inbox (removed, cleared, or dropped with
    the agent): `agent/inbox/spliced` with `outcome: "canceled"` whose ids never came back."""
    pending: dict[str, tuple[Mapping[str, Any], str]] = {}
    lists: dict[str, list[str]] = {"next-turn": [], "next-step": []}
    gone: dict[str, tuple[Mapping[str, Any], str, int]] = {}
    turn = 0
    for event in events[int(header.get("seedLength", 0) or 0):]:
        data = event.data
        if event.type == "turn/start" and isinstance(data, Mapping):
            started = data.get("turn")
            turn = started if isinstance(started, int) else turn
        if event.type != "agent/inbox/spliced" or not isinstance(data, Mapping):
            continue
        ids = lists.get(str(data.get("target")))
        start, removed = data.get("start"), data.get("removedCount", 0) or 0
        if ids is None or type(start) is not int or type(removed) is not int:
            continue
        inserted = [m for m in data.get("inserted") or () if isinstance(m, Mapping)]
        leaving = ids[start:start + removed]
        ids[start:start + removed] = [str(m.get("id")) for m in inserted]
        for message in inserted:
            pending[str(message.get("id"))] = (message, str(data.get("target")))
            gone.pop(str(message.get("id")), None)
        back = {str(m.get("id")) for m in inserted}
        for message_id in leaving:
            entry = pending.pop(message_id, None)
            if data.get("outcome") == "canceled" and entry is not None and \
                    message_id not in back:
                gone[message_id] = (*entry, turn)
    if not gone:
        return []
    lines = [heading(2 + base, "Discarded from the inbox by the person"), ""]
    for message, target, when in gone.values():
        lane = lane_of(message.get("source"), target)
        text = "".join(str(b.get("text", "")) for b in message.get("content") or ()
                       if isinstance(b, Mapping) and b.get("type") == "text")
        first, *rest = visible(text).splitlines() or [""]
        at = f" (at turn {when})" if when else " (before the first turn)"
        lines.append(f"- **{lane}** {first}{at}")
        lines += [f"  {line}" for line in rest]
    return [*lines, ""]


def _queued_lines(header: Mapping[str, Any], events: Sequence[SessionEvent],
                  base: int = 0) -> list[str]:
    inbox = ReadOnlyInbox(ReadOnlySession(header, events))
    if not inbox.has_pending:
        return []
    lines = [heading(2 + base, "Still queued when the log ends"), ""]
    for target, messages in (("next-step", inbox.next_step), ("next-turn", inbox.next_turn)):
        for message in messages:
            lane = lane_of(message.source, target)
            first, *rest = visible(message.text).splitlines() or [""]
            lines.append(f"- **{lane}** {first}")
            lines += [f"  {line}" for line in rest]
    return [*lines, ""]


def _quoted(text: str) -> list[str]:
    return [f"> {line}" if line else ">" for line in text.splitlines() or [""]]


def _fenced(text: str, language: str = "") -> list[str]:
    """A code fence longer than any run of backticks inside, so the text cannot close it."""
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}{language}", text.rstrip("\n"), fence]
