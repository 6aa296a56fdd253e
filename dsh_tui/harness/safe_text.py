"""The one rule for showing text that came from outside: visible, never interpreted.

Model output, tool results, foreign session logs, names, event types, config values and
file names are untrusted. Before any of it reaches a widget or stdout it goes through
`visible()` (body text) or `visible_label()` (one-line labels), so nothing a terminal would
act on (CSI, OSC 52/0/8, BEL, C1, NUL) and no bidi re-ordering gets through. It lives in
the harness so the UI and the CLI share one table. Markup is the widget's half of the rule:
text goes into a `Content` / `Text` or a `markup=False` widget, never a markup string.
"""

from __future__ import annotations

CONTROL_MARK = "\ufffd"
BIDI_MARK = "\u27e1"
SEPARATOR_MARK = "\u21b5"
INVISIBLE_MARK = "\u25cc"

BIDI_CONTROLS = frozenset([0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F),
                           *range(0x2066, 0x206A)])
JOINERS = frozenset([0x200C, 0x200D])
ZERO_WIDTH = frozenset([0x00AD, 0x180E, 0x200B, 0x2060, 0x2061, 0x2062, 0x2063, 0x2064,
                        0xFEFF, *range(0xE0000, 0xE0080), *JOINERS])

_BODY: dict[int, str] = {code: chr(0x2400 + code) for code in range(0x20)
                         if code not in (0x09, 0x0A)}
_BODY[0x7F] = "\u2421"
_BODY.update({code: CONTROL_MARK for code in range(0x80, 0xA0)})
_BODY.update({code: CONTROL_MARK for code in range(0xD800, 0xE000)})
_BODY.update({code: BIDI_MARK for code in BIDI_CONTROLS})
_BODY.update({0x2028: SEPARATOR_MARK, 0x2029: SEPARATOR_MARK})
_BODY.update({code: INVISIBLE_MARK for code in ZERO_WIDTH - JOINERS})

_LABEL: dict[int, str] = dict(_BODY)
_LABEL.update({code: INVISIBLE_MARK for code in ZERO_WIDTH})
_LABEL.update({0x09: " ", 0x0A: SEPARATOR_MARK})

_UNSAFE_BODY = frozenset(_BODY)
_UNSAFE_LABEL = frozenset(_LABEL)


def visible(text: str) -> str:
    """Body text made safe to show: controls, bidi controls and separators become
    visible symbols; TAB and LF are kept (the widget lays them out).

    Each class of character becomes a one-cell symbol, so columns still line up:

    * C0 controls except TAB and LF: the Control Pictures block (ESC → ␛, NUL → ␀,
      BEL → ␇, CR → ␍); DEL → ␡.
    * C1 controls (U+0080–U+009F, which some terminals obey as 8-bit CSI/OSC): `�`.
    * Lone surrogates (U+D800–U+DFFF: bytes of a non-UTF-8 path as Python decodes them,
      a broken `\\ud800` in JSON), which no terminal encoding can carry: `�`.
    * Bidi embeddings, overrides, isolates and marks (U+202A–U+202E, U+2066–U+2069,
      U+200E, U+200F, U+061C): `⟡`, so a "Trojan Source" line reads in logical order
      and the spot is marked.
    * Line and paragraph separators (U+2028, U+2029): `↵`, so one "line" stays one line.
    * Zero-width and invisible characters (ZWSP, word joiner, BOM, soft hyphen, the
      invisible tag characters, …): `◌`. A terminal and the layout disagree on their
      width, which tears the screen, and they hide text. Body text keeps ZWJ and ZWNJ
      (ZWJ builds emoji sequences, ZWNJ is part of Persian and Indic spelling);
      `visible_label()` marks them too, so two names that look the same are told apart.
    """
    return text.translate(_BODY)


def visible_label(text: str) -> str:
    """A name, title, id or one-line label made safe to show: as `visible()`, and
    also LF → ↵, TAB → space and every zero-width/invisible character → ◌."""
    return text.translate(_LABEL)


def is_visible_safe(text: str, *, label: bool = False) -> bool:
    """True if `text` has nothing `visible()` (or `visible_label()`) would change."""
    unsafe = _UNSAFE_LABEL if label else _UNSAFE_BODY
    return not any(ord(ch) in unsafe for ch in text)


def one_line(text: str, limit: int = 200) -> str:
    """A single safe line for an error or status message: every line break and
    control becomes a symbol, and it is cut to `limit` characters."""
    line = visible_label(text.replace("\r\n", "\n").strip())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def visible_input(text: str) -> str:
    """Text typed or pasted into an editor: CRLF and CR become LF first (they are
    line breaks, not controls), then the body rule applies."""
    return visible(text.replace("\r\n", "\n").replace("\r", "\n"))


_JSON_ESCAPES: dict[int, str] = {code: f"\\u{code:04x}" for code in
                                 [0x7F, *range(0x80, 0xA0), *BIDI_CONTROLS, 0x2028, 0x2029]}


def _json_escape(code: int) -> str:
    """`\\uXXXX` for a code point, as a UTF-16 surrogate pair above the BMP."""
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    high, low = 0xD800 + ((code - 0x10000) >> 10), 0xDC00 + ((code - 0x10000) & 0x3FF)
    return f"\\u{high:04x}\\u{low:04x}"


_JSON_ESCAPES.update({code: _json_escape(code) for code in ZERO_WIDTH})


def terminal_safe_json(line: str) -> str:
    """A JSON text (as `json.dumps(ensure_ascii=False)` writes it) that a terminal may show:
    DEL, C1 and bidi controls, the separators and invisible characters become `\\uXXXX`
    escapes. JSON already escapes C0; these can only occur inside strings, so the value
    is unchanged."""
    return line.translate(_JSON_ESCAPES)
