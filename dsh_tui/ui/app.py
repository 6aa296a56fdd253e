"""DshApp: the App around the main screen — the world it shows and the app-wide concerns.

The app owns what outlives any one screen: the Context and its bridge (session events
coalesced into flushes), the spinner's timer, breakpoints, the config, themes and the
keymap, notifications, the screen size classes, and the keys that work over every dialog
(help, theme, quit, ctrl+c). The main screen (`screens/main.py`) composes
the panes and hands each action to its controller (`controllers/`); the palette is
`commands.py`, the key registry `keys.py`.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, ClassVar

from rich.console import RenderableType
from textual import events
from textual.actions import ActionParseResult
from textual.app import ComposeResult
from textual.binding import BindingType, Keymap
from textual.command import CommandPalette, Provider
from textual.css.query import NoMatches
from textual.dom import DOMNode
from textual.driver import Driver
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.timer import Timer

from dsh_tui.harness import Context
from dsh_tui.harness.connection import CONNECTION_EVENT, NOTICE_EVENT

from .bindings import bind, keys_for
from .commands import DshCommands, Palette
from .keycheck import key_problem, keymap_problems
from .keygate import KeyGateApp
from .keys import SPEC_BY_NAME, startup_keymap
from .screens.help import HelpScreen
from .screens.main import READ_ONLY_NOTICE, MainScreen
from .screens.offer import OfferScreen
from .state.breakpoints import Breakpoints
from .state.bridge import Bridge, FlushBatch
from .state.config import ConfigError, UiConfig, save_setting
from .state.gestures import refusal_line
from .state.text import visible
from .state.workspace import WorkspaceOffer, workspace_of
from .textual_compat import install as install_compat
from .textual_compat import terminal_driver_class
from .themes import VARIABLE_DEFAULTS, load_themes

QUIT_NEVER = 1e9
TOAST_SWEEP = 0.5
"""Seconds after the last toast's timeout at which the screen is drawn whole once. When two
toasts expire in one frame, Textual 8.2 removes them from the DOM but its later layouts no
longer mark the area the others covered as changed: the terminal kept showing expired
toasts over the panes, for good on an idle app (tests/tty/test_quiet_feedback.py)."""
TYPING_HOLD = 0.3
"""Seconds after a typed character during which the spinner stands still: a glyph change
redraws the row of every running agent, a frame the next key would wait behind."""
UI_DIR = Path(__file__).parent
WIDGET_CSS = ("save_state", "agent_tree", "transcript", "inbox", "search_bar",
              "tree_filter", "breakpoint_panel", "composer", "event_log", "key_bar")
"""widgets/NAME.tcss in mount order, a pane before what it holds: where two rules are
equally specific the later file wins, as the DEFAULT_CSS of the widget mounted later did."""


class DshApp(KeyGateApp):
    """`DshApp(ctx, config=None)`: a Context and optional UI settings, nothing else."""

    TITLE = "dsh-tui"
    CSS_PATH = [*(UI_DIR / "widgets" / f"{name}.tcss" for name in WIDGET_CSS),  # noqa: RUF012
                UI_DIR / "app.tcss", MainScreen.CSS_PATH]
    """Every widget's stylesheet, then the app's, then the main screen's: of two rules
    equally specific the later file's wins, as the app's always won over a widget's
    default CSS. Absolute: Textual reads a relative CSS_PATH next to the module of the
    class, and tests and benchmarks subclass the app in their own folders. The main
    screen's is here because Textual 8.2 loads a screen's own CSS_PATH only when it is
    pushed or installed as a mode, never for the screen `get_default_screen` returns;
    dialogs load theirs (screens/NAME.tcss) through their own CSS_PATH when first opened."""
    COMMANDS: ClassVar[set[type[Provider] | Callable[[], type[Provider]]]] = {DshCommands}
    ENABLE_COMMAND_PALETTE = True

    # Not ClassVar (RUF012): textual.App types these as instance attributes, which mypy holds
    # a subclass to.
    HORIZONTAL_BREAKPOINTS: list[tuple[int, str]] | None = [  # noqa: RUF012
        (0, "-narrow"), (100, "-medium"), (150, "-wide"), (200, "-huge")]
    """Width classes on every screen: below 100 columns the side panes become toggles (the
    transcript gets the width), dialogs fill the width; wider screens get wider panes."""
    VERTICAL_BREAKPOINTS: list[tuple[int, str]] | None = [(0, "-short"), (30, "-tall")]  # noqa: RUF012

    BINDINGS: ClassVar[list[BindingType]] = [
        bind("help"),
        bind("change_theme", show=False),
        bind("quit", show=False, priority=True),
        bind("interrupt", show=False, priority=True),
    ]

    QUIT_WINDOW = 3.0
    """Seconds within which a second ctrl+c on an idle agent quits."""

    def __init__(self, ctx: Context, config: UiConfig | None = None) -> None:
        install_compat()
        super().__init__()
        self.ctx = ctx
        self.config = config if config is not None else UiConfig()
        self.read_only = ctx.read_only
        self.bridge = Bridge(ctx, self.schedule)
        self.bridge.on_flush = self._on_flush
        self._spinner: Timer | None = None
        self._typed_at = -QUIT_NEVER
        self.closing = False
        """Set when the app unmounts: late flushes and pauses find nothing to show."""
        self.breakpoints: Breakpoints | None = None
        self._main: MainScreen | None = None
        self._world_offs: list[Callable[[], None]] = []
        self._interrupted_at = -QUIT_NEVER
        self._theme_ready = False
        self._unknown_keys: list[str] = []
        self._bad_keys: list[str] = []
        self._toasts_until = 0.0
        self.terminal: Any = None
        """The terminal driver, once it said it exists (None headless or in a browser)."""
        self.keymap: dict[str, str] = {}
        """Binding id → keys, as last set (Textual keeps its own copy private):
        `keys.bound_keys` reads it to name the keys that work."""
        self.offer: WorkspaceOffer | None = None
        """Set before the run: a workspace to offer before the world gets its first agent
        (a browser tab that left one); the app asks, then starts it or a new one."""
        self._offered: str | None = None
        self.page_state: Callable[[bool, str | None], None] | None = None
        """Set before the run when served: told whether leaving the page now would end
        work (a turn runs, some agent has unsent text) and which saved workspace the tab
        has, whenever either changes (`dsh_tui.serve.tab`)."""
        self._told: tuple[bool, str | None] | None = None
        self.set_class(self.read_only, "-read-only")
        for theme in load_themes():
            self.register_theme(theme)
        wanted = self.config.theme
        self.theme = wanted if wanted in self.available_themes else "dark"
        self._unknown_theme = None if wanted in self.available_themes else wanted

    def driver_ready(self, driver: Any) -> None:
        """The terminal driver exists (`textual_compat`): desktop notifications go
        through it."""
        self.terminal = driver

    def alert(self, text: str) -> None:
        """An agent started needing the person (the `notify` setting; off by default): the
        terminal's bell, or a desktop notification through the terminal driver, whose
        one line is made safe there (`TerminalDriver.desktop_notification`)."""
        if self.config.notify == "bell":
            self.bell()
        elif self.config.notify == "desktop":
            notify = getattr(self.terminal, "desktop_notification", None)
            if callable(notify):
                notify(f"dsh-tui · {text}")

    @property
    def main(self) -> MainScreen:
        """The main screen (the bottom of the screen stack, under every dialog)."""
        if self._main is None:
            raise NoMatches("the main screen is not made yet")
        return self._main

    # -- start and stop ------------------------------------------------------------------------

    def get_driver_class(self) -> type[Driver]:
        """Textual's choice, except that its Linux driver becomes `TerminalDriver`, which
        lets the app exit after its terminal hung up (see `textual_compat.py`)."""
        if os.name != "posix":
            return super().get_driver_class()
        return terminal_driver_class(super().get_driver_class())

    def get_default_screen(self) -> Screen[Any]:
        """The main screen, made once the terminal is known (a browser gets its own keys)
        and the keymap is set, so the keys its placeholder and titles name are the ones
        that work."""
        configured: dict[str, str] = {}
        if self.config.keys:
            known = SPEC_BY_NAME
            self._unknown_keys = sorted(set(self.config.keys) - set(known))
            # The CLI refuses a bad key string; a config given in Python gets the same
            # check and the same line, and the action keeps its default key (Textual
            # would take "ctrl+" and never match it: the action silently had no key).
            self._bad_keys = keymap_problems(
                {k: v for k, v in self.config.keys.items() if k in known}, known)
            configured = {k: v for k, v in self.config.keys.items()
                          if k in known and key_problem(v) is None}
        keymap = startup_keymap(self.is_web, configured)
        if keymap:
            self.set_keymap(keymap)
        self._spinner = self.set_interval(0.1, self._tick, pause=True)
        self._main = MainScreen(self)
        return self._main

    def set_keymap(self, keymap: Keymap) -> None:
        """Textual's, remembering the keymap for `keys.bound_keys`."""
        self.keymap = dict(keymap)
        super().set_keymap(keymap)

    def compose(self) -> ComposeResult:
        yield from self.main.panes()

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return {**super().get_theme_variable_defaults(), **VARIABLE_DEFAULTS}

    def on_mount(self) -> None:
        main = self.main
        self.size_classes(main)  # the terminal's size is known now (after its Resize)
        if self.config.notify != "off":
            main.fleet.alert = self.alert
        main.start()
        self._world_offs = [self.ctx.on(CONNECTION_EVENT, main.show_connection),
                            self.ctx.on(NOTICE_EVENT, main.show_notice)]
        for problem in self._bad_keys:
            self.say(f"{problem}: its default key is kept", "error", timeout=12)
        if self._unknown_keys:
            self.say(f"[keys] in the config names unknown actions: "
                     f"{', '.join(self._unknown_keys)}. "
                     f"Known: {', '.join(sorted(SPEC_BY_NAME))}", "warning", timeout=12)
        self._theme_ready = True
        if self._unknown_theme:
            self.say(f'Unknown theme "{self._unknown_theme}"; using "dark". '
                     f"Themes: {', '.join(sorted(self.available_themes))}", "warning")
        if self.read_only:
            self.say(READ_ONLY_NOTICE)
        else:
            self.breakpoints = Breakpoints(self.ctx, main.pause_reached, main.pause_ended)
            main.restore_workspace()
            main.draft_keeper.on_change.append(self.tell_page)
            if self.offer is not None:
                self._offered = self.offer.workspace_id
                self.push_screen(OfferScreen(self.offer), self._offer_answered)
        self.tell_page()
        self.call_after_refresh(self._freeze_startup)

    @staticmethod
    def _freeze_startup() -> None:
        """Once, after the first frame: what start-up made (modules, Textual's classes and
        caches, the main screen, a resumed workspace's history) moves to the permanent
        generation, so full collections never walk it again (as Toad does). Nothing is
        frozen later: the heap a collection walks stays small because history is packed and
        the transcript holds only the lines it draws."""
        gc.collect()
        gc.freeze()

    def _offer_answered(self, reopen: bool | None) -> None:
        self.run_worker(self._start_offered(bool(reopen)), name="start_offered",
                        exit_on_error=False)

    async def _start_offered(self, reopen: bool) -> None:
        """The person answered the offer: reopen that workspace, or start a new one (also
        when the reopen fails, saying why), then show it as a reopened one is shown."""
        offer, self.offer = self.offer, None
        if offer is None:
            return
        if reopen:
            try:
                await offer.reopen()
            except Exception as error:
                self.say(f"Could not reopen {offer.workspace_id}: {error}. "
                         "A new workspace was started.", "error", timeout=12)
                reopen = False
        if not reopen:
            try:
                await offer.fresh()
            except Exception as error:
                self.say(f"Could not start a new agent: {error}", "error", timeout=12)
                return
        if self.closing:
            return
        self.bridge.flush()
        self.main.restore_workspace()
        self.main.composer.focus()
        self.tell_page()

    def tell_page(self) -> None:
        """Tell the page (when served) whether leaving now would end work, and which saved
        workspace its tab has: this world's once saved, else the one it was offered (so a
        second reload still offers it). Written only when it changed."""
        if self.page_state is None or self.closing or self._main is None:
            return
        leave = self._main.draft_keeper.holds_text() or any(
            view.agent.status == "running" for view in self.bridge.views.values())
        workspace = workspace_of(self.ctx)
        saved = workspace.id if workspace is not None and workspace.materialized \
            else self._offered
        if (leave, saved) != self._told:
            self._told = (leave, saved)
            self.page_state(leave, saved)

    def exit(self, result: Any = None, return_code: int = 0,
             message: RenderableType | None = None) -> None:
        """Textual's, after saving every agent's unsent text with the workspace: ctrl+q,
        a second ctrl+c and SIGTERM/SIGHUP all leave through here (a closed browser tab
        does not: its drafts were saved as typing paused, and again at unmount)."""
        if self._main is not None and not self.closing:
            with contextlib.suppress(NoMatches):
                self._main.save_drafts()
        super().exit(result, return_code, message)

    def on_unmount(self) -> None:
        if self._main is not None and not self.closing:
            with contextlib.suppress(NoMatches):  # (the composer was never shown)
                self._main.save_drafts()  # a closed tab: the panes are gone, not their text
        if self.page_state is not None and self._told is not None and self._told[0]:
            self.page_state(False, self._told[1])  # saved and quit: leaving loses nothing
        self.closing = True
        for off in self._world_offs:
            off()
        if self._spinner is not None:
            self._spinner.stop()
        self.bridge.stop()
        if self.breakpoints is not None:
            self.breakpoints.close()  # a pause stays undecided: the quit ends it unsent

    def schedule(self, delay: float, callback: Callable[[], Any]) -> Any:
        """`callback` on the app's queue after `delay` seconds (see `_schedule`)."""
        return self._schedule(delay, callback)

    def _schedule(self, delay: float, callback: Callable[[], Any]) -> Any:
        """The bridge's scheduler: `callback` runs on the app's queue after `delay`.

        Not Textual's `set_timer`: a one-shot Textual timer skips its only tick when the
        delay has passed before its task computes the wait (a delay of a microsecond or
        less always; a longer one when the process is preempted there), and a flush that
        never runs leaves the bridge waiting for it for good. asyncio's `call_later`
        always fires."""
        if delay <= 0:
            return self.call_later(callback)
        return asyncio.get_running_loop().call_later(delay, self.call_later, callback)

    def say(self, message: str, severity: SeverityLevel = "information",
            timeout: float = 5) -> None:
        """A notification whose text is never parsed as markup (names come from agents)."""
        self.notify(visible(message), severity=severity,
                    timeout=timeout, markup=False)
        self._toasts_until = max(self._toasts_until, time.monotonic() + timeout)
        self._schedule(timeout + TOAST_SWEEP, self._sweep_toasts)

    def _sweep_toasts(self) -> None:
        """Once the last toast's time is up: draw the screen whole, once (see TOAST_SWEEP)."""
        if self.closing or time.monotonic() < self._toasts_until:
            return
        try:
            self.screen.refresh()
        except Exception:
            return  # no screen any more (the app is closing)

    # -- the flush: one batch of changes, one render per widget --------------------------------

    def _on_flush(self, batch: FlushBatch) -> None:
        if self.closing:
            return
        try:
            self.main.apply_flush(batch)
        except NoMatches:
            return  # the screen is being torn down: nothing left to show it on
        if self._spinner is not None and any(
                v.agent.status == "running" for v in self.bridge.views.values()):
            self._spinner.resume()
        if self.page_state is not None:
            self.tell_page()

    async def on_event(self, event: events.Event) -> None:
        """Note when a character was typed (the spinner holds still while one is)."""
        if isinstance(event, events.Key) and event.is_printable:
            self._typed_at = time.monotonic()
        await super().on_event(event)

    def key_settled(self) -> None:
        """After the key's frame: once a burst's last key is handled, the tree's selection
        may follow its cursor."""
        if self._main is not None and not self.keys_held():
            self._main.selection.keys_done()

    def _tick(self) -> None:
        """10 times a second while an agent runs: spinner frames."""
        if self.closing:
            return
        try:
            main = self.main
            tree = main.agent_tree
            view = main.selected_view
            if view is not None and view.transcript.waiting_since is not None:
                main.update_titles()  # the "waiting for the model… (Ns)" count (on change)
            if view is not None and view.agent.holds:
                main.update_titles()  # "waits for your edit · goes on in N s" (on change)
                main.inbox.sync()  # the held item's countdown (drawn only when it changed)
            main.fleet.tick()  # the tree rows' held badges (redrawn only when changed)
        except NoMatches:
            return  # the screen is being torn down (its panes go one by one)
        typing = time.monotonic() - self._typed_at < TYPING_HOLD
        if tree.tick(self.bridge.views, hold=typing):
            return
        if self._spinner is not None:
            self._spinner.pause()
        tree.refresh_rows(self.bridge.views)

    # -- actions that work over every screen ---------------------------------------------------

    async def run_action(self, action: str | ActionParseResult,
                         default_namespace: DOMNode | None = None,
                         namespaces: Mapping[str, DOMNode] | None = None) -> bool:
        """Textual's, except that a gesture the selected agent cannot do (its key is greyed
        out, `MainScreen.check_action`) says why in one line instead of doing nothing."""
        name = action if isinstance(action, str) else action[1]
        if self.explain_refusal(name):
            return True
        return await super().run_action(action, default_namespace, namespaces)

    def explain_refusal(self, action: str) -> bool:
        """If `action` is a gesture the selected agent cannot do (an agent in a dsh runtime
        has no inject, …), say why in one line and return True."""
        name = action.split("(", 1)[0].rsplit(".", 1)[-1]
        main = self._main
        if main is None or self.screen is not main or self.read_only:
            return False
        agent = main.selected_agent
        line = refusal_line(agent, name, main.display_name(agent.id)) \
            if agent is not None else None
        if line is None:
            return False
        self.say(line, "warning")
        return True


    def run_palette_action(self, name: str) -> None:
        """Run an action the palette offers where it lives: here, else on the main screen."""
        target = self if hasattr(self, f"action_{name}") else self.main
        self.call_later(self.run_action, name, target)

    def action_interrupt(self) -> None:
        """ctrl+c: copy a selection in a text field; else stop the selected running agent,
        keeping its inbox (as escape does); on an idle one say how to quit, and a second
        ctrl+c within a few seconds quits (sessions and inboxes are kept either way)."""
        from textual.widgets import TextArea

        focused = self.focused
        if isinstance(focused, TextArea) and focused.selected_text:
            focused.action_copy()
            return
        if self._copy_screen_selection():
            return
        main = self.main
        main.tree_settle_now()  # the agent the tree's cursor is on, not the one before
        agent = main.selected_agent
        if agent is not None and not self.read_only and agent.status == "running":
            self._interrupted_at = -QUIT_NEVER
            main.action_cancel_keep_inbox()
            return
        now = time.monotonic()
        if now - self._interrupted_at <= self.QUIT_WINDOW:
            self.exit()
            return
        self._interrupted_at = now
        quit_keys = " / ".join(keys_for(self, "quit")) or "ctrl+q"
        what = f"{main.display_name(agent.id)} is not running" if agent is not None \
            else "Nothing is running"
        self.say(f"{what}. Press ctrl+c again to quit ({quit_keys} also quits); every inbox "
                 "is kept.", timeout=self.QUIT_WINDOW)

    def _copy_screen_selection(self) -> bool:
        """Copy the text dragged over on screen (a reply, a message), as a terminal's own
        copy would; the selection is then cleared, so a second ctrl+c stops or quits as
        usual. False when nothing is selected."""
        screen = self.screen
        selected = screen.get_selected_text()
        if not selected:
            return False
        self.copy_to_clipboard(selected)
        screen.clear_selection()
        self.say(f"Copied {len(selected):,} characters (ctrl+c again stops or quits).",
                 timeout=self.QUIT_WINDOW)
        return True

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def action_change_theme(self) -> None:
        self.search_themes()

    def watch_theme(self, theme: str) -> None:
        if not self._theme_ready:
            return
        self.main.agent_tree.refresh_rows(self.bridge.views)
        path = self.config.path
        self.config.theme = theme
        if path is not None:
            try:
                save_setting(path, "theme", theme)
            except (ConfigError, OSError) as error:
                self.say(f"Theme not saved: {error}", "warning")

    def action_command_palette(self) -> None:
        if self.use_command_palette and not isinstance(self.screen, CommandPalette):
            self.push_screen(Palette(id="--command-palette"))

    # -- screens -------------------------------------------------------------------------------

    def size_classes(self, screen: Screen[Any]) -> None:
        """Give `screen` its width/height classes now. Textual adds them on the screen's
        first Resize, after a first frame laid out without them (three panes on an 80x24
        terminal, a dialog at its wide size) that a person would see flash."""
        width, height = self.size
        for breakpoints, value in ((self.HORIZONTAL_BREAKPOINTS or [], width),
                                   (self.VERTICAL_BREAKPOINTS or [], height)):
            chosen = max(((limit, name) for limit, name in breakpoints if value >= limit),
                         default=None)
            for _, name in breakpoints:
                screen.set_class(chosen is not None and name == chosen[1], name)

    def push_screen(self, screen: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(screen, Screen):
            self.size_classes(screen)
        return super().push_screen(screen, *args, **kwargs)

    def on_descendant_blur(self) -> None:
        """A pane folded away takes the focus with it (Textual blurs a hidden widget)."""
        if self._main is not None:
            self.call_after_refresh(self._main.keep_focus_visible)
