"""Issue 11: no outside text reaches the terminal raw, whichever surface shows it.

Every payload of the hostile corpus (CSI, OSC 52/0/8, BEL, C1, NUL, DEL, bidi
overrides and isolates, zero-width characters, line separators, Rich and Textual
markup) goes through every surface that shows outside text: the rule itself, the
transcript, reasoning, tool blocks, inbox rows, the edit dialog, the tree, the event
log (a crafted event type), the border titles, the palette entries built from agent
names, the composer (a paste), and the CLI's `sessions` and `export` output. The app
surfaces are judged on the bytes the screen renders to a terminal (Textual's own
compositor output through a real terminal console), never on widget state alone.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from textual import events

from dsh_tui import cli
from dsh_tui.compose import build_context
from dsh_tui.harness.persistence import JsonlPersistence
from dsh_tui.harness.safe_text import (
    one_line,
    terminal_safe_json,
    visible,
    visible_input,
    visible_label,
)
from dsh_tui.llm.scripted import ScriptedModel, hang, reasoning, reply, text, tool_call
from dsh_tui.loop import Tool
from dsh_tui.ui.app import DshApp
from dsh_tui.ui.commands import DshCommands
from dsh_tui.ui.state.bridge import LogEntry
from dsh_tui.ui.state.world import create_agent
from dsh_tui.ui.widgets.event_log import format_entry

from .conftest import SIZE, msg, settle, wait_until
from .hostile_corpus import HOSTILE, PAYLOADS, planted_in, unsafe_in

# ---- the rule ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(PAYLOADS))
def test_the_rule_leaves_nothing_a_terminal_obeys(name: str) -> None:
    payload = PAYLOADS[name]
    assert unsafe_in(visible(payload)) == []
    assert unsafe_in(visible_label(payload), label=True) == []
    assert unsafe_in(visible_input(payload)) == []
    assert "\n" not in one_line(payload + "\nsecond line")
    assert planted_in(visible(payload).encode()) == []


def test_the_rule_keeps_ordinary_text_and_marks_what_it_changed() -> None:
    plain = "naïve café — 漢字 👩‍👩‍👧 tab\there\nnext line [not markup]"
    assert visible(plain) == plain  # ZWJ emoji, tabs, newlines and brackets survive
    assert visible("\x1b[31m") == "␛[31m"
    assert visible("a\x00b\x07") == "a␀b␇"
    assert "\u202e" not in visible("\u202eevil") and visible("\u202eevil").endswith("evil")
    assert visible_label("ad\u200bmin") == "ad◌min"  # two look-alike names differ
    assert visible_input("a\r\nb\rc") == "a\nb\nc"


def test_jsonl_lines_stay_json_with_the_same_value() -> None:
    value = {"text": HOSTILE}
    line = terminal_safe_json(json.dumps(value, ensure_ascii=False))
    assert json.loads(line) == value
    assert planted_in(line.encode()) == []
    assert unsafe_in(line) == []


# ---- the app, judged on the rendered bytes ----------------------------------------------------


def rendered_bytes(app: DshApp) -> bytes:
    """What the current screen writes to a terminal: the compositor's full update printed
    through a truecolor terminal console, the path Textual's driver output takes."""
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, color_system="truecolor",
                      width=app.size.width, height=app.size.height, legacy_windows=False)
    console.print(app.screen._compositor.render_update(full=True))
    return buffer.getvalue().encode("utf-8", errors="surrogateescape")


def assert_clean(app: DshApp, where: str) -> None:
    data = rendered_bytes(app)
    assert planted_in(data) == [], f"{where}: planted sequences reached the terminal"
    assert "PWN" in data.decode("utf-8", errors="replace") or where == "palette", \
        f"{where}: the hostile text is not on screen, so this checks nothing"


def _hostile_world() -> tuple[Any, ScriptedModel]:
    script = [
        reply(reasoning(f"thinking {HOSTILE}"), tool_call("c1", "look\x1b]0;PWN\x07up",
                                                          {"q": HOSTILE})),
        reply(text(f"answer {HOSTILE}")),
        hang(f"streaming {HOSTILE}"),
    ]
    lookup = Tool("look\x1b]0;PWN\x07up", "looks things up",
                  {"type": "object", "properties": {}}, lambda _args: f"result {HOSTILE}")
    model = ScriptedModel(script)
    ctx = build_context(providers={"mock": model}, tools=[lookup], retry=False,
                        system_prompt=None)
    return ctx, model


