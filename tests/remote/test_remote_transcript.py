"""The UI's state layer over an attached world: a remote reply streams into the transcript
token by token, and the durable message completes the same item (no second copy)."""

from __future__ import annotations

import itertools
from typing import Any

from remote_support import attached, events_of, new_agent, wait_for

from dsh_tui.harness import user_message
from dsh_tui.ui.state.bridge import Bridge


async def test_a_remote_reply_streams_into_the_transcript_then_completes(runtime) -> None:
    world = await attached(runtime)
    bridge = Bridge(world.ctx, lambda _delay, _callback: None)  # flushed by hand below
    try:
        agent = await new_agent(world, "transcript")
        bridge.start()
        bridge.flush()
        view = bridge.views[agent.id]
        agent.followup(user_message("stream [words=12] [pause=0.15]"))
        grown: list[str] = []

        def partial() -> bool:
            bridge.flush()
            texts = [i.current_text() for i in view.transcript.items if i.kind == "text"]
            if texts and texts[-1] not in grown:
                grown.append(texts[-1])
            return len(grown) >= 3 and not events_of(agent, "assistant/message")

        await wait_for(partial, "the reply to grow before its message is stored")
        assert view.transcript.streaming
        assert all(b.startswith(a) for a, b in itertools.pairwise(grown))

        def done() -> Any:
            bridge.flush()
            return events_of(agent, "turn/end")

        await wait_for(done, "the turn to end")
        message = events_of(agent, "assistant/message")[0].data["message"]["content"][0]["text"]
        items = [i for i in view.transcript.items if i.kind == "text"]
        assert [i.current_text() for i in items] == [message]
        assert not items[0].streaming and not view.transcript.streaming
    finally:
        bridge.stop()
        await world.close()
