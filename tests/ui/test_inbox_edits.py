"""Power edits and the undo/redo history over real inboxes and sessions (no screen).

After every sequence, the inbox a fresh replay of each session's log builds is the inbox
the edits left: what the person sees is what a restart (or `dsh-tui view`) would see.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from dsh_tui.compose import build_context
from dsh_tui.harness import AgentOptions, CreateAgentOptions, Inbox, Session, user_message
from dsh_tui.llm.scripted import ScriptedModel, text
from dsh_tui.ui.state.inbox_edits import (
    EditRefused,
    Item,
    Merge,
    Move,
    Refile,
    Remove,
    Replace,
    Split,
    Transfer,
    item_of,
)
from dsh_tui.ui.state.marks import Marks
from dsh_tui.ui.state.timeline import timeline_of
from dsh_tui.ui.state.undo import InboxHistory


def _msg(text_: str, lane: str = "follow-up") -> Any:
    return user_message(text_, source={"kind": "user", "lane": lane})


class Inboxes:
    """Agents' inboxes by id, each over a real session."""

    def __init__(self, *agents: str) -> None:
        self.inboxes = {agent: Inbox(Session(agent)) for agent in agents}

    def __call__(self, agent: str) -> Inbox | None:
        return self.inboxes.get(agent)

    def fill(self, agent: str, target: str, *texts: str, lane: str = "follow-up") -> list[Any]:
        messages = [_msg(t, lane) for t in texts]
        for message in messages:
            self.inboxes[agent].append(target, message)  # type: ignore[arg-type]
        return messages

    def item(self, agent: str, message: Any) -> Item:
        found = item_of(self.inboxes[agent], agent, message.id)
        assert found is not None
        return found

    def texts(self, agent: str, target: str = "next-turn") -> list[str]:
        inbox = self.inboxes[agent]
        return [m.text for m in (inbox.next_turn if target == "next-turn" else inbox.next_step)]

    def state(self) -> dict[str, tuple[list[Any], list[Any]]]:
        return {agent: ([m.to_json() for m in inbox.next_turn],
                        [m.to_json() for m in inbox.next_step])
                for agent, inbox in self.inboxes.items()}

    def replayed(self) -> dict[str, tuple[list[Any], list[Any]]]:
        out = {}
        for agent, inbox in self.inboxes.items():
            again = Inbox(Session(agent, seed=list(inbox.session.events), restore=True))
            out[agent] = ([m.to_json() for m in again.next_turn],
                          [m.to_json() for m in again.next_step])
        return out


def test_merging_marked_follow_ups_keeps_their_order_and_one_undo_restores_them() -> None:
    box = Inboxes("a")
    one, two, three, four = box.fill("a", "next-turn", "one", "two", "three", "four")
    marks = Marks()
    for message in (three, one, four):  # marked out of order
        marks.toggle("a", message.id)
    history = InboxHistory(box)
    items = [box.item("a", m) for m in (box.inboxes["a"].get(i) for i in marks.of("a"))]
    merge = Merge(items)
    outcome = history.do(merge)
    assert outcome.done and outcome.line("do") == f"merge 3 follow-ups into #{one.id[:6]}"
    assert box.texts("a") == ["one\n\nthree\n\nfour", "two"]  # inbox order, not marking order
    merged = box.inboxes["a"].next_turn[0]
    assert merged.id == one.id and list(merged.source["mergedFrom"]) == [one.id, three.id, four.id]
    assert history.next_undo == merge.name
    before = box.state()
    assert history.undo().line("undo") == f"undone: {merge.name}"
    assert box.texts("a") == ["one", "two", "three", "four"]
    assert [m.id for m in box.inboxes["a"].next_turn] == [one.id, two.id, three.id, four.id]
    assert history.redo().done
    assert box.state() == before  # a redo reproduces the same items, same ids
    assert box.replayed() == box.state()


def test_merging_across_lists_or_agents_is_refused() -> None:
    box = Inboxes("a", "b")
    (follow,) = box.fill("a", "next-turn", "f")
    (steer,) = box.fill("a", "next-step", "s", lane="steer")
    (other,) = box.fill("b", "next-turn", "o")
    with pytest.raises(EditRefused, match="one list"):
        Merge([box.item("a", follow), box.item("a", steer)])
    with pytest.raises(EditRefused, match="one list"):
        Merge([box.item("a", follow), box.item("b", other)])
    with pytest.raises(EditRefused, match="at least two"):
        Merge([box.item("a", follow)])


def test_split_at_the_cursor_puts_the_rest_right_after_and_undo_joins_them_again() -> None:
    box = Inboxes("a")
    first, last = box.fill("a", "next-turn", "fix the parser. then add tests", "later")
    history = InboxHistory(box)
    split = Split(box.item("a", first), cursor=len("fix the parser."))
    assert history.do(split).done
    assert box.texts("a") == ["fix the parser.", "then add tests", "later"]
    tail = box.inboxes["a"].next_turn[1]
    assert tail.source["splitFrom"] == first.id and tail.source["lane"] == "follow-up"
    assert history.undo().done
    assert box.texts("a") == ["fix the parser. then add tests", "later"]
    assert history.redo().done and box.inboxes["a"].next_turn[1].id == tail.id
    with pytest.raises(EditRefused, match="both sides"):
        Split(box.item("a", last), cursor=0)
    assert box.replayed() == box.state()


