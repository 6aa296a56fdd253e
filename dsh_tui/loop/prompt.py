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

SectionBody = Callable[[Any], Any]  # agent -> str | None (or an awaitable of it)


@dataclass
class Assembly:
    system: str
    tools: list[dict[str, Any]] = field(default_factory=list)


@dataclass(eq=False)
class _Section:
    name: str
    body: SectionBody
    agent: Any


class SystemPrompt:
    def __init__(self, tools: ToolRegistry) -> None:
        self.tools = tools
        self._sections: list[_Section] = []

    def section(self, name: str, body: SectionBody | str, *, agent: Any = None
                ) -> Callable[[], None]:
        """Add a section (for every agent, or only `agent`); returns its remover."""
        fn: SectionBody = (lambda _agent, text=body: text) if isinstance(body, str) else body
        entry = _Section(name, fn, agent)
        self._sections.append(entry)
        return lambda: self._sections.remove(entry) if entry in self._sections else None

    async def assemble(self, agent: Any, signal: Any = None) -> Assembly:
        parts = []
        for entry in list(self._sections):
            if entry.agent is not None and entry.agent is not agent:
                continue
            text = entry.body(agent)
            if inspect.isawaitable(text):
                text = await text
            if signal is not None:
                signal.throw_if_aborted()
            if text:
                parts.append(str(text).strip())
        schemas = [t.schema() for t in self.tools.visible(agent)]
        return Assembly("\n\n".join(parts), schemas)
