"""What the demo model says: a pure function of (seed, request history, offered tools).

The demo exists so a newcomer sees every feature of the app in the first minute without
a key: streamed reasoning, Markdown, tool calls, a sub-agent, and visible reactions to
steering and injected context. This module decides *what* a reply contains;
`dsh_tui.llm.demo` streams it. How the history is read (prompt, steers, injected context,
tool results) is on `read_situation`. Message ids are random per run, so they never feed
the seed: the same history text gives the same reply in every run.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

SUBTASK_PREFIX = "Sub-task:"
"""How the demo phrases a delegated task, so the child it spawns answers instead of spawning."""

_SPAWN_WORDS = re.compile(
    r"\b(research|compar\w*|sub-?agents?|delegat\w*|investigat\w*|analy[sz]\w*|versus|vs)\b", re.I)
_LIST_WORDS = re.compile(r"\b(list|ls|files?|director(?:y|ies)|folders?|workspace)\b", re.I)
_READ_WORDS = re.compile(r"\b(read|open|cat|show me)\b", re.I)
_GREETING = re.compile(r"(hi|hello|hey|yo|hallo|good (morning|afternoon|evening))\b", re.I)
_FILE_NAME = re.compile(r"[\w./-]+\.[A-Za-z0-9]{1,6}\b")


@dataclass(frozen=True)
class ToolPlan:
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class ReplyPlan:
    """One reply: reasoning, visible Markdown, and at most one tool call."""

    reasoning: str
    text: str
    tool: ToolPlan | None = None
    call_id: str = ""


@dataclass
class Situation:
    prompt: str = ""
    completed_turns: int = 0
    mid_turn: bool = False
    steers: list[str] = field(default_factory=list)
    injected: list[str] = field(default_factory=list)
    results: list[tuple[str, str, bool]] = field(default_factory=list)  # (tool, text, is_error)
    called: list[str] = field(default_factory=list)


# ---- reading the history --------------------------------------------------------------------


def _blocks(message: Mapping[str, Any]) -> Sequence[Mapping[str, Any]]:
    content = message.get("content")
    return [b for b in content if isinstance(b, Mapping)] \
        if isinstance(content, Sequence) and not isinstance(content, str) else []


def _text(blocks: Sequence[Mapping[str, Any]]) -> str:
    return "".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")


def _calls(message: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [b for b in _blocks(message) if b.get("type") == "tool-call"]


def _kind(message: Mapping[str, Any]) -> str:
    source = message.get("source")
    return str(source.get("kind", "")) if isinstance(source, Mapping) else ""


def _is_injected(message: Mapping[str, Any]) -> bool:
    """Plugin context; a relayed message (a parent's task, `send_to_agent`) is a prompt."""
    source = message.get("source")
    return _kind(message) == "plugin" and not (
        isinstance(source, Mapping) and source.get("form") == "relay")


def _is_steer(message: Mapping[str, Any]) -> bool:
    """A message its sender marked as a steer (dsh-tui records the lane in the source)."""
    source = message.get("source")
    return isinstance(source, Mapping) and source.get("lane") == "steer"


def read_situation(messages: Sequence[Mapping[str, Any]]) -> Situation:
    """What the current turn holds, read from the model history.

    Turn boundaries are not in the model history, so the current turn is taken to be
    everything after the last assistant message that made no tool call (the previous
    final answer). Within it:

    * plain user messages before the first assistant message are the prompt;
    * plain user messages after an assistant message arrived mid-turn, or any message
      whose source says `lane: steer` (how dsh-tui files a steer), are steers;
    * messages whose `source.kind` is `plugin` are injected context, except a relay
      (`form: "relay"`, how a parent hands a sub-agent its task), which is a prompt like
      any user message;
    * tool results after the last assistant message are what the tools returned.
    """
    finals = [i for i, m in enumerate(messages) if m.get("role") == "assistant" and not _calls(m)]
    start = finals[-1] + 1 if finals else 0
    situation = Situation(completed_turns=len(finals))
    names: dict[str, str] = {}
    seen_assistant = False
    for message in messages[start:]:
        blocks = _blocks(message)
        if message.get("role") == "assistant":
            seen_assistant = True
            situation.steers, situation.injected, situation.results = [], [], []
            for call in _calls(message):
                names[str(call.get("id"))] = str(call.get("name"))
                situation.called.append(str(call.get("name")))
            continue
        results = [b for b in blocks if b.get("type") == "tool-result"]
        for result in results:
            situation.results.append((names.get(str(result.get("toolCallId")), "tool"),
                                      _text(_blocks(result)), result.get("isError") is True))
        text = _text(blocks).strip()
        if not text or results:
            continue
        if _is_injected(message):
            situation.injected.append(text)
        elif seen_assistant or _is_steer(message):
            situation.steers.append(text)
        else:
            situation.prompt = f"{situation.prompt}\n{text}".strip()
    situation.mid_turn = seen_assistant
    return situation


# ---- deciding -------------------------------------------------------------------------------


def _rng(seed: int, messages: Sequence[Mapping[str, Any]], system: str | None) -> random.Random:
    shape = [[m.get("role"), _kind(m), _text(_blocks(m)),
              [[c.get("name"), c.get("arguments")] for c in _calls(m)],
              [_text(_blocks(b)) for b in _blocks(m) if b.get("type") == "tool-result"]]
             for m in messages]
    digest = hashlib.sha256(json.dumps([seed, system or "", shape], ensure_ascii=False,
                                       sort_keys=True).encode()).digest()
    return random.Random(digest)


def _one_line(text: str, limit: int = 120) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[:limit - 1] + "…"


def _arguments(schema: Mapping[str, Any] | None, primary: tuple[str, Any],
               **extras: Any) -> dict[str, Any]:
    """Fit the demo's arguments onto the parameters the tool declares.

    The primary argument goes under its own name if declared, else under the
    first string parameter; extras are sent only if declared; other required
    parameters get a neutral value so the call validates.
    """
    schema = schema or {}
    properties = schema.get("properties")
    key, value = primary
    if not isinstance(properties, Mapping) or not properties:
        return {key: value, **extras}
    strings = [n for n, spec in properties.items()
               if not isinstance(spec, Mapping) or spec.get("type") in (None, "string")]
    if key not in properties and strings:
        key = strings[0]
    args = {key: value} if key in properties else {}
    args.update({k: v for k, v in extras.items() if k in properties})
    for name in schema.get("required") or ():
        if name not in args and name in properties:
            spec = properties[name]
            kind = spec.get("type") if isinstance(spec, Mapping) else None
            args[name] = {"integer": 1, "number": 1, "boolean": False, "array": [],
                          "object": {}}.get(str(kind), "")
    return args


def plan_reply(seed: int, messages: Sequence[Mapping[str, Any]],
               tools: Sequence[Mapping[str, Any]] | None, system: str | None = None) -> ReplyPlan:
    """The whole next reply for this request."""
    rng = _rng(seed, messages, system)
    situation = read_situation(messages)
    offered = {str(t.get("name")): t.get("parameters") for t in tools or ()}
    call_id = f"call_demo_{rng.getrandbits(48):012x}"
    prompt = situation.prompt
    if SUBTASK_PREFIX in prompt and not situation.mid_turn:  # however the task was wrapped
        return _subtask_report(rng, situation)
    tool = None if situation.mid_turn else _first_tool(situation, offered)
    if situation.mid_turn and situation.called[-1:] == ["list_dir"] \
            and _READ_WORDS.search(prompt) and "read_file" in offered \
            and "read_file" not in situation.called and not situation.steers:
        target = _pick_file(situation.results[-1][1] if situation.results else "")
        tool = ToolPlan("read_file", _arguments(offered["read_file"], ("path", target)))
    if tool is not None:
        return ReplyPlan(_tool_reasoning(rng, situation, tool), _tool_preamble(rng, tool), tool,
                         call_id)
    return _answer(rng, situation)


def _first_tool(situation: Situation, offered: Mapping[str, Any]) -> ToolPlan | None:
    prompt = situation.prompt
    if not prompt:
        return None
    wants_read = _READ_WORDS.search(prompt) and "read_file" in offered
    named = _FILE_NAME.search(prompt)
    if wants_read and named:  # "read notes.txt": no need to look around first
        return ToolPlan("read_file", _arguments(offered["read_file"], ("path", named.group())))
    if _LIST_WORDS.search(prompt) and "list_dir" in offered:
        return ToolPlan("list_dir", _arguments(offered["list_dir"], ("path", ".")))
    if wants_read:
        return ToolPlan("read_file", _arguments(offered["read_file"], ("path", "README.md")))
    if "spawn_agent" in offered and (_SPAWN_WORDS.search(prompt)
                                     or situation.completed_turns % 3 == 0):
        task = (f"{SUBTASK_PREFIX} research {_topic(prompt)} and report the three "
                "most useful findings as short bullet points.")
        return ToolPlan("spawn_agent", _arguments(offered["spawn_agent"], ("task", task),
                                                  name="researcher"))
    return None


def _topic(prompt: str) -> str:
    """What a delegated task is about; a bare greeting gets the app tour instead."""
    if len(prompt.split()) < 4 and _GREETING.match(prompt.strip()):
        return "how to get started with dsh-tui"
    return f"“{_one_line(prompt, 80)}”"


def _pick_file(listing: str) -> str:
    names = [n.strip().strip("`-* /") for n in re.split(r"[\n,]", listing)]
    files = [n for n in names if _FILE_NAME.fullmatch(n)]
    for preferred in ("README.md", "pyproject.toml"):
        if preferred in files:
            return preferred
    return files[0] if files else "README.md"


# ---- what to write --------------------------------------------------------------------------

_REASONING_OPENERS = [
    "Let me think about what is actually being asked here.",
    "First, what does the user want out of this?",
    "Okay, let me break this down before answering.",
]
_REASONING_MIDDLES = [
    "A short overview, then concrete steps, a small example and a comparison table should cover it.",
    "I should keep it practical: the trade-offs matter more than the definitions.",
    "A table will make the differences easier to scan than prose.",
    "An example in code will make the idea concrete.",
]
_REASONING_CLOSERS = [
    "Right, I have a plan. Writing it up now.",
    "That structure works. Let me write the answer.",
    "Good, time to answer.",
]
_TITLES = ["Here's how I'd approach it", "A quick overview", "The short version",
           "What matters here"]
_POINTS = [
    "**Start small.** Get one path working end to end before generalising.",
    "**Measure first.** Numbers beat intuition once the easy wins are gone.",
    "**Keep state in one place.** Derived views should be rebuilt, not patched.",
    "**Make failure visible.** A clear error beats a silent retry loop.",
    "**Prefer boring tools.** The well-trodden option has fewer surprises.",
    "**Write the test first** for anything with tricky edge cases.",
    "**Name things for what they do**, not for how they do it.",
    "**Budget for cancellation**: every wait should have a way out.",
    "**Stream, don't batch**, when someone is watching the output.",
]
_SNIPPETS = [
    ("python", "async def fetch_all(urls):\n    async with httpx.AsyncClient() as client:\n"
               "        return await asyncio.gather(*(client.get(u) for u in urls))"),
    ("python", "def backoff(attempt, base=0.5, cap=10.0):\n    return min(cap, base * 2 ** attempt)"),
    ("bash", "dsh-tui --theme dark\ndsh-tui view session.jsonl"),
    ("toml", "[model]\nprovider = \"demo\"\nspeed = 1.5"),
]
_TABLES = [
    ("| Option | Strength | Trade-off |\n|---|---|---|\n"
     "| Simple loop | Easy to follow | Harder to extend |\n"
     "| Event bus | Decoupled parts | Indirect control flow |\n"
     "| Actors | Isolation | More moving pieces |"),
    ("| Approach | Speed | Effort |\n|---|---|---|\n"
     "| Cache results | Fast reads | Invalidation |\n"
     "| Precompute | Fastest | Stale data risk |\n"
     "| Compute live | Always fresh | Slower |"),
    ("| Step | Owner | Status |\n|---|---|---|\n"
     "| Sketch the design | you | done |\n"
     "| Build a prototype | me | in progress |\n"
     "| Review and ship | both | next |"),
]


def _reactions(situation: Situation) -> list[str]:
    out = [f"**Steering received:** “{_one_line(s)}” — adjusting course." for s in situation.steers]
    out += [f"**Noted the injected context:** “{_one_line(s)}”." for s in situation.injected]
    return out


def _reasoning(rng: random.Random, situation: Situation, middle: str | None = None) -> str:
    parts = [rng.choice(_REASONING_OPENERS)]
    if situation.prompt:
        parts.append(f"The request is: “{_one_line(situation.prompt, 80)}”.")
    if situation.steers:
        parts.append(f"The user steered me mid-turn: “{_one_line(situation.steers[-1], 80)}”. "
                     "I should follow that.")
    if situation.injected:
        parts.append("Some context was injected into the conversation; I'll acknowledge it.")
    parts.append(middle or rng.choice(_REASONING_MIDDLES))
    parts.append(rng.choice(_REASONING_CLOSERS))
    return " ".join(parts)


def _tool_reasoning(rng: random.Random, situation: Situation, tool: ToolPlan) -> str:
    greeting = bool(_GREETING.match(situation.prompt.strip()))
    why = {
        "spawn_agent": "A greeting: a good moment to show how a sub-agent works, so I'll have "
                       "one gather a few getting-started tips." if greeting else
                       "This is broad enough to hand to a sub-agent: it can dig in while I keep "
                       "the main thread tidy, then I'll summarise what it finds.",
        "list_dir": "I need to see what is in the workspace before I can say anything useful.",
        "read_file": "Reading the file directly is better than guessing at its contents.",
    }.get(tool.name, f"The {tool.name} tool should help here.")
    return _reasoning(rng, situation, why)


def _tool_preamble(rng: random.Random, tool: ToolPlan) -> str:
    return {
        "spawn_agent": rng.choice(["Let me delegate the legwork to a sub-agent first.",
                                   "I'll hand the research to a sub-agent and report back."]),
        "list_dir": "Let me look at the workspace first.",
        "read_file": f"Let me read `{next(iter(tool.arguments.values()), 'the file')}`.",
    }.get(tool.name, f"Calling `{tool.name}`.")


def _answer(rng: random.Random, situation: Situation) -> ReplyPlan:
    lines = [f"## {rng.choice(_TITLES)}", ""]
    reactions = _reactions(situation)
    for reaction in reactions:
        lines += [reaction, ""]
    if situation.results:
        lines += _result_section(situation)
    elif situation.prompt:
        lines += [f"You asked: *{_one_line(situation.prompt, 90)}*. Here is a structured take.",
                  ""]
    elif not reactions:
        lines += ["Hello! I'm the **demo model**: no key, no network. Ask me to *research* "
                  "something to see a sub-agent, or to *list files* to see tools.", ""]
    lines += ["### Key points", ""]
    lines += [f"{i}. {point}" for i, point in enumerate(rng.sample(_POINTS, 3), 1)]
    language, code = rng.choice(_SNIPPETS)
    lines += ["", "A small example:", "", f"```{language}", code, "```", "",
              rng.choice(_TABLES), "",
              "_This reply came from the built-in demo model; set `DEEPSEEK_API_KEY` "
              "for a real one._"]
    return ReplyPlan(_reasoning(rng, situation), "\n".join(lines))


def _result_section(situation: Situation) -> list[str]:
    tool, text, failed = situation.results[-1]
    content = [line for line in text.strip().splitlines() if line.strip()
               and not line.lstrip().startswith("#")]
    quoted = [f"> {line}" for line in content[:4]] or ["> (empty)"]
    if failed:
        return [f"The `{tool}` call failed, so this answer relies on what I already know:", "",
                *quoted, ""]
    heading = {"spawn_agent": "The sub-agent came back with this:",
               "list_dir": "Here is what the workspace contains:",
               "read_file": "The file starts like this:"}.get(tool, f"`{tool}` returned:")
    return [heading, "", *quoted, ""]


def _subtask_report(rng: random.Random, situation: Situation) -> ReplyPlan:
    topic = situation.prompt.split(SUBTASK_PREFIX, 1)[1].strip()
    reasoning = (f"I was given a delegated task: {_one_line(topic, 100)} "
                 "I'll keep the report short so the parent agent can fold it in. "
                 + rng.choice(_REASONING_CLOSERS))
    points = rng.sample(_POINTS, 3)
    text = "\n".join(["### Findings", "", *(f"- {p}" for p in points), "",
                      "Confidence: moderate — this report comes from the demo model."])
    return ReplyPlan(reasoning, text)
