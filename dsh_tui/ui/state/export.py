"""A session log as Markdown or plain JSONL, for `dsh-tui export`.

The Markdown is the transcript the app shows, built by the same `TranscriptModel`,
so an export reads like the screen: turns with how they ended, who sent each
message and through which lane, reasoning folded away, tool calls with their
arguments and results, and what was still queued when the log ends. Model and user
text goes through `visible()` like everything the app shows: an export printed to
a terminal cannot carry an escape sequence into it.

The JSONL is the log as this build reads it: one header line, then one event per
line with the upstream camelCase envelope. A zstd-framed upstream log comes out
decompressed and packed chunk rows come out expanded, so any JSONL tool reads it.
Nothing here imports Textual.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from dsh_tui.harness.jsonvalue import dumps_compact
from dsh_tui.harness.readonly import ReadOnlyInbox, ReadOnlySession
from dsh_tui.harness.safe_text import terminal_safe_json
from dsh_tui.harness.session import SessionEvent

from .lanes import lane_of
from .text import format_duration, visible, visible_label
from .transcript import Item, TranscriptModel

FORMATS = ("md", "jsonl")

_BACKTICKS = re.compile(r"`+")


def export_jsonl(header: Mapping[str, Any], events: Sequence[SessionEvent]) -> Iterator[str]:
    """The lines of the log (without newlines): the header as recorded, then every event."""
    yield terminal_safe_json(dumps_compact({"type": "session", **header}))
    for event in events:
        yield terminal_safe_json(dumps_compact(event.to_json()))


def export_markdown(header: Mapping[str, Any], events: Sequence[SessionEvent]) -> str:
    model = TranscriptModel()
    model.apply_all(events)
    session_id = visible_label(str(header.get("id", "session")))
    lines = [f"# {model.title or session_id}", ""]
    facts = [f"session `{session_id}`"]
    created = header.get("createdAt")
    if type(created) is int:
        facts.append(dt.datetime.fromtimestamp(created / 1000, dt.UTC).strftime(
            "%Y-%m-%d %H:%M UTC"))
    if model.model_label:
        facts.append(f"model {visible_label(model.model_label)}")
    if header.get("origin") == "subagent" and header.get("parentSession"):
        facts.append(f"sub-agent of `{visible_label(str(header['parentSession']))}`")
    if model.input_tokens or model.output_tokens:
        facts.append(f"{model.input_tokens:,} tokens in, {model.output_tokens:,} out")
    lines += [" · ".join(facts), ""]
    for item in model.items:
        lines += _item_lines(item)
    lines += _queued_lines(header, events)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines) + "\n"


def _item_lines(item: Item) -> list[str]:
    text = visible(item.current_text())
    if item.kind == "turn":
        return [f"## Turn {item.turn}", ""]
    if item.kind == "step":
        return [f"### Step {item.step}", ""]
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
        return ["<details><summary>Reasoning</summary>", "", text.strip(), "", "</details>", ""]
    if item.kind == "text":
        return [text.strip(), ""] if text.strip() else []
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
        lines += [*_fenced(arguments, "json"), ""]
    if item.result is not None:
        lines += [*_fenced(visible(item.result) or "(empty)"), ""]
    return lines


def _queued_lines(header: Mapping[str, Any], events: Sequence[SessionEvent]) -> list[str]:
    inbox = ReadOnlyInbox(ReadOnlySession(header, events))
    if not inbox.has_pending:
        return []
    lines = ["## Still queued when the log ends", ""]
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
