"""Non-text contrast: every line, edge, thumb and selection the app draws, in every theme.

WCAG 2.2 (1.4.11) asks 3:1 for what a person must see to find a pane, follow the tree
or know what is selected: borders (focused or not), tree guides, scrollbar thumbs, the
selected row, the key bar's edge, rules. The high-contrast theme promises more: 4.5:1.
The colours are the app's own: each element's computed style in a running app (its CSS
resolved against the theme, the widget's own rules included), blended over what lies
beneath it as Textual blends it. The text on a selected row must stay readable (4.5:1).
The transcript's item bars and turn rules are its widget's (being redrawn); its lane
colours and the reply's Markdown rules are checked here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from markdown_it import MarkdownIt
from textual.color import Color
from textual.content import Content
from textual.style import Style
from textual.widget import Widget

from dsh_tui.harness import user_message
from dsh_tui.ui.markdown_lines import Look, parse, render_part
from dsh_tui.ui.screens.confirm import ConfirmScreen
from dsh_tui.ui.screens.edit import EditScreen
from dsh_tui.ui.screens.full_text import FullTextScreen
from dsh_tui.ui.screens.help import HelpScreen
from dsh_tui.ui.screens.name import NameScreen
from dsh_tui.ui.screens.sessions import SessionsScreen
from dsh_tui.ui.state.config import UiConfig
from dsh_tui.ui.themes import load_themes

from .conftest import SIZE, add_agent, make_app, msg, settle, wait_until, world

THEMES = sorted(theme.name for theme in load_themes())
TEXT_BAR = 4.5


def bar(theme: str) -> float:
    return 4.5 if theme == "high-contrast" else 3.0


def luminance(color: Color) -> float:
    """WCAG 2 relative luminance of an opaque colour."""
    def channel(value: int) -> float:
        c = value / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(color.r) + 0.7152 * channel(color.g) + 0.0722 * channel(color.b)


def contrast(a: Color, b: Color) -> float:
    light, dark = sorted((luminance(a), luminance(b)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def test_the_contrast_formula_gives_wcags_reference_values() -> None:
    white, black = Color.parse("#FFFFFF"), Color.parse("#000000")
    assert contrast(white, black) == pytest.approx(21.0)
    assert contrast(black, white) == pytest.approx(21.0)
    assert contrast(Color.parse("#767676"), white) == pytest.approx(4.54, abs=0.01)
    assert contrast(Color.parse("#949494"), white) == pytest.approx(3.03, abs=0.01)
    assert contrast(white, white) == pytest.approx(1.0)


@dataclass(frozen=True)
class Seen:
    """One element as drawn: its colour over the colour beneath it."""

    element: str
    fg: Color
    bg: Color
    text: bool = False

    @property
    def ratio(self) -> float:
        return contrast(self.fg, self.bg)

    def __str__(self) -> str:
        return f"{self.element}: {self.ratio:.2f}:1 ({self.fg.hex} on {self.bg.hex})"


def border(element: str, widget: Widget, edge: str = "top") -> Seen:
    """A border line over its widget's background (Textual draws it over the parent's
    background, `base`, then on the widget's own)."""
    base, background = widget.background_colors
    _kind, color = getattr(widget.styles, f"border_{edge}")
    return Seen(element, base + color, background)


def part(element: str, widget: Widget, component: str) -> Seen:
    """A component drawn as glyphs (tree guides, the key bar's edge) on its background."""
    style = widget.get_component_rich_style(component)
    assert style.color is not None and style.bgcolor is not None, (element, style)
    return Seen(element, Color.from_rich_color(style.color),
                Color.from_rich_color(style.bgcolor))


def fill(element: str, widget: Widget, component: str) -> list[Seen]:
    """A selected row: its fill against the rows around it, and its text on the fill."""
    style = widget.get_component_rich_style(component)
    assert style.color is not None and style.bgcolor is not None, (element, style)
    row = Color.from_rich_color(style.bgcolor)
    return [Seen(element, row, widget.background_colors[1]),
            Seen(f"{element} text", Color.from_rich_color(style.color), row, text=True)]


def highlighted_text(element: str, options: Any) -> list[Seen]:
    """Every piece of text on the highlighted row's lines (a lane badge, an id), on the
    row's bar, as the inbox draws its lines."""
    bar = options.get_visual_style("inbox--row", "inbox--row-highlighted").rich_style
    out = []
    for y in range(options.scrollable_content_region.height):
        pieces = list(options.render_line(y))
        if not pieces or pieces[0].style is None or pieces[0].style.bgcolor != bar.bgcolor:
            continue
        for piece in pieces:
            style = piece.style
            if piece.text.strip() and style is not None and style.color and style.bgcolor:
                out.append(Seen(f"{element} text {piece.text.strip()!r}",
                                Color.from_rich_color(style.color),
                                Color.from_rich_color(style.bgcolor), text=True))
    assert out, f"{element}: no highlighted line drawn"
    return out


