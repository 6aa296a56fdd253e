"""`LogPages`: a huge plain log read as a window of pages, moved one page at a time.

`dsh-tui view` of a gigabyte log must start in a moment and must not hold the file
in memory, yet a person may want to read the session from its start. So the view
holds a window of at most `MAX_PAGES` pages of whole lines (about a megabyte each),
beginning with the last page of the file; scrolling past the top of the window reads
the page before it (and drops the window's last page once it is full), scrolling
past its bottom reads the page after it. A page boundary is found by seeking to a
byte offset and starting at the next line, so nothing is indexed up front and the
file is never read whole. Lines are read exactly as `read_session_log` reads them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..session import SessionEvent
from .header import viewer_header
from .reader import events_of_lines, read_session_log
from .tail import header_line

PAGE_BYTES = 1024 * 1024
"""Bytes per page (about 7,000 events of a typical log)."""
MAX_PAGES = 4
"""Pages the window holds at most: what a view keeps of a huge log in memory."""

_ZSTD = b"\x28\xb5\x2f\xfd"


@dataclass(slots=True)
class Page:
    """Whole lines of the file from byte `start` (a line start) to `end` (after a newline)."""

    start: int
    end: int
    events: list[SessionEvent]


class LogPages:
    """The window: consecutive pages of one plain log file."""

    def __init__(self, path: Path, size: int, body_start: int, page_bytes: int,
                 pages: list[Page]) -> None:
        self.path = path
        self.size = size
        self.body_start = body_start
        self.page_bytes = page_bytes
        self.pages = pages
        self._events: tuple[SessionEvent, ...] | None = None

    @property
    def events(self) -> tuple[SessionEvent, ...]:
        """The loaded pages' events in file order, joined once per window move (the
        transcript reads them by index many times between two moves)."""
        if self._events is None:
            self._events = tuple(e for page in self.pages for e in page.events)
        return self._events

    @property
    def before(self) -> int:
        """Bytes of records before the window."""
        return self.pages[0].start - self.body_start

    @property
    def after(self) -> int:
        """Bytes after the window (a torn last line included)."""
        return self.size - self.pages[-1].end

    def earlier(self) -> int:
        """Read the page before the window; returns how many events it added at the front
        (0 at the start of the file). A full window drops its last page."""
        first = self.pages[0].start
        if first <= self.body_start:
            return 0
        start = max(self.body_start, first - self.page_bytes)
        with self.path.open("rb") as handle:
            if start > self.body_start:
                handle.seek(start - 1)
                text = handle.read(first - start + 1)
                cut = text.find(b"\n")
                if cut < 0 or start + cut >= first:  # one line longer than a page: all of it
                    start = self._line_start(handle, first - 1)
                    handle.seek(start)
                    text = b"\n" + handle.read(first - start)
                else:
                    start += cut
                    text = text[cut:]
            else:
                handle.seek(start)
                text = b"\n" + handle.read(first - start)
        lines = text[1:].split(b"\n")
        lines.pop()  # the byte before `first` is a newline: nothing after it
        page = Page(start, first, events_of_lines(self.path, lines, 0))
        self.pages.insert(0, page)
        if len(self.pages) > MAX_PAGES:
            self.pages.pop()
        self._events = None
        return len(page.events)

    def later(self) -> int:
        """Read the page after the window; returns how many events it dropped from the
        front when the window was full (-1 at the end of the file: nothing read)."""
        start = self.pages[-1].end
        if start >= self.size:
            return -1
        with self.path.open("rb") as handle:
            handle.seek(start)
            text = handle.read(self.page_bytes)
            while not text.endswith(b"\n"):
                more = handle.read(64 * 1024)
                if not more:
                    break
                text += more
                cut = more.find(b"\n")
                if cut >= 0:
                    text = text[:len(text) - len(more) + cut + 1]
                    break
        end = start + text.rfind(b"\n") + 1
        if end <= start:
            return -1  # only a torn last line remains
        lines = text[:end - start].split(b"\n")
        lines.pop()
        self.pages.append(Page(start, end, events_of_lines(self.path, lines, 0)))
        dropped = 0
        if len(self.pages) > MAX_PAGES:
            dropped = len(self.pages.pop(0).events)
        self._events = None
        return dropped

    @staticmethod
    def _line_start(handle: Any, pos: int) -> int:
        """Where the line that ends at byte `pos` starts: after the last newline before it."""
        step = 64 * 1024
        end = pos
        while end > 0:
            begin = max(0, end - step)
            handle.seek(begin)
            chunk = handle.read(end - begin)
            cut = chunk.rfind(b"\n")
            if cut >= 0:
                return begin + cut + 1
            end = begin
        return 0


def open_pages(path: str | os.PathLike[str], page_bytes: int = PAGE_BYTES
               ) -> tuple[dict[str, Any], list[SessionEvent], LogPages | None]:
    """(header, events, pages): a plain log bigger than a page is opened by its last page,
    with `pages` to move through the rest; a small or Zstandard log is read whole (None)."""
    file = Path(path)
    size = file.stat().st_size
    with file.open("rb") as handle:
        magic = handle.read(4)
        if size <= page_bytes or magic == _ZSTD:
            header, events = read_session_log(file)
            return header, events, None
        head, first = header_line(handle, file)
    body = len(head)
    start = max(body, size - page_bytes)
    with file.open("rb") as handle:
        if start > body:
            handle.seek(start - 1)  # the byte before tells whether a line starts at `start`
            text = handle.read()
            cut = text.find(b"\n")
            start, text = (start + cut, text[cut + 1:]) if cut >= 0 else (size, b"")
        else:
            handle.seek(start)
            text = handle.read()
    end = start + text.rfind(b"\n") + 1
    lines = text[:end - start].split(b"\n")
    lines.pop()  # a torn last line is never a committed record
    pages = LogPages(file, size, body, page_bytes,
                     [Page(start, end, events_of_lines(file, lines, 0))])
    return viewer_header(first), list(pages.events), pages
