"""UI settings: the TOML file in the platformdirs config dir, and its in-memory form.

The file holds only what a person chooses (theme, key overrides, the default route
for new agents, the demo pace, whether a needing agent rings). The API key never goes in it: it comes from the
environment only. A file that cannot be read is reported with its path and line,
because "the app won't start" is the worst way to learn about a typo.

Textual-free, so the CLI can read the file before it imports the app.
"""

from __future__ import annotations

import math
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .routes import PROVIDER_KINDS, Route, parse_routes

APP_NAME = "dsh-tui"
DEFAULT_THEME = "dark"


class ConfigError(ValueError):
    """A config file that cannot be used; the message names the file (and line)."""


def default_config_path() -> Path:
    """`<platformdirs user config dir>/config.toml` (`DSH_TUI_CONFIG` overrides it)."""
    override = os.environ.get("DSH_TUI_CONFIG")
    if override:
        return Path(override)
    import platformdirs

    return platformdirs.user_config_path(APP_NAME) / "config.toml"


@dataclass(slots=True)
class UiConfig:
    """What `DshApp(ctx, config)` may be told. `None` for the app means these defaults."""

    theme: str = DEFAULT_THEME
    keys: dict[str, str] = field(default_factory=dict)
    provider: str | None = None
    model: str | None = None
    base_url: str | None = None
    demo_speed: float = 1.0
    hold_limit: float = 60.0
    """Seconds an agent waits for an open edit of an item it would claim before it goes
    ahead (the edit hold's limit, docs/contract.md §3.8)."""
    route: str | None = None
    """The default route for new agents (`route = "NAME"`; `--route NAME` overrides it)."""
    routes: dict[str, Route] = field(default_factory=dict)
    """Named routes (`[routes.NAME]`); the CLI adds the built-in ones it can offer."""
    notify: str = "off"
    """When an agent starts needing the person: `off`, `bell` (the terminal's bell) or
    `desktop` (a desktop notification, OSC 9, where the terminal shows one)."""
    path: Path | None = None
    """Where choices made in the app (the theme) are saved; None saves nothing."""

    def with_route(self, provider: str | None, model: str | None) -> UiConfig:
        """A copy on another provider/model (the CLI's --provider/--model win over the file)."""
        return replace(self, provider=provider, model=model)


_FIELDS: dict[str, tuple[type, ...]] = {
    "theme": (str,),
    "keys": (dict,),
    "provider": (str,),
    "model": (str,),
    "base_url": (str,),
    "demo_speed": (int, float),
    "hold_limit": (int, float),
    "route": (str,),
    "routes": (dict,),
    "notify": (str,),
}

NOTIFY = ("off", "bell", "desktop")
"""The values of `notify`."""

_LINE = re.compile(r"\(at line (\d+), column (\d+)\)")


def _line_of(text: str, key: str, section: str | None = None) -> int | None:
    """The line that sets `key` (in `[routes.SECTION]` when given; the header's own line
    when the key is the section's name)."""
    lines = text.splitlines()
    start = 0
    if section is not None:
        header = re.compile(rf"^\s*\[\s*routes\s*\.\s*[\"']?{re.escape(section)}[\"']?\s*\]")
        start = next((n for n, line in enumerate(lines) if header.match(line)), -1)
        if start < 0:
            return None
        if key == section:
            return start + 1
    pattern = re.compile(rf"^\s*\[?\s*[\"']?{re.escape(key)}\b")
    for number, line in enumerate(lines[start:], start + 1):
        if section is not None and number > start + 1 and line.lstrip().startswith("["):
            break
        if pattern.match(line):
            return number
    return None