def cursor_text(element: str, tree: Any) -> list[Seen]:
    """Every piece of text on the tree's cursor row (a status glyph, a count), on its bar."""
    bar = tree.get_component_rich_style("agent-tree--cursor")
    out = []
    for piece in tree.render_line(tree.cursor - round(tree.scroll_y)):
        style = piece.style
        if piece.text.strip() and style is not None and style.bgcolor == bar.bgcolor \
                and style.color:
            out.append(Seen(f"{element} text {piece.text.strip()!r}",
                            Color.from_rich_color(style.color),
                            Color.from_rich_color(style.bgcolor), text=True))
    assert out, f"{element}: no cursor row drawn"
    return out


def thumbs(element: str, widget: Widget) -> list[Seen]:
    """The scrollbar thumb on its track, as `ScrollBar.render` blends them."""
    styles = widget.styles
    base, _ = widget.background_colors
    out = []
    for state, track, thumb in (
            ("", styles.scrollbar_background, styles.scrollbar_color),
            (" (hovered)", styles.scrollbar_background_hover, styles.scrollbar_color_hover),
            (" (dragged)", styles.scrollbar_background_active, styles.scrollbar_color_active)):
        under = track if track.a >= 1 else base + track
        out.append(Seen(f"{element} scrollbar thumb{state}", under + thumb, under))
    return out


def markdown_rules(app: Any, background: Color) -> list[Seen]:
    """The rules a reply's Markdown draws (table lines, a horizontal rule, a quote's bar),
    each glyph's style resolved against the theme, over the transcript's background."""
    source = "| a | b |\n|---|---|\n| 1 | 2 |\n\n---\n\n> quoted\n"
    look = Look(dark=app.current_theme.dark)
    seen = []
    for block in parse(MarkdownIt("gfm-like"), source):
        for line in render_part(block, 40, look):
            seen.extend(_glyphs(app, line, background, f"reply {block.kind} rule"))
    return list(dict.fromkeys(seen))


def _glyphs(app: Any, line: Content, background: Color, element: str) -> list[Seen]:
    out = []
    for offset, char in enumerate(line.plain):
        if not ("\u2500" <= char <= "\u259f"):  # box drawing and block elements only
            continue
        style = Style()
        for span in line.spans:
            if span.start <= offset < span.end:
                style += span.style if isinstance(span.style, Style) else \
                    Style.parse(span.style, app.theme_variables)
        under = background + style.background if style.background else background
        over = under + style.foreground if style.foreground else under
        out.append(Seen(f"{element} {char}", over, under))
    return out


