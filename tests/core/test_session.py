"""§1 Session: lossless JSON, append semantics, surface rules, seeds, headers and forks (C-82)."""

from __future__ import annotations

import datetime
import decimal
import math

import pytest

from dsh_tui.harness import Inbox, Session, new_world, user_message
from dsh_tui.llm.scripted import text

from .conftest import bounded, events_of, m, settle, splices, user_texts


def cyclic_list():
    x = []
    x.append(x)
    return x


def cyclic_dict():
    x = {}
    x["self"] = x
    return x


class Plain:
    pass


NOT_JSON = {
    "nan": math.nan,
    "inf": math.inf,
    "-inf": -math.inf,
    "negative zero": -0.0,
    "nested negative zero": {"a": [1, {"b": -0.0}]},
    "non-string key": {1: "x"},
    "set": {1, 2},
    "frozenset": frozenset(),
    "bytes": b"raw",
    "datetime": datetime.datetime(2024, 1, 1),
    "decimal": decimal.Decimal("1.5"),
    "complex": 1j,
    "class instance": Plain(),
    "function": lambda: None,
    "unsafe int": 2**53,
    "unsafe negative int": -(2**53),
    "cyclic list": cyclic_list(),
    "cyclic dict": cyclic_dict(),
    "deep bad leaf": {"a": [{"b": [math.inf]}]},
}


@pytest.mark.parametrize("name", list(NOT_JSON))
def test_rule_append_rejects_lossy_json(name):
    """§1.2.1: data is validated as lossless JSON; non-finite numbers, -0, non-string keys, sets,
    bytes, dates, class instances, functions, unsafe integers and cycles are rejected before
    anything changes, with a message containing 'non-JSON-serializable'."""
    session = Session("json")
    session.append("ok/first", {"fine": True})
    snapshot = session.events
    with pytest.raises(Exception, match="non-JSON-serializable"):
        session.append("bad/event", {"payload": NOT_JSON[name]})
    assert session.seq == 1
    assert list(session.events) == list(snapshot)
    session.append("ok/second", {})
    assert [e.seq for e in session.events] == [0, 1]


@pytest.mark.parametrize("name", ["nan", "negative zero", "set", "unsafe int", "cyclic dict"])
async def test_rule_lossy_json_rejected_through_the_agent_surface(make_world, name):
    """§1.2.1/§2.2.7: the same gate guards inbox insertions made through the agent: the send raises,
    nothing is logged, nothing is pending."""
    world = make_world([])
    agent = await world.agent()
    bad = {"id": "bad-1", "role": "user", "content": [{"type": "text", "text": "x"}],
           "source": {"kind": "plugin", "plugin": "p", "extra": NOT_JSON[name]}}
    with pytest.raises(Exception, match="non-JSON-serializable"):
        agent.inject(bad)
    assert list(agent.session.events) == [] and not agent.inbox.has_pending


def test_rule_append_accepts_lossless_values_and_stores_a_copy():
    """§1.2.1/§1.2.4: null, booleans, safe ints, finite floats, +0.0, strings, nested lists/dicts are
    accepted; the stored data is a copy (later mutation of the caller's object has no effect); the
    returned event carries the stored copy; seq = log length, time = epoch ms."""
    session = Session("copy")
    payload = {"n": None, "t": True, "f": False, "i": 2**53 - 1, "neg": -(2**53 - 1),
               "x": 1.5, "zero": 0.0, "s": "é🙂", "nested": [1, [2, {"k": "v"}]]}
    event = session.append("data/copy", payload)
    payload["nested"][1][1]["k"] = "changed"
    payload["added"] = 1
    assert event.seq == 0 and event.type == "data/copy"
    assert event.data["nested"] == [1, [2, {"k": "v"}]]
    assert "added" not in event.data
    assert session.events[0].data == event.data
    assert isinstance(event.time, int) and event.time > 1_000_000_000_000
    assert session.seq == 1


def test_rule_events_snapshot_never_grows():
    """§1.2: session.events is an immutable snapshot; a previously returned snapshot never grows."""
    session = Session("snap")
    session.append("a", {})
    before = session.events
    session.append("b", {})
    after = session.events
    assert len(before) == 1 and len(after) == 2
    assert [e.type for e in before] == ["a"]
    with pytest.raises((TypeError, AttributeError)):
        before[0] = None
    with pytest.raises(AttributeError):
        after[0].seq = 9


