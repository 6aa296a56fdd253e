#!/usr/bin/env python3
"""One entry point for a fresh checkout: set up .venv as needed, then run what was asked.

Standard library only, so it works on a machine that has nothing but Python >= 3.11.

    python3 dev.py app [dsh-tui args...]   set up and start the app (demo model without a key)
    python3 dev.py test [pytest args...]   set up and run ruff, import-linter, mypy and pytest
    python3 dev.py bench [--quick] [...]   set up and run benchmarks/run.py
    python3 dev.py shots                   set up and regenerate screenshots/*.svg
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / ("python.exe" if os.name == "nt" else "python")


def _stamp(extras: str) -> Path:
    return VENV / f".installed-{extras or 'runtime'}"


def ensure_env(extras: str = "") -> None:
    """Create .venv and (re)install the project when pyproject.toml changed."""
    if sys.version_info < (3, 11):  # noqa: UP036 - dev.py runs before any install
        sys.exit(f"dsh-tui needs Python >= 3.11; this is {sys.version.split()[0]}")
    if not PYTHON.exists():
        print("creating .venv …", flush=True)
        venv.EnvBuilder(with_pip=True, clear=False).create(VENV)
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    stamp = _stamp(extras)
    if stamp.exists() and stamp.read_text() == digest:
        return
    target = f".[{extras}]" if extras else "."
    print(f"installing dsh-tui{f' with {extras} extras' if extras else ''} into .venv …",
          flush=True)
    quiet = [] if os.environ.get("DSH_VERBOSE_INSTALL") else ["-q"]
    subprocess.run([str(PYTHON), "-m", "pip", "install", *quiet, "--disable-pip-version-check",
                    "-e", target], cwd=ROOT, check=True)
    stamp.write_text(digest)
    if extras:  # a dev install includes the runtime one
        _stamp("").write_text(digest)


def run(*args: str) -> int:
    return subprocess.run([str(a) for a in args], cwd=ROOT).returncode


def parallel(rest: list[str]) -> list[str]:
    """pytest-xdist options: one worker per core (at most 2), each taking whole files so a
    module's fixtures (a runtime, a server) start once; none if the caller chose (`-n 0`
    runs serially)."""
    workers = min(2, os.cpu_count() or 1)
    if workers < 2 or any(a.startswith(("-n", "--numprocesses")) for a in rest):
        return []
    return ["-n", str(workers), "--dist", "loadfile"]


def main(argv: list[str]) -> int:
    command, rest = (argv[0], argv[1:]) if argv else ("app", [])
    if command == "app":
        ensure_env()
        return run(BIN / "dsh-tui", *rest)
    if command == "test":
        ensure_env("dev")
        for step in ([BIN / "ruff", "check", "."], [BIN / "lint-imports"], [BIN / "mypy"]):
            code = run(*step)
            if code:
                return code
        return run(PYTHON, "-m", "pytest", *parallel(rest), *rest)
    if command == "bench":
        ensure_env("dev")
        return run(PYTHON, "benchmarks/run.py", *rest)
    if command == "shots":
        ensure_env("dev")
        return run(PYTHON, "scripts/screenshots.py", *rest)
    print(__doc__)
    return 2


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except subprocess.CalledProcessError as error:
        sys.exit(f"dev.py: setup step failed ({error})")
    except KeyboardInterrupt:
        sys.exit(130)
