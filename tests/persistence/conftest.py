"""Shared helpers: a live world with persistence attached, and valid event payloads."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from shared_fixtures import FIXTURES  # noqa: F401  (re-exported to the tests here)

from dsh_tui.harness import Context, Session, new_world
from dsh_tui.harness.persistence import JsonlPersistence


class World:
    """A root context with a `JsonlPersistence` attached under `root`."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.ctx: Context = new_world()
        self.persistence = JsonlPersistence(root)
        self.detach = self.persistence.attach(self.ctx)

    def session(self, session_id: str = "s1", **meta: Any) -> Session:
        return self.ctx.sessions.create(session_id, meta=meta or {"cwd": "/home/a/proj"})

    def lines(self, session: Session) -> list[str]:
        path = self.persistence.path_for(session.header)
        return path.read_text("utf-8").splitlines() if path.exists() else []


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    w = World(tmp_path / "sessions")
    yield w
    w.detach()


def chunk(turn: int, step: int, text: str, index: int = 0) -> dict[str, Any]:
    return {"turn": turn, "step": step, "chunk": {"type": "text-delta", "index": index,
                                                  "text": text}}


def assistant(turn: int, step: int, text: str, calls: tuple[str, ...] = (),
              message_id: str | None = None) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    content += [{"type": "tool-call", "id": call, "name": "read", "arguments": "{}"}
                for call in calls]
    return {"turn": turn, "step": step,
            "message": {"id": message_id or f"a-{turn}-{step}", "role": "assistant",
                        "content": content,
                        "source": {"kind": "model", "provider": "mock", "model": "mock"}}}


def tool_call(turn: int, step: int, call: str) -> dict[str, Any]:
    return {"turn": turn, "step": step, "callId": call, "name": "read", "arguments": "{}"}


def tool_result(turn: int, step: int, call: str, text: str = "ok") -> dict[str, Any]:
    return {"turn": turn, "step": step, "message": {
        "id": f"r-{call}", "role": "user", "source": {"kind": "tool", "callId": call},
        "content": [{"type": "tool-result", "toolCallId": call,
                     "content": [{"type": "text", "text": text}]}]}}


def complete_turn(session: Session, turn: int, text: str = "done") -> None:
    """One balanced turn: a step with streamed text, a tool round trip, and a reply."""
    session.append("turn/start", {"turn": turn})
    session.append("step/start", {"turn": turn, "step": 1})
    seqs = [session.append("assistant/chunk", chunk(turn, 1, part)).seq for part in ("a", "b")]
    session.append("assistant/message", assistant(turn, 1, "ab", (f"c{turn}",)),
                   surface_op="append", source_event_seqs=seqs)
    call = session.append("tool/call", tool_call(turn, 1, f"c{turn}"))
    session.append("tool/result", tool_result(turn, 1, f"c{turn}"), surface_op="append",
                   source_event_seqs=[call.seq])
    session.append("step/end", {"turn": turn, "step": 1})
    session.append("step/start", {"turn": turn, "step": 2})
    session.append("assistant/message", assistant(turn, 2, text), surface_op="append",
                   source_event_seqs=[])
    session.append("step/end", {"turn": turn, "step": 2})
    session.append("turn/end", {"turn": turn, "reason": {"kind": "completed"}})
