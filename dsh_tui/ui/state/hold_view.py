"""Edit holds as the screen shows them: the editor's line, the inbox item's badge, the
tree row's badge and the title's "waits for your edit".

A hold (docs/contract.md §3.8) is live state of the agent (`agent.holds`); whether the
agent is waiting on it right now comes from the log (`inbox/hold-wait` without its
`inbox/hold-end`, read by the receipts). The countdown starts when an agent first waits:
before that a hold costs nothing and has no deadline. Plain Python, no Textual.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def countdown(holds: Iterable[Any], message_id: str | None = None) -> float | None:
    """Seconds before the first of these holds (of `message_id`, when given) lapses; None
    while no agent has waited on any of them."""
    left = [r for h in holds if message_id is None or h.message_id == message_id
            if (r := h.remaining()) is not None]
    return min(left) if left else None


def held(holds: Iterable[Any], message_id: str) -> bool:
    """Whether an active hold names `message_id`."""
    return any(h.message_id == message_id for h in holds)


def item_badge(holds: Iterable[Any], message_id: str, waiting: Iterable[str]) -> str:
    """The inbox item's badge: `held`, or `held · agent waits 42 s` ("" when not held)."""
    holds = list(holds)
    if not held(holds, message_id):
        return ""
    if message_id not in set(waiting):
        return "held · editing"
    left = countdown(holds, message_id)
    return "held · agent waits" + (f" {left:.0f} s" if left is not None else "")


def tree_badge(holds: Iterable[Any], waiting: Iterable[str]) -> str:
    """The tree row's badge: `✎held`, `✎waits 42s` while the agent waits on a hold ("" with
    no hold)."""
    holds = list(holds)
    if not holds:
        return ""
    waited = set(waiting)
    blocking = [h for h in holds if h.message_id in waited]
    if not blocking:
        return "✎held"
    left = countdown(blocking)
    return "✎waits" + (f" {left:.0f}s" if left is not None else "")


def title_state(holds: Iterable[Any], waiting: Iterable[str]) -> str:
    """The transcript title's state while the agent waits on an edit ("" otherwise)."""
    holds = list(holds)
    waited = set(waiting)
    blocking = [h for h in holds if h.message_id in waited]
    if not blocking:
        return ""
    left = countdown(blocking)
    return "waits for your edit" + (f" · goes on in {left:.0f} s" if left is not None else "")


def editor_line(hold: Any | None, waiting: Iterable[str]) -> str:
    """What the edit dialog says about its hold ("" with none: nothing is held)."""
    if hold is None or not hold.active:
        return ""
    if hold.message_id in set(waiting):
        left = hold.remaining()
        when = f"goes ahead in {left:.0f} s" if left is not None else "waits"
        return (f"The agent is waiting for this edit: it {when} (save or cancel lets it go "
                "now).")
    return (f"Held: the agent will not claim this item while you edit (if it reaches it, it "
            f"waits up to {hold.limit:.0f} s).")
