"""Checks the config's `[keys]` table before the app starts: known action ids, real keys.

Textual accepts any string as a binding key and simply never matches a typo, so
`steer = "ctrl+"` or `steer = ","` would leave the action with no key and no word
about it. The CLI calls `keymap_problems` on the loaded config and reports the first
problem as one line.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping
from functools import cache

from textual import keys as textual_keys

MODIFIERS = frozenset({"ctrl", "shift", "alt", "meta", "super", "hyper"})


@cache
def _key_names() -> frozenset[str]:
    names: set[str] = set()
    for key in textual_keys.Keys:
        names.add(key.value.rsplit("+", 1)[-1])
    for alias, targets in textual_keys.KEY_ALIASES.items():
        names.add(alias.rsplit("+", 1)[-1])
        names.update(t.rsplit("+", 1)[-1] for t in targets)
    names.update(textual_keys.ASCII_KEY_NAMES.values())
    names.update(textual_keys.KEY_NAME_REPLACEMENTS.values())
    names.update(textual_keys.KEY_TO_UNICODE_NAME)
    names.update({"space", "enter", "tab", "backspace", "escape", "newline"})
    names.update(f"f{n}" for n in range(1, 25))
    return frozenset(names)


def _known_key(name: str) -> bool:
    if len(name) == 1:
        return name.isprintable() and not name.isspace()
    if name in _key_names():
        return True
    try:
        unicodedata.lookup(name.replace("_", " ").upper())
    except KeyError:
        return False
    return True


def key_problem(spec: str) -> str | None:
    """Why `spec` (one or more keys, comma-separated) is not a usable key string, or None."""
    parts = [part.strip() for part in spec.split(",")]
    if not any(parts):
        return "names no key"
    for part in parts:
        if not part:
            return "has an empty key between commas"
        *mods, key = part.split("+")
        if not key:
            return f'"{part}" ends in "+" with no key after it'
        for mod in mods:
            if mod not in MODIFIERS:
                return f'"{part}": "{mod}" is not a modifier (ctrl, shift, alt, meta, super)'
        if not _known_key(key):
            return f'"{part}": "{key}" is not a key name'
    return None


def keymap_problems(keymap: Mapping[str, str], known_ids: Iterable[str]) -> list[str]:
    """One line per bad `[keys]` entry: an unknown action id or an unusable key string."""
    known = set(known_ids)
    problems: list[str] = []
    for action, spec in keymap.items():
        if action not in known:
            problems.append(f'[keys] "{action}" is not an action (known: '
                            f'{", ".join(sorted(known))})')
            continue
        why = key_problem(spec)
        if why is not None:
            problems.append(f'[keys] {action} = "{spec}" {why}')
    return problems


def binding_ids() -> set[str]:
    """Every binding id the app, its widgets and its screens declare (found by walking the
    `screens` and `widgets` packages, so a new screen's keys are known without a list)."""
    import importlib
    import pkgutil

    from textual.binding import Binding

    from . import screens, widgets
    from .keys import ACTIONS, binding_sources

    classes: list[type] = list(binding_sources())
    for package in (screens, widgets):
        for info in pkgutil.iter_modules(package.__path__):
            module = importlib.import_module(f"{package.__name__}.{info.name}")
            classes += [value for value in vars(module).values()
                        if isinstance(value, type) and getattr(value, "BINDINGS", None)]
    ids = {spec.name for spec in ACTIONS}
    for cls in classes:
        for binding in getattr(cls, "BINDINGS", []):
            if isinstance(binding, Binding) and binding.id:
                ids.add(binding.id)
    return ids
