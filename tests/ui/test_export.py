"""`dsh-tui export`: a real session written by a real agent, exported as Markdown and JSONL."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from shared_fixtures import fixture

from dsh_tui import cli
from dsh_tui.compose import build_context
from dsh_tui.harness import AgentOptions, CreateAgentOptions, user_message
from dsh_tui.harness.persistence import JsonlPersistence, read_session_log
from dsh_tui.llm.scripted import ScriptedModel, reasoning, reply, text, tool_call
from dsh_tui.loop import Tool
from dsh_tui.ui.state.export import export_markdown

ZSTD_LOG = ("runtime-logs", "tool-read.session.v4.jsonl.zstd")


async def _write_session(data: Path) -> str:
    """One finished turn with reasoning, a tool call whose result holds a ``` fence, a steer
    and a reply with an escape sequence; then two messages queued, which disposal cancels."""
    script = [
        reply(reasoning("think first"), tool_call("c1", "lookup", {"q": "fences"})),
        reply(text("Done: \x1b[31mred\x1b[0m is **not** a colour here.")),
    ]
    lookup = Tool("lookup", "looks things up", {"type": "object", "properties": {}},
                  lambda _args: "before\n```\ninside a fence\n```\nafter")
    ctx = build_context(providers={"mock": ScriptedModel(script)}, tools=[lookup],
                        retry=False, system_prompt=None, persistence=JsonlPersistence(data))
    handle = await ctx.agents.create(CreateAgentOptions(
        session_id="export-me", agent_options=AgentOptions(provider="mock", model="m1")))
    agent = handle.agent
    try:
        agent.followup(user_message("compare the designs"))
        agent.steer(user_message("focus on the cache", source={"kind": "user", "lane": "steer"}))
        await agent.when_idle()
        agent.inbox.append("next-turn", user_message("then write it up"))
        agent.inbox.append("next-step", user_message("line one\nline two"))
    finally:
        await handle.dispose()
        await ctx.scope.dispose()
    return agent.id


async def test_markdown_export_reads_like_the_transcript(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    session_id = await _write_session(tmp_path)
    assert cli.main(["--data-dir", str(tmp_path), "export", session_id]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# ")
    assert "session `export-me`" in out and "model m1" in out
    assert "## Turn 1" in out
    assert "**you**\n\n> compare the designs" in out
    assert "**you · steer**\n\n> focus on the cache" in out
    assert "<details><summary>Reasoning</summary>\n\nthink first\n\n</details>" in out
    assert "**Tool `lookup`**" in out
    assert '```json\n{"q":"fences"}\n```' in out
    # The result holds a ``` fence of its own: the export's fence is longer, so it stays inside.
    assert "````\nbefore\n```\ninside a fence\n```\nafter\n````" in out
    assert "*Turn 1: completed" in out
    # No escape sequence leaves the app: ESC is shown as ␛.
    assert "\x1b" not in out and "␛[31mred" in out
    # Disposing the agent canceled what was still queued, so nothing is listed as queued.
    assert "Still queued" not in out


async def test_markdown_export_lists_what_was_queued_when_the_log_ends(tmp_path: Path) -> None:
    """A log that ends with queued messages (a process killed before it could cancel them)."""
    session_id = await _write_session(tmp_path)
    header, events = read_session_log(JsonlPersistence(tmp_path).path_for(session_id))
    assert [e.data.get("outcome") for e in events[-2:]] == ["canceled", "canceled"]
    out = export_markdown(header, events[:-2])
    queued = out.split("## Still queued when the log ends\n\n", 1)[1]
    assert queued == "- **steer** line one\n  line two\n- **follow-up** then write it up\n"


async def test_jsonl_export_round_trips_and_writes_a_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    session_id = await _write_session(tmp_path / "data")
    out = tmp_path / "out.jsonl"
    assert cli.main(["--data-dir", str(tmp_path / "data"), "export", session_id,
                     "--format", "jsonl", "-o", str(out)]) == 0
    assert f"wrote {out}" in capsys.readouterr().err
    stored = JsonlPersistence(tmp_path / "data").path_for(session_id)
    assert _records(out) == _records(stored)


def test_a_zstd_upstream_log_exports_as_plain_jsonl(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["export", str(fixture(*ZSTD_LOG)), "--format", "jsonl"]) == 0
    lines = capsys.readouterr().out.splitlines()
    records = [json.loads(line) for line in lines]
    header, events = read_session_log(fixture(*ZSTD_LOG))
    assert records[0] == {"type": "session", **header}
    assert records[1:] == [event.to_json() for event in events]
    # And what came out is a log this build reads back the same.
    copy = tmp_path / "copy.jsonl"
    copy.write_text("\n".join(lines) + "\n")
    assert _records(copy) == records


def test_markdown_export_of_an_upstream_log(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["export", str(fixture(*ZSTD_LOG))]) == 0
    out = capsys.readouterr().out
    assert "> Read notes.txt and tell me what it says." in out
    assert "**Tool `read`**" in out and "oracle notes" in out


def test_an_unknown_session_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["--data-dir", str(tmp_path), "export", "nope"]) == cli.EXIT_USAGE
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and 'no saved session "nope"' in err
    not_a_log = tmp_path / "notes.txt"
    not_a_log.write_text("hello\n")
    assert cli.main(["export", str(not_a_log)]) == cli.EXIT_USAGE
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot read" in err and "Traceback" not in err


def test_a_log_without_events_exports_its_header_only() -> None:
    out = export_markdown({"id": "empty", "createdAt": 0}, [])
    assert out == "# empty\n\nsession `empty` · 1970-01-01 00:00 UTC\n"


def _records(path: Path) -> list[dict[str, Any]]:
    header, events = read_session_log(path)
    return [{"type": "session", **header}, *(event.to_json() for event in events)]