def base_url_problem(url: str) -> str | None:
    """Why `url` cannot be a model server's base URL (http or https with a host), or None."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url.strip())
        parts.port  # noqa: B018  (raises ValueError for a port that is not a number)
    except ValueError as error:
        return f'"{url}" is not a valid URL ({error})'
    if parts.scheme not in ("http", "https"):
        return f'"{url}" must start with http:// or https://'
    if not parts.hostname:
        return f'"{url}" names no host'
    if any(ch.isspace() for ch in url.strip()):
        return f'"{url}" contains spaces'
    return None


def parse_config(text: str, path: Path | None = None) -> UiConfig:
    """Parse and check a config file's text; raise ConfigError naming the file and line."""
    where = str(path) if path is not None else "config"
    try:
        data = tomllib.loads(text)
    except RecursionError:
        raise ConfigError(f"{where}: tables or arrays are nested too deeply") from None
    except tomllib.TOMLDecodeError as error:
        message = str(error)
        match = _LINE.search(message)
        reason = _LINE.sub("", message).strip()
        if match:
            raise ConfigError(f"{where}, line {match.group(1)}: {reason}") from None
        raise ConfigError(f"{where}: {reason}") from None

    def fail(key: str, why: str, section: str | None = None) -> ConfigError:
        line = _line_of(text, key, section)
        at = f", line {line}" if line else ""
        return ConfigError(f"{where}{at}: {why}")

    for key, value in data.items():
        if key not in _FIELDS:
            known = ", ".join(sorted(_FIELDS))
            raise fail(key, f'unknown setting "{key}" (known: {known})')
        if not isinstance(value, _FIELDS[key]) or isinstance(value, bool):
            raise fail(key, f'"{key}" must be a {_FIELDS[key][0].__name__}')
    keys = data.get("keys", {})
    for action, keystring in keys.items():
        if not isinstance(keystring, str) or not keystring.strip():
            raise fail(action, f'[keys] {action} must be a key string such as "ctrl+s"')
    try:
        speed = float(data.get("demo_speed", 1.0))
    except OverflowError:
        speed = math.inf
    if not math.isfinite(speed) or speed < 0:
        raise fail("demo_speed", f"demo_speed must be a finite number, 0 (no pauses) or "
                                 f"more, not {data.get('demo_speed')}")
    try:
        hold_limit = float(data.get("hold_limit", 60.0))
    except OverflowError:
        hold_limit = math.inf
    if not math.isfinite(hold_limit) or hold_limit < 0:
        raise fail("hold_limit", "hold_limit must be a finite number of seconds, 0 (an "
                                 "agent never waits for an edit) or more, not "
                                 f"{data.get('hold_limit')}")
    if "base_url" in data:
        why = base_url_problem(data["base_url"])
        if why is not None:
            raise fail("base_url", f"base_url {why}")
    notify = data.get("notify", "off")
    if notify not in NOTIFY:
        raise fail("notify", f'notify must be one of {", ".join(NOTIFY)}, not "{notify}"')
    routes = parse_routes(data.get("routes", {}), fail)
    route = data.get("route")
    if route is not None and route not in routes and route not in PROVIDER_KINDS:
        known = ", ".join([*routes, *PROVIDER_KINDS])
        raise fail("route", f'route "{route}" names no [routes.{route}] table (known: {known})')
    return UiConfig(theme=data.get("theme", DEFAULT_THEME), keys=dict(keys),
                    provider=data.get("provider"), model=data.get("model"),
                    base_url=data.get("base_url"), demo_speed=speed, hold_limit=hold_limit,
                    route=route, routes=routes, notify=notify, path=path)


def load_config(path: Path | None = None) -> UiConfig:
    """The settings in `path` (default: the platformdirs file); defaults if it is absent."""
    path = path or default_config_path()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return UiConfig(path=path)
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"{path}: cannot read the config file ({error})") from None
    return parse_config(text, path)


def save_setting(path: Path, key: str, value: Any) -> None:
    """Set one top-level setting in the file at `path`, keeping everything else in it."""
    import tomli_w

    data: dict[str, Any] = {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        pass
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise ConfigError(f"{path}: not saving {key}, the file cannot be read ({error})") from None
    if isinstance(value, Mapping):
        value = dict(value)
    data[key] = value
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_suffix(".toml.tmp")
    temp.write_text(tomli_w.dumps(data), encoding="utf-8")
    temp.replace(path)
