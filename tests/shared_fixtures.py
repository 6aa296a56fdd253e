"""Where the shared fixture logs are: one rule for every test that reads them.

The upstream and runtime session logs the reader, `view` and export tests replay are not
in this repository: they sit in the project's shared folder (`/work/shared/fixtures` on
the development machine, `shared/fixtures` beside the checkout elsewhere), or wherever
`DSH_TUI_FIXTURES` points. A test reaches one through `fixture(...)`, which skips the test,
saying where it looked, when the file is absent; a parametrized test globs `FIXTURES`
(absent: no cases, which pytest reports as skipped).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def _candidates() -> list[Path]:
    named = os.environ.get("DSH_TUI_FIXTURES")
    return [*([Path(named)] if named else []), Path("/work/shared/fixtures"),
            Path(__file__).resolve().parents[2] / "shared" / "fixtures"]


FIXTURES: Path = next((p for p in _candidates() if p.is_dir()), _candidates()[0])
"""The shared fixtures folder (the first candidate when none exists)."""


def fixture(*parts: str) -> Path:
    """`FIXTURES / parts`, or skip the calling test when that file is absent."""
    path = FIXTURES.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared fixture absent: {path} (set DSH_TUI_FIXTURES; looked in "
                    f"{', '.join(str(p) for p in _candidates())})")
    return path