def test_rule_session_event_listener_containment_and_resolution():
    """§1.2.5: listeners are resolved before the push and called after it with (session, event);
    a raising listener never undoes the append nor stops later listeners; a listener added during
    publication does not receive that event."""
    ctx = new_world()
    session = ctx.sessions.create("pub")
    seen = []

    def raising(s, e):
        seen.append(("raising", e.seq, s.seq))
        ctx.on("session/event", lambda s2, e2: seen.append(("late", e2.seq)))
        raise RuntimeError("observer broke")

    ctx.on("session/event", raising)
    ctx.on("session/event", lambda s, e: seen.append(("second", e.seq)))
    event = session.append("x/one", {})
    assert event.seq == 0 and session.seq == 1
    assert seen == [("raising", 0, 1), ("second", 0)]


def test_rule_reentrant_append_raises_during_publication_only():
    """§1.2.3: while an attached session publishes an append, another append on it raises 'session
    append cannot reenter while another append is being published'; after publication appends work;
    other sessions are unaffected."""
    ctx = new_world()
    session = ctx.sessions.create("re")
    other = ctx.sessions.create("other")
    errors = []

    def nested(s, e):
        if s is session and e.type == "outer":
            try:
                session.append("inner", {})
            except Exception as error:
                errors.append(str(error))
            other.append("in-other", {})

    ctx.on("session/event", nested)
    session.append("outer", {})
    assert errors == ["session append cannot reenter while another append is being published"]
    assert [e.type for e in session.events] == ["outer"]
    assert [e.type for e in other.events] == ["in-other"]
    session.append("after", {})
    assert [e.type for e in session.events] == ["outer", "after"]


def test_rule_surface_events_require_a_marker_and_valid_messages():
    """§1.1/§1.2.2: the three surface types need surfaceOp; non-surface types must not carry
    surfaceOp or sourceEventSeqs; surface data must be an identified message of the right role and
    source; failures raise before commit."""
    session = Session("surface")
    msg = user_message("hi").to_json()
    with pytest.raises(Exception, match="surfaceOp"):
        session.append("user/message", msg)
    with pytest.raises(Exception, match="surfaceOp"):
        session.append("turn/start", {"turn": 1}, surface_op="append")
    with pytest.raises(Exception, match="sourceEventSeqs"):
        session.append("turn/start", {"turn": 1}, source_event_seqs=[])
    with pytest.raises(Exception):  # noqa: B017 - no id
        session.append("user/message", {**msg, "id": ""}, surface_op="append")
    with pytest.raises(Exception):  # noqa: B017 - wrong role
        session.append("user/message", {**msg, "role": "assistant"}, surface_op="append")
    with pytest.raises(Exception):  # noqa: B017 - an assistant message needs a model source
        session.append("assistant/message", {"turn": 1, "step": 1, "message": {
            "id": "a", "role": "assistant", "content": [], "source": {"kind": "user"}}},
            surface_op="append")
    assert session.seq == 0
    event = session.append("user/message", msg, surface_op="append")
    assert event.to_json()["surfaceOp"] == "append"
    assert session.derive_messages() == [msg]


