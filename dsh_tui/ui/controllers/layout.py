"""Layout: which panes show (the tree, the inbox, the event log, the zoomed transcript),
how wide the side panes are, and where the focus goes when a pane folds away.

The pane classes (`-show-tree`, `-hide-inbox`, …) are the app's, so a dialog on top
keeps them: they say what the person asked for (shown, hidden, or neither: `auto`).
`state/pane_widths.py` turns that and the terminal's width into columns, so side panes
fold before the transcript drops below ~60 columns; an empty inbox takes less (and
grows when work arrives, shrinking again only when another agent is selected, so a
follow-up claimed and gone does not reflow the transcript twice).
"""

from __future__ import annotations

from typing import Protocol

from textual.css.query import NoMatches
from textual.widget import Widget

from ..state.pane_widths import AUTO, HIDDEN, SHOWN, Widths, pane_widths
from .seams import Panes, Screenside, Selection


class Host(Panes, Selection, Screenside, Protocol):
    """What layout needs of the screen."""


class Layout:
    """Pane toggles, zoom, and keeping the focus in sight."""

    def __init__(self, host: Host) -> None:
        self.host = host
        self.widths: Widths | None = None
        """The side panes' widths as last applied (0: folded)."""
        self._wide_for: str | None = None
        """The agent whose inbox had work since it was selected (its pane stays wide)."""

    def wants(self, name: str) -> str:
        """What the person asked of a side pane: `shown`, `hidden`, or `auto`."""
        app = self.host.app
        if app.has_class(f"-show-{name}"):
            return SHOWN
        if app.has_class(f"-hide-{name}"):
            return HIDDEN
        return AUTO

    def _inbox_empty(self) -> bool:
        host = self.host
        view = host.selected_view
        if view is None:
            return True
        if self._wide_for != view.id:
            self._wide_for = None  # another agent: its own inbox decides
        if view.agent.inbox.has_pending or view.tombstones or view.unsent.unsent:
            self._wide_for = view.id
        return self._wide_for != view.id

    def apply_widths(self) -> None:
        """Give the side panes their share of the terminal's width (only on a change)."""
        host = self.host
        total = host.app.size.width
        if total <= 0:
            return
        widths = pane_widths(total, tree=self.wants("tree"), inbox=self.wants("inbox"),
                             inbox_empty=self._inbox_empty())
        if widths == self.widths:
            return
        self.widths = widths
        for widget, width in ((host.agent_tree, widths.tree), (host.inbox, widths.inbox)):
            if width:
                widget.styles.width = width
            widget.display = width > 0

    def toggle_event_log(self) -> None:
        host = self.host
        log = host.event_log
        log.shown = not log.shown
        host.event_log_room.display = log.shown
        if log.shown:
            log.open(host.selected_id)  # once (show_agent would reload as well)

    def event_log_scope(self) -> None:
        if not self.host.event_log.shown:
            self.toggle_event_log()
        self.host.event_log.action_toggle_scope()

    def toggle_pane(self, name: str, widget: Widget) -> None:
        """Show or hide a side pane; on a narrow screen only one side pane is open at once,
        so the transcript keeps the rest of the width."""
        host = self.host
        shown = not widget.display
        app = host.app  # the pane classes are the app's: they survive a dialog on top
        app.set_class(shown, f"-show-{name}")
        app.set_class(not shown, f"-hide-{name}")
        if shown and host.has_class("-narrow"):
            other = "inbox" if name == "tree" else "tree"
            app.remove_class(f"-show-{other}")
        self.apply_widths()
        host.call_after_refresh(self._after_toggle, widget if shown else None)

    def show_tree(self) -> None:
        """Show the agent tree (the filter needs it in sight)."""
        if not self.host.agent_tree.display:
            self.toggle_agents()

    def _after_toggle(self, widget: Widget | None) -> None:
        if widget is not None and widget.display:
            widget.focus()
        else:
            self.keep_focus_visible()
        self.host.update_titles()

    def keep_focus_visible(self) -> None:
        """Focus never stays in a pane that was folded away: it goes to the composer."""
        host = self.host
        if not host.is_active:
            return  # a dialog is open: it owns the focus
        focused = host.focused
        if focused is None or any(not node.display for node in focused.ancestors_with_self
                                  if isinstance(node, Widget)):
            host.composer.focus()  # Textual blurs a widget that is hidden: focus is lost

    def toggle_agents(self) -> None:
        self.toggle_pane("tree", self.host.agent_tree)

    def toggle_inbox(self) -> None:
        self.toggle_pane("inbox", self.host.inbox)

    def zoom_transcript(self) -> None:
        """Hide both side panes (the transcript takes the width), or bring them back."""
        host = self.host
        zoomed = not host.agent_tree.display and not host.inbox.display
        app = host.app
        for name in ("tree", "inbox"):
            app.set_class(zoomed, f"-show-{name}")
            app.set_class(not zoomed, f"-hide-{name}")
        if zoomed and host.has_class("-narrow"):
            app.remove_class("-show-tree")  # one side pane at a time on a narrow screen
        self.apply_widths()
        host.call_after_refresh(self._after_toggle, None)

    def after_resize(self) -> None:
        """The center column changed size: titles and focus follow the panes now shown."""
        try:
            self.apply_widths()
            self.host.update_titles()
            self.keep_focus_visible()
        except NoMatches:
            pass
