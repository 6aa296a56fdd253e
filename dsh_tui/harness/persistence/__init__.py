"""Session persistence: upstream-compatible JSONL logs on disk.

`JsonlPersistence` writes live sessions and loads stored ones for `resume()`
(strictly, with crash repair); `read_session_log` opens any single log file,
ours or upstream's, tolerantly for viewing; `interrupted_turn_closers` shows
how a crashed log's open turn would be closed.
"""

from .errors import (
    SessionCollisionError,
    SessionFormatUnsupportedError,
    SessionLogCorruptError,
    SessionLogError,
    SessionNotFoundError,
)
from .jsonl import DEFAULT_BATCH_WINDOW, JsonlPersistence, LoadedSession, default_root
from .lock import LockInfo, SessionLockedError, lock_holder
from .paths import encode_segment, project_key
from .reader import read_session_log
from .repair import TOOL_NOT_STARTED, TOOL_OUTCOME_UNKNOWN, interrupted_turn_closers

__all__ = [
    "DEFAULT_BATCH_WINDOW",
    "TOOL_NOT_STARTED",
    "TOOL_OUTCOME_UNKNOWN",
    "JsonlPersistence",
    "LoadedSession",
    "LockInfo",
    "SessionCollisionError",
    "SessionFormatUnsupportedError",
    "SessionLockedError",
    "SessionLogCorruptError",
    "SessionLogError",
    "SessionNotFoundError",
    "default_root",
    "encode_segment",
    "interrupted_turn_closers",
    "lock_holder",
    "project_key",
    "read_session_log",
]
