"""One dsh runtime for every test here: started once, against one fake model server.

Starting the runtime takes seconds (a Node executable with ~83 MB of add-ons), so the
process is shared; each test works in sessions of its own and attaches its own client.
The model server runs on its own event loop in a thread, so it outlives each test's
loop. Without an installed runtime every test here skips, saying how to install it.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from remote_model import model_server
from remote_runtime import RuntimeProcess, find_dsh


@dataclass
class Running:
    """The shared runtime and the model server it talks to."""

    process: RuntimeProcess
    line: str
    requests: list


class ModelThread:
    """The fake model server on a loop of its own (started and stopped from pytest)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.server = model_server()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True,
                                       name="fake model server")

    def start(self) -> str:
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self.server.__aenter__(), self.loop).result(10)
        return self.server.base_url

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self.server.__aexit__(None, None, None),
                                         self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


@pytest.fixture(scope="session")
def runtime(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    dsh, why = find_dsh()
    if dsh is None:
        pytest.skip(why)
    model = ModelThread()
    url = model.start()
    process = RuntimeProcess(dsh, Path(tmp_path_factory.mktemp("dsh-runtime")), url)
    try:
        line = process.start()
    except RuntimeError as error:
        model.stop()
        pytest.skip(f"the dsh runtime did not start: {error}")
    try:
        yield Running(process, line, model.server.requests)
    finally:
        process.stop()
        model.stop()
