"""The shape of a benchmark's figures, as `run.py` reads them (its docstring has the prose).

Typed so that mypy checks every `bench_*.py` that builds one: a figure missing a key, a
bar with a misspelt operator, or a limit compared against an untyped value fails in CI
instead of in the next full benchmark run.
"""

from __future__ import annotations

from typing import Literal, TypedDict


class Bar(TypedDict):
    """What a figure must meet: its `value` or its `ratio`, `<=` or `>=` a limit."""

    on: Literal["value", "ratio"]
    op: Literal["<=", ">="]
    limit: float


class Figure(TypedDict):
    """One measured figure with its same-run baseline (`ratio` is value / baseline)."""

    value: float
    unit: str
    baseline: float | None
    ratio: float | None
    bar: Bar
    ok: bool


Figures = dict[str, Figure]
"""What every `bench_*.run(quick)` returns: figures by their dotted name."""
