"""View: `dsh-tui view` on a 1 GB session log starts fast and does not load the file.

The log is written for the benchmark only, in a temporary directory that is
deleted afterwards (it needs 1 GB of free disk; never in tests or CI): a header,
then the realistic mix of `bench_resume.build_session` (turns, prompts, streamed
chunks, messages, tool calls and results, inbox splices) repeated with seqs
counting on, until the file holds 1 GB (128 MB with --quick).

Each measurement runs in a fresh process (so its RSS is its own): `open_log` of
the file and the real `DshApp` headless at 160x50, from the call until the
transcript shows the log's last item (the scale benchmark's test), then the
person goes up: `home` again and again (the top of the loaded pages, and once there,
the page before it, `persistence/pages.py`), until SCROLL_BYTES of the file were read
back.

Figures:
- `view.open_1gb_ms`: time to the first screen showing the end of the 1 GB log
  (`dsh-tui view` reads a big log's last page, 1 MB). Baseline: the same for a log
  just under a page, read whole. Bar <= 2,000 ms.
- `view.open_1gb_rss_mb`: how much the process's RSS grew over opening the log
  and scrolling back through SCROLL_BYTES of it (after a warm-up view of a small
  log in the same process: imports, CSS). Baseline: the file's size in MB.
  Bar <= 256 MB (a quarter of the 1 GB file; held as events, the whole file would
  take about five times its size). What the view holds is a window of at most four
  pages of events, the transcript built from them and the lines it drew.

Run alone: `python benchmarks/bench_view.py [--quick]`.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, cast

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench_resume import build_session
from benchmarks.bench_scale import SIZE, _shows_last
from benchmarks.bench_soak import rss_mb
from dsh_tui.harness import dumps_compact
from dsh_tui.harness.persistence.header import header_line
from dsh_tui.harness.persistence.pages import PAGE_BYTES

if TYPE_CHECKING:
    from benchmarks.figures import Bar, Figures

GB = 1024 ** 3
SCROLL_BYTES = 32 * 1024 * 1024
"""How far back into the file the person scrolls (32 pages; 8 MB with --quick)."""
BLOCK_EVENTS = 20_000


def write_log(path: Path, size: int) -> int:
    """A log of about `size` bytes: one realistic session repeated, seqs counting on
    (the last copy cut short, so the file is no bigger than `size`)."""
    session = build_session(BLOCK_EVENTS)
    records = [event.to_json() for event in session.events]
    parts: list[tuple[bytes, bytes]] = []
    for record in records:  # a line split around its seq, so a copy costs one format
        record["seq"] = -1
        head_text, tail_text = dumps_compact(record).split('"seq":-1', 1)
        parts.append(((head_text + '"seq":').encode(), tail_text.encode() + b"\n"))
    written = 0
    seq = 0
    with path.open("wb") as handle:
        head = (dumps_compact(header_line(dict(session.header))) + "\n").encode()
        handle.write(head)
        written += len(head)
        while written < size:
            lines = []
            for before, after in parts:
                line = before + str(seq).encode() + after
                if written + len(line) > size:
                    break
                lines.append(line)
                written += len(line)
                seq += 1
            else:
                handle.write(b"".join(lines))
                continue
            handle.write(b"".join(lines))
            break
    return seq


async def _open(path: Path, scroll: int) -> dict[str, float]:
    from dsh_tui.compose import open_log
    from dsh_tui.harness.readonly import ReadOnlySession
    from dsh_tui.ui.app import DshApp

    warm = path.with_name("warm.jsonl")
    app = DshApp(open_log(warm))
    async with app.run_test(size=SIZE) as pilot:  # imports, CSS, first-mount caches
        await pilot.pause()
    del app
    rss0 = rss_mb()
    start = time.perf_counter()
    ctx = open_log(path)
    app = DshApp(ctx)
    agent = ctx.agents.list()[0]
    async with app.run_test(size=SIZE) as pilot:
        view = None
        while True:
            view = app.bridge.views.get(agent.id)
            if view is not None and app.main.transcript.view is view and \
                    _shows_last(app, view, -1):
                break
            if time.perf_counter() - start > 120:
                raise TimeoutError("the view never painted")
            await asyncio.sleep(0.001)
        opened = time.perf_counter() - start
        rss_open = rss_mb() - rss0
        session = cast(ReadOnlySession, agent.session)  # a log's window: how far it reaches
        initial = session.skipped_bytes
        stop = max(0, initial - scroll)
        steps, peak = 0, 0.0
        transcript = app.main.transcript
        while (transcript.scroll_y > 0 or session.skipped_bytes > stop) and steps < 20_000:
            await app.main.action_load_older()
            await pilot.pause()
            steps += 1
            peak = max(peak, rss_mb())
    return {"open_ms": opened * 1000, "rss_mb": peak - rss0, "rss_open_mb": rss_open,
            "steps": steps, "read_back_mb": (initial - session.skipped_bytes) / 1e6,
            "events": len(agent.session.events)}


def _child(path: Path, scroll: int) -> dict[str, float]:
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", str(path),
                           str(scroll)],
                          capture_output=True, text=True, check=False)
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    raise RuntimeError(f"view child failed:\n{proc.stdout[-2000:]}{proc.stderr[-4000:]}")


def run(quick: bool = False) -> Figures:
    size = GB // 8 if quick else GB
    with tempfile.TemporaryDirectory(prefix="dsh-view-bench-") as tmp:
        small = Path(tmp) / "small.jsonl"
        write_log(small, PAGE_BYTES - 100_000)  # read whole: as much as the big log's page
        write_log(Path(tmp) / "warm.jsonl", 200_000)
        big = Path(tmp) / "big.jsonl"
        write_log(big, size)
        file_mb = big.stat().st_size / 1e6
        scroll = SCROLL_BYTES // 4 if quick else SCROLL_BYTES
        base = _child(small, 0)
        measured = _child(big, scroll)
        print(f"view: {file_mb:,.0f} MB log: {measured}; {small.stat().st_size / 1e6:.0f} MB "
              f"log: {base}", flush=True)
    open_bar: Bar = {"on": "value", "op": "<=", "limit": 2000}
    rss_bar: Bar = {"on": "value", "op": "<=", "limit": 256}
    rss_ratio = measured["rss_mb"] / file_mb
    return {
        "view.open_1gb_ms": {"value": round(measured["open_ms"], 1), "unit": "ms",
                             "baseline": round(base["open_ms"], 1),
                             "ratio": round(measured["open_ms"] / base["open_ms"], 3),
                             "bar": open_bar, "ok": measured["open_ms"] <= 2000},
        "view.open_1gb_rss_mb": {"value": round(measured["rss_mb"], 1), "unit": "MB",
                                 "baseline": round(file_mb, 1), "ratio": round(rss_ratio, 3),
                                 "bar": rss_bar, "ok": measured["rss_mb"] <= 256},
    }


if __name__ == "__main__":
    if "--child" in sys.argv:
        at = sys.argv.index("--child")
        result = asyncio.run(_open(Path(sys.argv[at + 1]), int(sys.argv[at + 2])))
        print("RESULT " + json.dumps(result), flush=True)
        sys.exit(0)
    for name, figure in run(quick="--quick" in sys.argv).items():
        print(name, figure)
