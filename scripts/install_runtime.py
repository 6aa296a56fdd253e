#!/usr/bin/env python3
"""Install the published dsh runtime into a cache folder, for the tests that drive it.

    python3 scripts/install_runtime.py          install (once) and print the `dsh` path
    python3 scripts/install_runtime.py --where  print where it goes, install nothing

The runtime (`deepseek-harness-runtime-bin`, a single executable behind a `dsh` script)
goes into its own venv under the user cache (`~/.cache/dsh-tui/dsh-runtime-VERSION`, or
$DSH_TUI_RUNTIME_DIR), never into the project's `.venv`: the tests in `tests/remote/`
find it there and skip, saying so, when it is absent. Standard library only.
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

VERSION = "0.2.1rc2"
PACKAGE = f"deepseek-harness-runtime-bin=={VERSION}"


def runtime_dir() -> Path:
    """Where the runtime's venv lives."""
    override = os.environ.get("DSH_TUI_RUNTIME_DIR")
    if override:
        return Path(override)
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "dsh-tui" / f"dsh-runtime-{VERSION}"


def dsh_path(root: Path | None = None) -> Path:
    """The `dsh` command inside the runtime's venv."""
    root = root or runtime_dir()
    return root / ("Scripts" if os.name == "nt" else "bin") / "dsh"


def install() -> Path:
    """Create the venv and install the runtime unless it is there; returns `dsh`."""
    root = runtime_dir()
    dsh = dsh_path(root)
    stamp = root / ".installed"
    if dsh.exists() and stamp.exists() and stamp.read_text() == PACKAGE:
        return dsh
    venv.EnvBuilder(with_pip=True, clear=True).create(root)
    python = root / ("Scripts" if os.name == "nt" else "bin") / "python"
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                    "--pre", PACKAGE], check=True)
    stamp.write_text(PACKAGE)
    return dsh


def main(argv: list[str]) -> int:
    if "--where" in argv:
        print(dsh_path())
        return 0
    try:
        print(install())
    except (subprocess.CalledProcessError, OSError) as error:
        print(f"install_runtime: could not install {PACKAGE}: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
