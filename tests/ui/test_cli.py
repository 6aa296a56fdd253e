"""The `dsh-tui` command line: fast --version, one-line errors, view, run and resume."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from shared_fixtures import FIXTURES

from dsh_tui import cli
from dsh_tui.compose import open_log
from dsh_tui.ui.app import DshApp

from .conftest import SIZE, settle, wait_until

LOGS = sorted([*FIXTURES.glob("upstream-logs/*.jsonl"), *FIXTURES.glob("runtime-logs/*.zstd")])

KNOWN_TEXT = {
    "code-mode-round.jsonl": "Using ONE run_code program",
    "cordis-tool-round.jsonl": "Call cordis_stop with pluginId",
    "fresh-round-trip.jsonl": "Use the bash tool to run exactly",
    "live-interactions.jsonl": "one-sentence description of event sourcing",
    "minimal-preset.jsonl": "Reply exactly MINIMAL_PRESET_REQUEST_OK",
    "seeded-history.seed.jsonl": "Use the read tool twice",
    "web-search-round.jsonl": "Use web_search once",
    "tool-read.session.v4.jsonl.zstd": "Read notes.txt and tell me what it says.",
}


def run_cli(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dsh_tui", *args], capture_output=True,
                          text=True, timeout=60, env={**_env(), **env})


def _env() -> dict[str, str]:
    import os

    env = {k: v for k, v in os.environ.items() if k != "DEEPSEEK_API_KEY"}
    return env


def one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, result
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def test_version_is_printed_without_importing_textual() -> None:
    code = ("import sys; from dsh_tui.cli import main; rc = main(['--version']); "
            "print('textual loaded' if 'textual' in sys.modules else 'textual not loaded'); "
            "sys.exit(rc)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0
    assert result.stdout.splitlines() == [f"dsh-tui {cli.version()}", "textual not loaded"]
    assert run_cli("--version").stdout.startswith("dsh-tui ")


def test_a_broken_config_file_is_named_with_its_line(tmp_path: Path) -> None:
    bad = tmp_path / "config.toml"
    bad.write_text('theme = "dark"\n[keys]\nsteer = \n')
    line = one_line_error(run_cli("--config", str(bad)))
    assert str(bad) in line and "line 3" in line
    bad.write_text('theme = "dark"\nspeed = 2\n')
    line = one_line_error(run_cli("--config", str(bad)))
    assert "line 2" in line and 'unknown setting "speed"' in line


def test_unknown_provider_and_missing_requirements_are_one_line(tmp_path: Path) -> None:
    config = str(tmp_path / "none.toml")
    assert "unknown provider" in one_line_error(run_cli("--config", config, "--provider",
                                                        "nope"))
    assert "DEEPSEEK_API_KEY" in one_line_error(run_cli("--config", config, "--provider",
                                                        "deepseek"))
    assert "--base-url" in one_line_error(run_cli("--config", config, "--provider",
                                                  "openai-compatible"))
    assert "no such file" in one_line_error(run_cli("view", str(tmp_path / "missing.jsonl")))
    assert "unrecognized arguments" in one_line_error(run_cli("--bogus"))
    missing = one_line_error(run_cli("--config", config, "--data-dir", str(tmp_path / "data"),
                                     "--resume", "nope"))
    assert 'no saved session "nope"' in missing


def test_a_log_that_cannot_be_read_is_one_line(tmp_path: Path) -> None:
    junk = tmp_path / "junk.jsonl"
    junk.write_bytes(b"\x00\x01 not a log")
    line = one_line_error(run_cli("view", str(junk)))
    assert str(junk) in line


def test_sessions_lists_nothing_in_an_empty_dir(tmp_path: Path) -> None:
    result = run_cli("--data-dir", str(tmp_path), "sessions")
    assert result.returncode == 0 and "no saved sessions" in result.stdout


def test_route_resolution() -> None:
    from dsh_tui.ui.state.config import UiConfig

    args = cli.build_parser().parse_args([])
    assert cli.resolve_route(args, UiConfig(), env={}) == ("demo", "demo")
    assert cli.resolve_route(args, UiConfig(), env={"DEEPSEEK_API_KEY": "k"}) == (
        "deepseek", "deepseek-v4-flash")
    args = cli.build_parser().parse_args(["--provider", "openai-compatible", "--base-url",
                                          "http://x", "--model", "llama"])
    assert cli.resolve_route(args, UiConfig(), env={}) == ("openai-compatible", "llama")


@pytest.mark.parametrize("path", LOGS, ids=[p.name for p in LOGS])
async def test_view_shows_the_conversation_of_every_fixture_log(path: Path) -> None:
    assert len(LOGS) == 8
    app = DshApp(open_log(path))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        view = app.main.selected_view
        assert view is not None
        users = [i.current_text() for i in view.transcript.items if i.kind == "user"]
        assert any(KNOWN_TEXT[path.name] in text for text in users)
        await app.main.transcript.action_load_older()
        await settle(pilot)
        transcript = app.main.transcript
        rendered = "\n".join("\n".join(transcript.item_text(item.index))
                             for item in transcript.lines.items if item.kind == "user")
        assert KNOWN_TEXT[path.name] in rendered.replace("\n", " ")


def test_the_app_starts_on_the_demo_agent_and_resumes_with_children(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "config.toml"
    config.write_text("demo_speed = 0\n")
    data = tmp_path / "data"
    seen: dict[str, Any] = {}

    async def scripted_run(self: DshApp, *args: Any, **kwargs: Any) -> None:
        async with self.run_test(size=SIZE) as pilot:
            await settle(pilot)
            seen.setdefault("runs", []).append(self)
            roots = self.ctx.agents.roots()
            if "first" not in seen:
                seen["first"] = roots[0].id
                assert self.main.selected_view.name == "demo"
                assert self.config.provider == "demo" and roots[0].options.model == "demo"
                await pilot.press(*"compare two designs for a cache")
                await pilot.press("enter")
                await wait_until(pilot, lambda: bool(self.ctx.agents.children_of(roots[0])),
                                 rounds=2000)
                await roots[0].when_idle()
                seen["child"] = self.ctx.agents.children_of(roots[0])[0].id
            else:
                seen["resumed"] = [a.id for a in roots]
                seen["children"] = [a.id for a in self.ctx.agents.children_of(roots[0])]
                await settle(pilot)
                seen["tree"] = set(self.main.agent_tree.listed)

    monkeypatch.setattr(DshApp, "run_async", scripted_run)
    monkeypatch.setattr(cli, "_check_terminal", lambda: None)  # pytest's stdin is no tty
    assert cli.main(["--config", str(config), "--data-dir", str(data)]) == 0
    assert cli.main(["--config", str(config), "--data-dir", str(data), "--resume",
                     seen["first"]]) == 0
    assert seen["resumed"] == [seen["first"]]
    assert seen["children"] == [seen["child"]]
    assert seen["tree"] == {seen["first"], seen["child"]}