def test_move_and_copy_to_another_agent_and_back() -> None:
    box = Inboxes("parent", "child")
    one, two = box.fill("parent", "next-turn", "one", "two")
    (steer,) = box.fill("parent", "next-step", "look", lane="steer")
    history = InboxHistory(box)
    move = Transfer([box.item("parent", two), box.item("parent", steer)], "child",
                    to_name="child agent")
    assert history.do(move).line("do") == "move 2 items to child agent"
    assert box.texts("parent") == ["one"] and box.texts("child") == ["two"]
    assert box.texts("child", "next-step") == ["look"]
    moved = box.inboxes["child"].get(two.id)
    assert moved is not None and moved.source["movedFrom"] == {"agent": "parent", "id": two.id}
    copy = Transfer([box.item("parent", one)], "child", copy=True)
    assert history.do(copy).done
    assert box.texts("parent") == ["one"] and box.texts("child") == ["two", "one"]
    copied = box.inboxes["child"].next_turn[1]
    assert copied.id != one.id and copied.source["copiedFrom"]["id"] == one.id
    assert history.undo().done and history.undo().done
    assert box.texts("parent") == ["one", "two"] and box.texts("parent", "next-step") == ["look"]
    assert box.texts("child") == [] and box.inboxes["parent"].next_turn[1].id == two.id
    assert box.replayed() == box.state()


def test_re_file_move_remove_and_edit_undo_in_reverse_order_and_redo_forward() -> None:
    box = Inboxes("a")
    a, b, c = box.fill("a", "next-turn", "a", "b", "c")
    box.fill("a", "next-step", "s", lane="steer")
    history = InboxHistory(box)
    snapshots = [box.state()]
    for make in (lambda: Refile(box.item("a", b), "steer"),
                 lambda: Move(box.item("a", c), "next-turn", 0),
                 lambda: Replace("a", box.item("a", a).message,
                                 box.item("a", a).message.with_text("a, edited")),
                 lambda: Remove([box.item("a", c)])):
        assert history.do(make()).done
        snapshots.append(box.state())
    assert box.texts("a") == ["a, edited"] and box.texts("a", "next-step") == ["s", "b"]
    for expected in reversed(snapshots[:-1]):
        assert history.undo().done
        assert box.state() == expected
    assert not history.undo().done and history.next_undo is None
    for expected in snapshots[1:]:
        assert history.redo().done
        assert box.state() == expected
    assert box.replayed() == box.state()


def test_a_new_edit_forgets_the_redo_and_the_history_has_no_timer() -> None:
    box = Inboxes("a")
    a, b = box.fill("a", "next-turn", "a", "b")
    history = InboxHistory(box)
    history.do(Remove([box.item("a", a)]))
    history.undo()
    assert history.next_redo is not None
    history.do(Remove([box.item("a", b)]))
    assert history.next_redo is None
    assert history.redo().line("redo") == "nothing to redo"


async def test_an_edit_whose_item_was_claimed_cannot_be_undone_and_writes_nothing() -> None:
    model = ScriptedModel([text("merged reply")])
    ctx = build_context(providers={"mock": model}, retry=False, system_prompt=None)
    handle = await ctx.agents.create(CreateAgentOptions(
        session_id="a", agent_options=AgentOptions(provider="mock", model="mock")))
    agent = handle.agent
    try:
        inboxes = lambda agent_id: ctx.agents.get(agent_id).inbox  # noqa: E731
        messages = [_msg(t) for t in ("one", "two", "three")]
        for message in messages:
            agent.inbox.append("next-turn", message)
        history = InboxHistory(inboxes)
        items = [item_of(agent.inbox, "a", m.id) for m in messages]
        assert history.do(Merge([i for i in items if i is not None])).done
        agent.wake()  # one turn instead of three
        await asyncio.wait_for(agent.when_idle(), 5)
        kinds = [e.type for e in agent.session.events]
        assert kinds.count("turn/start") == 1 and kinds.count("user/message") == 1
        assert model.requests[0]["messages"][-1]["content"][0]["text"] == \
            "one\n\ntwo\n\nthree"
        seq = agent.session.seq
        outcome = history.undo()
        assert not outcome.done and "no longer pending" in outcome.error
        assert agent.session.seq == seq  # nothing written
        assert history.next_undo is None  # dropped, saying why
        timeline = timeline_of(agent.session.events)
        merges = [e for e in timeline.entries if e.kind == "merge"]
        assert [e.message_id for e in merges] == [messages[1].id, messages[2].id]
        assert all(e.related == (messages[0].id,) for e in merges)
    finally:
        await asyncio.wait_for(handle.dispose(), 5)


def test_marks_toggle_per_agent_and_prune_what_left() -> None:
    marks = Marks()
    assert marks.toggle("a", "1") and marks.toggle("b", "2") and marks.toggle("a", "3")
    assert not marks.toggle("a", "1")
    assert marks.of("a") == ["3"] and marks.agents() == ["b", "a"]
    assert marks.prune(lambda agent, message: message != "2") == 1
    assert marks.all() == [("a", "3")]
    marks.clear("a")
    assert len(marks) == 0
