"""The whole path: an agent's turn is persisted, `ctx.agents.resume()` picks it up again."""

from __future__ import annotations

from pathlib import Path

from dsh_tui.compose import build_context
from dsh_tui.harness import AgentOptions, CreateAgentOptions, ResumeAgentOptions, user_message
from dsh_tui.harness.persistence import JsonlPersistence, read_session_log
from dsh_tui.llm.scripted import ScriptedModel, text

ROUTE = AgentOptions(provider="mock", model="mock")


async def test_an_agent_resumes_from_its_log_in_a_new_world(tmp_path: Path) -> None:
    model = ScriptedModel([text("first answer"), text("second answer")])
    ctx = build_context(providers={"mock": model}, persistence=JsonlPersistence(tmp_path),
                        tools=[], retry=False)
    handle = await ctx.agents.create(CreateAgentOptions(session_id="agent-1",
                                                        agent_options=ROUTE,
                                                        meta={"cwd": "/work/p"}))
    handle.agent.followup(user_message("hi"))
    await handle.agent.when_idle()
    await handle.dispose()

    persistence = JsonlPersistence(tmp_path)
    assert [h["id"] for h in persistence.list_sessions()] == ["agent-1"]
    again = build_context(providers={"mock": model}, persistence=persistence, tools=[],
                          retry=False)
    resumed = await again.agents.resume(ResumeAgentOptions(resume_session_id="agent-1",
                                                           agent_options=ROUTE))
    history = resumed.agent.session.derive_messages()
    assert [m["role"] for m in history] == ["user", "assistant"]
    assert history[1]["content"][-1]["text"] == "first answer"
    resumed.agent.followup(user_message("again"))
    await resumed.agent.when_idle()
    await resumed.dispose()

    _, events = read_session_log(persistence.path_for("agent-1"))
    assert [e.seq for e in events] == list(range(len(events)))  # one file, no duplicates
    assert [e.type for e in events].count("turn/end") == 2
    assert [e.type for e in events].count("session/end-seed") == 1
