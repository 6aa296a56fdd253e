"""Keys in the order they arrive, across dialogs and changes of focus.

A terminal hands the app a paste, a macro or a fast typist's keys in one read, and Textual
forwards every key of that read at once to the widget that had the focus when the read was
parsed. So a key that opens a dialog, closes one or moves the focus did not take the keys
behind it along: `ctrl+n enter down enter` typed in one go named the agent and then sent
`down enter` to the closing name dialog instead of the route dialog it opened, and
`ctrl+f needle` typed "needle" into the composer instead of the search bar.

`KeyGateApp` delivers one key at a time. After a key is forwarded, the next one is held
until the key's effects have settled. A round follows the key up the path it bubbles (a
callback queued behind it in each message pump it reaches, so it runs once the key and
whatever the key queued first were handled there) and comes back to the app; rounds repeat
while the screen or the focus changed, or any message pump of the screen still has work that
is not a repaint (a dialog's result callback waiting in its requester, an Input's Submitted,
a focus queued with `call_later`, a callback waiting for the next refresh). Then the next key
goes to whatever has the focus *now*, as if the person had typed it a moment later.

Typed text is not slowed: a printable key that no binding claims only types, so a run of them
goes on at once (one repaint, as without the gate), and the run ends where the focus moves
(a pane hands typed prose to the composer). A watchdog releases the keys if a round is lost
(its widget was removed with the callback still queued), so input can never wedge. Pastes
wait in the same line, so a paste never overtakes the keys typed before it.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Any

from textual import events, messages
from textual.app import App

MAX_ROUNDS = 12
"""Rounds per key before the next key goes anyway (a widget that keeps posting to itself,
a spinner, must not hold the keyboard)."""

WATCHDOG = 1.5
"""Seconds without a round coming back before the held keys are released."""


PAINTING = (messages.Update, messages.Layout, messages.UpdateScroll, messages.Prompt)
"""Messages that only repaint: a key's effects never wait on these."""


def _pump_busy(pump: Any) -> bool:
    """Has `pump` a callback or a message other than a repaint still to handle?"""
    if pump._next_callbacks:
        return True
    queued = pump._message_queue
    if queued.empty():
        return False
    pending = getattr(queued, "values", None)  # Textual's own cut-down Queue
    return pending is None or not all(isinstance(m, PAINTING) for m in pending)


def _settling(app: App[Any]) -> bool:
    """Is any message pump that a key's effects run through still busy: the app, every
    screen on the stack (a pushed dialog mounting, a resumed screen, a callback waiting for
    the next refresh) and every widget of the top screen (a dialog's result callback waits
    in its requester, an Input posts Submitted to itself)."""
    if _pump_busy(app):
        return True
    for screen in app.screen_stack:
        if _pump_busy(screen) or screen._callbacks:
            return True
    return any(_pump_busy(widget) for widget in app.screen.walk_children(with_self=False))


class KeyGate:
    """The held keys and the one key in flight (see the module docstring)."""

    def __init__(self, app: KeyGateApp) -> None:
        self.app = app
        self.held: deque[events.Event] = deque()
        self.ticket = 0
        self.waiting = False
        self.rounds = 0
        self.seen: tuple[tuple[int, Any], Any] = ((0, None), None)
        self._watchdog: asyncio.TimerHandle | None = None

    async def arrive(self, event: events.Event) -> None:
        self.held.append(event)
        if not self.waiting:
            await self._deliver_next()

    async def _deliver_next(self) -> None:
        app = self.app
        if not app._running:
            self.held.clear()
            return
        if not self.held:
            return
        event = self.held.popleft()
        self.waiting = True
        self.rounds = 0
        target = app.focused or app.screen
        await app._deliver_input(event)
        # Typed text goes on as one run (one repaint, as without the gate): a printable key
        # no binding claims only types, so the keys after it wait for nothing.
        while self._typed(event) and self.held and self._typed(self.held[0]) and \
                (app.focused or app.screen) is target:
            event = self.held.popleft()
            await app._deliver_input(event)
        self._round(target if event.is_forwarded else None, event)

    def _typed(self, event: events.Event) -> bool:
        return isinstance(event, events.Key) and event.is_printable and \
            self.app.screen.active_bindings.get(event.key) is None

    def _where(self) -> tuple[tuple[int, Any], Any]:
        app = self.app
        return (len(app.screen_stack), app.screen), app.focused

    def _round(self, target: Any, event: events.Event | None) -> None:
        """Follow `event` from `target` up the path it bubbles (a callback queued behind it
        in each message pump it reaches), then check at the app whether all has settled."""
        self.ticket += 1
        self.rounds += 1
        self.seen = self._where()
        self._arm_watchdog(self.ticket)
        self._hop(self.ticket, target, event)

    def _hop(self, ticket: int, node: Any, event: events.Event | None) -> None:
        app = self.app
        if node is None or node is app:
            app.call_later(self.back, ticket)
        elif not node.call_later(self._passed, ticket, node, event):
            app.call_later(self.back, ticket)  # the widget is gone: so is the key

    def _passed(self, ticket: int, node: Any, event: events.Event | None) -> None:
        """`node` handled the key (and what it queued before): on to where it bubbled."""
        if ticket != self.ticket:
            return
        parent = node._parent
        if event is None or event._stop_propagation or not event.bubble or parent is None \
                or not node.is_attached:
            parent = None  # it stopped here
        self._hop(ticket, parent, event)

    def _arm_watchdog(self, ticket: int) -> None:
        if self._watchdog is not None:
            self._watchdog.cancel()
        loop = asyncio.get_running_loop()
        self._watchdog = loop.call_later(
            WATCHDOG, lambda: self.app.call_later(self.back, ticket, True))

    async def back(self, ticket: int, lost: bool = False) -> None:
        """A round came back to the app (or its watchdog fired): another round while the
        key's effects still move things, else the next key."""
        if ticket != self.ticket or not self.waiting:
            return  # an old round's callback or watchdog
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None
        app = self.app
        if not lost and self.rounds < MAX_ROUNDS and app._running and (
                self._where() != self.seen or _settling(app)):
            self._round(app.focused or app.screen, None)
            return
        self.waiting = False
        await self._deliver_next()


class KeyGateApp(App[Any]):
    """An App whose keys (and pastes) go through a `KeyGate`: one at a time, each to the
    widget that has the focus once the previous one has settled."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._key_gate = KeyGate(self)

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, (events.Key, events.Paste)) and not event.is_forwarded \
                and self.screen_stack:
            await self._key_gate.arrive(event)
            return
        await super().on_event(event)

    async def _deliver_input(self, event: events.Event) -> None:
        """Textual's own handling of a key or paste: priority bindings, then the focus."""
        await super().on_event(event)
