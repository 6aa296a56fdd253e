"""One agent tree row as text that fits its width: what the agent is doing, at a glance.

`◐ researcher 3 step 3 · read_file   12s 34k $0.02 local`: the state glyph, the name,
the step and tool (or how the last turn ended), then, right-aligned so they line up, the
time in the current state, tokens, the cost when the route has prices and the route when
more than one is in use. A folded parent shows its subtree's totals. A short width drops
the least needed parts first (`SHORTER`), then cuts the name; the glyph always shows.
Plain strings with a role per segment: the widget only styles them, tests read them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from .agent_view import AgentView
from .cost import Cost, Prices, Tokens, cost_of, format_cost, sum_costs
from .hold_view import tree_badge
from .session_rows import cells, clip
from .text import visible_label

RUNNING, PAUSED, KEPT, FAILED, BLOCKED, STOPPED, DONE, IDLE = (
    "running", "paused", "kept", "failed", "blocked", "stopped", "done", "idle")
GLYPH = {RUNNING: "●", PAUSED: "◆", KEPT: "‖", FAILED: "✗", BLOCKED: "⊘", STOPPED: "■",
         DONE: "✓", IDLE: "○"}
"""The state glyph (a running agent's is animated by the widget: `SPINNER`)."""
SPINNER = "◐◓◑◒"
TICKING = frozenset({RUNNING, PAUSED})
"""States whose time is shown in seconds; the others wait, and show whole minutes."""
ENDED = {"error": FAILED, "blocked": BLOCKED, "aborted": STOPPED, "completed": DONE,
         "max-tokens": DONE, "interrupted": STOPPED}


def state_of(status: str, paused: bool, pending: bool, ended: str | None) -> str:
    """The row's state from the agent's status, pause, inbox and last turn end."""
    if paused:
        return PAUSED
    if status == "running":
        return RUNNING
    if pending:
        return KEPT
    return ENDED.get(ended or "", IDLE)


@dataclass(frozen=True, slots=True)
class RowFacts:
    """Everything one row may show, gathered by the screen from the agent's view."""

    agent_id: str
    name: str
    state: str = IDLE
    turn: int = 0
    step: int = 0
    tool: str = ""
    since: float | None = None
    """Wall-clock ms the current state began (None: unknown, no time shown)."""
    tokens: Tokens = field(default_factory=Tokens)
    cost: Cost | None = None
    route: str = ""
    next_step: int = 0
    next_turn: int = 0
    armed: bool = False
    marked: bool = False
    needs: bool = False
    hidden: int = 0
    """Rows folded under this one (a collapsed parent): its figures are the subtree's."""
    busy_below: int = 0
    """Running agents among the folded rows."""
    badge: str = ""
    """A short mark another feature puts on the row (a held edit: `held_badge`), after
    the flags."""


def row_facts(view: AgentView, prices: Callable[[str], Prices | None], *,
              paused_since: float | None = None, armed: bool = False, marked: bool = False,
              needs: bool = False) -> RowFacts:
    """The row of one agent from its view (status, inbox, activity), its route's prices
    and the screen's own marks (breakpoint, mark, needs-you). Every piece of text that
    came from outside (name, tool, route) is a safe label (`visible_label`)."""
    agent, activity = view.agent, view.activity
    inbox = agent.inbox
    steps, turns = len(inbox.next_step), len(inbox.next_turn)
    state = state_of(agent.status, paused_since is not None, bool(steps or turns),
                     activity.ended)
    since = paused_since if paused_since is not None else activity.since
    return RowFacts(view.id, visible_label(view.name), state, activity.turn, activity.step,
                    visible_label(activity.tool), since, activity.tokens,
                    cost_of(activity.spent, prices), visible_label(view.route_label),
                    steps, turns, armed, marked, needs, badge=held_badge(agent.holds))


def held_badge(holds: Iterable[Any]) -> str:
    """`✎held` while the person edits one of the agent's items, `✎waits 42s` once the
    agent waits on it (docs/contract.md §3.8: a hold's countdown runs only while its
    agent waits, so a counting hold is a waited-on one); "" with no hold."""
    holds = list(holds)
    if not holds:
        return ""
    return tree_badge(holds, [h.message_id for h in holds if h.remaining() is not None])


def roll_up(parent: RowFacts, below: Iterable[RowFacts]) -> RowFacts:
    """A collapsed parent's row: its subtree's tokens and cost (unknown if any part is),
    how many rows it hides and how many of those are running."""
    rows = list(below)
    tokens = parent.tokens
    for row in rows:
        tokens = tokens + row.tokens
    return replace(parent, tokens=tokens, cost=sum_costs([parent.cost, *(r.cost for r in rows)]),
                   hidden=len(rows), busy_below=sum(1 for r in rows if r.state == RUNNING))


def elapsed(ms: float, coarse: bool = False) -> str:
    """`9s`, `12m`, `3h`, `2d`: a state's age in at most four cells. `coarse`: whole
    minutes at least (`<1m`), for states that wait (a still screen stays still)."""
    seconds = max(0, int(ms // 1000))
    if seconds < 60:
        return "<1m" if coarse else f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m"
    if seconds < 86_400:
        return f"{seconds // 3600}h"
    return f"{seconds // 86_400}d"


def tokens_text(count: int) -> str:
    """`950`, `1.2k`, `34k`, `1.2M`: a token count in at most five cells."""
    if count < 1000:
        return str(count)
    if count < 10_000:
        return f"{count / 1000:.1f}k"
    if count < 1_000_000:
        return f"{count // 1000}k"
    return f"{count / 1_000_000:.1f}M"


Segment = tuple[str, str]
"""(text, role): roles are `glyph-<state>` (`needs-<state>` when the agent needs the
person), `mark`, `name`, `fold`, `armed`, `activity`, `pending`, `figure`, `cost`,
`route`, `badge`, `pad`."""

LEFT_PARTS = ("activity", "pending")
RIGHT_PARTS = ("elapsed", "tokens", "cost", "route")
SHORTER: list[tuple[str, int]] = [
    ("route", 1), ("route", 2), ("tokens", 1), ("activity", 1), ("cost", 1), ("elapsed", 1),
    ("pending", 1), ("activity", 2), ("activity", 3)]
"""(part, form) in the order a row gets shorter: each step picks a shorter form of one
part ("" drops it); the name is cut only after all of these. Work waiting in the inbox
(`⚑` `↵`) stays longest after the state: it is what the person may have to act on."""
ROUTE_SHORT = 16
"""Cells a long route label is cut to before it is dropped (`local · qwen3-8b` fits)."""
NAME_MIN = 4
"""Cells the name keeps (with its ellipsis) before anything else is cut."""


def _activity(row: RowFacts) -> list[str]:
    """The activity part's forms, longest first (the last is always "")."""
    if row.state == RUNNING:
        if row.step and row.tool:
            return [f"step {row.step} · {row.tool}", f"s{row.step}·{row.tool}", f"s{row.step}",
                    ""]
        if row.step:
            return [f"step {row.step}", f"s{row.step}", f"s{row.step}", ""]
        return [f"turn {row.turn}", f"t{row.turn}", "", ""] if row.turn else [""]
    words = {PAUSED: ["paused", "paused", ""], FAILED: ["failed", "failed", ""],
             BLOCKED: ["blocked", "blocked", ""], STOPPED: ["stopped", ""],
             KEPT: ["kept", ""], DONE: ["done", ""]}
    return words.get(row.state, [""])


def _forms(row: RowFacts, now: float, show_route: bool) -> dict[str, list[str]]:
    pending = f"⚑{row.next_step}" * bool(row.next_step) + \
        f"↵{row.next_turn}" * bool(row.next_turn)
    cost = format_cost(row.cost) if row.cost is not None and row.cost.currency else ""
    return {
        "activity": _activity(row),
        "pending": [pending, ""] if pending else [""],
        "elapsed": [elapsed(now - row.since, row.state not in TICKING), ""]
        if row.since is not None else [""],
        "tokens": [tokens_text(row.tokens.total), ""] if row.tokens.total else [""],
        "cost": [cost, ""] if cost else [""],
        "route": [row.route, clip(row.route, ROUTE_SHORT), ""] if show_route and row.route
        else [""],
    }


def _glyph(row: RowFacts, frame: int) -> str:
    if row.state == RUNNING and frame >= 0:
        return SPINNER[frame % len(SPINNER)]
    return GLYPH.get(row.state, "○")


def format_row(row: RowFacts, width: int, now: float, *, show_route: bool = False,
               frame: int = -1) -> list[Segment]:
    """The row as segments taking exactly `width` cells (0 or less: the longest form,
    unpadded). `now`: wall-clock ms; `frame`: the spinner frame (-1: a still glyph)."""
    forms = _forms(row, now, show_route)
    chosen = dict.fromkeys(forms, 0)

    def pick(part: str) -> str:
        options = forms[part]
        return options[min(chosen[part], len(options) - 1)]

    role = f"needs-{row.state}" if row.needs else f"glyph-{row.state}"
    head: list[Segment] = [(_glyph(row, frame), role)]
    head.append(("✓" if row.marked else " ", "mark"))
    fold = f" +{row.hidden}" if row.hidden else ""
    if row.hidden and row.busy_below:
        fold += f" ({row.busy_below}●)"
    flags = " ◆" if row.armed and row.state != "paused" else ""

    def measure(name: str) -> tuple[list[Segment], list[Segment]]:
        left: list[Segment] = [*head, (name, "name")]
        if fold:
            left.append((fold, "fold"))
        if flags:
            left.append((flags, "armed"))
        if row.badge:
            left.append((" " + row.badge, "badge"))
        for part in LEFT_PARTS:
            text = pick(part)
            if text:
                left.append((" " + text, part))
        right: list[Segment] = []
        for part in RIGHT_PARTS:
            text = pick(part)
            if text:
                right.append((" " + text, "cost" if part == "cost" else
                              "route" if part == "route" else "figure"))
        return left, right

    def total(segments: Iterable[Segment]) -> int:
        return sum(cells(text) for text, _ in segments)

    left, right = measure(row.name)
    if width > 0:
        for part, form in SHORTER:
            if total(left) + total(right) + 1 <= width:
                break
            chosen[part] = max(chosen[part], form)
            left, right = measure(row.name)
        room = width - (total(left) + total(right) + 1) + cells(row.name)
        if room < cells(row.name):
            left, right = measure(clip(row.name, max(room, NAME_MIN)))
    segments = left
    if width > 0:
        gap = width - total(left) - total(right)
        if gap < 0:
            return _cut([*left, *right], width)
        segments = [*left, (" " * gap, "pad"), *right]
    else:
        segments = [*left, *right]
    return segments


def _cut(segments: list[Segment], width: int) -> list[Segment]:
    """The segments cut to `width` cells (the last resort of a very narrow pane)."""
    out: list[Segment] = []
    used = 0
    for text, role in segments:
        size = cells(text)
        if used + size <= width:
            out.append((text, role))
            used += size
            continue
        if width - used > 0:
            out.append((clip(text, width - used), role))
            used = width
        break
    if used < width:
        out.append((" " * (width - used), "pad"))
    return out


def row_text(segments: Iterable[Segment]) -> str:
    """The row's plain text (tests and snapshots read this)."""
    return "".join(text for text, _ in segments)