def test_rule_source_event_seqs_and_replace_validation():
    """§1.2.2: cited seqs must exist, be earlier and unique; a replace marker must name current
    surface nodes and its sourceEventSeqs must cover every shadowed node; a valid replacement
    rewrites the derived history; tool/result replacement may change only content."""
    session = Session("replace")
    first = session.append("user/message", user_message("one").to_json(), surface_op="append")
    second = session.append("user/message", user_message("two").to_json(), surface_op="append")
    good = user_message("summary").to_json()
    with pytest.raises(Exception, match="earlier"):
        session.append("user/message", good, surface_op="append", source_event_seqs=[5])
    with pytest.raises(Exception, match="duplicates"):
        session.append("user/message", good, surface_op="append", source_event_seqs=[0, 0])
    with pytest.raises(Exception, match="not found"):
        session.append("user/message", good,
                       surface_op={"op": "replace", "start": 7, "end": 1},
                       source_event_seqs=[0, 1])
    with pytest.raises(Exception, match="after end"):
        session.append("user/message", good,
                       surface_op={"op": "replace", "start": 1, "end": 0},
                       source_event_seqs=[0, 1])
    with pytest.raises(Exception, match="shadowed"):
        session.append("user/message", good,
                       surface_op={"op": "replace", "start": 0, "end": 1},
                       source_event_seqs=[0])
    with pytest.raises(Exception, match="invalid surfaceOp"):
        session.append("user/message", good, surface_op={"op": "replace", "start": 0})
    assert session.seq == 2
    replaced = session.append("user/message", good,
                              surface_op={"op": "replace", "start": first.seq,
                                          "end": second.seq},
                              source_event_seqs=[first.seq, second.seq])
    assert replaced.to_json()["surfaceOp"] == {"op": "replace", "start": 0, "end": 1}
    assert replaced.to_json()["sourceEventSeqs"] == [0, 1]
    assert session.derive_messages() == [good]

    call = session.append("tool/call", {"turn": 1, "step": 1, "callId": "c1", "name": "t",
                                        "arguments": "{}"})
    result = {"turn": 1, "step": 1, "message": {
        "id": "r1", "role": "user", "source": {"kind": "tool", "callId": "c1"},
        "content": [{"type": "tool-result", "toolCallId": "c1",
                     "content": [{"type": "text", "text": "long output"}], "isError": False}]}}
    original = session.append("tool/result", result, surface_op="append",
                               source_event_seqs=[call.seq])
    changed_id = {**result, "message": {**result["message"], "id": "r2"}}
    with pytest.raises(Exception, match="only content"):
        session.append("tool/result", changed_id,
                       surface_op={"op": "replace", "start": original.seq, "end": original.seq},
                       source_event_seqs=[original.seq])
    trimmed = {**result, "message": {**result["message"], "content": [{
        "type": "tool-result", "toolCallId": "c1",
        "content": [{"type": "text", "text": "[trimmed]"}], "isError": False}]}}
    session.append("tool/result", trimmed,
                   surface_op={"op": "replace", "start": original.seq, "end": original.seq},
                   source_event_seqs=[original.seq])
    assert session.derive_messages()[-1]["content"][0]["content"] == [
        {"type": "text", "text": "[trimmed]"}]


def test_rule_seed_validation_and_end_seed_marker():
    """§1.3: a seed is validated (envelope keys, lossless JSON, seq == index, surface rules); a
    valid seed gets one session/end-seed marker unless it already ends with one; an explicit empty
    seed is marked, a fresh session is not; first_live_seq is the seed length."""
    source = Session("source")
    source.append("turn/start", {"turn": 1})
    source.append("user/message", user_message("hi").to_json(), surface_op="append")
    source.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    seed = [e.to_json() for e in source.events]

    seeded = Session("seeded", seed)
    assert [e.type for e in seeded.events] == ["turn/start", "user/message", "turn/end",
                                               "session/end-seed"]
    assert seeded.events[-1].data == {} and seeded.events[-1].seq == 3
    assert seeded.first_live_seq == 3
    assert seeded.derive_messages() == source.derive_messages()
    again = Session("again", list(seeded.events))
    assert [e.type for e in again.events].count("session/end-seed") == 1
    assert [e.type for e in Session("empty-seed", []).events] == ["session/end-seed"]
    assert list(Session("fresh").events) == []

    with pytest.raises(Exception, match="seed event at index 1 has an invalid event envelope"):
        Session("bad", [seed[0], {**seed[1], "extra": 1}])
    with pytest.raises(Exception, match="seed must be contiguous from 0"):
        Session("bad", [seed[0], {**seed[2], "seq": 5}])
    with pytest.raises(Exception, match="seed event at index 0 is not losslessly "
                                        "JSON-serializable"):
        Session("bad", [{**seed[0], "data": {"x": math.nan}}])
    marker_less = {k: v for k, v in seed[1].items() if k != "surfaceOp"}
    with pytest.raises(Exception, match="index 1"):
        Session("bad", [seed[0], marker_less])


def test_rule_seed_is_not_published():
    """§1.3: seed events (and the end-seed marker) are not published on session/event."""
    ctx = new_world()
    published = []
    ctx.on("session/event", lambda s, e: published.append(e.type))
    seed = [{"type": "custom/x", "seq": 0, "time": 1, "data": {}}]
    session = ctx.sessions.create("seeded", seed=seed)
    assert [e.type for e in session.events] == ["custom/x", "session/end-seed"]
    assert published == []
    session.append("live/y", {})
    assert published == ["live/y"]


