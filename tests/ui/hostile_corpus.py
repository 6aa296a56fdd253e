"""The hostile corpus: outside text that must never reach a terminal as it was sent.

`PAYLOADS` are what a model, a tool, a crafted log or a config file can plant;
`PLANTED` are the byte sequences a terminal would act on (or that would re-order what
the person reads) if a payload got through raw. The in-process tests here and the
pseudo-terminal tests use the same two tables.
"""

from __future__ import annotations

import re

PAYLOADS: dict[str, str] = {
    "csi": "\x1b[5;31mPWN-CSI\x1b[0m\x1b[2J",
    "osc52": "\x1b]52;c;UFdOLUNMSVA=\x07",
    "osc0": "\x1b]0;PWN-TITLE\x07",
    "osc8": "\x1b]8;;http://evil.example/\x1b\\PWN-LINK\x1b]8;;\x1b\\",
    "bel": "ring\x07ring",
    "c1": "\x9b5;31mPWN-C1 \x9d0;PWN-C1-TITLE\x9c",
    "nul": "nul\x00here",
    "del": "del\x7fhere",
    "bidi": "user\u202eevil\u202c \u2066iso\u2069 \u200fmark",
    "zero-width": "ad\u200bmin\u2060\ufeff\u00ad \u200dzwj",
    "separators": "one\u2028two\u2029three",
    "rich-markup": "[bold red]PWN-MARKUP[/] [link=http://evil.example]x[/link]",
    "textual-markup": "[@click=app.quit]PWN-CLICK[/] $accent [b]",
}

HOSTILE = "".join(PAYLOADS.values())
"""Every payload in one string (a name, a title, a message)."""

PLANTED: dict[str, bytes] = {
    "csi": b"\x1b[5;31mPWN-CSI",
    "clear": b"\x1b[2J",
    "osc52": b"\x1b]52;",
    "osc0": b"\x1b]0;PWN",
    "osc8": b"\x1b]8;;http://evil",
    "c1-csi": "\x9b".encode(),
    "c1-osc": "\x9d".encode(),
    "c1-st": "\x9c".encode(),
    "nul": b"\x00",
    "rlo": "\u202e".encode(),
    "pdf": "\u202c".encode(),
    "lri": "\u2066".encode(),
    "pdi": "\u2069".encode(),
    "rlm": "\u200f".encode(),
    "line-separator": "\u2028".encode(),
    "zwsp": "\u200b".encode(),
    "bom": "\ufeff".encode(),
}
"""Sequences that must never appear in bytes written to a terminal."""

FORBIDDEN_CODEPOINTS = frozenset(
    [*range(0x00, 0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0), 0x061C, 0x200E, 0x200F,
     *range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x2028, 0x2029, 0x200B, 0x2060,
     0xFEFF, 0x00AD])
"""What no shown text may contain (TAB and LF are layout, not controls)."""

INVISIBLE_CODEPOINTS = frozenset([0x200C, 0x200D])
"""What no shown label (name, title, id, type) may contain on top of those."""


_OWN_OSC = re.compile(rb"\x1b\](?:22);[^\x07\x1b]*\x07")
"""Textual's own OSC 22 (mouse pointer shape), which it ends with BEL."""


def planted_in(data: bytes) -> list[str]:
    """The names of the planted sequences found in `data` (empty: clean). A BEL counts
    anywhere except as the terminator of the app's own pointer-shape sequence."""
    found = [name for name, sequence in PLANTED.items() if sequence in data]
    if b"\x07" in _OWN_OSC.sub(b"", data):
        found.append("bel")
    return found


def unsafe_in(text: str, *, label: bool = False) -> list[str]:
    """The code points in `text` that must not be shown, as `U+XXXX`."""
    bad = FORBIDDEN_CODEPOINTS | (INVISIBLE_CODEPOINTS | {0x0A, 0x09} if label else set())
    return sorted({f"U+{ord(ch):04X}" for ch in text if ord(ch) in bad})
