"""The key bar (`KeyBar`): the focused pane's keys on one line, cut honestly when narrow.

It looks and acts as Textual's footer (keys greyed when refused, the palette key at the
right, click to press, hover for a tooltip), with two differences. It is one widget
drawing one line: Textual's footer composes a widget per key and recomposes on every
focus move, which cost tens of milliseconds of the event loop per move while agents
stream (docs/performance.md). And when narrow it keeps the keys that fit whole, in their
order, ending the row with "…" and the help key (`fitted`), where Textual's footer let
the terminal's edge cut a key mid-word ("^n New a") and `f1 Help` was nowhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.strip import Strip
from textual.widget import Widget

from ..keys import SPEC_BY_NAME, bound_keys

if TYPE_CHECKING:
    from textual.screen import Screen

HELP_ACTIONS = frozenset({"help", "app.help"})
MORE = "…"
PALETTE_EDGE = "▏"
"""The left edge of the palette key (Textual's footer draws it as a `vkey` border)."""


@dataclass(frozen=True)
class BarKey:
    """One key as the bar shows it."""

    key: str
    """What a click presses (`App.simulate_key`)."""
    key_display: str
    description: str
    action: str
    enabled: bool
    tooltip: str
    palette: bool = False

    @property
    def width(self) -> int:
        """Cells the key takes: " key " then "description " (the palette key: "key
        description" after its edge, then one cell)."""
        if self.palette:
            return cell_len(self.key_display) + (cell_len(self.description) + 1
                                                 if self.description else 0) + 2
        width = cell_len(self.key_display) + 2
        return width + cell_len(self.description) + 1 if self.description else width


def fitted(keys: list[BarKey], width: int) -> tuple[list[BarKey], bool]:
    """The keys shown in `width` cells, in order, and whether some were left out (then
    the row ends in "…" and the help key, and the help key is the last one returned).
    The palette key is not in `keys`: it takes its own cells at the right."""
    if width <= 0 or sum(key.width for key in keys) <= width:
        return keys, False
    helper = next((k for k in keys if k.action in HELP_ACTIONS), None)
    room = width - cell_len(MORE) - 1 - (helper.width if helper is not None else 0)
    shown: list[BarKey] = []
    used = 0
    for key in keys:
        if key is helper:
            continue
        used += key.width
        if used > room:
            break
        shown.append(key)
    if helper is not None:
        shown.append(helper)
    return shown, True


class KeyBar(Widget, can_focus=False):
    """The focused pane's keys (see the module).

    Each key is drawn " key description " as in Textual's footer; a change of keys is one
    repaint of one line, where the footer mounted, styled, laid out and drew ~20 widgets.
    """

    ALLOW_SELECT = False
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "footer-key--key", "footer-key--description", "key-bar--more",
        "key-bar--palette-edge", "key-bar--hover", "key-bar--notice",
    }

    def __init__(self, *, name: str | None = None, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.keys: list[BarKey] = []
        """Every key the focused pane offers, in order (the palette key apart)."""
        self.palette: BarKey | None = None
        self.shown: list[BarKey] = []
        """The keys drawn, in order (the palette key apart), as of the last render."""
        self.cut = False
        """Some keys did not fit (the row ends in "…" and the help key)."""
        self.hovered: BarKey | None = None
        self.renders = 0
        self.notice: BarKey | None = None
        """Drawn first, before every key, and never cut: who needs the person, and the key
        that goes to them (`show_notice`)."""
        self._ready = False
        self._spans: list[tuple[int, int, BarKey]] = []

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self.bindings_changed)
        self.watch(self.app, "app_focus", self._app_focus_changed, init=False)

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def bindings_changed(self, screen: Screen) -> None:
        """Textual's signal after the focus (or `refresh_bindings`) changed the keys: read
        them and repaint the line. While the app itself is blurred, a move of the focus to
        nothing (Textual's answer to the blur) leaves the keys alone, so they do not flicker
        as the terminal loses focus; a move to a widget is followed. (A served app starts
        blurred although its page's terminal has the keyboard: the page's "focus" comes
        before the web driver's opening blur, and the composer takes the focus after.)"""
        self._ready = True
        if not self.is_attached or screen is not self.screen:
            return
        if not screen.app.app_focus and screen.focused is None:
            return
        self._read_keys()
        self.refresh()

    def _app_focus_changed(self, _focused: bool) -> None:
        """Textual marks the app focused again on a key or a click without a bindings
        signal: the keys are read then too."""
        if self._ready:
            self.bindings_changed(self.screen)

    def show_notice(self, text: str, action: str) -> None:
        """Lead the bar with `text` and the first key of `action` (a click presses it);
        "" takes the notice away."""
        notice = None
        if text:
            keys = bound_keys(self.app, action)
            spec = SPEC_BY_NAME.get(action)
            key = keys[0] if keys else ""
            notice = BarKey(key, self.app.get_key_display(Binding(key, action)) if key else "",
                            text, action, True, spec.help if spec is not None else "")
        if notice != self.notice:
            self.notice = notice
            self.refresh()

    def _read_keys(self) -> None:
        """The screen's active bindings, shown as Textual's footer shows them: one key per
        action (the first bound), in order; the palette's key apart."""
        app = self.app
        active = self.screen.active_bindings
        keys: list[BarKey] = []
        actions: set[str] = set()
        for _node, binding, enabled, tooltip in active.values():
            if not binding.show or binding.action in actions:
                continue
            actions.add(binding.action)
            keys.append(BarKey(binding.key, app.get_key_display(binding), binding.description,
                               binding.action, enabled, tooltip))
        self.palette = None
        if app.ENABLE_COMMAND_PALETTE and app.COMMAND_PALETTE_BINDING in active:
            _node, binding, enabled, _tooltip = active[app.COMMAND_PALETTE_BINDING]
            self.palette = BarKey(binding.key, app.get_key_display(binding),
                                  binding.description, binding.action, enabled,
                                  binding.tooltip or binding.description, palette=True)
        self.keys = keys

    def render_line(self, y: int) -> Strip:
        """The bar's one line, as Textual's footer draws its keys; blank below it."""
        if y:
            return Strip.blank(self.size.width, Style(bgcolor=self.rich_style.bgcolor))
        return self._line()

    def _line(self) -> Strip:
        self.renders += 1
        width = self.size.width
        base = self.rich_style
        blank = Style(bgcolor=base.bgcolor)  # what the footer drew between its keys
        key_style = self.get_component_rich_style("footer-key--key")
        description_style = self.get_component_rich_style("footer-key--description")
        palette = self.palette if self._ready else None
        # The palette key's cells, and the three Textual's footer kept spare beside it.
        room = width - (palette.width + 3 if palette is not None else 0)
        notice = self.notice
        if notice is not None:
            room -= notice.width
        shown, cut = fitted(self.keys, room) if self._ready else ([], False)
        self.shown, self.cut = shown, cut
        segments: list[Segment] = []
        spans: list[tuple[int, int, BarKey]] = []
        x = 0

        def put(text: str, style: Style) -> None:
            nonlocal x
            segments.append(Segment(text, style))
            x += cell_len(text)

        def add(key: BarKey, compact: bool = False) -> None:
            start = x
            item = base
            over = Style()
            if key is self.hovered:
                # Textual's footer gave the hovered key widget this background; its parts'
                # own (transparent) backgrounds showed it through.
                hover = self.get_component_rich_style("key-bar--hover")
                item += hover
                over = Style(bgcolor=hover.bgcolor)
            if not key.enabled:
                item += Style(dim=True)
            pad = "" if compact else " "
            put(pad + key.key_display + pad, item + key_style + over)
            if key.description:
                put((" " if compact else "") + key.description + pad,
                    item + description_style + over)
            spans.append((start, x, key))

        more = self.get_component_rich_style("key-bar--more")
        if notice is not None:
            start = x
            style = self.get_component_rich_style("key-bar--notice")
            put(f" {notice.key_display} ", base + key_style + style)
            put(f"{notice.description} ", base + style)
            spans.append((start, x, notice))
        for key in shown:
            if cut and key is shown[-1] and key.action in HELP_ACTIONS:
                put(MORE, more)
            add(key)
        if cut and not (shown and shown[-1].action in HELP_ACTIONS):
            put(MORE, more)
        keys = Strip(segments, x)
        if palette is None:
            self._spans = spans
            return keys.adjust_cell_length(width, blank)
        edge = max(0, width - palette.width)
        keys = keys.adjust_cell_length(edge, blank)
        spans = [span for span in spans if span[1] <= edge]
        segments = list(keys)
        x = edge
        put(PALETTE_EDGE, self.get_component_rich_style("key-bar--palette-edge"))
        add(palette, compact=True)
        put(" ", blank)
        self._spans = spans
        return Strip(segments, x).crop(0, width).adjust_cell_length(width, blank)

    def key_at(self, x: int) -> BarKey | None:
        """The key drawn at cell `x` of the bar (None: between keys)."""
        return next((key for start, end, key in self._spans if start <= x < end), None)

    def on_mouse_down(self, event: events.MouseDown) -> None:
        key = self.key_at(event.x)
        if key is None:
            return
        if key.enabled:
            self.app.simulate_key(key.key)
        else:
            self.app.bell()

    def on_mouse_move(self, event: events.MouseMove) -> None:
        key = self.key_at(event.x)
        if key is not self.hovered:
            self.hovered = key
            self.tooltip = key.tooltip if key is not None and key.tooltip else None
            self.refresh()

    def on_leave(self, _event: events.Leave) -> None:
        if self.hovered is not None:
            self.hovered = None
            self.tooltip = None
            self.refresh()