def test_rule_header_shape_and_meta_validation():
    """§1.3: the header has version 0, id, createdAt (ms int ≥ 0) and the optional meta fields;
    cwd must be absolute, origin only 'subagent', depths non-negative ints."""
    ctx = new_world()
    session = ctx.sessions.create("h", meta={"cwd": "/work", "parentSession": "p",
                                             "origin": "subagent", "delegationDepth": 1,
                                             "agentPreset": "explorer", "seedLength": 0})
    header = dict(session.header)
    assert header["version"] == 0 and header["id"] == "h"
    assert isinstance(header["createdAt"], int) and header["createdAt"] > 1_000_000_000_000
    assert {k: header[k] for k in ("cwd", "parentSession", "origin", "delegationDepth",
                                   "agentPreset", "seedLength")} == {
        "cwd": "/work", "parentSession": "p", "origin": "subagent", "delegationDepth": 1,
        "agentPreset": "explorer", "seedLength": 0}
    assert set(dict(ctx.sessions.create("bare").header)) == {"version", "id", "createdAt"}
    for bad in ({"cwd": "relative/dir"}, {"origin": "other"}, {"delegationDepth": -1},
                {"seedLength": 1.5}):
        with pytest.raises(Exception):  # noqa: B017 - each is a header validation error
            ctx.sessions.create("bad", meta=bad)
    assert ctx.sessions.get("bad") is None
    with pytest.raises(Exception, match="already exists"):
        ctx.sessions.create("h")


async def test_c82_fork_continues_numbering(make_world):
    """C-82: a session seeded with another agent's one-turn log → the next turn opened by a new agent
    on it is turn 2; the seeded session ends with session/end-seed and its derive_messages()
    equals the source's."""
    world = make_world([text("parent reply"), text("child reply")])
    parent = await world.agent("parent")
    parent.followup(m("parent prompt"))
    await bounded(parent.when_idle())
    seed = list(parent.session.events)
    child = await world.agent("child", seed=seed,
                              meta={"parentSession": "parent", "seedLength": len(seed)})
    assert child.session.events[-1].type == "session/end-seed"
    assert child.session.derive_messages() == parent.session.derive_messages()
    assert child.session.header["parentSession"] == "parent"
    assert child.session.header["seedLength"] == len(seed)
    child.followup(m("child prompt"))
    await bounded(child.when_idle())
    assert [e.data["turn"] for e in events_of(child, "turn/start")] == [1, 2]
    assert [e.seq for e in child.session.events] == list(range(child.session.seq))
    history = world.model.requests[1]["messages"]
    assert [msg["role"] for msg in history] == ["user", "assistant", "user"]
    assert user_texts(child) == ["parent prompt", "child prompt"]
    # the seed already holds a request/header, so the child's first request logs 'resume'
    assert [e.data["reason"] for e in events_of(child, "request/header")] == ["initial",
                                                                              "resume"]


async def test_rule_forked_child_does_not_inherit_pending_items(make_world):
    """§1.3/§2.6: a child seeded (with seedLength) from a parent that had pending items does not
    inherit them; a seed without seedLength (a resume) would replay them."""
    world = make_world([text("parent reply")])
    parent = await world.agent("parent")
    parent.followup(m("done"))
    await bounded(parent.when_idle())
    parent.inject(m("parent pending"))
    seed = list(parent.session.events)
    child = await world.agent("child", seed=seed,
                              meta={"parentSession": "parent", "seedLength": len(seed)})
    assert child.inbox.has_pending is False
    assert Inbox(Session("replayed", seed)).next_step[0].text == "parent pending"


def test_rule_sessions_fork():
    """§1.3 fork: seed = source events [0..boundary] (default the last); rejected inside an open
    turn; child header parentSession = source id, seedLength = len(seed), cwd copied; the child
    ends with session/end-seed; unknown sources and duplicate child ids are rejected."""
    ctx = new_world()
    source = ctx.sessions.create("src", meta={"cwd": "/repo"})
    source.append("turn/start", {"turn": 1})
    source.append("user/message", user_message("hi").to_json(), surface_op="append")
    source.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    source.append("turn/start", {"turn": 2})
    with pytest.raises(Exception, match="open turn"):
        ctx.sessions.fork(source)
    with pytest.raises(Exception, match="open turn"):
        ctx.sessions.fork(source, 1)
    child = ctx.sessions.fork(source, 2, "child")
    assert [e.type for e in child.events] == ["turn/start", "user/message", "turn/end",
                                              "session/end-seed"]
    header = dict(child.header)
    assert header["parentSession"] == "src" and header["seedLength"] == 3
    assert header["cwd"] == "/repo"
    assert child.derive_messages() == source.derive_messages()
    assert ctx.sessions.get("child") is child
    with pytest.raises(Exception, match="already exists"):
        ctx.sessions.fork(source, 2, "child")
    with pytest.raises(Exception, match="not found"):
        ctx.sessions.fork("missing")
    with pytest.raises(Exception):  # noqa: B017 - boundary past the end
        ctx.sessions.fork(source, 99, "other")


