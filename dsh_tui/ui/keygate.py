"""Keys in the order they arrive, across dialogs and changes of focus.

A terminal hands the app a paste or a fast typist's keys in one read, and Textual forwards
every key of it to the widget focused when the read was parsed: `ctrl+f needle` typed
"needle" into the composer, not the search bar. `KeyGateApp` delivers one key at a time,
holding the next until the key's effects have settled (a round follows the key up the path
it bubbles and comes back to the app); typed text, and a widget's cursor moves
(`RUN_KEYS`), go on as one run. A watchdog releases the keys if a round is lost, so
input never wedges. What "settled" reads of Textual's
internals is in `textual_compat`; on another Textual the gate turns itself off.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from typing import Any

from textual import events, messages
from textual.app import App

from .textual_compat import gate_fits, key_stopped, pump_busy, screen_waits

log = logging.getLogger("dsh_tui.ui.keygate")

MAX_ROUNDS = 12
"""Rounds per key before the next key goes anyway (a widget that keeps posting to itself,
a spinner, must not hold the keyboard)."""

WATCHDOG = 1.5
"""Seconds without a round coming back before the held keys are released."""


CURSOR_MOVES = frozenset({"up", "down", "pageup", "pagedown", "home", "end"})
"""The keys a cursor widget declares as `RUN_KEYS` when they only move its cursor."""

PAINTING = (messages.Update, messages.Layout, messages.UpdateScroll, messages.Prompt)
"""Messages that only repaint: a key's effects never wait on these."""

# What "settled" reads that Textual has no public API for lives in `textual_compat` (a
# pump's queued callbacks and messages, a screen's after-refresh callbacks, whether a key
# was stopped). `gate_fits` checks those on the running app before the first key; if they
# are not what it reads (a newer Textual), or reading them fails later, the gate turns
# itself off and every key goes straight to Textual, as without it: keys of one read then
# go to the focus of the moment the read was parsed, but none is lost, held or reordered.


def _settling(app: App[Any]) -> bool:
    """Is any message pump that a key's effects run through still busy: the app, every
    screen on the stack (a pushed dialog mounting, a resumed screen, a callback waiting for
    the next refresh) and every widget of the top screen (a dialog's result callback waits
    in its requester, an Input posts Submitted to itself)."""
    if pump_busy(app, PAINTING):
        return True
    for screen in app.screen_stack:
        if pump_busy(screen, PAINTING) or screen_waits(screen):
            return True
    return any(pump_busy(widget, PAINTING)
               for widget in app.screen.walk_children(with_self=False))


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
        self.enabled: bool | None = None
        """None until the first key checks Textual's internals; False once the gate is off
        (they are not what it reads): keys then go straight through."""

    async def arrive(self, event: events.Event) -> None:
        if self.enabled is None:
            self.enabled = gate_fits(self.app)
            if not self.enabled:
                log.warning("key gate off: Textual's internals differ from 8.2.8's")
        if not self.enabled:
            await self.app._deliver_input(event)
            self.app.key_settled()
            return
        self.held.append(event)
        if not self.waiting:
            await self._deliver_next()

    async def _turn_off(self, error: Exception) -> None:
        """Reading Textual's internals failed mid-burst: no more gating; the held keys go
        on at once, in order."""
        log.warning("key gate off: %r", error)
        self.enabled = False
        self.waiting = False
        self._cancel_watchdog()
        while self.held and self.app.is_running:
            await self.app._deliver_input(self.held.popleft())
        self.held.clear()
        self.app.key_settled()

    async def _deliver_next(self) -> None:
        app = self.app
        if not app.is_running:
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
        # no binding claims only types, so the keys after it wait for nothing. So do the
        # moves of a widget whose moves only move its cursor (key repeat on the tree).
        while self.held and (app.focused or app.screen) is target and (
                (self._typed(event) and self._typed(self.held[0]))
                or (self._moves(event, target) and self._moves(self.held[0], target))):
            event = self.held.popleft()
            await app._deliver_input(event)
        self._round(target if event.is_forwarded else None, event)

    def _typed(self, event: events.Event) -> bool:
        return isinstance(event, events.Key) and event.is_printable and \
            self.app.screen.active_bindings.get(event.key) is None

    @staticmethod
    def _moves(event: events.Event, target: Any) -> bool:
        """A key `target` declares only moves its cursor (`RUN_KEYS`): handled at once, it
        changes no focus and opens nothing, so the next such key need not wait for it."""
        return isinstance(event, events.Key) and \
            event.key in getattr(target, "RUN_KEYS", frozenset())

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
        parent = node.parent
        if event is None or key_stopped(event) or not event.bubble or \
                parent is None or not node.is_attached:
            parent = None  # it stopped here
        self._hop(ticket, parent, event)

    def _arm_watchdog(self, ticket: int) -> None:
        self._cancel_watchdog()
        loop = asyncio.get_running_loop()
        self._watchdog = loop.call_later(
            WATCHDOG, lambda: self.app.call_later(self.back, ticket, True))

    def _cancel_watchdog(self) -> None:
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None

    async def back(self, ticket: int, lost: bool = False) -> None:
        """A round came back to the app (or its watchdog fired): another round while the
        key's effects still move things, else the next key."""
        if ticket != self.ticket or not self.waiting:
            return  # an old round's callback or watchdog
        self._cancel_watchdog()
        app = self.app
        try:
            again = not lost and self.rounds < MAX_ROUNDS and app.is_running and (
                self._where() != self.seen or _settling(app))
        except Exception as error:  # Textual's internals changed under us: fail safe
            await self._turn_off(error)
            return
        if again:
            self._round(app.focused or app.screen, None)
            return
        self.waiting = False
        app.key_settled()
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

    def keys_held(self) -> int:
        """Keys of a burst that arrived and wait for the key in flight to settle: more
        input is coming, whatever a timer says (the tree's selection waits for it)."""
        return len(self._key_gate.held)

    def key_settled(self) -> None:
        """A key (or a run of typed ones) was handled and what it changed waits only to be
        painted: the next frame shows it. Work meant to follow the key's frame is asked for
        from here (`call_after_refresh`); asked for when the key arrives, it could run after
        an earlier frame, before the key was even handled. Nothing by default."""

    async def _deliver_input(self, event: events.Event) -> None:
        """Textual's own handling of a key or paste: priority bindings, then the focus."""
        await super().on_event(event)