async def _measure(theme: str) -> list[Seen]:
    ctx, _ = world([])
    planner = await add_agent(ctx, "planner", "planner")
    child = await add_agent(ctx, "planner-child", "child", owner=planner)
    await add_agent(ctx, "planner-child-kid", "kid", owner=child)
    await add_agent(ctx, "scratch", "scratch")
    for n in range(3):
        planner.inbox.append("next-turn", msg(f"queued {n}", f"q{n}"))
    planner.inbox.append("next-step", msg("steer this way", "s0", "steer"))
    app = make_app(ctx, UiConfig(theme=theme))
    seen: list[Seen] = []
    async with app.run_test(size=SIZE) as pilot:
        assert app.theme == theme
        main = app.main
        main.select_agent("planner")
        await settle(pilot)
        tree, transcript, inbox, composer = main.agent_tree, main.transcript, main.inbox, \
            main.composer
        panes = {"agent tree": tree, "transcript": transcript, "inbox": inbox,
                 "composer": composer}
        assert inbox.highlighted is not None

        async def focus(widget: Widget) -> None:
            widget.focus()
            await wait_until(pilot, lambda: app.focused is widget)
            await settle(pilot)

        await focus(tree)
        seen.append(border("composer border", composer))
        seen += [part("tree guides, focused", tree, "agent-tree--fold"),
                 *fill("tree selected row, focused", tree, "agent-tree--cursor"),
                 *cursor_text("tree selected row, focused", tree)]
        await focus(composer)
        for name, pane in panes.items():
            if pane is not composer:
                seen.append(border(f"{name} border", pane))
            seen += thumbs(name, pane)
        seen += [part("tree guides", tree, "agent-tree--fold"),
                 *fill("tree selected row", tree, "agent-tree--cursor"),
                 *cursor_text("tree selected row", tree),
                 *fill("inbox highlighted item", inbox, "inbox--row-highlighted"),
                 *highlighted_text("inbox highlighted item", inbox),
                 border("composer border, focused", composer),
                 part("key bar palette edge", main.query_one("KeyBar"),
                      "key-bar--palette-edge")]
        for name, pane in panes.items():
            if pane is not composer:
                await focus(pane)
                seen.append(border(f"{name} border, focused", pane))
        seen += [*fill("inbox highlighted item, focused", inbox,
                       "inbox--row-highlighted"),
                 *highlighted_text("inbox highlighted item, focused", inbox)]

        panel = main.breakpoint_panel
        panel.is_open = True
        await settle(pilot)
        seen.append(border("breakpoint panel border", panel))
        await focus(panel.query_one("#continue"))
        seen.append(border("breakpoint panel border, focused", panel))
        panel.is_open = False
        await focus(composer)

        await pilot.press("f2")
        await wait_until(pilot, lambda: main.event_log.display)
        seen.append(border("event log top rule", main.event_log))
        await pilot.press("f2")
        await pilot.press("ctrl+f")
        search = main.query_one("SearchBar")
        await wait_until(pilot, lambda: search.display)
        seen.append(border("search bar border", search))
        await pilot.press("escape")

        app.add_class("-read-only")
        await settle(pilot)
        seen.append(border("read-only composer border", composer))
        app.remove_class("-read-only")

        for name, dialog, frame in _dialogs():
            app.push_screen(dialog)
            await wait_until(pilot, lambda d=dialog: app.screen is d)  # type: ignore[misc]
            await settle(pilot)
            seen.append(border(f"{name} dialog border", dialog.query_one(frame)))
            if isinstance(dialog, SessionsScreen):
                seen += fill("sessions list selected row, focused",
                             dialog.query_one("#sessions-list"),
                             "option-list--option-highlighted")
            dialog.dismiss(None)
            await wait_until(pilot, lambda d=dialog: app.screen is not d)  # type: ignore[misc]

        page = transcript.background_colors[1]
        for lane in ("followup", "steer", "inject", "context"):
            colour = Color.parse(app.theme_variables[f"lane-{lane}"])
            seen.append(Seen(f"{lane} lane bar", page + colour, page))
        seen += markdown_rules(app, page)
    return seen


def _dialogs() -> list[tuple[str, Any, str]]:
    return [
        ("confirm", ConfirmScreen("Dispose planner?", "details"), "ConfirmScreen > Vertical"),
        ("name", NameScreen("Name the new agent", "planner"), "NameScreen > Vertical"),
        ("help", HelpScreen(), "HelpScreen > VerticalScroll"),
        ("sessions", SessionsScreen([]), "SessionsScreen > Vertical"),
        ("full text", FullTextScreen("a reply", "text"), "FullTextScreen > Vertical"),
        ("edit", EditScreen(agent_name="planner", message=user_message("x", id="e1"),
                            lane="follow-up", on_save=lambda *_: None,
                            on_send=lambda *_: None), "EditScreen > Vertical"),
    ]


EXPECTED = {
    "agent tree border", "agent tree border, focused", "transcript border",
    "transcript border, focused", "inbox border", "inbox border, focused", "composer border",
    "composer border, focused", "read-only composer border", "tree guides",
    "tree guides, focused", "tree selected row", "tree selected row, focused",
    "inbox highlighted item", "inbox highlighted item, focused",
    "agent tree scrollbar thumb", "transcript scrollbar thumb (dragged)",
    "key bar palette edge", "breakpoint panel border", "event log top rule",
    "search bar border", "confirm dialog border", "sessions list selected row, focused",
    "followup lane bar", "reply table rule ┌", "reply hr rule ─", "reply blockquote rule ▌",
}
"""Elements the measurement must have found (a check that cannot pass by measuring
nothing)."""


@pytest.mark.parametrize("theme", THEMES)
async def test_every_non_text_element_has_the_contrast_its_theme_promises(theme: str) -> None:
    seen = await _measure(theme)
    names = {s.element for s in seen}
    assert names >= EXPECTED, sorted(EXPECTED - names)
    low = [str(s) for s in seen if s.ratio < (TEXT_BAR if s.text else bar(theme))]
    assert not low, f"{theme}: below {bar(theme)}:1 (text {TEXT_BAR}:1):\n" + "\n".join(low)
