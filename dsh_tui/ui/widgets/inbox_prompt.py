"""What one inbox row shows: its text (`row_prompt`), its id and what it is drawn from.

`row_key` names everything `row_prompt` reads, so two rows with equal keys draw the same
lines: the pane keeps each row's lines under its key and repaints a row only when its key
changed (`widgets/inbox.py`).
"""

from __future__ import annotations

from typing import Any

from textual.content import Content

from ..badges import lane_badge, receipt_look
from ..state.inbox_rows import InboxRow
from ..state.text import short_id, visible

SELECTABLE = frozenset({"item", "tombstone", "unsent", "receipt"})
"""Row kinds the cursor rests on (headers, hints and the banner are skipped)."""

PREVIEW_LINES = 3
PREVIEW_CHARS = 240
HEADERS = {"next-step": "NEXT STEP", "next-turn": "NEXT TURN", "unsent": "CLAIMED, NEVER SENT",
           "recent": "LEFT THE INBOX"}
HEADER_HINT = {"next-step": "steer · inject", "next-turn": "follow-ups",
               "unsent": "ctrl+u puts back", "recent": "receipts"}


def _preview(text: str, lines_shown: int = PREVIEW_LINES) -> Content:
    text = visible(text)
    lines = text.splitlines() or [""]
    shown = lines[:lines_shown]
    body = "\n".join("  " + line[:PREVIEW_CHARS] for line in shown)
    if len(lines) > lines_shown:
        body += f"\n  … {len(lines) - lines_shown} more lines"
    return Content(body)


def row_prompt(row: InboxRow, position: int | None = None) -> Content:
    """The text of one inbox row (badges first, then the message preview)."""
    if row.kind == "banner":
        return Content.styled("‖ " + row.text, "bold $warning")
    if row.kind == "hint":
        return Content.styled(row.text, "$text-muted")
    if row.kind == "header":
        return Content.assemble((f"{HEADERS[row.target]} · {row.count}", "bold $primary"),
                                (" · " + HEADER_HINT[row.target], "$text-muted"))
    if row.kind == "unsent" and row.unsent is not None:
        entry = row.unsent
        turn = f"turn {entry.turn} · " if entry.turn else ""
        head = Content.assemble(("↺ ", "bold $warning"), lane_badge(row.lane), "  ",
                                (row.source, "bold"), "  ", (f"#{short_id(entry.id)}",
                                                              "$text-muted"))
        why = Content.styled(f"  claimed in {turn}{entry.reason}, never sent · ctrl+u puts it "
                             "back · delete forgets it", "$text-muted")
        return head + "\n" + why + "\n" + _preview(row.text)
    if row.kind == "receipt" and row.receipt is not None:
        receipt = row.receipt
        glyph, style = receipt_look(receipt.state)
        logged_id = not receipt.message_id.startswith("seq-")  # (a log without ids)
        head = Content.assemble((f"{glyph} ", style), (visible(receipt.label()), style),
                                "  ", (f"#{short_id(receipt.message_id)}" if logged_id
                                       else "", "$text-muted"))
        return head + "\n" + _preview(row.text, 1).stylize("$text-muted")
    message = row.message
    if row.kind == "tombstone" and row.tombstone is not None:
        if row.tombstone.kind == "claimed":
            turn = f" into turn {row.tombstone.turn}" if row.tombstone.turn else ""
            head = Content.assemble((f"✓ claimed{turn}", "bold $success"),
                                    (f" · {row.lane}", "$text-muted"))
            return head + "\n" + _preview(row.text).stylize("$text-muted")
        head = Content.assemble(("✗ removed", "bold $error"), "  ", lane_badge(row.lane), "  ",
                                (f"#{short_id(message.id)}", "$text-muted"),
                                ("  ^z undo", "$accent"))
        return head + "\n" + _preview(row.text).stylize("strike $text-muted")
    number = f"{position}. " if position is not None else ""
    mark = ("● ", "bold $accent") if row.marked else ("", "")
    head = Content.assemble(mark, (number, "$text-muted"), lane_badge(row.lane), "  ",
                            (row.source, "bold"), "  ",
                            (f"#{short_id(message.id)}", "$text-muted"))
    if row.badge:
        head = head + "\n" + Content.styled(f"  ✎ {row.badge}", "bold $warning")
    return head + "\n" + _preview(row.text)


def least_lines(row: InboxRow) -> int:
    """The fewest lines `row_prompt(row)` draws (a long line only adds more by wrapping)."""
    if row.kind == "item":
        return 3 if row.badge else 2
    if row.kind in ("tombstone", "receipt"):
        return 2
    if row.kind == "unsent":
        return 3
    return 1


def row_id(row: InboxRow, number: int) -> str:
    """Row `number`'s id: `msg:<message id>` for an item (it follows the item across
    syncs), `tomb:<n>` (a tombstone or an unsent entry), `rcpt:<n>`, `header:<n>`, ..."""
    if row.kind == "item":
        return f"msg:{row.message.id}"
    if row.kind in ("tombstone", "unsent"):
        return f"tomb:{number}"
    if row.kind == "receipt":
        return f"rcpt:{number}"
    return f"{row.kind}:{number}"


def row_key(row: InboxRow, position: int | None) -> tuple[Any, ...]:
    """Everything `row_prompt(row, position)` draws from (equal keys: the same lines)."""
    key: tuple[Any, ...] = (row.kind, row.text, row.target, row.count, row.lane, row.source,
                            row.badge, row.marked, position)
    if row.kind == "item":
        return (*key, row.message.id)
    if row.kind == "tombstone" and row.tombstone is not None:
        tombstone = row.tombstone
        return (*key, tombstone.kind, tombstone.turn, tombstone.message.id)
    if row.kind == "unsent" and row.unsent is not None:
        entry = row.unsent
        return (*key, entry.id, entry.turn, entry.reason)
    if row.kind == "receipt" and row.receipt is not None:
        receipt = row.receipt
        return (*key, receipt.state, receipt.label(), receipt.message_id)
    return key
