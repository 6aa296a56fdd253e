"""Many agents at once: what the tree lists and each row says, who needs the person, marks
and the bulk actions on them.

The tree widget draws; this decides. It is the tree's `TreeSource` (`state/tree_view.py`,
`state/tree_rows.py`), keeps the needs-you count current from the bridge's flushes
(`state/needs_you.py`), and runs the bulk actions of `state/bulk.py` on the marked
agents (none marked: the selected one); details are on `Fleet`. A broadcast and a
discarding subtree stop are one entry each of the session's inbox history
(`controllers/edits.py`), so ctrl+z / ctrl+y take them back and do them again.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any, Protocol

from dsh_tui.harness import Agent

from ..screens.broadcast import BroadcastScreen
from ..screens.choice import ChoiceScreen
from ..screens.confirm import YES_KEY, ConfirmScreen
from ..state import bulk
from ..state.activity import FINISHED
from ..state.cost import Prices
from ..state.needs_you import Need, NeedsYou, facts_of
from ..state.tree_rows import RowFacts, roll_up, row_facts
from ..state.tree_view import Line, TreeView
from ..state.workspace import record_dropped
from .edits import InboxEdits
from .seams import Notes, Panes, Screenside, Selection, World
from .selection import set_title


def wall_ms() -> float:
    """Wall-clock ms now (the time each agent has been in its state is measured on it)."""
    return time.time() * 1000


REASON_WORDS = {"paused": "paused at its breakpoint", "failed": "its turn failed",
                "blocked": "its step was blocked", "kept": "work kept after a stop",
                "finished": "finished its turn"}


class Host(World, Notes, Panes, Selection, Screenside, Protocol):
    """What the fleet needs of the screen."""

    def show_agents_pane(self) -> None:
        """Show the agent tree (it may be folded away on a narrow screen)."""


class Fleet:
    """The tree's source, the needs-you count, marks and bulk actions.

    As the tree's source it applies the filter, folds and hidden finished sub-agents of
    `state/tree_view.py`, and gives rows from `state/tree_rows.py` with route prices,
    breakpoints, marks and needs. The needs-you count shows in the key bar and ctrl+g
    visits each. Each bulk action says on the status line how many agents it touched;
    the inbox-history entries undo from any pane.
    """

    def __init__(self, host: Host, edits: InboxEdits) -> None:
        self.host = host
        self.edits = edits
        """The session's inbox history: a broadcast or a discard is one entry of it."""
        self.view = TreeView()
        self.marks = bulk.Marks()
        self.needs = NeedsYou()
        self.paused_since: dict[str, float] = {}
        """Agent id → wall-clock ms it stopped at its breakpoint."""
        self.clock: Callable[[], float] = lambda: wall_ms()
        """Wall-clock ms (snapshots freeze `wall_ms`)."""
        self.parents: dict[str, str] = {}
        """Agent id → its owner's id, as last listed (a disposed agent's owner is found here)."""
        self._judged: dict[str, tuple[Any, ...]] = {}
        self._needs_shown = -1
        self._finished: dict[str, bool] = {}
        self.title_base = "Agents"
        """The tree's title before what shapes the list (an attached world's runtime)."""
        self.alert: Callable[[str], None] | None = None
        """Rings or notifies when an agent starts needing the person (the app's setting)."""

    # -- the tree's source ---------------------------------------------------------------------

    def now_ms(self) -> float:
        return self.clock()

    def show_route(self) -> bool:
        routes = {view.route_label for view in self.host.bridge.views.values()}
        return len(self.host.config.routes) > 1 or len(routes - {""}) > 1

    def prices(self, route: str) -> Prices | None:
        found = self.host.config.routes.get(route)
        return found.prices if found is not None else None

    def listing(self) -> list[Line]:
        host = self.host
        views = host.bridge.views
        agents = host.ctx.agents
        roots = [agent.id for agent in agents.roots() if agent.id in views]
        children: dict[str, list[str]] = {}
        parents: dict[str, str] = {}
        stack = list(roots)
        while stack:
            agent_id = stack.pop()
            agent = agents.get(agent_id)
            if agent is None:
                continue
            kids = [child.id for child in agents.children_of(agent) if child.id in views]
            if kids:
                children[agent_id] = kids
                parents.update(dict.fromkeys(kids, agent_id))
                stack.extend(kids)
        self.parents = parents
        keep = [host.selected_id] if host.selected_id else []
        self._finished = {agent_id: self.finished(agent_id) for agent_id in views}
        return self.view.lines(roots, children, self._name, self._finished.__getitem__, keep)

    def _name(self, agent_id: str) -> str:
        return self.host.display_name(agent_id)

    def row(self, line: Line) -> RowFacts | None:
        facts = self._facts(line.agent_id)
        if facts is None or not line.hidden:
            return facts
        below = [f for f in map(self._facts, line.hidden) if f is not None]
        return roll_up(facts, below)

    def _facts(self, agent_id: str) -> RowFacts | None:
        host = self.host
        view = host.bridge.views.get(agent_id)
        if view is None:
            return None
        breakpoints = host.breakpoints
        return row_facts(view, self.prices, paused_since=self.paused_since.get(agent_id),
                         armed=breakpoints is not None and breakpoints.is_armed(agent_id),
                         marked=agent_id in self.marks, needs=agent_id in self.needs)

    def finished(self, agent_id: str) -> bool:
        """Done and needing nothing: idle, nothing pending, not paused, its last turn
        completed, and not waiting to be seen (what hide-finished and bulk dispose take)."""
        view = self.host.bridge.views.get(agent_id)
        if view is None:
            return False
        agent = view.agent
        return agent.status != "running" and not agent.inbox.has_pending \
            and agent_id not in self.paused_since and view.activity.ended in FINISHED \
            and agent_id not in self.needs

    # -- after each flush ----------------------------------------------------------------------

    def observe(self, agent_ids: Iterable[str], structure: bool = False) -> None:
        """Agents changed (a flush): re-judge who needs the person, redraw their rows, and
        list the tree again when its shape or a hidden finished agent changed."""
        host = self.host
        views = host.bridge.views
        tree = host.agent_tree
        if structure:
            gone = [agent_id for agent_id in self._judged if agent_id not in views]
            self.needs.forget(gone)
            for agent_id in gone:
                self._judged.pop(agent_id, None)
                self.paused_since.pop(agent_id, None)
            self.marks.prune(views)
        changed: set[str] = set()
        now = self.clock()
        for agent_id in agent_ids:
            view = views.get(agent_id)
            if view is None:
                continue
            agent = view.agent
            inbox = agent.inbox
            paused = self.paused_since.get(agent_id)
            # What a row or a need can show; a streamed chunk changes none of it.
            key = (view.activity.version, agent.status, len(inbox.next_step),
                   len(inbox.next_turn), paused, view.name, view.route_label,
                   tuple((h.message_id, h.remaining() is None) for h in agent.holds))
            if self._judged.get(agent_id) == key:
                continue
            self._judged[agent_id] = key
            changed.add(agent_id)
            need = self.needs.update(facts_of(agent_id, agent.status, inbox.has_pending,
                                              view.activity, paused), now)
            if need is not None:
                self._started(need)
        relist = structure or (self.view.hide_finished and any(
            self._finished.get(a) != self.finished(a) for a in changed))
        if relist:
            tree.sync_structure()
        elif changed:
            tree.refresh_rows(views, changed)
        self.show_needs()

    def tick(self) -> None:
        """The app's tick while agents run: rows with an edit hold redraw when their
        countdown reads differently (`✎waits 42s`)."""
        views = self.host.bridge.views
        held = [agent_id for agent_id, view in views.items() if view.agent.holds]
        if held:
            self.host.agent_tree.refresh_rows(views, held)

    def _started(self, need: Need) -> None:
        if self.alert is not None and need.agent_id != self.host.selected_id:
            name = self.host.display_name(need.agent_id)
            self.alert(f"{name}: {REASON_WORDS.get(need.reason, need.reason)}")

    def show_needs(self) -> None:
        """The key bar's needs-you notice and the rows' marks follow the count."""
        if self.needs.version == self._needs_shown:
            return
        self._needs_shown = self.needs.version
        host = self.host
        host.key_bar.show_notice(self.needs.summary(), "jump_needs_you")
        host.agent_tree.refresh_rows(host.bridge.views, host.bridge.views)
        self.update_title()

    def looked_at(self, agent_id: str | None) -> None:
        """The person is looking at `agent_id` (the selection settled there)."""
        view = self.host.bridge.views.get(agent_id) if agent_id else None
        if view is None or agent_id is None:
            return
        agent = view.agent
        self.needs.looked_at(facts_of(agent_id, agent.status, agent.inbox.has_pending,
                                      view.activity, self.paused_since.get(agent_id)))
        self.show_needs()
        if self.view.query.strip() or self.view.hide_finished:
            # The selected agent is listed whatever the filter says: the one before may go.
            self.host.agent_tree.sync_structure()
            self.update_title()

    def pause_reached(self, agent_id: str) -> None:
        self.paused_since.setdefault(agent_id, self.clock())
        self.host.call_later(self.observe, [agent_id])

    def pause_ended(self, agent_id: str) -> None:
        self.paused_since.pop(agent_id, None)
        self.host.call_later(self.observe, [agent_id])

    # -- the tree's title ----------------------------------------------------------------------

    def update_title(self) -> None:
        """`Agents · 3 marked · /res 4/60 · done hidden`: what shapes the list (the filter,
        with the rows it lists of all agents)."""
        parts = [self.title_base]
        if self.marks:
            parts.append(f"{len(self.marks)} marked")
        if self.view.query.strip():
            shown, total = len(self.host.agent_tree.lines), len(self.host.bridge.views)
            parts.append(f"/{self.view.query.strip()} {shown}/{total}")
        if self.view.hide_finished:
            parts.append("done hidden")
        set_title(self.host.agent_tree, " · ".join(parts))

    # -- jumping, folding, filtering -----------------------------------------------------------

    def jump(self) -> None:
        """Select the agent that has needed the person longest (after the selected one)."""
        host = self.host
        target = self.needs.next_after(host.selected_id)
        if target is None:
            host.note("Nobody needs you right now.", seconds=3)
            return
        if target == host.selected_id:
            host.note(f"{host.display_name(target)} is the only agent that needs you.",
                      seconds=3)
        host.select_agent(target)

    def fold(self, fold: bool) -> None:
        """Left folds the cursor's row (or goes to its owner); right unfolds (or goes to its
        first sub-agent)."""
        tree = self.host.agent_tree
        agent_id = tree.cursor_agent_id
        if agent_id is None:
            return
        line = tree.lines[tree.cursor]
        if fold:
            if line.has_children and not line.folded:
                self.view.fold(agent_id)
                tree.sync_structure()
            elif agent_id in self.parents and self.parents[agent_id] in tree.listed:
                tree.move_cursor_to(self.parents[agent_id])
            return
        if line.folded:
            self.view.fold(agent_id, False)
            tree.sync_structure()
        elif line.has_children and tree.cursor + 1 < len(tree.lines):
            tree.move_cursor_to(tree.lines[tree.cursor + 1].agent_id)

    def toggle_fold(self, agent_id: str) -> None:
        """A click on a parent's fold mark."""
        self.view.toggle_fold(agent_id)
        self.host.agent_tree.sync_structure()

    def fold_all(self, fold: bool) -> None:
        if fold:
            self.view.fold_all(list(self.parents.values()))
        else:
            self.view.unfold_all()
        self.host.agent_tree.sync_structure()

    def hide_finished(self) -> None:
        self.view.hide_finished = not self.view.hide_finished
        self.host.agent_tree.sync_structure()
        self.update_title()
        hidden = sum(1 for agent_id, done in self._finished.items()
                     if done and agent_id not in self.host.agent_tree.listed)
        self.host.note(f"Hiding {hidden} finished sub-agent{'s' if hidden != 1 else ''}."
                       if self.view.hide_finished else "Showing finished sub-agents.",
                       seconds=3)

    def open_filter(self) -> None:
        host = self.host
        if not host.agent_tree.display:
            host.show_agents_pane()
        host.tree_filter.open(self.view.query)

    def filter_changed(self, query: str) -> None:
        self.view.query = query
        tree = self.host.agent_tree
        tree.sync_structure()
        total = len(self.host.bridge.views)
        self.host.tree_filter.show_status(f"{len(tree.lines)} of {total}", bool(tree.lines))
        self.update_title()

    def filter_done(self, keep: bool) -> None:
        host = self.host
        if not keep and self.view.query:
            self.filter_changed("")
        host.tree_filter.close()
        if host.agent_tree.display:
            host.agent_tree.focus()

    def filter_move(self, delta: int) -> None:
        self.host.agent_tree.action_cursor(delta)

    # -- marks -------------------------------------------------------------------------------

    def mark(self) -> None:
        """Space: mark or unmark the cursor's agent, then move down (mark a run of rows)."""
        tree = self.host.agent_tree
        agent_id = tree.cursor_agent_id
        if agent_id is None:
            return
        self.marks.toggle(agent_id)
        tree.refresh_rows(self.host.bridge.views, [agent_id])
        tree.action_cursor(1)
        self.update_title()

    def mark_subtree(self) -> None:
        host = self.host
        agent_id = host.agent_tree.cursor_agent_id
        agent = host.ctx.agents.get(agent_id) if agent_id else None
        if agent is None:
            return
        ids = [a.id for a in bulk.subtree(host.ctx.agents, agent)]
        if all(agent_id in self.marks for agent_id in ids):
            self.marks.set([m for m in self.marks.ids if m not in ids])
        else:
            self.marks.set([*self.marks.ids, *(i for i in ids if i not in self.marks)])
        host.agent_tree.refresh_rows(host.bridge.views)
        self.update_title()

    def clear_marks(self) -> None:
        if not self.marks:
            return
        self.marks.clear()
        self.host.agent_tree.refresh_rows(self.host.bridge.views)
        self.update_title()

    def targets(self) -> list[Agent]:
        """The marked agents still live, in marking order; none marked: the selected one."""
        host = self.host
        if self.marks:
            found = [host.ctx.agents.get(agent_id) for agent_id in self.marks.ids]
            return [agent for agent in found if agent is not None]
        agent = host.writable_agent()
        return [agent] if agent is not None else []

    def _names(self, agents: list[Agent], most: int = 3) -> str:
        names = [self.host.display_name(agent.id) for agent in agents[:most]]
        more = len(agents) - most
        return ", ".join(names) + (f" and {more} more" if more > 0 else "")

    # -- bulk actions --------------------------------------------------------------------------

    def broadcast(self) -> None:
        host = self.host
        targets = self.targets()
        if not targets:
            return
        count = len(targets)
        title = f"Broadcast to {count} agent{'s' if count != 1 else ''}: {self._names(targets)}"

        def send(answer: tuple[str, str] | None) -> None:
            if not answer or not answer[0].strip():
                return
            text, lane = answer
            result = bulk.broadcast(targets, text, lane)
            self._record(result)
            host.bridge.flush()
            self._say(result, result.say(f"Sent the {lane} to"), undoable=True)

        host.ask(BroadcastScreen(title), send)

    def stop_marked(self, after_step: bool = False) -> None:
        targets = self.targets()
        if not targets:
            return
        result = bulk.stop(targets, after_step=after_step)
        if after_step:
            line = result.say("Asked", "were not running", after=" to stop after this step")
        else:
            line = result.say("Stopped", "were not running", after=", keeping their inboxes")
        self._say(result, line)

    def stop_subtree(self) -> None:
        host = self.host
        root = host.writable_agent()
        if root is None:
            return
        below = len(bulk.subtree(host.ctx.agents, root)) - 1
        name = host.display_name(root.id)
        question = f"Stop {name} and its {below} sub-agent{'s' if below != 1 else ''}?" \
            if below else f"Stop {name}?"

        def chosen(answer: str | None) -> None:
            if answer not in ("keep", "discard") or host.ctx.agents.get(root.id) is None:
                return
            keep = answer == "keep"
            result = bulk.stop_tree(host.ctx.agents, root, keep=keep)
            self._record(result)
            host.bridge.flush()
            what = ", keeping every inbox" if keep else ", discarding their inboxes"
            self._say(result, result.say("Stopped", "were idle with nothing pending",
                                         after=what), undoable=not keep)

        host.ask(ChoiceScreen(question, "Their inboxes: keep them (paused, delivered when "
                                        "you send again) or discard them?",
                              [("keep", "Keep inboxes", YES_KEY),
                               ("discard", "Discard inboxes", "ctrl+d")]),
                 chosen)

    def dispose_finished(self) -> None:
        host = self.host
        parents = self.targets()
        if not parents:
            return
        agents = host.ctx.agents
        found = bulk.finished_children(agents, parents, lambda a: self.finished(a.id))
        if not found:
            host.note(f"No finished sub-agents under {self._names(parents)}.", seconds=3)
            return
        count = sum(len(bulk.subtree(agents, agent)) for agent in found)

        def answer(yes: bool | None) -> None:
            if yes:
                host.spawn(self._dispose(found), group="agents")

        host.ask(ConfirmScreen(
            f"Dispose {count} finished sub-agent{'s' if count != 1 else ''} of "
            f"{self._names(parents)}?",
            "Their sessions stay on disk and can be resumed.", yes="Dispose"), answer)

    async def _dispose(self, found: list[Agent]) -> None:
        host = self.host
        result = await bulk.dispose_all(host.ctx.agents, found)
        for agent_id in result.touched:
            record_dropped(host.ctx, agent_id)
        self._say(result, result.say("Disposed", "were gone already"))

    def _record(self, result: bulk.BulkResult) -> None:
        """The action's undo becomes the newest entry of the session's inbox history."""
        if result.edit is not None:
            self.edits.record(result.edit)

    def _say(self, result: bulk.BulkResult, line: str, undoable: bool = False) -> None:
        """One status line: how many agents the action touched (and the key that takes it
        back, when one does)."""
        if undoable and result.edit is not None:
            line = f"{line[:-1]} · {self.host.key_name('undo_discard')} undoes."
        self.host.note(line, "warning" if result.errors else "information",
                       seconds=6 if result.errors else 4)
