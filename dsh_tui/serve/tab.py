"""What a served tab's app tells its page, through the serve process (no Textual here).

textual-serve's protocol carries terminal bytes to the page and nothing an app may add, so
the page cannot learn from the app itself whether leaving would end work. Instead: each
page load makes a random tab id (and remembers the one it replaced, in sessionStorage);
the tab's app is started with both in its environment, and writes a small JSON state file
into the server's private runtime directory whenever its state changes; the server checks
that file and streams each change to the page (server-sent events, the same cookie as
everything else), re-encoded from validated fields only: a bool and a workspace id. The
page asks "leave page?" while `leave` holds; the next load's app offers `workspace`.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

RUNTIME_VARIABLE = "DSH_TUI_SERVE_RUNTIME"
"""The serve process's private directory of tab state files (set for every app it starts)."""
TAB_VARIABLE = "DSH_TUI_SERVE_TAB"
"""This page load's tab id (set for the one app it starts)."""
LEFT_VARIABLE = "DSH_TUI_SERVE_LEFT"
"""The tab id of the page load this one replaced in the same browser tab (a reload)."""
TAB_ID = re.compile(r"[0-9a-f]{32}")
WORKSPACE_ID = re.compile(r"ws-[0-9a-f]{1,32}")
_STATE_LIMIT = 4096


@dataclass(frozen=True)
class TabState:
    """What the page may know: whether leaving now ends work (a turn runs, or some agent
    has unsent text), and the saved workspace this tab has open (or last offered)."""

    leave: bool = False
    workspace: str | None = None

    def to_json(self) -> str:
        doc: dict[str, object] = {"leave": self.leave}
        if self.workspace is not None:
            doc["workspace"] = self.workspace
        return json.dumps(doc, separators=(",", ":"))


def _tab_id(value: str | None) -> str | None:
    return value if value is not None and TAB_ID.fullmatch(value) else None


def state_path(runtime: Path, tab: str) -> Path:
    """The state file of `tab` (a validated tab id) in `runtime`."""
    if _tab_id(tab) is None:
        raise ValueError("not a tab id")
    return runtime / f"{tab}.json"


def read_state(path: Path) -> TabState | None:
    """The state in `path`, from its valid fields only; None if there is none."""
    try:
        with path.open("rb") as handle:
            data = handle.read(_STATE_LIMIT + 1)
    except OSError:
        return None
    try:
        doc = json.loads(data) if len(data) <= _STATE_LIMIT else None
    except ValueError:
        return None
    if not isinstance(doc, dict):
        return None
    workspace = doc.get("workspace")
    return TabState(leave=doc.get("leave") is True,
                    workspace=workspace if isinstance(workspace, str)
                    and WORKSPACE_ID.fullmatch(workspace) else None)


class TabWriter:
    """The app's side: writes its tab's state file when the state changes."""

    def __init__(self, path: Path, left: Path | None) -> None:
        self.path = path
        self.left = left
        self._last: TabState | None = None

    @classmethod
    def from_environment(cls, env: Mapping[str, str] = os.environ) -> TabWriter | None:
        """The writer of the tab this app serves, or None (not served by `dsh-tui serve`,
        or by one that gave no tab)."""
        runtime = env.get(RUNTIME_VARIABLE)
        tab = _tab_id(env.get(TAB_VARIABLE))
        if not runtime or tab is None or not Path(runtime).is_dir():
            return None
        left = _tab_id(env.get(LEFT_VARIABLE))
        return cls(state_path(Path(runtime), tab),
                   state_path(Path(runtime), left) if left is not None else None)

    def left_workspace(self) -> str | None:
        """The workspace the page load this one replaced had (or was offered)."""
        state = read_state(self.left) if self.left is not None else None
        return state.workspace if state is not None else None

    def write(self, leave: bool, workspace: str | None) -> None:
        """Record the state (if it changed): written whole and renamed into place, so the
        server never reads half of it. A failure is dropped: the page then asks nothing."""
        state = TabState(leave, workspace if workspace is not None
                         and WORKSPACE_ID.fullmatch(workspace) else None)
        if state == self._last:
            return
        tmp = self.path.with_name(self.path.name + ".tmp")
        try:
            tmp.write_text(state.to_json(), encoding="utf-8")
            os.replace(tmp, self.path)
        except OSError:
            return
        self._last = state
