"""System prompt assembly: per-step sections plus the tool schemas an agent sees.

Assembled at every step (before the pre-step waterfall), so a section that
depends on live state — the agent's children, the working directory — is
always current, and a change shows up as a `request/header` change record.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .tools import ToolRegistry

SectionBody = Callable[..., Any]
"""(agent) or (agent, signal) -> str | None, or an awaitable of it. A body that takes the
turn's cancel signal can wait on it cooperatively (`await signal.wait()`)."""


def _accepts_two(fn: Callable[..., Any]) -> bool:
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) >= 2 or any(p.kind == p.VAR_POSITIONAL for p in parameters)


@dataclass
class Assembly:
    system: str
    tools: list[dict[str, Any]] = field(default_factory=list)


@dataclass(eq=False)
class _Section:
    name: str
    body: SectionBody
    agent: Any
    wants_signal: bool = False


class SystemPrompt:
    def __init__(self, tools: ToolRegistry) -> None:
        self.tools = tools
        self._sections: list[_Section] = []

    def section(self, name: str, body: SectionBody | str, *, agent: Any = None
                ) -> Callable[[], None]:
        """Add a section (for every agent, or only `agent`); returns its remover."""
        if isinstance(body, str):
            fixed_text = body

            def fn(_agent: Any) -> str:
                return fixed_text
        else:
            fn = body
        entry = _Section(name, fn, agent, _accepts_two(fn))
        self._sections.append(entry)
        return lambda: self._sections.remove(entry) if entry in self._sections else None

    async def assemble(self, agent: Any, signal: Any = None) -> Assembly:
        parts = []
        for entry in list(self._sections):
            if entry.agent is not None and entry.agent is not agent:
                continue
            text = entry.body(agent, signal) if entry.wants_signal else entry.body(agent)
            if inspect.isawaitable(text):
                text = await text
            if signal is not None:
                signal.throw_if_aborted()
            if text:
                parts.append(str(text).strip())
        schemas = [t.schema() for t in self.tools.visible(agent)]
        return Assembly("\n\n".join(parts), schemas)
