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
from textual.binding import Binding

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


def declared_bindings() -> dict[str, list[Binding]]:
    """Binding id → every Binding declared with it, on the app and on each class of the
    `screens` and `widgets` packages (walked, so a new screen's keys are known without
    a list)."""
    import importlib
    import pkgutil

    from . import screens, widgets
    from .app import DshApp

    classes: list[type] = [DshApp]
    for package in (screens, widgets):
        for info in pkgutil.iter_modules(package.__path__):
            module = importlib.import_module(f"{package.__name__}.{info.name}")
            classes += [value for value in vars(module).values()
                        if isinstance(value, type) and getattr(value, "BINDINGS", None)]
    found: dict[str, list[Binding]] = {}
    for cls in dict.fromkeys(classes):
        for binding in getattr(cls, "BINDINGS", []):
            if isinstance(binding, Binding) and binding.id:
                found.setdefault(binding.id, []).append(binding)
    return found


def binding_ids() -> set[str]:
    """Every action id a `[keys]` entry may name: the registry's, and the dialogs' own."""
    from .keys import SPEC_BY_NAME

    return set(SPEC_BY_NAME) | set(declared_bindings())