def test_rule_splice_with_only_seed_events_before_seed_length():
    """§2.6: replay honours header.seedLength when constructing an Inbox directly."""
    parent = Session("p")
    Inbox(parent).append("next-turn", user_message("x"))
    seed = list(parent.events)
    child = Session("c", seed, {"version": 0, "id": "c", "createdAt": 0,
                                "seedLength": len(seed)})
    assert Inbox(child).has_pending is False
    live = Inbox(child)
    live.append("next-turn", user_message("own"))
    assert [x.text for x in Inbox(child).next_turn] == ["own"]
    assert splices(child)[-1]["start"] == 0


async def test_rule_agent_log_derives_identical_history_after_replay(make_world):
    """§1.3: replaying an agent's log as a seed yields an identical derived history."""
    world = make_world([text("a"), text("b")])
    agent = await world.agent()
    agent.followup(m("one"))
    agent.followup(m("two"))
    await bounded(agent.when_idle())
    await settle()
    replay = Session("replay", list(agent.session.events))
    assert replay.derive_messages() == agent.session.derive_messages()


def test_rule_store_detach_deferred_through_publication_and_announcement():
    """§1.2.5/§4.2 (store analogue): a session detach requested while one of its appends is being
    published, or while its session/created dispatch runs, is deferred until that dispatch
    unwinds; later observers still see the live entry; session/disposed follows once."""
    ctx = new_world()
    order = []
    session = ctx.sessions.prepare("deferred")
    detach = ctx.sessions.enter(session)

    def first(s, e):
        order.append(("first", ctx.sessions.get("deferred") is s))
        detach()
        order.append(("after-detach", ctx.sessions.get("deferred") is s))

    ctx.on("session/event", first)
    ctx.on("session/event", lambda s, e: order.append(("second", ctx.sessions.get(s.id) is s)))
    ctx.on("session/disposed", lambda s: order.append(("disposed", s.id)))
    ctx.sessions.announce(session)
    session.append("x/one", {})
    assert order == [("first", True), ("after-detach", True), ("second", True),
                     ("disposed", "deferred")]
    assert ctx.sessions.get("deferred") is None
    assert [e.type for e in session.events] == ["x/one"]  # still readable

    ctx2 = new_world()
    seen = []
    s2 = ctx2.sessions.prepare("during-created")
    detach2 = ctx2.sessions.enter(s2)

    def on_created(s):
        detach2()
        seen.append(("created-listener", ctx2.sessions.get(s.id) is s))

    ctx2.on("session/created", on_created)
    ctx2.on("session/created", lambda s: seen.append(("second", ctx2.sessions.get(s.id) is s)))
    ctx2.on("session/disposed", lambda s: seen.append(("disposed", s.id)))
    ctx2.sessions.announce(s2)
    assert seen == [("created-listener", True), ("second", True),
                    ("disposed", "during-created")]
    assert ctx2.sessions.get("during-created") is None


def test_rule_store_stale_detach_and_double_announce():
    """§4.2 (store analogue): a stale detach cannot remove a later same-id session; announcing
    twice raises; an entered-but-never-announced session detaches without session/disposed."""
    ctx = new_world()
    disposed = []
    ctx.on("session/disposed", lambda s: disposed.append(s.id))
    first = ctx.sessions.prepare("same")
    detach_first = ctx.sessions.enter(first)
    ctx.sessions.announce(first)
    with pytest.raises(Exception, match="already announced"):
        ctx.sessions.announce(first)
    detach_first()
    second = ctx.sessions.prepare("same")
    detach_second = ctx.sessions.enter(second)
    detach_first()
    assert ctx.sessions.get("same") is second
    detach_second()
    assert disposed == ["same"]
    live = ctx.sessions.create("live")
    with pytest.raises(Exception, match="already exists"):
        ctx.sessions.enter(Session("live"))
    assert ctx.sessions.get("live") is live
