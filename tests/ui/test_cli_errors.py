"""Issue 11: every mistake on the command line or in the config file is one line naming it
and exit code 2, never a traceback, a hang or a silently ignored setting."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from dsh_tui import cli

LOCAL = '[routes.local]\nprovider = "openai-compatible"\nbase_url = "http://127.0.0.1:1/v1"\n' \
        'model = "qwen3"\n'
DEEP = "x = " + "[" * 5000 + "]" * 5000 + "\n"
DEEP_TABLES = "x = " + "{a = " * 3000 + "1" + "}" * 3000 + "\n"

# (case id, config file text or None, argv (FILE = a plain file, DIR = the data dir),
#  extra environment, a fragment the one line must contain)
CASES = [
    ("nan speed", "demo_speed = nan\n", [], {}, "demo_speed must be a finite number"),
    ("inf speed", "demo_speed = inf\n", [], {}, "demo_speed must be a finite number"),
    ("-inf speed", "demo_speed = -inf\n", [], {}, "demo_speed must be a finite number"),
    ("huge speed", "demo_speed = 1e999\n", [], {}, "demo_speed must be a finite number"),
    ("huge int speed", "demo_speed = 9" + "9" * 400 + "\n", [], {}, "demo_speed"),
    ("ftp base_url", 'base_url = "ftp://x"\n', [], {}, "must start with http"),
    ("file base_url", 'base_url = "file:///etc/passwd"\n', [], {}, "must start with http"),
    ("broken ipv6 base_url", 'base_url = "http://[::1"\n', [], {}, "not a valid URL"),
    ("hostless base_url", 'base_url = "http://"\n', [], {}, "names no host"),
    ("bad port base_url", 'base_url = "http://h:port/v1"\n', [], {}, "not a valid URL"),
    ("flag broken ipv6", None, ["--provider", "openai-compatible", "--base-url", "http://[::1"],
     {}, "--base-url"),
    ("flag javascript url", None, ["--base-url", "javascript:alert(1)"], {},
     "must start with http"),
    ("flag ftp url after a command", None, ["serve", "--base-url", "ftp://x"], {},
     "must start with http"),
    ("env base url", None, ["--provider", "deepseek"],
     {"DEEPSEEK_API_KEY": "sk-test-123456", "DEEPSEEK_BASE_URL": "gopher://x"},
     "DEEPSEEK_BASE_URL"),
    ("unparseable toml", "theme = \n", [], {}, "line 1"),
    ("nested arrays", DEEP, [], {}, "nested too deeply"),
    ("nested tables", DEEP_TABLES, [], {}, "nested too deeply"),
    ("unknown setting", 'colour = "red"\n', [], {}, 'unknown setting "colour"'),
    ("key with no key", '[keys]\nsteer = "ctrl+"\n', [], {}, 'steer = "ctrl+"'),
    ("key that is a comma", '[keys]\nsteer = ","\n', [], {}, 'steer = ","'),
    ("key name typo", '[keys]\nsteer = "ctrl+enterr"\n', [], {}, "not a key name"),
    ("modifier typo", '[keys]\nsteer = "crtl+s"\n', [], {}, "not a modifier"),
    ("unknown action", '[keys]\nsteerr = "ctrl+e"\n', [], {}, '"steerr" is not an action'),
    ("data dir is a file", None, ["--data-dir", "FILE"], {}, "is a file"),
    ("data dir is a file, sessions", None, ["sessions", "--data-dir", "FILE"], {}, "is a file"),
    ("data dir is a file, export", None, ["export", "x", "--data-dir", "FILE"], {}, "is a file"),
    ("empty resume", None, ["--resume", ""], {}, "--resume needs a session id"),
    ("blank resume", None, ["--resume", "  "], {}, "--resume needs a session id"),
    ("unknown resume", None, ["--resume", "nope", "--data-dir", "DIR"], {},
     'no saved session "nope"'),
    ("empty export id", None, ["export", "", "--data-dir", "DIR"], {}, "export needs a session"),
    ("unknown command", None, ["sessionz"], {}, "invalid choice"),
    ("unknown flag", None, ["--colour"], {}, "unrecognized arguments"),
    ("config is a directory", None, ["--config", "DIR"], {}, "cannot read the config file"),
    # routes (issue 13): each bad route setting is named with its table and line
    ("unknown route", None, ["--route", "nope"], {}, 'unknown route "nope" (known: demo'),
    ("unknown route after a command", None, ["serve", "--route", "nope"], {},
     'unknown route "nope"'),
    ("route and provider", LOCAL, ["--route", "local", "--provider", "demo"], {},
     "drop --provider"),
    ("unknown route setting", LOCAL + "max_token = 5\n", [], {},
     'line 5: [routes.local] unknown setting "max_token"'),
    ("route max_tokens 0", LOCAL + "max_tokens = 0\n", [], {}, "max_tokens must be a whole"),
    ("route max_tokens text", LOCAL + 'max_tokens = "5"\n', [], {}, "max_tokens must be"),
    ("route max_tokens float", LOCAL + "max_tokens = 1.5\n", [], {}, "max_tokens must be"),
    ("route temperature 3", LOCAL + "temperature = 3\n", [], {}, "from 0 to 2"),
    ("route temperature nan", LOCAL + "temperature = nan\n", [], {}, "from 0 to 2"),
    ("route temperature bool", LOCAL + "temperature = true\n", [], {}, "from 0 to 2"),
    ("route timeout 0", LOCAL + "first_byte_timeout = 0\n", [], {},
     "first_byte_timeout must be a number of seconds"),
    ("route timeout inf", LOCAL + "read_timeout = inf\n", [], {}, "read_timeout must be"),
    ("route effort spaces", LOCAL + 'reasoning_effort = "very high"\n', [], {},
     "reasoning_effort must be a word"),
    ("deepseek effort", '[routes.ds]\nprovider = "deepseek"\nreasoning_effort = "medium"\n',
     [], {}, 'line 3: [routes.ds] reasoning_effort "medium" is not one DeepSeek offers'),
    ("deepseek max_tokens", '[routes.ds]\nprovider = "deepseek"\nmax_tokens = 400000\n', [], {},
     "over DeepSeek's limit of 393,216"),
    ("route provider", '[routes.x]\nprovider = "gpt"\nmodel = "m"\n', [], {},
     'unknown provider "gpt"'),
    ("route without provider", '[routes.x]\nmodel = "m"\n', [], {}, "needs provider ="),
    ("route without base_url", '[routes.x]\nprovider = "openai-compatible"\nmodel = "m"\n',
     [], {}, "needs base_url"),
    ("route without model", '[routes.x]\nbase_url = "http://h/v1"\n', [], {}, "needs model"),
    ("route ftp base_url", '[routes.x]\nbase_url = "ftp://h"\nmodel = "m"\n', [], {},
     "[routes.x] base_url"),
    # prices (issue 28): a cost is never shown from a price that is half there or nonsense
    ("route price negative", LOCAL + "price_input = -1\nprice_output = 1\n", [], {},
     "line 5: [routes.local] price_input must be a price per million tokens"),
    ("route price text", LOCAL + 'price_input = 1\nprice_output = "2"\n', [], {},
     "line 6: [routes.local] price_output must be a price"),
    ("route price nan", LOCAL + "price_input = nan\nprice_output = 1\n", [], {},
     "price_input must be a price"),
    ("route price alone", LOCAL + "price_input = 0.27\n", [], {},
     "line 5: [routes.local] price_output is missing"),
    ("route cached price alone", LOCAL + "price_cached = 0.07\n", [], {},
     "line 5: [routes.local] price_input is missing"),
    ("route currency", LOCAL + 'price_input = 1\nprice_output = 2\nprice_currency = "dollars"\n',
     [], {}, "line 7: [routes.local] price_currency must be a short symbol"),
    ("route bad key env", LOCAL + 'api_key_env = "my key"\n', [], {},
     "environment variable's name"),
    ("route missing key", LOCAL + 'api_key_env = "LOCAL_KEY_UNSET"\n', ["--route", "local"], {},
     "route local needs LOCAL_KEY_UNSET in the environment"),
    ("deepseek route missing key", '[routes.ds]\nprovider = "deepseek"\n', ["--route", "ds"],
     {}, "route ds needs DEEPSEEK_API_KEY"),
    ("default route unknown", 'route = "nope"\n' + LOCAL, [], {},
     'route "nope" names no [routes.nope] table'),
    ("routes not tables", "routes = 5\n", [], {}, '"routes" must be a dict'),
    ("route not a table", "[routes]\nx = 5\n", [], {}, "routes.x must be a table"),
    ("route name", '[routes."a b"]\nmodel = "m"\n', [], {}, "route name [routes.a b] must be"),
]


@pytest.mark.parametrize(("config", "argv", "env", "expected"),
                         [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_each_mistake_is_one_line_and_exit_2(
        config: str | None, argv: list[str], env: dict[str, str], expected: str,
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    plain = tmp_path / "plain-file"
    plain.write_text("not a directory")
    data = tmp_path / "data"
    data.mkdir()
    config_path = tmp_path / "config.toml"
    config_path.write_text(config or "", encoding="utf-8")
    monkeypatch.setenv("DSH_TUI_CONFIG", str(config_path))
    for name in ("DEEPSEEK_API_KEY", "DEEPSEEK_BASE_URL", "OPENAI_API_KEY", "LOCAL_KEY_UNSET"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    argv = [{"FILE": str(plain), "DIR": str(data)}.get(a, a) for a in argv]
    assert cli.main(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("dsh-tui: ") and err.endswith("\n") and err.count("\n") == 1, err
    assert expected in err
    assert "Traceback" not in err and len(err) < 2200


def test_global_flags_work_before_or_after_the_command(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["--data-dir", str(tmp_path), "sessions"],
                 ["sessions", "--data-dir", str(tmp_path)]):
        assert cli.main(argv) == 0
        assert capsys.readouterr().out == f"no saved sessions in {tmp_path}\n"
    args = cli.build_parser().parse_args(["--data-dir", "A", "export", "x", "--config", "C"])
    assert (str(args.data_dir), str(args.config), args.session) == ("A", "C", "x")
    args = cli.build_parser().parse_args(["--data-dir", "A", "sessions"])
    assert str(args.data_dir) == "A"  # not reset by the command's own copy of the flag


def test_without_a_terminal_the_app_says_so_and_exits(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DEEPSEEK_", "TEXTUAL"))}
    env["DSH_TUI_CONFIG"] = str(tmp_path / "none.toml")
    for argv in ([], ["--data-dir", str(tmp_path)]):
        result = subprocess.run([sys.executable, "-m", "dsh_tui", *argv],
                                stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                env=env, timeout=30)
        assert result.returncode == 2
        assert result.stderr.count("\n") == 1 and "needs a terminal" in result.stderr
    assert not any(tmp_path.rglob("*.jsonl"))  # no session was started


def test_a_key_written_into_a_route_is_refused_without_being_repeated(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "sk-live-9d2c4b7e1f0a3865"
    config = tmp_path / "config.toml"
    config.write_text(LOCAL + f'api_key = "{secret}"\n', encoding="utf-8")
    monkeypatch.setenv("DSH_TUI_CONFIG", str(config))
    assert cli.main(["--data-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "line 5: [routes.local] api_key: keys are not read from the config file" in err
    assert "api_key_env" in err and secret not in err
