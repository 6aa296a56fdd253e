"""Agents: create a root, spawn a child, dispose, rename, and choose a route for a new one.

Creation and disposal go through the registry (`ctx.agents`), whoever made the agent;
each runs as a worker of the screen and reports a failure in one line.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Protocol

from dsh_tui.harness import Agent
from dsh_tui.harness.names import rename, suggest_numbered, take_name

from ..screens.confirm import ConfirmScreen
from ..screens.name import NameScreen
from ..state.config import UiConfig
from ..state.routes import Route
from ..state.workspace import record_dropped, record_root, root_meta
from ..state.world import create_agent, spawn_child
from .seams import Panes, Screenside, Selection, World
from .sending import READ_ONLY_NOTICE


def offers_routes(config: UiConfig) -> bool:
    """More than one route in this run: the person chooses one per agent, and sees it."""
    return len(config.routes) > 1


class Host(World, Panes, Selection, Screenside, Protocol):
    """What the agent actions need of the screen."""


class AgentActions:
    """New agent, spawn, dispose and rename, on the selected agent where one is needed."""

    def __init__(self, host: Host) -> None:
        self.host = host

    # -- routes ------------------------------------------------------------------------------

    def _route(self) -> tuple[str | None, str | None]:
        config = self.host.config
        if config.provider:
            return config.provider, config.model
        agent = self.host.selected_agent or next(iter(self.host.ctx.agents.roots()), None)
        if agent is None:
            return None, None
        return agent.options.provider, agent.options.model

    def _likely_route(self, agent: Agent | None = None) -> str | None:
        """The route a new agent most likely wants: `agent`'s (the parent, or the selected
        agent), else the run's default."""
        agent = agent or self.host.selected_agent
        name = agent.options.provider if agent is not None else None
        config = self.host.config
        return name if name in config.routes else config.route

    def _choose_route(self, question: str, current: str | None,
                      then: Callable[[Route | None], None]) -> None:
        """Ask which route (when there is a choice), then call `then(route or None)`;
        escape calls nothing."""
        config = self.host.config
        if not offers_routes(config):
            then(config.routes.get(current or "") or None)
            return
        from ..screens.route import RouteScreen  # here: only a run with routes pays its import

        missing = {name: key for name, route in config.routes.items()
                   if (key := route.missing_key(os.environ))}

        def chosen(name: str | None) -> None:
            if name is not None:
                then(config.routes.get(name))

        self.host.ask(RouteScreen(question, list(config.routes.values()), current, missing),
                      chosen)

    # -- creating ----------------------------------------------------------------------------

    def new_agent(self) -> None:
        host = self.host
        if host.read_only:
            host.say(READ_ONLY_NOTICE, "warning")
            return
        suggested = suggest_numbered(host.ctx, "agent", len(host.ctx.agents.roots()) + 1)

        def named(title: str | None) -> None:
            if title:
                self._choose_route(f"Route for {title}", self._likely_route(),
                                   lambda route: host.spawn(self._create_root(title, route),
                                                            group="agents"))

        host.ask(NameScreen("Name the new agent", suggested), named)

    async def _create_root(self, title: str, route: Route | None = None) -> None:
        host = self.host
        provider, model = self._route()
        try:
            handle = await create_agent(host.ctx, provider=provider, model=model, title=title,
                                        options=route.agent_options() if route else None,
                                        meta=root_meta(host.ctx))
        except Exception as error:
            host.say(f"Could not create an agent: {error}", "error")
            return
        take_name(host.ctx, title, handle.agent.id)
        record_root(host.ctx, handle.agent.id)
        await host.adopt(handle.agent.id)
        host.say(f"Created {title}. Type its first message below.", timeout=3)
        host.composer.focus()

    def spawn_child(self) -> None:
        host = self.host
        agent = host.writable_agent()
        if agent is None:
            return
        suggested = suggest_numbered(host.ctx, f"{host.display_name(agent.id)} › child")

        def named(title: str | None) -> None:
            if title:
                self._choose_route(f"Route for {title}", self._likely_route(agent),
                                   lambda route: host.spawn(self._spawn(agent, title, route),
                                                            group="agents"))

        host.ask(NameScreen(f"Name the new child of {host.display_name(agent.id)}", suggested),
                 named)

    async def _spawn(self, parent: Agent, title: str, route: Route | None = None) -> None:
        host = self.host
        try:
            handle = await spawn_child(parent, title=title,
                                       options=route.agent_options() if route else None)
        except Exception as error:
            host.say(f"Could not spawn a child of {host.display_name(parent.id)}: {error}",
                     "error")
            return
        take_name(host.ctx, title, handle.agent.id)
        await host.adopt(handle.agent.id)
        host.say(f"Spawned {title}, owned by {host.display_name(parent.id)}. Type its task "
                 "below.", timeout=3)
        host.composer.focus()

    # -- disposing and renaming --------------------------------------------------------------

    def dispose_agent(self) -> None:
        host = self.host
        agent = host.writable_agent()
        if agent is None:
            return
        name = host.display_name(agent.id)
        below = self._descendants(agent)

        def answer(yes: bool | None) -> None:
            if yes:
                host.spawn(self._dispose(agent.id, name), group="agents")

        extra = f" and its {below} sub-agent{'s' if below != 1 else ''}" if below else ""
        host.ask(ConfirmScreen(
            f"Dispose {name}{extra}?",
            "A running turn is cancelled. Saved sessions stay on disk and can be resumed.",
            yes="Dispose"), answer)

    def _descendants(self, agent: Agent) -> int:
        agents = self.host.ctx.agents
        count = 0
        stack = list(agents.children_of(agent))
        while stack:
            child = stack.pop()
            count += 1
            stack.extend(agents.children_of(child))
        return count

    async def _dispose(self, agent_id: str, name: str) -> None:
        """Through the registry (`ctx.agents.dispose`), whoever created it: this app, the
        CLI, a parent's tool, a resume."""
        host = self.host
        done = host.ctx.agents.dispose(agent_id)
        if done is None:
            host.say(f"{name} cannot be disposed: it is no longer live.", "warning")
            return
        try:
            await done
        except Exception as error:
            host.say(f"Disposing {name} failed: {error}", "error")
            return
        record_dropped(host.ctx, agent_id)  # the workspace does not bring it back
        host.say(f"Disposed {name}.", timeout=3)

    def rename_agent(self) -> None:
        """Name the selected agent: a `session/title` in its log (source user, as upstream
        records a rename), shown in the tree, the composer target, the transcript title,
        the sessions list and exports."""
        host = self.host
        agent = host.writable_agent()
        if agent is None:
            return
        old = host.display_name(agent.id)

        def named(name: str | None) -> None:
            if not name or name == old or host.ctx.agents.get(agent.id) is None:
                return
            rename(agent.session, name)
            take_name(host.ctx, name, agent.id)
            host.bridge.flush()
            host.agent_tree.refresh_rows(host.bridge.views, {agent.id})
            host.update_titles()
            host.say(f"Renamed {old} to {name}.", timeout=3)

        host.ask(NameScreen(f"Rename {old}", old), named)
