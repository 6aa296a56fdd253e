"""Themes: the TOML files in `themes/` turned into Textual `Theme` objects.

They are data, not code, so a person can copy one, change a colour and drop it in
next to the others. In an installed wheel the files live in `dsh_tui/themes/`
(pyproject force-includes the repo's `themes/` there); in a checkout they are in
the repository's `themes/` directory. Both are searched.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from textual.theme import Theme

THEME_KEYS = frozenset({
    "name", "primary", "secondary", "warning", "error", "success", "accent", "foreground",
    "background", "surface", "panel", "boost", "dark", "luminosity_spread", "text_alpha",
    "variables",
})

VARIABLE_DEFAULTS: dict[str, str] = {
    "line-muted": "#767676",
    "lane-followup": "#7C8CF8",
    "lane-steer": "#D89B3A",
    "lane-inject": "#B77FDB",
    "lane-context": "#8FA1B3",
}
"""Fallbacks for the variables our CSS uses, so Textual's built-in themes work too.
`line-muted` (unfocused borders, tree guides, rules) is a grey 3:1 or more against
Textual's dark and light backgrounds alike."""


class ThemeError(ValueError):
    pass


def theme_dirs() -> list[Path]:
    here = Path(__file__).resolve().parent
    return [path for path in (here.parent / "themes", here.parents[1] / "themes")
            if path.is_dir()]


def load_theme(path: Path) -> Theme:
    """One theme file; a bad file raises ThemeError naming it."""
    try:
        data: dict[str, Any] = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise ThemeError(f"{path}: {error}") from None
    unknown = set(data) - THEME_KEYS
    if unknown:
        raise ThemeError(f"{path}: unknown theme keys {', '.join(sorted(unknown))}")
    if "primary" not in data:
        raise ThemeError(f"{path}: a theme needs a primary colour")
    data.setdefault("name", path.stem)
    data["variables"] = {str(k): str(v) for k, v in dict(data.get("variables", {})).items()}
    return Theme(**data)


def load_themes() -> list[Theme]:
    """Every theme shipped in `themes/`, the first directory found winning a name clash."""
    found: dict[str, Theme] = {}
    for directory in theme_dirs():
        for path in sorted(directory.glob("*.toml")):
            theme = load_theme(path)
            found.setdefault(theme.name, theme)
    return list(found.values())
