"""Run every benchmark: `python benchmarks/run.py [--quick] [--json FILE] [--only NAME ...]`.

Each `benchmarks/bench_*.py` exposes `run(quick: bool) -> Figures` (typed in `figures.py`):

    {name: {"value": number, "unit": str, "baseline": number | None,
            "ratio": number | None, "bar": {"on": "value" | "ratio",
            "op": "<=" | ">=", "limit": number}, "ok": bool}}

`ratio` is always `value / baseline`, and the baseline is measured in the same
process and run: these machines are noisy, so an absolute time alone means
little, while a ratio against the same work done the plain way on the same
machine at the same moment travels. This script prints one line per figure and a
summary of missed bars. A missed bar is a finding, not a crash: the exit code is
0 unless a benchmark itself failed to run.

`--quick` finishes in under a minute on 2 cores (shorter windows, fewer repeats);
the full run takes a few minutes.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import math
import platform
import sys
import time
import traceback
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from benchmarks.figures import Figure, Figures

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

ORDER = ("stream", "scale", "resume", "inbox", "timeline", "loop", "startup")
"""Preferred order; any other `bench_*.py` runs after these, alphabetically."""

KEYS = ("value", "unit", "baseline", "ratio", "bar", "ok")


def discover() -> list[str]:
    names = sorted(path.stem.removeprefix("bench_") for path in HERE.glob("bench_*.py"))
    return [n for n in ORDER if n in names] + [n for n in names if n not in ORDER]


def check_bar(figure: Figure) -> bool:
    """Recompute `ok` from the bar (a benchmark's own `ok` must agree with it)."""
    bar = figure["bar"]
    subject = figure["value"] if bar["on"] == "value" else figure["ratio"]
    if subject is None or (isinstance(subject, float) and math.isnan(subject)):
        return False
    return bool(subject <= bar["limit"] if bar["op"] == "<=" else subject >= bar["limit"])


def _number(value: float | None) -> str:
    if value is None:
        return "—"
    if isinstance(value, float) and abs(value) < 10:
        return f"{value:.3g}"
    return f"{value:,.1f}" if isinstance(value, float) else f"{value:,}"


def format_line(name: str, figure: Figure, width: int) -> str:
    bar = figure["bar"]
    unit = figure["unit"]
    on = "" if bar["on"] == "value" else "ratio "
    limit = _number(bar["limit"]) + (f" {unit}" if bar["on"] == "value" else "")
    return (f"{name:<{width}}  {_number(figure['value']):>10} {unit:<9} "
            f"baseline {_number(figure['baseline']):>10}  ratio {_number(figure['ratio']):>6}  "
            f"bar {on}{bar['op']} {limit:<14} {'ok' if figure['ok'] else 'MISSED'}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="shorter windows, fewer repeats")
    parser.add_argument("--json", type=Path, metavar="FILE", help="write the figures as JSON")
    parser.add_argument("--only", nargs="+", metavar="NAME",
                        help=f"run only these benchmarks (of: {', '.join(discover())})")
    args = parser.parse_args(argv)
    names = discover()
    if args.only:
        unknown = sorted(set(args.only) - set(names))
        if unknown:
            parser.error(f"unknown benchmark(s): {', '.join(unknown)}")
        names = [n for n in names if n in args.only]

    mode = "quick" if args.quick else "full"
    print(f"dsh-tui benchmarks ({mode}) · Python {platform.python_version()} · "
          f"{platform.system()} {platform.machine()} · {_cpus()} CPU(s)", flush=True)
    figures: Figures = {}
    failed: list[str] = []
    width = 28
    started = time.perf_counter()
    for name in names:
        begin = time.perf_counter()
        try:
            module = importlib.import_module(f"benchmarks.bench_{name}")
            gc.collect()
            result: Figures = module.run(args.quick)
        except Exception:
            failed.append(name)
            print(f"{name}: FAILED to run", flush=True)
            traceback.print_exc()
            continue
        for key, figure in result.items():
            missing = [k for k in KEYS if k not in figure]
            if missing:
                raise ValueError(f"{name}: figure {key} lacks {', '.join(missing)}")
            figure["ok"] = bool(figure["ok"]) and check_bar(figure)
            figures[key] = figure
            print(format_line(key, figure, width), flush=True)
        print(f"{'':<{width}}  ({name}: {time.perf_counter() - begin:.1f} s)", flush=True)
    total = time.perf_counter() - started

    missed = [key for key, figure in figures.items() if not figure["ok"]]
    print(f"\n{len(figures)} figures in {total:.1f} s ({mode}): "
          f"{len(figures) - len(missed)} ok, {len(missed)} missed"
          + (f", {len(failed)} benchmark(s) failed to run: {', '.join(failed)}" if failed else ""))
    for key in missed:
        figure = figures[key]
        bar = figure["bar"]
        subject = figure["value"] if bar["on"] == "value" else figure["ratio"]
        print(f"  MISSED {key}: {bar['on']} {_number(subject)} is not {bar['op']} "
              f"{_number(bar['limit'])}")
    if args.json is not None:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {args.json}")
    return 1 if failed else 0


def _cpus() -> int:
    try:
        import os

        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        import os

        return os.cpu_count() or 1


if __name__ == "__main__":
    sys.exit(main())
