"""The agent tree (`#agent-tree`): one row per listed agent, drawn through the line API.

Each row is `tree_rows.format_row` fitted to the pane's width (state, name, step and
tool, time in state, tokens, cost, route), indented by depth with a fold mark on
parents. What is listed (filter, folds, finished sub-agents hidden) and each row's facts
come from a `TreeSource` (the fleet controller); the widget draws the rows, keeps the
cursor, and repaints only the rows whose text changed. The cursor moves at once; the
screen selects the cursor's agent when it rests (`state/settle.py`), and until then the
selected agent's row keeps its own mark, so the tree says both things honestly.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any, ClassVar, Protocol

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ..bindings import bind
from ..keygate import CURSOR_MOVES
from ..panekeys import PaneKeys, run_bound_key
from ..state.agent_view import AgentView
from ..state.session_rows import cells
from ..state.tree_rows import SPINNER, TICKING, RowFacts, elapsed, format_row
from ..state.tree_view import Line

__all__ = ["SPINNER", "AgentTree", "TreeSource"]

SPINNER_TICKS = 3
"""App ticks (0.1 s each) per spinner glyph. Every glyph change repaints the row of every
running agent; a glyph every 0.3 s still reads as motion (benchmarks/bench_keys.py)."""
INDENT = 2
"""Cells per level of depth."""
FOLDED, OPEN, LEAF = "▸", "▾", " "
MOVES = CURSOR_MOVES
"""Keys that only move the cursor: every other key first lets the selection catch up."""


class TreeSource(Protocol):
    """Where the tree's rows come from (the fleet controller)."""

    def listing(self) -> list[Line]:
        """The listed agents in tree order (filter, folds, hidden finished applied)."""

    def row(self, line: Line) -> RowFacts | None:
        """The facts of one listed row (a folded parent's rolled up), None if gone."""

    def show_route(self) -> bool:
        """More than one route is in use: rows name theirs."""

    def now_ms(self) -> float:
        """Wall-clock ms, for the time each agent has been in its state."""


