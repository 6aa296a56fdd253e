"""Fixtures for the real-terminal tests: `terminal(...)` starts the installed `dsh-tui`
in a pseudo-terminal and kills it when the test ends, however it ends."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from .terminal import BINARY, Terminal


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[Callable[..., Terminal]]:
    """`terminal(cols=100, rows=30, args=(), config="")` → a started Terminal whose app
    is ready (the composer names its target). All share `tmp_path`, so a second one
    started with `args=("--resume", id)` sees the first one's sessions."""
    if not BINARY.exists():
        pytest.fail(f"{BINARY} is missing: the tty tests run the installed console script "
                    "(python3 dev.py test installs it)")
    started: list[Terminal] = []

    def start(**kwargs: Any) -> Terminal:
        term = Terminal(tmp_path, **kwargs)
        started.append(term)
        term.start()
        term.wait_ready()
        return term

    try:
        yield start
    finally:
        for term in started:
            term.close()
