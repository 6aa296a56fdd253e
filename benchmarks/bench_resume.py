"""Resume cost: the strict loader on a 100,000-event session vs a bare `json.loads` per line.

The baseline is the least any loader must do (read the file, parse every
line); the ratio says what the loader's checks (committed-prefix scan, legacy
upgrades, known types, envelope validation, crash-repair scan) cost on top.
Both run in the same process on the same file. Bar: ratio <= 3.
"""

from __future__ import annotations

import gc
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dsh_tui.harness import Session, user_message
from dsh_tui.harness.persistence import JsonlPersistence
from dsh_tui.harness.persistence.writer import SessionWriter

if TYPE_CHECKING:
    from benchmarks.figures import Bar, Figures

BAR: Bar = {"on": "ratio", "op": "<=", "limit": 3}
EVENTS = 100_000
SESSION_ID = "bench-resume"
WORDS = ("the", " quick", " brown", " fox", " jumps", " over", " the", " lazy", " dog", ".",
         " Ünïcödé", " 数据", " 🚀")


def build_session(target: int = EVENTS) -> Session:
    """A realistic log: turns of prompts, headers, streamed steps, tool calls and results."""
    session = Session(SESSION_ID, header={"version": 0, "id": SESSION_ID, "createdAt": 1,
                                          "cwd": "/bench/project", "delegationDepth": 0})
    turn = 0
    while session.seq < target - 400:
        turn += 1
        prompt = user_message(f"prompt {turn}: summarise the file and fix the bug")
        session.append("agent/inbox/spliced", {"target": "next-turn", "start": 0,
                                               "inserted": [prompt]})
        session.append("turn/start", {"turn": turn})
        session.append("agent/inbox/spliced", {"target": "next-turn", "start": 0,
                                               "removedCount": 1, "inserted": []})
        for step in (1, 2):
            session.append("step/start", {"turn": turn, "step": step})
            if step == 1:
                session.append("user/message", prompt, surface_op="append")
                session.append("request/header", {"header": {"config": {
                    "provider": "deepseek", "model": "deepseek-chat"}}, "reason": "initial"})
                session.append("request/context", {"provider": "deepseek",
                                                   "model": "deepseek-chat"})
            chunk_seqs = []
            session.append("assistant/chunk", {"turn": turn, "step": step, "chunk": {
                "type": "block-start", "index": 0, "blockType": "text"}})
            text = []
            for k in range(180):
                word = WORDS[(turn + k) % len(WORDS)]
                text.append(word)
                event = session.append("assistant/chunk", {"turn": turn, "step": step, "chunk": {
                    "type": "text-delta", "index": 0, "text": word}})
                chunk_seqs.append(event.seq)
            session.append("assistant/chunk", {"turn": turn, "step": step, "chunk": {
                "type": "block-end", "index": 0, "block": {"type": "text", "text": "".join(text)}}})
            session.append("assistant/chunk", {"turn": turn, "step": step, "chunk": {
                "type": "usage", "usage": {"inputTokens": 1200, "outputTokens": 180}}})
            session.append("assistant/chunk", {"turn": turn, "step": step, "chunk": {
                "type": "finish", "reason": {"kind": "tool-calls" if step == 1 else "stop"}}})
            content: list[dict[str, Any]] = [{"type": "text", "text": "".join(text)}]
            if step == 1:
                content.append({"type": "tool-call", "id": f"call-{turn}", "name": "read",
                                "arguments": "{\"path\": \"notes.txt\"}"})
            session.append("assistant/message", {
                "turn": turn, "step": step, "usage": {"inputTokens": 1200, "outputTokens": 180},
                "message": {"id": f"a-{turn}-{step}", "role": "assistant", "content": content,
                            "source": {"kind": "model", "provider": "deepseek",
                                       "model": "deepseek-chat"}}},
                surface_op="append", source_event_seqs=chunk_seqs)
            if step == 1:
                call = session.append("tool/call", {"turn": turn, "step": step,
                                                    "callId": f"call-{turn}", "name": "read",
                                                    "arguments": "{\"path\": \"notes.txt\"}"})
                session.append("tool/result", {"turn": turn, "step": step, "message": {
                    "id": f"r-{turn}", "role": "user", "source": {"kind": "tool",
                                                                  "callId": f"call-{turn}"},
                    "content": [{"type": "tool-result", "toolCallId": f"call-{turn}",
                                 "content": [{"type": "text", "text": "line 1\nline 2\n"}]}]}},
                    surface_op="append", source_event_seqs=[call.seq])
            session.append("step/end", {"turn": turn, "step": step})
        session.append("turn/end", {"turn": turn, "reason": {"kind": "completed"}})
    while session.seq < target:
        session.append("session/title", {"title": f"padding {session.seq}"})
    return session


def write_session(root: Path, session: Session) -> Path:
    persistence = JsonlPersistence(root)
    writer = SessionWriter(session.header, persistence.path_for(session.header),
                           materialized=False)
    writer.capture_existing(session.events)
    writer.write_pending()
    writer.close()
    return writer.path


def _best(fn: Any, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def run(quick: bool = False) -> Figures:
    repeat = 1 if quick else 3
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        path = write_session(root, build_session())

        def baseline() -> None:
            lines = path.read_bytes().split(b"\n")
            for line in lines[1:-1]:
                json.loads(line)

        def strict() -> None:
            _, events = JsonlPersistence(root).load(SESSION_ID)
            assert len(events) == EVENTS

        base = _best(baseline, repeat)
        loaded = _best(strict, repeat)
    ratio = loaded / base
    return {"resume.load_100k_ms": {"value": round(loaded * 1000, 1), "unit": "ms",
                                   "baseline": round(base * 1000, 1),
                                   "ratio": round(ratio, 2), "bar": BAR,
                                   "ok": ratio <= BAR["limit"]}}


if __name__ == "__main__":
    for name, figure in run(quick="--quick" in sys.argv).items():
        print(f"{name}: {figure['value']} {figure['unit']} (bare json.loads "
              f"{figure['baseline']} {figure['unit']}; ratio {figure['ratio']} "
              f"{figure['bar']['op']} {figure['bar']['limit']}: "
              f"{'ok' if figure['ok'] else 'MISSED'})")