class AgentTree(PaneKeys, ScrollView, can_focus=True):
    """The agents and the sub-agents they own, one line each."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "agent-tree--cursor", "agent-tree--pending", "agent-tree--selected",
        "agent-tree--fold",
    }
    RUN_KEYS: ClassVar[frozenset[str]] = MOVES
    """A burst of these (key repeat) reaches the tree in one run (`keygate`): each only
    moves the cursor, and the selection follows once the cursor rests."""
    # Their styles: widgets/agent_tree.tcss.

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "cursor(-1)", "Up", show=False),
        Binding("down", "cursor(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "edge(0)", "First", show=False),
        Binding("end", "edge(1)", "Last", show=False),
        Binding("enter", "choose", "Talk to it", show=False),
        bind("mark_agent", action="screen.mark_agent"),
        bind("fold_agent", action="screen.fold_agent", show=False),
        bind("unfold_agent", action="screen.unfold_agent", show=False),
        bind("fold_all", action="screen.fold_all", show=False),
        bind("unfold_all", action="screen.unfold_all", show=False),
        bind("filter_agents", action="screen.filter_agents"),
        bind("hide_finished", action="screen.hide_finished", show=False),
        bind("spawn_child", action="screen.spawn_child"),
        bind("dispose_agent", action="screen.dispose_agent"),
        bind("toggle_breakpoint", action="screen.toggle_breakpoint"),
        bind("mark_subtree", action="screen.mark_subtree", show=False),
        bind("clear_marks", action="screen.clear_marks", show=False),
        bind("broadcast", action="screen.broadcast"),
        bind("stop_marked", action="screen.stop_marked", show=False),
        bind("stop_after_step", action="screen.stop_after_step", show=False),
        bind("stop_subtree", action="screen.stop_subtree", show=False),
        bind("dispose_finished", action="screen.dispose_finished", show=False),
    ]

    HELP = "Agents and the sub-agents they own. The highlighted agent is the one the " \
           "transcript, inbox and composer talk to; enter puts you in the composer. Typing " \
           "here types into the composer: no letter is a tree command (space marks an " \
           "agent only while the composer is empty)."

    class Selected(Message):
        """The person chose the agent under the cursor (enter or a click)."""

        def __init__(self, agent_id: str | None, chosen: bool = False) -> None:
            super().__init__()
            self.agent_id = agent_id
            self.chosen = chosen  # enter or a click: the person wants to talk to it

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.source: TreeSource | None = None
        self.lines: list[Line] = []
        """The listed rows, in order."""
        self.listed: dict[str, int] = {}
        """Agent id → its row (listed agents only)."""
        self.facts: dict[str, RowFacts] = {}
        """The facts each listed row was last drawn from."""
        self.cursor = 0
        self.selected_id: str | None = None
        """The agent the panes show (its row keeps a mark while the cursor is elsewhere)."""
        self.frame = 0
        self.route = False
        self.drawn = 0
        """Rows drawn (tests and benchmarks count repaints by it)."""
        self._times: dict[str, str] = {}
        self._key_waited = 0.0
        self._styles: dict[str, Style] = {}
        """Role → style in the current theme (cleared when the styles change)."""
        self._strips: dict[str, tuple[tuple[Any, ...], Strip]] = {}
        """Agent id → the last row drawn and what it was drawn from: a repaint of a row
        that reads the same (a spinner's other agents, a focus move) costs a comparison."""

    # -- what is listed ------------------------------------------------------------------------

    @property
    def cursor_agent_id(self) -> str | None:
        """The agent under the cursor (None: nothing listed)."""
        if 0 <= self.cursor < len(self.lines):
            return self.lines[self.cursor].agent_id
        return None

    def sync_structure(self, agents: Any = None, views: Any = None) -> None:
        """List the agents again (one was created or disposed, a fold, the filter or the
        hide-finished toggle changed); the cursor stays on its agent when it is still
        listed, else on the selected one."""
        if self.source is None:
            return
        keep = self.cursor_agent_id
        self.lines = self.source.listing()
        self.listed = {line.agent_id: index for index, line in enumerate(self.lines)}
        self.route = self.source.show_route()
        self.facts = {}
        for line in self.lines:
            facts = self.source.row(line)
            if facts is not None:
                self.facts[line.agent_id] = facts
        target = keep if keep in self.listed else self.selected_id
        if target in self.listed:
            self.cursor = self.listed[target]
        else:
            self.cursor = min(self.cursor, max(len(self.lines) - 1, 0))
        self.virtual_size = Size(self.scrollable_content_region.width, len(self.lines))
        self._times.clear()
        self._strips = {a: drawn for a, drawn in self._strips.items() if a in self.listed}
        self.refresh()
        self._keep_cursor_visible()

    def refresh_rows(self, views: dict[str, AgentView] | None = None,
                     agent_ids: Iterable[str] | None = None) -> None:
        """Recompute the rows of `agent_ids` and repaint those whose facts changed (a folded
        parent's row when one it hides changed). None: every row, all repainted (the theme
        or the animation setting changed)."""
        source = self.source
        if source is None:
            return
        wanted = None if agent_ids is None else set(agent_ids)
        if wanted is None:
            self.refresh()
        route = source.show_route()
        if route != self.route:
            self.route = route
            wanted = None
            self.refresh()
        for index, line in enumerate(self.lines):
            if wanted is not None and line.agent_id not in wanted and not (
                    line.hidden and not wanted.isdisjoint(line.hidden)):
                continue
            facts = source.row(line)
            if facts is None or facts == self.facts.get(line.agent_id):
                continue
            self.facts[line.agent_id] = facts
            self.refresh_line(index)

    def tick(self, views: dict[str, AgentView], hold: bool = False) -> bool:
        """Advance the spinner of running agents; False when nothing is running.

        `hold`: the person is typing, so the spinner stands still (a glyph change repaints
        the row of every running agent, a frame a typed key could wait behind)."""
        running = [index for index, line in enumerate(self.lines)
                   if (facts := self.facts.get(line.agent_id)) is not None
                   and facts.state == "running"]
        if not running and not any(view.agent.status == "running" for view in views.values()):
            return False
        if hold:
            return True
        self.frame += 1
        if self.frame % SPINNER_TICKS == 0 and self.app.animation_level != "none":
            top = round(self.scroll_y)
            for index in running:
                if top <= index < top + self.size.height:
                    self.refresh_line(index)
        return True

    def tick_clock(self) -> None:
        """Repaint the visible rows whose time in state reads differently now."""
        source = self.source
        if source is None or not self.lines:
            return
        top = round(self.scroll_y)
        now = source.now_ms()
        for index in range(top, min(top + self.size.height, len(self.lines))):
            agent_id = self.lines[index].agent_id
            facts = self.facts.get(agent_id)
            if facts is None or facts.since is None:
                continue
            shown = _age(facts, now)
            if self._times.get(agent_id) != shown:
                self._times[agent_id] = shown
                self.refresh_line(index)

    def on_mount(self) -> None:
        self.set_interval(1.0, self.tick_clock)

    # -- drawing -------------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        index = round(self.scroll_y) + y
        style = self.rich_style
        if not 0 <= index < len(self.lines) or width <= 0:
            return Strip.blank(max(width, 0), style)
        self.drawn += 1
        line = self.lines[index]
        agent_id = line.agent_id
        cursor = index == self.cursor
        kind = ("agent-tree--cursor" if cursor and agent_id == self.selected_id else
                "agent-tree--pending" if cursor else
                "agent-tree--selected" if agent_id == self.selected_id else "")
        facts = self.facts.get(agent_id)
        now = self.source.now_ms() if self.source is not None else 0.0
        running = facts is not None and facts.state == "running"
        key = (line, facts, width, kind, self.has_focus, self.route,
               self._frame() if running else -1,
               _age(facts, now) if facts is not None and facts.since is not None else "")
        drawn = self._strips.get(agent_id)
        if drawn is not None and drawn[0] == key:
            return drawn[1]  # (a spinner frame or a time that did not change: same row)
        base = style + self.get_component_rich_style(kind) if kind else style
        fold = self.get_component_rich_style("agent-tree--fold", partial=True)
        styles = self._styles
        segments = []
        # On the cursor (or selected) row the bar's text colour wins over a role's own, as
        # on a highlighted option: a state colour or a fold mark on the bar can be 1.3:1.
        bar = bool(kind) and kind != "agent-tree--pending"
        for text, role in self.row_segments(index, width):
            if role == "tree":
                own = fold
            else:
                if role == "name" and running:
                    role = "name-running"
                if role not in styles:
                    styles[role] = self._role_style(role)
                own = styles[role]
            segments.append(Segment(text, own + base if bar else base + own))
        strip = Strip(segments).adjust_cell_length(width, base)
        self._strips[agent_id] = (key, strip)
        return strip

    def _frame(self) -> int:
        """The spinner frame drawn now (-1: a still glyph)."""
        return self.frame // SPINNER_TICKS if self.app.animation_level != "none" else -1

    def row_segments(self, index: int, width: int) -> list[tuple[str, str]]:
        """Row `index` as (text, role) pieces `width` cells wide: the indent and fold mark
        (role `tree`), then `format_row`'s segments."""
        line = self.lines[index]
        facts = self.facts.get(line.agent_id)
        indent = " " * (INDENT * line.depth)
        fold = FOLDED if line.folded else OPEN if line.has_children else LEAF
        room = width - cells(indent) - 1
        out = [(indent + fold, "tree")]
        if facts is not None and room > 0:
            now = self.source.now_ms() if self.source is not None else 0.0
            if facts.since is not None:
                self._times[line.agent_id] = _age(facts, now)
            out.extend(format_row(facts, room, now, show_route=self.route,
                                  frame=self._frame()))
        return out

    def row_text(self, agent_id: str) -> str:
        """The listed agent's row as the pane shows it now, trailing blanks cut ("" when
        it is not listed): what tests read."""
        index = self.listed.get(agent_id)
        if index is None:
            return ""
        width = self.scrollable_content_region.width
        return "".join(text for text, _ in self.row_segments(index, width)).rstrip()

    def _role_style(self, role: str) -> Style:
        """The style of one role of a row (`tree_rows.Segment`), in the current theme."""
        theme = self.app.current_theme
        if role.startswith(("glyph-", "needs-")):
            state = role.split("-", 1)[1]
            colour = {"running": theme.success, "paused": theme.error,
                      "kept": theme.warning, "failed": theme.error,
                      "blocked": theme.warning, "done": theme.success}.get(state)
            glyph = Style(color=colour, bold=True) if colour else Style(dim=True)
            return glyph + Style(reverse=True) if role.startswith("needs-") else glyph
        if role.startswith("name"):
            return Style(bold=role == "name-running")
        if role in ("mark", "armed"):
            return Style(color=theme.accent if role == "mark" else theme.error, bold=True)
        if role == "pending":
            return Style(color=theme.warning)
        if role == "badge":
            return Style(color=theme.warning, bold=True)
        if role in ("figure", "cost", "fold", "activity"):
            return Style(dim=role != "activity", italic=role == "activity")
        if role == "route":
            return Style(dim=True, italic=True)
        return Style()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles.clear()
        self._strips.clear()
        self.refresh()

    def on_resize(self, event: events.Resize) -> None:
        self.virtual_size = Size(self.scrollable_content_region.width, len(self.lines))
        self._keep_cursor_visible()

    # -- the cursor ----------------------------------------------------------------------------

    def select_agent(self, agent_id: str | None) -> None:
        """The app's own move: the panes show `agent_id` now, and the cursor goes there
        without reporting it back (the app already selected it)."""
        self.show_selected(agent_id)
        if agent_id in self.listed:
            self._move_to(self.listed[agent_id], report=False)

    def show_selected(self, agent_id: str | None) -> None:
        """The panes show `agent_id` (the cursor may still be elsewhere)."""
        if agent_id == self.selected_id:
            return
        before = self.listed.get(self.selected_id or "")
        self.selected_id = agent_id
        for index in (before, self.listed.get(agent_id or "")):
            if index is not None:
                self.refresh_line(index)

    def _move_to(self, index: int, *, report: bool = True) -> None:
        if not self.lines:
            return
        index = max(0, min(index, len(self.lines) - 1))
        if index != self.cursor:
            before = self.cursor
            self.cursor = index
            self.refresh_line(before)
            self.refresh_line(index)
        self._keep_cursor_visible()
        if report:
            moved = getattr(self.screen, "tree_cursor_moved", None)
            if moved is not None:
                moved(self.cursor_agent_id, self._key_waited)

    def _keep_cursor_visible(self) -> None:
        if self.lines and self.size.height:
            self.scroll_to_region(Region(0, self.cursor, 1, 1), animate=False, force=True,
                                  immediate=True)

    def action_cursor(self, delta: int) -> None:
        self._move_to(self.cursor + delta)

    def action_page(self, direction: int) -> None:
        self._move_to(self.cursor + direction * max(self.size.height - 1, 1))

    def action_edge(self, end: int) -> None:
        self._move_to(len(self.lines) - 1 if end else 0)

    def action_choose(self) -> None:
        self.post_message(self.Selected(self.cursor_agent_id, chosen=True))

    def move_cursor_to(self, agent_id: str) -> None:
        """Put the cursor on a listed agent, as the person's own move (reported)."""
        if agent_id in self.listed:
            self._key_waited = 0.0
            self._move_to(self.listed[agent_id])

    def on_click(self, event: events.Click) -> None:
        index = round(self.scroll_y) + event.y
        if not 0 <= index < len(self.lines):
            return
        line = self.lines[index]
        toggle = getattr(self.screen, "tree_toggle_fold", None)
        if line.has_children and event.x <= INDENT * line.depth and toggle is not None:
            toggle(line.agent_id)
            return
        self._move_to(index, report=False)
        self.post_message(self.Selected(line.agent_id, chosen=True))

    async def _on_key(self, event: events.Key) -> None:
        """Any key but a move acts on the row the person sees: a pending selection is
        made first (`tree_settle_now`). Space marks, but only here and only while the
        composer is empty (with a draft under way it is typed there, as every printable
        key is: `panekeys`). Textual then runs `PaneKeys.on_key` (a handler per class of
        the MRO) unless this one handled the key."""
        if event.key in MOVES:
            # How long the key waited in the queue (a burst is handled key by key): the
            # rest before the selection follows counts from its arrival.
            self._key_waited = max(time.monotonic() - event.time, 0.0)
            return
        self._key_waited = 0.0
        if self.app.focused is not self:
            return
        empty = getattr(self.screen, "composer_is_empty", None)
        if event.key == "space" and callable(empty) and empty():
            await run_bound_key(self, event)
            return
        settle = getattr(self.screen, "tree_settle_now", None)
        if settle is not None:
            settle()

    def on_blur(self) -> None:
        settle = getattr(self.screen, "tree_settle_now", None)
        if settle is not None:
            settle()


def _age(facts: RowFacts, now: float) -> str:
    """The time-in-state text a row shows now."""
    return elapsed(now - (facts.since or 0.0), facts.state not in TICKING)
