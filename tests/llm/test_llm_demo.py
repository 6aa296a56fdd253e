"""DemoModel: protocol, determinism, tool use, sub-agents, reactions to steering and context."""

from __future__ import annotations

import asyncio
import json
import random
import re
from typing import Any

import pytest
from llm_support import assemble, assistant, collect, kinds, tool_result, user

from dsh_tui.harness.signal import CancelSignal
from dsh_tui.llm.demo import DemoModel, word_pieces
from dsh_tui.llm.demo_script import SUBTASK_PREFIX

TOOLS = [
    {"name": "spawn_agent", "description": "Start a sub-agent",
     "parameters": {"type": "object", "properties": {"task": {"type": "string"},
                                                     "name": {"type": "string"}},
                    "required": ["task"]}},
    {"name": "list_dir", "description": "List a directory",
     "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}},
    {"name": "read_file", "description": "Read a file",
     "parameters": {"type": "object", "properties": {"path": {"type": "string"}},
                    "required": ["path"]}},
]


def req(*messages: dict[str, Any], tools: list[dict[str, Any]] | None = None,
        **fields: Any) -> dict[str, Any]:
    return {"provider": "demo", "model": "demo", "messages": list(messages), "tools": tools,
            **fields}


async def reply(*messages: dict[str, Any], seed: int = 0,
                tools: list[dict[str, Any]] | None = TOOLS) -> list[dict[str, Any]]:
    return await collect(DemoModel(speed=0, seed=seed).stream(req(*messages, tools=tools)))


def blocks_of(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    """{"reasoning": text, "text": text, "tool-call": block or None} of one reply."""
    out: dict[str, Any] = {"reasoning": "", "text": "", "tool-call": None}
    for block in assemble(chunks).blocks():
        out[block["type"]] = block if block["type"] == "tool-call" else block["text"]
    return out


def as_assistant(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    return assistant(*assemble(chunks).blocks())


async def test_stream_follows_the_chunk_protocol_with_word_sized_deltas() -> None:
    chunks = await reply(user("explain caching"), tools=None)
    types = kinds(chunks)
    assert types[-2:] == ["usage", "finish"] and types.count("finish") == 1
    assert chunks[-1]["reason"] == {"kind": "stop"}
    ends = [c for c in chunks if c["type"] == "block-end"]
    assert [e["index"] for e in ends] == [0, 1]
    assert [e["block"]["type"] for e in ends] == ["reasoning", "text"]
    assert assemble(chunks).blocks() == [e["block"] for e in ends]
    deltas = [c["text"] for c in chunks if c["type"] in ("text-delta", "reasoning-delta")]
    assert all(1 <= len(d.split()) <= 4 for d in deltas if d.strip())
    assert len(deltas) > 40
    usage = chunks[-2]["usage"]
    assert usage["outputTokens"] > 0 and usage["inputTokens"] > 0


async def test_plain_answer_is_markdown_with_heading_list_code_and_table() -> None:
    text = blocks_of(await reply(user("explain caching"), tools=None))["text"]
    assert re.search(r"^## ", text, re.M)
    assert re.search(r"^1\. ", text, re.M)
    assert re.search(r"^```\w+\n.+\n```$", text, re.M | re.S)
    assert re.search(r"^\|.+\|\n\|---", text, re.M)
    assert "explain caching" in text


async def test_same_seed_and_history_give_the_same_reply_whatever_the_ids() -> None:
    first = await reply(user("compare tabs and spaces", message_id="x1"), seed=3)
    again = await reply(user("compare tabs and spaces", message_id="y2"), seed=3)
    other = await reply(user("compare tabs and spaces"), seed=4)
    assert first == again
    assert blocks_of(first) != blocks_of(other)


async def test_first_turn_spawns_a_researcher_and_then_uses_its_report() -> None:
    prompt = user("hello")
    first = await reply(prompt)
    call = blocks_of(first)["tool-call"]
    assert first[-1]["reason"] == {"kind": "tool-calls"}
    assert call["name"] == "spawn_agent"
    args = json.loads(call["arguments"])
    assert args["name"] == "researcher"
    assert args["task"].startswith(SUBTASK_PREFIX)
    assert "get started" in args["task"]  # a greeting gets the tour, not "research hello"
    report = "### Findings\n\n- Use ctrl+s to steer\n- Inject context with ctrl+t"
    second = await reply(prompt, as_assistant(first), tool_result(call["id"], report))
    final = blocks_of(second)
    assert final["tool-call"] is None and second[-1]["reason"] == {"kind": "stop"}
    assert "The sub-agent came back with this:" in final["text"]
    assert "> - Use ctrl+s to steer" in final["text"]
    assert "### Findings" not in final["text"]


async def test_the_spawned_child_reports_instead_of_spawning_again() -> None:
    first = await reply(user("research vector databases"))
    task = json.loads(blocks_of(first)["tool-call"]["arguments"])["task"]
    relay = user(task, kind="plugin")
    relay["source"]["form"] = "relay"  # how spawn_agent hands the child its task
    child = blocks_of(await reply(relay))
    assert child["tool-call"] is None
    assert child["text"].startswith("### Findings")
    assert "vector databases" in child["reasoning"]


@pytest.mark.parametrize(("prompt", "spawns"), [
    ("what is a monad", False), ("please compare rust and go", True),
    ("delegate this to a sub-agent", True), ("investigate the slow build", True)])
async def test_later_turns_spawn_on_research_words(prompt: str, spawns: bool) -> None:
    earlier = [user("hi"), assistant({"type": "text", "text": "Hello!"})]
    call = blocks_of(await reply(*earlier, user(prompt)))["tool-call"]
    assert (call is not None and call["name"] == "spawn_agent") is spawns


async def test_every_third_turn_spawns_even_without_research_words() -> None:
    history: list[dict[str, Any]] = []
    for number in range(3):
        history += [user(f"question {number}"), assistant({"type": "text", "text": "answer"})]
    call = blocks_of(await reply(*history, user("what is a monad")))["tool-call"]
    assert call is not None and call["name"] == "spawn_agent"


async def test_list_then_read_then_answer() -> None:
    prompt = user("list the files and read the readme")
    first = await reply(prompt)
    listing = blocks_of(first)["tool-call"]
    assert (listing["name"], json.loads(listing["arguments"])) == ("list_dir", {"path": "."})
    history = [prompt, as_assistant(first), tool_result(listing["id"], "src/\nREADME.md\nsetup.py")]
    second = await reply(*history)
    read = blocks_of(second)["tool-call"]
    assert (read["name"], json.loads(read["arguments"])) == ("read_file", {"path": "README.md"})
    history += [as_assistant(second), tool_result(read["id"], "# Project\nIt does things.")]
    final = blocks_of(await reply(*history))
    assert final["tool-call"] is None
    assert "> It does things." in final["text"]


async def test_tool_arguments_fit_the_declared_parameter_names() -> None:
    tools = [{"name": "list_dir", "description": "ls",
              "parameters": {"type": "object", "properties": {"directory": {"type": "string"},
                                                              "depth": {"type": "integer"}},
                             "required": ["directory", "depth"]}}]
    call = blocks_of(await reply(user("list files"), tools=tools))["tool-call"]
    assert json.loads(call["arguments"]) == {"directory": ".", "depth": 1}


async def test_failed_tool_result_is_acknowledged() -> None:
    prompt = user("read notes.txt")
    first = await reply(prompt)
    call = blocks_of(first)["tool-call"]
    assert json.loads(call["arguments"]) == {"path": "notes.txt"}
    final = blocks_of(await reply(prompt, as_assistant(first),
                                  tool_result(call["id"], "Error: no such file", is_error=True)))
    assert "The `read_file` call failed" in final["text"]


async def test_a_steer_mid_turn_is_acknowledged_and_ends_the_tool_chain() -> None:
    prompt = user("list files and read the readme")
    first = await reply(prompt)
    listing = blocks_of(first)["tool-call"]
    steer = user("actually, just summarise what is there", message_id="s1")
    final = blocks_of(await reply(prompt, as_assistant(first),
                                  tool_result(listing["id"], "README.md"), steer))
    assert final["tool-call"] is None
    assert "**Steering received:** “actually, just summarise what is there”" in final["text"]
    assert "steered me mid-turn" in final["reasoning"]


async def test_a_steer_after_a_text_answer_is_told_apart_by_its_lane() -> None:
    """After a text-only answer the history alone cannot tell a steer from a new prompt;
    the lane dsh-tui records in the source can."""
    earlier = [user("compare two caches"), assistant({"type": "text", "text": "Two designs…"})]
    steer = user("focus on latency", message_id="s2")
    steer["source"]["lane"] = "steer"
    text = blocks_of(await reply(*earlier, steer))["text"]
    assert "**Steering received:** “focus on latency”" in text
    followup = user("focus on latency", message_id="f2")
    assert "Steering received" not in blocks_of(await reply(*earlier, followup))["text"]


async def test_injected_context_is_noted_and_not_taken_as_the_prompt() -> None:
    earlier = [user("hi"), assistant({"type": "text", "text": "Hello!"})]
    notes = user("The deadline moved to Friday.", kind="plugin", message_id="n1")
    text = blocks_of(await reply(*earlier, notes, user("what is a monad")))["text"]
    assert "**Noted the injected context:** “The deadline moved to Friday.”" in text
    assert "what is a monad" in text
    only_context = blocks_of(await reply(*earlier, notes))["text"]
    assert "Noted the injected context" in only_context


async def test_abort_mid_stream_ends_with_an_aborted_finish() -> None:
    signal = CancelSignal()
    model = DemoModel(speed=1.0)  # real pacing, so the abort lands mid-stream
    chunks = []
    async for chunk in model.stream(req(user("explain caching"), signal=signal)):
        chunks.append(chunk)
        if sum(c["type"] == "text-delta" for c in chunks) == 1:
            signal.abort({"kind": "user"})
    assert chunks[-1] == {"type": "finish", "reason": {"kind": "aborted", "failure": {
        "message": "demo model stopped: request aborted", "code": "ABORTED"}}}
    assert kinds(chunks).count("finish") == 1 and "block-end" not in kinds(chunks)


async def test_pause_waits_on_the_signal_not_a_blind_sleep() -> None:
    signal = CancelSignal()
    model = DemoModel(speed=0.001)  # 0.35 s first-token delay becomes 350 s
    task = asyncio.ensure_future(collect(model.stream(req(user("x"), signal=signal))))
    await asyncio.sleep(0.05)
    signal.abort({"kind": "user"})
    chunks = await asyncio.wait_for(task, 5)
    assert kinds(chunks) == ["finish"] and chunks[0]["reason"]["kind"] == "aborted"


def test_speed_scales_the_pace() -> None:
    assert DemoModel(speed=2.0)._delay(0.05) == pytest.approx(0.025)
    assert DemoModel(speed=0)._delay(0.05) == 0.0
    assert DemoModel(speed=1e9)._delay(0.05) == 0.0
    with pytest.raises(ValueError):
        DemoModel(speed=-1)


def test_word_pieces_rejoin_exactly() -> None:
    text = "## Title\n\n| a | b |\n|---|---|\n```python\nx = 1\n```\n  trailing  "
    pieces = word_pieces(text, random.Random(1))
    assert "".join(pieces) == text
    assert all(1 <= len(p.split()) <= 4 for p in pieces if p.strip())


def test_provider_extras() -> None:
    model = DemoModel()
    assert model.name == "demo"
    assert model.context_window("demo") == 128_000
    assert model.prepare({"provider": "demo", "model": ""}) == (
        {"provider": "demo", "model": "demo"}, {})


async def test_through_the_real_loop_a_child_agent_appears_and_reports() -> None:
    from dsh_tui.compose import build_context
    from dsh_tui.harness import AgentOptions, CreateAgentOptions, user_message

    ctx = build_context(providers={"demo": DemoModel(speed=0)}, retry=False)
    handle = await ctx.agents.create(CreateAgentOptions(
        session_id="root", agent_options=AgentOptions(provider="demo", model="demo")))
    root = handle.agent
    root.followup(user_message("hello"))
    await asyncio.sleep(0)
    await asyncio.wait_for(root.when_idle(), 10)
    children = [a for a in ctx.agents.list() if a.id != "root"]
    assert len(children) == 1 and ctx.agents.is_owned_by(children[0].id, root)
    final = root.session.derive_messages()[-1]
    assert final["role"] == "assistant"
    assert "The sub-agent came back with this:" in final["content"][-1]["text"]
    await handle.dispose()


@pytest.mark.parametrize(("prompt", "first_call"), [
    ("read the file docs/guide.md", ("read_file", {"path": "docs/guide.md"})),
    ("show me the files here", ("list_dir", {"path": "."})),
    ("open the readme", ("read_file", {"path": "README.md"})),
])
async def test_workspace_prompts_pick_the_right_first_tool(
        prompt: str, first_call: tuple[str, dict[str, str]]) -> None:
    earlier = [user("hi"), assistant({"type": "text", "text": "Hello!"})]
    call = blocks_of(await reply(*earlier, user(prompt)))["tool-call"]
    assert (call["name"], json.loads(call["arguments"])) == first_call
