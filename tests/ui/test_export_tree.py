"""`dsh-tui export` of a whole agent tree: a root that spawned a sub-agent through its tool,
a child spawned by the person, a tool call cut off mid-arguments, a message the person
discarded, and the model's own headings (issue 13)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from dsh_tui import cli
from dsh_tui.compose import build_context
from dsh_tui.harness import AgentOptions, CreateAgentOptions, user_message
from dsh_tui.harness.persistence import JsonlPersistence
from dsh_tui.llm.scripted import ScriptedModel, hang_in_tool_call, text, tool_call
from dsh_tui.loop.builtin_tools import agent_tools
from dsh_tui.ui.state.export import demote_headings
from dsh_tui.ui.state.world import spawn_child

CHILD_ANSWER = "# Findings\n\nLRU wins.\n\n## Details\n\n```md\n# not a heading\n```\n\nTail\n===="


async def _write_tree(data: Path) -> str:
    script = [
        tool_call("c1", "spawn_agent", {"task": "research caches", "name": "researcher"}),
        text(CHILD_ANSWER),                       # the sub-agent's turn
        text("# Summary\n\nUse LRU."),            # the root again, after the tool result
        hang_in_tool_call("c2", "list_agents", '{"filter": "runn'),
    ]
    ctx = build_context(providers={"mock": ScriptedModel(script)}, tools=agent_tools(),
                        retry=False, system_prompt=None, persistence=JsonlPersistence(data))
    handle = await ctx.agents.create(CreateAgentOptions(
        session_id="tree-root", agent_options=AgentOptions(provider="mock", model="m1")))
    root = handle.agent
    try:
        root.followup(user_message("compare cache designs"))
        await asyncio.wait_for(root.when_idle(), 10)
        helper = await spawn_child(root, title="helper")  # by the person (ctrl+k)
        helper.agent.inbox.append("next-turn", user_message("wait for my go", id="m-wait"))
        root.inbox.append("next-turn", user_message("never mind this", id="m-gone"))
        assert root.inbox.remove("m-gone")
        root.followup(user_message("now list the agents"))
        for _ in range(1000):  # until the cut-off call's arguments have streamed
            await asyncio.sleep(0)
            if any(e.type == "assistant/chunk" and e.data["chunk"].get("type") ==
                   "tool-call-delta" and e.data["turn"] == 2 for e in root.session.events):
                break
        root.cancel()
        await asyncio.wait_for(root.when_idle(), 10)
    finally:
        await ctx.sessions.flush(root.session)
        await handle.dispose()
        await ctx.scope.dispose()
    return root.id


async def test_export_nests_each_sub_agent_under_the_call_that_spawned_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root_id = await _write_tree(tmp_path)
    assert cli.main(["--data-dir", str(tmp_path), "export", root_id]) == 0
    out = capsys.readouterr().out
    spawn_at = out.index("**Tool `spawn_agent`**")
    nested = out.index("> #### Sub-agent: researcher")
    assert spawn_at < nested < out.index("#### Summary")  # under the call, before the reply
    assert "> ##### Turn 1" in out
    assert "> > research caches" in out  # the task, as the child received it
    # The model's headings sit below the export's: the root's "# Summary" is level 4; the
    # sub-agent's are past level 6, so bold lines; a "#" line in its code fence is untouched.
    assert "\n#### Summary\n" in out and "\n# Summary" not in out
    assert "> **Findings**" in out and "> **Details**" in out and "> **Tail**" in out
    assert "> # not a heading" in out
    # The person's own child follows the transcript, in a section of its own.
    people = out.index("## Sub-agents started by the person")
    assert out.index("> #### Sub-agent: helper") > people
    # Disposing the tree dropped what the helper still had queued: listed in its section.
    assert "> ##### Discarded from the inbox by the person\n>\n> - **follow-up** wait for my go" \
        in out
    # The call cut off mid-arguments: its text, said to be incomplete, not a JSON block.
    assert "Arguments as streamed before the call was cut off" in out
    assert '```text\n{"filter": "runn\n```' in out and '```json\n{"filter": "runn' not in out
    # What the person threw away is listed as such.
    assert "## Discarded from the inbox by the person\n\n- **follow-up** never mind this" in out


def test_headings_are_demoted_outside_code_only() -> None:
    assert demote_headings("# A\ntext\n## B #\n```\n# code\n```\n~~~\n## also code\n~~~", 4) \
        == "#### A\ntext\n##### B\n```\n# code\n```\n~~~\n## also code\n~~~"
    assert demote_headings("Title\n===\n\n- item\n---", 5) == "##### Title\n\n- item\n---"
    assert demote_headings("### Deep", 5) == "**Deep**"
