"""Errors raised by the persistence package.

They are `SessionError`s (a `ValueError`) so callers that already handle a
rejected seed also handle a log that cannot become one; the subclasses let a UI
tell "nothing stored under that id" from "stored but damaged" from "written by
a newer harness".
"""

from __future__ import annotations

from ..session import SessionError


class SessionLogError(SessionError):
    """A session log could not be read or written as asked."""


class SessionNotFoundError(SessionLogError, LookupError):
    """No stored log exists for the requested session id."""


class SessionLogCorruptError(SessionLogError):
    """A stored log is damaged somewhere a crash cannot explain (before a committed turn end)."""


class SessionFormatUnsupportedError(SessionLogError):
    """A stored log uses a format version or a required event type this build cannot interpret."""


class SessionCollisionError(SessionLogError):
    """A live session's id already names a different stored log."""
