"""The runtime's packed stream records, expanded back into the chunks it streamed.

A runtime that re-baselines a follower mid-reply (`snapshot.assistantStream.activeAttempt`)
sends the chunks so far in the packed form it stores inside `assistant/message.stream`:
`{"type": "chunk", time, chunk}` for one chunk and `{"type": "text-chunks" |
"reasoning-chunks", time0, index, dt, texts}` / `{"type": "tool-call-chunks", time0, index,
id, name?, dt, args}` for runs of deltas. Position in the expanded list is the chunk's
`index` on the live wire, which is how a reconnected follower skips what it already showed.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

_DELTA = {"text-chunks": ("text-delta", "texts", "text"),
          "reasoning-chunks": ("reasoning-delta", "texts", "text")}


def expand(entries: Any) -> Iterator[tuple[int | None, dict[str, Any]]]:
    """`(time, chunk)` for every chunk the packed `entries` stand for, in order; an entry of
    an unknown shape is skipped (a reconnect never fails on a newer runtime's packing)."""
    for entry in entries if isinstance(entries, list) else ():
        if not isinstance(entry, Mapping):
            continue
        kind = entry.get("type")
        if kind == "chunk" and isinstance(entry.get("chunk"), Mapping):
            time = entry.get("time")
            yield (time if type(time) is int else None), dict(entry["chunk"])
        elif kind in _DELTA or kind == "tool-call-chunks":
            members = entry.get("args" if kind == "tool-call-chunks" else "texts")
            found = entry.get("dt")
            gaps: list[Any] = found if isinstance(found, list) else []
            time = entry.get("time0") if type(entry.get("time0")) is int else None
            for position, member in enumerate(members if isinstance(members, list) else ()):
                if position and time is not None and position - 1 < len(gaps) \
                        and type(gaps[position - 1]) is int:
                    time += gaps[position - 1]
                if kind == "tool-call-chunks":
                    chunk: dict[str, Any] = {"type": "tool-call-delta",
                                             "index": entry.get("index"),
                                             "argumentsDelta": str(member)}
                    if position == 0:
                        if entry.get("id"):
                            chunk["id"] = entry["id"]
                        if entry.get("name"):
                            chunk["name"] = entry["name"]
                else:
                    delta, _, field = _DELTA[str(kind)]
                    chunk = {"type": delta, "index": entry.get("index"), field: str(member)}
                yield time, chunk
