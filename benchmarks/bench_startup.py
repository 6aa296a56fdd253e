"""Startup: `dsh-tui --version`, and the time to the first painted screen, in fresh processes.

Every sample is a new interpreter, so imports count, as they do for a person
typing the command. The environment is isolated (HOME, XDG dirs and
`DSH_TUI_CONFIG` point into a temporary directory; no API key), so the app
starts the way a first-time user's does: on the demo model, no config file.

Figures (medians over several runs, one discarded warm-up run each):
- `startup.version_ms`: wall time of `<venv>/bin/dsh-tui --version` (the console
  script, so the entry-point shim counts). Baseline: `python -c pass`. Bar < 300 ms.
- `startup.first_screen_ms`: from spawning the process until a child running
  `python benchmarks/bench_startup.py --child app` reports that the app is on
  its first screen: it builds the world the way `dsh-tui` does (config, demo
  provider, JSONL persistence, one "demo" agent, `DshApp(ctx, config)`), enters
  `run_test(size=(120, 40))` (Textual yields once the app is ready and the main
  screen is composed) and waits until the agent tree lists the demo agent.
  Baseline: an empty `textual.app.App` measured the same way (`--child empty`).
  Bar < 1,500 ms; goal < 600 ms.

The real-terminal variant (tmux, polling the pane until the screen shows) is
`benchmarks/tmux_first_screen.sh`; it is not part of `run.py`.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # only for mypy: the child processes this file starts import nothing more
    from benchmarks.figures import Bar, Figure, Figures

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
READY = "first-screen-ready"
VERSION_BAR: Bar = {"on": "value", "op": "<=", "limit": 300}
SCREEN_BAR: Bar = {"on": "value", "op": "<=", "limit": 1500}
SCREEN_GOAL_MS = 600


def _script(name: str) -> str:
    """The console script next to this interpreter (the venv's `dsh-tui`)."""
    return str(Path(PYTHON).parent / name)


def _env(home: Path) -> dict[str, str]:
    # PYTHONDONTWRITEBYTECODE is dropped: an installed app has its .pyc files (pip
    # compiles them), and the warm-up run writes them for the source checkout.
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("DEEPSEEK_", "OPENAI_", "XDG_", "DSH_TUI_"))
           and key != "PYTHONDONTWRITEBYTECODE"}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / "config"),
               XDG_DATA_HOME=str(home / "data"), XDG_CACHE_HOME=str(home / "cache"),
               DSH_TUI_CONFIG=str(home / "config" / "dsh-tui" / "config.toml"),
               PYTHONPATH=str(ROOT), TERM="xterm-256color")
    return env


def _wall(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=True)
    return time.perf_counter() - start


def _until_ready(argv: list[str], env: dict[str, str]) -> float:
    """Seconds from spawning `argv` until it prints the ready line (its exit is not timed)."""
    with tempfile.TemporaryFile("w+") as errors:
        start = time.perf_counter()
        process = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=errors,
                                   text=True)
        assert process.stdout is not None
        elapsed = None
        try:
            for line in process.stdout:
                if line.strip() == READY:
                    elapsed = time.perf_counter() - start
                    break
        finally:
            process.stdout.close()
            process.wait(timeout=30)
        if elapsed is None:
            errors.seek(0)
            tail = "".join(errors.readlines()[-15:])
            raise RuntimeError(f"{argv} exited ({process.returncode}) without reaching its "
                               f"first screen:\n{tail}")
    return elapsed


def _median_ms(fn: Any, argv: list[str], env: dict[str, str], runs: int) -> float:
    fn(argv, env)  # warm-up: the page cache and .pyc files, as on any second start
    return statistics.median(fn(argv, env) for _ in range(runs)) * 1000


def _figure(value: float, baseline: float, bar: Bar) -> Figure:
    return {"value": round(value, 1), "unit": "ms", "baseline": round(baseline, 1),
            "ratio": round(value / baseline, 2) if baseline else None, "bar": bar,
            "ok": value <= bar["limit"]}


def run(quick: bool = False) -> Figures:
    runs = 5 if quick else 15
    screen_runs = 3 if quick else 7
    me = str(Path(__file__).resolve())
    with tempfile.TemporaryDirectory() as tmp:
        env = _env(Path(tmp))
        version = _median_ms(_wall, [_script("dsh-tui"), "--version"], env, runs)
        bare = _median_ms(_wall, [PYTHON, "-c", "pass"], env, runs)
        screen = _median_ms(_until_ready, [PYTHON, me, "--child", "app"], env, screen_runs)
        empty = _median_ms(_until_ready, [PYTHON, me, "--child", "empty"], env, screen_runs)
    return {"startup.version_ms": _figure(version, bare, VERSION_BAR),
            "startup.first_screen_ms": _figure(screen, empty, SCREEN_BAR)}


# ---- the child processes ----------------------------------------------------------------------


def _child_app() -> None:
    """What `dsh-tui` does on a first start, with `run_test` in place of a terminal."""
    import asyncio

    from dsh_tui.cli import _persistence, build_parser, load_settings, resolve_route

    async def main() -> None:
        from dsh_tui.compose import build_context, default_providers
        from dsh_tui.ui.app import DshApp
        from dsh_tui.ui.state.world import create_agent, new_agent_id

        args = build_parser().parse_args([])
        config = load_settings(args)
        config.provider, config.model = resolve_route(args, config)
        providers = default_providers(demo_speed=config.demo_speed)
        ctx = build_context(providers=providers, persistence=_persistence(args))
        handle = await create_agent(ctx, provider=config.provider, model=config.model,
                                    title="demo", session_id=new_agent_id("demo"))
        app = DshApp(ctx, config)
        async with app.run_test(size=(120, 40)) as pilot:
            while handle.agent.id not in app.main.agent_tree.listed:
                await pilot.pause(0.001)
            print(READY, flush=True)
        os._exit(0)  # the measurement ended at READY; skip teardown

    asyncio.run(main())


def _child_empty() -> None:
    """The least a Textual app costs: an empty `App` under the same harness."""
    import asyncio

    from textual.app import App

    async def main() -> None:
        async with App().run_test(size=(120, 40)):
            print(READY, flush=True)
        os._exit(0)

    asyncio.run(main())


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        {"app": _child_app, "empty": _child_empty}[sys.argv[2]]()
    else:
        for figure_name, figure in run(quick="--quick" in sys.argv).items():
            print(figure_name, figure)
