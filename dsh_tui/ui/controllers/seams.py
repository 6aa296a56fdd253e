"""What the main screen offers its controllers: small Protocols, one per kind of need.

A controller names the seams it uses (`class Host(World, Panes, Selection, Protocol)`),
never the screen class, so it imports nothing above it and mypy checks at the screen
that every seam is really there. The screen (`screens/main.py`) is the one
implementation.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any, Protocol, TypeVar

from textual.app import App
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.widget import Widget

from dsh_tui.harness import Agent, Context

from ..state.agent_view import AgentView
from ..state.breakpoints import Breakpoints
from ..state.bridge import Bridge
from ..state.config import UiConfig
from ..widgets.agent_tree import AgentTree
from ..widgets.breakpoint_panel import BreakpointPanel
from ..widgets.composer import Composer
from ..widgets.event_log import EventLog, EventLogRoom
from ..widgets.inbox import InboxView
from ..widgets.key_bar import KeyBar
from ..widgets.search_bar import SearchBar
from ..widgets.transcript import Transcript
from ..widgets.tree_filter import TreeFilter

ResultT = TypeVar("ResultT")


class World(Protocol):
    """The world the app holds: the context, its bridge, the settings, and the app's state."""

    @property
    def ctx(self) -> Context: ...

    @property
    def bridge(self) -> Bridge: ...

    @property
    def config(self) -> UiConfig: ...

    @property
    def read_only(self) -> bool: ...

    @property
    def breakpoints(self) -> Breakpoints | None: ...

    @property
    def closing(self) -> bool: ...

    def say(self, message: str, severity: SeverityLevel = "information",
            timeout: float = 5) -> None:
        """A notification whose text is never parsed as markup."""

    def schedule(self, delay: float, callback: Callable[[], Any]) -> Any:
        """Run `callback` on the app's queue after `delay` seconds (an asyncio timer, which
        always fires, unlike a one-shot Textual timer of a tiny delay)."""

    def keys_held(self) -> int:
        """Keys that arrived and wait to be handled (a burst is being handed over)."""


class Notes(Protocol):
    """The status line: one notice at a time for what inbox actions did."""

    def note(self, message: str, severity: SeverityLevel = "information",
             seconds: float = 4.0) -> None:
        """Show `message` on the status line (replacing the last) for `seconds`."""


class Panes(Protocol):
    """The main screen's panes (mounted by the time any action runs)."""

    @property
    def agent_tree(self) -> AgentTree: ...

    @property
    def transcript(self) -> Transcript: ...

    @property
    def inbox(self) -> InboxView: ...

    @property
    def composer(self) -> Composer: ...

    @property
    def event_log(self) -> EventLog: ...

    @property
    def event_log_room(self) -> EventLogRoom:
        """The room the event log is drawn over (shown while the log is)."""

    @property
    def breakpoint_panel(self) -> BreakpointPanel: ...

    @property
    def search_bar(self) -> SearchBar: ...

    @property
    def tree_filter(self) -> TreeFilter: ...

    @property
    def key_bar(self) -> KeyBar: ...


class Selection(Protocol):
    """The selected agent, and the one way to change it."""

    @property
    def selected_id(self) -> str | None: ...

    @property
    def selected_view(self) -> AgentView | None: ...

    @property
    def selected_agent(self) -> Agent | None: ...

    def writable_agent(self) -> Agent | None:
        """The selected agent, or None when nothing may change it (read-only, none)."""

    def display_name(self, agent_id: str) -> str: ...

    def select_agent(self, agent_id: str | None, *, focus_tree: bool = False,
                     from_tree: bool = False) -> None: ...

    def update_titles(self) -> None: ...

    async def adopt(self, agent_id: str) -> None:
        """Select a just-created agent as soon as the bridge has shown it."""


class Screenside(Protocol):
    """The screen as Textual sees it: dialogs, focus, timing, workers, keys."""

    @property
    def app(self) -> App[Any]: ...

    @property
    def focused(self) -> Widget | None: ...

    @property
    def is_active(self) -> bool: ...

    def has_class(self, *class_names: str) -> bool: ...

    def ask(self, dialog: Screen[ResultT], then: Callable[[ResultT | None], None]) -> None:
        """Open `dialog` over the screen; `then` gets its result (None when cancelled)."""

    def spawn(self, work: Coroutine[Any, Any, None], *, group: str,
              exclusive: bool = False) -> None:
        """Run `work` as the screen's worker (errors are reported by the work itself)."""

    def call_later(self, callback: Callable[..., Any], *args: Any, **kwargs: Any) -> bool: ...

    def schedule(self, delay: float, callback: Callable[[], Any]) -> Any:
        """Run `callback` on the app's queue after `delay` seconds (always fires)."""

    def call_after_refresh(self, callback: Callable[..., Any], *args: Any,
                           **kwargs: Any) -> bool: ...

    def key_name(self, action: str) -> str:
        """The first working key of `action`, as prose names it."""

    def keys_label(self, action: str) -> str:
        """Every working key of `action` as the footer shows them, joined by " / "."""
