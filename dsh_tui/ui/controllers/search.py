"""Search in the selected agent's transcript: the bar's query, stepping through matches
however far back they are, and the mark on the current one.

The matching itself is `state/search.py` (no Textual); this only asks it again when
the transcript grew or another agent is selected, and moves the transcript.
"""

from __future__ import annotations

from typing import Protocol

from ..state.search import SearchState
from .seams import Panes, Selection


class Host(Panes, Selection, Protocol):
    """What search needs of the screen."""


class Search:
    """The search bar's messages, and ctrl+f."""

    def __init__(self, host: Host) -> None:
        self.host = host
        self.state = SearchState()

    def open(self) -> None:
        bar = self.host.search_bar
        bar.open()
        if self.state.query:
            self._again(self.state.query)
            bar.show_status(self.state.status(), bool(self.state.matches))

    def changed(self, query: str) -> None:
        self.state.current = None
        self._again(query)
        self._step(older=True)

    def step(self, older: bool) -> None:
        self._again(self.state.query)
        self._step(older)

    def closed(self) -> None:
        host = self.host
        host.search_bar.close()
        host.transcript.mark(None)
        host.transcript.focus()

    def _again(self, query: str) -> None:
        """Search the selected transcript as it is now (it may have grown, or be another)."""
        view = self.host.selected_view
        if view is None:
            self.state = SearchState(query)
            return
        if self.state.agent_id != view.id:
            self.state = SearchState()
        self.state.refresh(view.id, view.transcript.items, query)

    def _step(self, older: bool) -> None:
        host = self.host
        index, wrapped = self.state.step(older)
        status = self.state.status()
        if wrapped:
            status += " · wrapped"
        host.search_bar.show_status(status, index is not None or not self.state.query)
        if index is None:
            host.transcript.mark(None)
            return
        host.transcript.search_query = self.state.query
        host.transcript.reveal(index)
