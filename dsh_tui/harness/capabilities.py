"""What the UI may do to an agent, and why not: one typed answer per gesture.

An agent of this process's loop can do everything the screens offer. An agent driven
through another world (the dsh runtime's web API, `dsh_tui.remote`) cannot: that API has
no inject, no breakpoint, no reordering of queued items. The UI asks `capabilities_of`
before it enables a key and says the reason when the person presses it anyway, instead
of pretending a gesture worked (docs/contract.md §12).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal, Protocol, runtime_checkable

Gesture = Literal[
    "followup", "steer", "inject", "cancel_keep_inbox", "cancel_clear", "edit_item",
    "remove_item", "reorder_item", "refile_item", "promote_to_steer", "undo_discard",
    "restore_unsent", "clear_inbox", "deliver_kept", "breakpoint", "spawn_child",
    "dispose", "rename", "stop_after_step", "hold_item",
]
"""Every gesture the screens offer on one agent (`refile_item` is the lane cycle;
`promote_to_steer` its one step that moves a queued follow-up into the steer lane;
`hold_item` the claim hold taken while a queued item is edited, docs/contract.md §3.8)."""

GESTURES: tuple[str, ...] = Gesture.__args__  # type: ignore[attr-defined]


@dataclass(frozen=True)
class Capabilities:
    """The gestures an agent refuses, each with the one-line reason the UI shows; every
    gesture not named is available. `ALL` refuses nothing."""

    refused: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    def allows(self, gesture: str) -> bool:
        """Whether the gesture works on this agent."""
        return gesture not in self.refused

    def reason(self, gesture: str) -> str | None:
        """Why the gesture does not work here (None: it does)."""
        return self.refused.get(gesture)


ALL = Capabilities()
"""An agent of this process's own loop: every gesture works."""


@runtime_checkable
class HasCapabilities(Protocol):
    """An agent that answers for itself (a remote one); others get `ALL`."""

    @property
    def capabilities(self) -> Capabilities:
        """What this agent refuses, and why."""
        ...


def capabilities_of(agent: Any) -> Capabilities:
    """The capabilities of `agent`: its own answer, else `ALL` (the loop's agents and test
    doubles need not carry the attribute)."""
    answer = getattr(agent, "capabilities", None)
    return answer if isinstance(answer, Capabilities) else ALL
