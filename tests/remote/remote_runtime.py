"""The published dsh runtime, run offline on 127.0.0.1 for the tests, and its stored logs.

`RuntimeProcess.start(model_url, home)` runs `dsh --profile web` with a private HOME,
DSH_HOME and TMPDIR, telemetry off, and a patch that points its pi-ai `deepseek` provider
at the fake model server; it waits (bounded) for the one line the runtime prints. The
native add-ons it unpacks on first run go to a shared cache, so later runs skip that.
`stored_log(id)` reads a session's own log file (zstd JSONL) as the runtime wrote it.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import zstandard

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))

import install_runtime

START_TIMEOUT = 120.0
"""Seconds to wait for the launch line (the first run unpacks ~83 MB of add-ons)."""
ROUTE = ("deepseek", "deepseek-flash")
"""The runtime route that the patch points at the fake model server."""


def find_dsh() -> tuple[Path | None, str]:
    """The installed `dsh`, or None and why it is not there."""
    named = os.environ.get("DSH_TUI_RUNTIME")
    dsh = Path(named) if named else install_runtime.dsh_path()
    if dsh.exists():
        return dsh, ""
    return None, (f"the dsh runtime is not installed at {dsh}: run `python3 "
                  "scripts/install_runtime.py` (it installs deepseek-harness-runtime-bin "
                  f"{install_runtime.VERSION} from the package registry; .ci/run does)")


def slug(cwd: Path) -> str:
    """The runtime's folder name for a working directory (`/a/b` → `--a-b--`)."""
    return "-" + str(cwd).replace("/", "-") + "--"


class RuntimeProcess:
    """One `dsh --profile web` process and the folders it owns."""

    def __init__(self, dsh: Path, root: Path, model_url: str) -> None:
        self.dsh = dsh
        self.root = root
        self.model_url = model_url
        self.home = root / "home"
        self.dsh_home = self.home / ".dsh"
        self.work = root / "work"
        self.line = ""
        self.process: subprocess.Popen[bytes] | None = None
        self.stderr_path = root / "dsh.stderr"

    def env(self) -> dict[str, str]:
        """A private, offline environment (no token in it: the runtime makes its own)."""
        cache = install_runtime.runtime_dir() / "native-cache"
        cache.mkdir(parents=True, exist_ok=True)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(self.home),
               "DSH_HOME": str(self.dsh_home), "TMPDIR": str(self.root / "tmp"),
               "XDG_CONFIG_HOME": str(self.home / ".config"),
               "XDG_DATA_HOME": str(self.home / ".local/share"),
               "XDG_CACHE_HOME": str(self.home / ".cache"),
               "XDG_STATE_HOME": str(self.home / ".local/state"),
               "DSH_TELEMETRY_MODE": "DISABLED", "DSH_TELEMETRY_DISABLED": "1",
               "NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1",
               "PKG_NATIVE_CACHE_PATH": str(cache), "DEEPSEEK_API_KEY": "sk-fake-test"}
        return env

    def start(self) -> str:
        """Start the runtime; returns the line it printed (`dsh web: …?token=…`)."""
        for folder in (self.home, self.work, self.root / "tmp"):
            folder.mkdir(parents=True, exist_ok=True)
        patch = self.root / "patch.yaml"
        patch.write_text(json.dumps([{"id": "llm-pi-ai", "config": {"providers": {"deepseek": {
            "apiKeyEnv": "DEEPSEEK_API_KEY", "baseURL": self.model_url}}}}]))
        self.process = subprocess.Popen(
            [str(self.dsh), "--profile", "web", "--patch", str(patch), "--no-open",
             "--host", "127.0.0.1", "--port", "0"],
            cwd=self.work, env=self.env(), stdout=subprocess.PIPE,
            stderr=self.stderr_path.open("wb"), start_new_session=True)
        assert self.process.stdout is not None
        os.set_blocking(self.process.stdout.fileno(), False)
        deadline = time.monotonic() + START_TIMEOUT
        buffer = b""
        while time.monotonic() < deadline:
            chunk = self.process.stdout.read() or b""
            buffer += chunk
            if b"\n" in buffer:
                self.line = buffer.split(b"\n", 1)[0].decode().strip()
                return self.line
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        self.stop()
        tail = self.stderr_path.read_text(errors="replace")[-400:]
        raise RuntimeError(f"the dsh runtime printed no launch line: {tail}")

    def stop(self) -> None:
        """Stop the runtime and every process it started (its own process group)."""
        process, self.process = self.process, None
        if process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(5)

    def log_path(self, session_id: str) -> Path:
        """Where the runtime stores a session's log (a sub-agent's too: same folder)."""
        return self.dsh_home / "sessions" / slug(self.work) / session_id / \
            "session.v4.jsonl.zstd"

    def stored_log(self, session_id: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """(header, events) as the runtime wrote them; empty while the file is absent."""
        path = self.log_path(session_id)
        if not path.exists():
            return {}, []
        raw = path.read_bytes()
        reader = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(raw),
                                                            read_across_frames=True)
        text = reader.read().decode("utf-8", errors="replace")
        records = []
        for line in text.splitlines():
            with contextlib.suppress(ValueError):
                records.append(json.loads(line))  # a batch being written may be torn
        if not records:
            return {}, []
        return records[0], records[1:]
