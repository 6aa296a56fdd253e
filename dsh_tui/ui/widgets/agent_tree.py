"""The agent tree (`#agent-tree`): roots and the children they own, at any depth.

Each row: status (a spinner while running, ‖ when idle with work kept, ✗ after a
failed turn), display name, current turn, pending next-step (⚑) and next-turn (↵)
counts, and the model. It is updated incrementally from the bridge's flush: a
node is added when its agent is created and removed when it is disposed; labels
of changed agents are recomputed, nothing is polled.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rich.style import Style
from rich.text import Text
from textual.binding import BindingType
from textual.message import Message
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from ..bindings import bind
from ..panekeys import PaneKeys
from ..state.agent_view import AgentView
from ..state.hold_view import tree_badge
from ..state.text import visible_label

SPINNER = "◐◓◑◒"
SPINNER_TICKS = 3
"""App ticks (0.1 s each) per spinner glyph. Every glyph change repaints the row of every
running agent, and with 20 agents streaming that was a third of the app's frame time
(benchmarks/bench_keys.py); a glyph every 0.3 s still reads as motion."""


class AgentTree(PaneKeys, Tree[str]):
    """A Tree whose node data is the agent id."""

    BINDINGS: ClassVar[list[BindingType]] = [
        bind("spawn_child", action="screen.spawn_child"),
        bind("dispose_agent", action="screen.dispose_agent"),
        bind("toggle_breakpoint", action="screen.toggle_breakpoint"),
    ]

    HELP = "Agents and the sub-agents they own. The highlighted agent is the one the " \
           "transcript, inbox and composer talk to; enter puts you in the composer. Typing " \
           "here types into the composer: no letter is a tree command."

    _moving = False  # the app is moving the cursor itself (the watcher runs during __init__)

    class Selected(Message):
        """The person chose the agent under the cursor (enter or a click)."""

        def __init__(self, agent_id: str | None, chosen: bool = False) -> None:
            super().__init__()
            self.agent_id = agent_id
            self.chosen = chosen  # enter or a click: the person wants to talk to it

    def __init__(self, **kwargs: Any) -> None:
        super().__init__("agents", **kwargs)
        self.show_root = False
        self.auto_expand = False
        self.guide_depth = 3
        self.nodes: dict[str, TreeNode[str]] = {}
        self.frame = 0

    # -- structure --------------------------------------------------------------------------

    def sync_structure(self, agents: Any, views: dict[str, AgentView]) -> None:
        """Add nodes for new agents (under their owners), remove nodes of disposed ones."""
        live = {agent.id: agent for agent in agents.list()}
        for agent_id in [a for a in self.nodes if a not in live]:
            node = self.nodes.pop(agent_id, None)
            if node is None:
                continue  # removed with its owner's subtree
            for child_id in [c for c, n in self.nodes.items() if _is_below(n, node)]:
                self.nodes.pop(child_id)
            node.remove()
        for agent in live.values():
            self._ensure(agent, agents, live, views)

    def _ensure(self, agent: Any, agents: Any, live: dict[str, Any],
                views: dict[str, AgentView]) -> TreeNode[str]:
        node = self.nodes.get(agent.id)
        if node is not None:
            return node
        owner = agents.owner_of(agent.id)
        parent: TreeNode[str] = self.root
        if owner is not None and owner.id in live:
            parent = self._ensure(owner, agents, live, views)
            parent.allow_expand = True
            parent.expand()
        view = views.get(agent.id)
        label = self.label_for(view) if view is not None else Text(visible_label(agent.id))
        node = parent.add(label, data=agent.id, expand=True, allow_expand=False)
        self.nodes[agent.id] = node
        return node

    # -- labels --------------------------------------------------------------------------------

    def refresh_rows(self, views: dict[str, AgentView], agent_ids: set[str] | None = None) -> None:
        for agent_id, node in self.nodes.items():
            if agent_ids is not None and agent_id not in agent_ids:
                continue
            view = views.get(agent_id)
            if view is None:
                continue
            label = self.label_for(view)
            # An unchanged label is not set again: setting one repaints the node's lines, and
            # every flush while agents stream would otherwise repaint the tree.
            if node.label != label:
                node.set_label(label)

    def label_for(self, view: AgentView) -> Text:
        theme = self.app.current_theme
        agent = view.agent
        running = agent.status == "running"
        inbox = agent.inbox
        steps, turns = len(inbox.next_step), len(inbox.next_turn)
        breakpoints = getattr(self.app, "breakpoints", None)
        paused = breakpoints is not None and agent.id in breakpoints.paused
        if paused:
            icon, icon_style = "◆", Style(color=theme.error, bold=True)
        elif running:
            animate = self.app.animation_level != "none"
            icon = SPINNER[self.frame // SPINNER_TICKS % len(SPINNER)] if animate else "●"
            icon_style = Style(color=theme.success, bold=True)
        elif steps or turns:
            icon, icon_style = "‖", Style(color=theme.warning)
        elif view.transcript.last_end_kind == "error":
            icon, icon_style = "✗", Style(color=theme.error, bold=True)
        else:
            icon, icon_style = "○", Style(dim=True)
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(icon, icon_style)
        text.append(" ")
        text.append(visible_label(view.name), Style(bold=running))
        turn = agent.current_turn
        if turn:
            text.append(f" t{turn}", Style(dim=True))
        if steps:
            text.append(f" ⚑{steps}", Style(color=theme.warning))
        if turns:
            text.append(f" ↵{turns}", Style(color=theme.secondary or theme.primary))
        holds = agent.holds
        if holds:  # an item is being edited (docs/contract.md §3.8)
            counting = [h.message_id for h in holds if h.remaining() is not None]
            text.append(f" {tree_badge(holds, counting)}", Style(color=theme.warning, bold=True))
        if paused:
            text.append(" paused", Style(color=theme.error, bold=True))
        elif breakpoints is not None and breakpoints.is_armed(agent.id):
            text.append(" ◆", Style(color=theme.error, bold=True))
        offers = getattr(self.screen, "offers_routes", None)
        label = view.route_label if callable(offers) and offers() else view.model
        if label:
            text.append(f" {visible_label(label)}", Style(dim=True, italic=True))
        return text

    def render_label(self, node: TreeNode[str], base_style: Style, style: Style) -> Text:
        """The row as Textual draws it, ending in … where the pane is too narrow for it (the
        selected agent's name and state are in the transcript title; wider panes show all)."""
        text = super().render_label(node, base_style, style)
        depth, parent = 0, node.parent
        while parent is not None and parent is not self.root:
            depth += 1
            parent = parent.parent
        room = self.scrollable_content_region.width - depth * self.guide_depth
        if 1 < room < text.cell_len:
            text = text.copy()
            text.truncate(room, overflow="ellipsis")
        return text

    def tick(self, views: dict[str, AgentView], hold: bool = False) -> bool:
        """Advance the spinner of running agents (`hold`: it stands still); False when
        nothing is running."""
        running = {agent_id for agent_id, view in views.items()
                   if view.agent.status == "running"}
        if not running:
            return False
        if hold:
            return True
        self.frame += 1
        if self.frame % SPINNER_TICKS == 0:
            self.refresh_rows(views, running)
        return True

    # -- selection -----------------------------------------------------------------------------

    def select_agent(self, agent_id: str | None) -> None:
        """The app's own move: put the cursor on an agent without toggling its node and
        without reporting it back (the app already selected it; a report would start the
        cursor and the selection chasing each other)."""
        node = self.nodes.get(agent_id) if agent_id else None
        if node is None:
            return
        self._moving = True
        try:
            _ = self.last_line  # rebuild the lines first: a node added just now has none yet
            if self.cursor_node is not node:
                self.move_cursor(node)
        finally:
            self._moving = False

    @property
    def cursor_agent_id(self) -> str | None:
        node = self.cursor_node
        return node.data if node is not None else None

    def watch_cursor_line(self, previous_line: int, line: int) -> None:
        """The person moved the cursor (keys, a click): the app selects that agent now,
        synchronously, so a key pressed next acts on the row the person sees. Moves the app
        makes itself are not reported."""
        super().watch_cursor_line(previous_line, line)
        if self._moving:
            return
        agent_id = self.cursor_agent_id
        if agent_id is None:
            return
        select = getattr(self.screen, "select_agent", None)
        if select is not None:
            select(agent_id, from_tree=True)

    def on_tree_node_highlighted(self, event: Tree.NodeHighlighted[str]) -> None:
        event.stop()  # reported synchronously by watch_cursor_line, never by message

    def on_tree_node_selected(self, event: Tree.NodeSelected[str]) -> None:
        event.stop()
        self.post_message(self.Selected(self.cursor_agent_id, chosen=True))


def _is_below(node: TreeNode[str], ancestor: TreeNode[str]) -> bool:
    current = node.parent
    while current is not None:
        if current is ancestor:
            return True
        current = current.parent
    return False