async def test_every_app_surface_renders_hostile_text_safely(tmp_path: Path) -> None:
    ctx, _ = _hostile_world()
    handle = await create_agent(ctx, provider="mock", model="mock", title=f"PWN {HOSTILE}",
                                session_id="hostile-root")
    agent = handle.agent
    child = await create_agent(agent.ctx, provider="mock", model="mock",
                               title=f"child {HOSTILE}", session_id="hostile-child",
                               meta={"parentSession": agent.id, "origin": "subagent",
                                     "delegationDepth": 1})
    app = DshApp(ctx)
    async with app.run_test(size=SIZE) as pilot:
        agent.followup(msg(f"first {HOSTILE}", "m1"))
        await agent.when_idle()
        agent.followup(msg(f"second {HOSTILE}", "m2"))  # the model hangs mid-stream
        await wait_until(pilot, lambda: "streaming" in "".join(
            i.current_text() for i in app.bridge.views[agent.id].transcript.items))
        agent.followup(msg(f"queued {HOSTILE}", "q1"))
        agent.session.append(f"custom/PWN{HOSTILE}", {"note": HOSTILE}, ignorable=True)
        app.main.select_agent(agent.id)
        await settle(pilot)
        # transcript (text, reasoning, tool block), tree, titles, inbox rows
        await pilot.press("r", "t")
        await settle(pilot)
        assert_clean(app, "main screen")
        # the event log shows a crafted event type and its data
        await pilot.press("f2")
        await pilot.press("ctrl+a")
        await settle(pilot)
        assert any("custom/PWN" in line for line in app.main.event_log.log_widget.lines)
        for line in app.main.event_log.log_widget.lines:
            assert unsafe_in(line) == []
        assert_clean(app, "event log")
        await pilot.press("f2")
        # the edit dialog holds the queued item's text
        app.main.inbox.focus()
        app.main.inbox.highlight_message("q1")
        await pilot.press("enter")
        await settle(pilot)
        editor = app.screen.query_one("#edit-text")
        assert unsafe_in(editor.text) == []
        assert_clean(app, "edit dialog")
        await pilot.press("escape")
        await settle(pilot)
        # the composer takes a paste with controls in it
        app.main.composer.focus()
        app.main.composer.post_message(events.Paste(f"pasted {HOSTILE}"))
        await settle(pilot)
        assert "pasted" in app.main.composer.text and unsafe_in(app.main.composer.text) == []
        assert_clean(app, "composer")
        # palette entries are built from agent names and ids
        entries = [row.title + " " + row.help for row in DshCommands(app.screen)._commands()]
        assert any("child" in entry for entry in entries)
        for entry in entries:
            assert unsafe_in(entry, label=True) == []
        app.main.select_agent(child.agent.id)
        await settle(pilot)
        assert_clean(app, "child selected")
        agent.cancel(None, keep_inbox=False)
    await handle.dispose()
    await ctx.scope.dispose()


def test_an_event_log_line_shows_a_crafted_type_and_agent_id_visibly() -> None:
    entry = LogEntry(1, "agent\x1b]0;PWN\x07", False, "x\x1b]52;c;QQ==\x07", None,
                     "data\x1b]8;;http://evil/\x1b\\")
    line = format_entry(entry, with_agent=True)
    assert unsafe_in(line) == [] and "␛]52" in line


# ---- the CLI --------------------------------------------------------------------------------


async def _hostile_session(data: Path) -> str:
    ctx = build_context(providers={"mock": ScriptedModel([text(f"reply {HOSTILE}")])},
                        tools=[], retry=False, system_prompt=None,
                        persistence=JsonlPersistence(data))
    handle = await create_agent(ctx, provider="mock", model="mock",
                                title=f"PWN-NAME {HOSTILE}", session_id="hostile-cli")
    try:
        handle.agent.followup(msg(f"PWN-PROMPT {HOSTILE}", "p1"))
        await handle.agent.when_idle()
    finally:
        await handle.dispose()
        await ctx.scope.dispose()
    return handle.agent.id


async def test_sessions_and_export_print_hostile_titles_and_prompts_safely(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)  # rows whole, as piped output keeps them
    session_id = await _hostile_session(tmp_path)
    outputs: dict[str, str] = {}
    for name, argv in {
        "sessions": ["sessions", "--data-dir", str(tmp_path)],
        "export md": ["--data-dir", str(tmp_path), "export", session_id],
        "export jsonl": ["--data-dir", str(tmp_path), "export", session_id,
                         "--format", "jsonl"],
    }.items():
        assert cli.main(argv) == 0, name
        outputs[name] = capsys.readouterr().out
    assert "PWN-NAME" in outputs["sessions"] and "PWN-PROMPT" in outputs["sessions"]
    for name, out in outputs.items():
        assert planted_in(out.encode()) == [], name
        assert unsafe_in(out.replace("\n", "")) == [], name
    rows = [json.loads(line) for line in outputs["export jsonl"].splitlines()]
    assert any(HOSTILE in value for value in _strings(rows))  # the data itself is unchanged


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def test_an_error_line_quoting_outside_text_is_one_safe_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["view", str(tmp_path / "no\x1b]0;PWN\x07\nsuch")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and planted_in(err.encode()) == []


async def test_every_way_into_the_composer_and_the_editor_makes_text_visible() -> None:
    """Paste, the app clipboard (ctrl+v), `insert` and `replace` all reach the document
    through `TextArea.edit`, where the one rule runs; undo and redo replay clean text."""
    from dsh_tui.ui.widgets.composer import SafeTextArea

    ctx, _ = _hostile_world()
    app = DshApp(ctx)
    async with app.run_test(size=SIZE) as pilot:
        composer = app.main.composer
        composer.focus()
        composer.post_message(events.Paste(f"pasted {HOSTILE}\r\n"))
        await pilot.pause()
        app.copy_to_clipboard(f" clip {HOSTILE}")
        await pilot.press("ctrl+v")
        composer.insert(f" inserted {HOSTILE}")
        composer.replace(f"replaced {HOSTILE}", (0, 0), (0, 6))
        await pilot.pause()
        text = composer.text
        for part in ("replaced", "clip", "inserted"):
            assert part in text
        assert "\r" not in text and unsafe_in(text) == []
        composer.undo()
        composer.undo()
        composer.redo()
        await pilot.pause()
        assert unsafe_in(composer.text) == []
        editor = SafeTextArea(f"loaded {HOSTILE}")
        assert unsafe_in(editor.text) == []
        editor.load_text(f"reloaded {HOSTILE}")
        assert "reloaded" in editor.text and unsafe_in(editor.text) == []
    await ctx.scope.dispose()
