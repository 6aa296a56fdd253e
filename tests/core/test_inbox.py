"""§2 Inbox: operations (C-19 … C-26), normalisation, validation, replay, and properties."""

from __future__ import annotations

import asyncio
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dsh_tui.harness import Inbox, Session, user_message
from dsh_tui.llm.scripted import text

from .conftest import Recorder, bounded, ctx_msg, filtered, m, splices, user_texts


class Notes:
    """An InboxNotifications recorder."""

    def __init__(self) -> None:
        self.log: list[tuple] = []

    def inserted(self, message):
        self.log.append(("inserted", message.id))

    def discarded(self, message):
        self.log.append(("discarded", message.id))

    def claimed(self, message, turn):
        self.log.append(("claimed", message.id, turn))

    def of(self, kind):
        return [entry[1] for entry in self.log if entry[0] == kind]


def bare_inbox(session_id: str = "s"):
    session = Session(session_id)
    notes = Notes()
    return session, Inbox(session, notes), notes


# -- agent-level scenarios ---------------------------------------------------------------------


async def test_c19_remove_of_a_claimed_message(make_world):
    """C-19: followup(p) claims p synchronously; inbox.remove(p.id) then returns False and logs
    nothing (replace likewise)."""
    world = make_world([text("ok")])
    agent = await world.agent()
    p = m("p")
    agent.followup(p)
    before = agent.session.seq
    assert agent.inbox.remove(p.id) is False
    assert agent.inbox.replace(p.id, m("other")) is False
    assert agent.session.seq == before
    await bounded(agent.when_idle())
    assert user_texts(agent) == ["p"]


async def test_c24_exact_live_notifications(make_world):
    """C-24: inject(c), inbox.remove(c.id), followup(p), wait idle → inserted [c, p], discarded
    [c], claimed [(p, 1)]; turn/start observed before claimed."""
    world = make_world([text("ok")])
    agent = await world.agent()
    rec = Recorder(world.ctx).inbox(agent).session("turn/start", agent=agent)
    c, p = ctx_msg("c"), m("p")
    agent.inject(c)
    assert agent.inbox.remove(c.id) is True
    agent.followup(p)
    await bounded(agent.when_idle())
    assert rec.of("inserted") == [c, p]
    assert rec.of("discarded") == [c]
    assert rec.of("claimed") == [(p, 1)]
    kinds = [entry[0] if entry[0] != "session" else entry[1] for entry in rec.log]
    assert kinds.index("turn/start") < kinds.index("claimed")
    assert splices(agent)[1] == {"target": "next-step", "start": 0, "removedCount": 1,
                                 "inserted": [], "outcome": "canceled"}


async def test_c26_failed_durable_insert(make_world):
    """C-26: when the session append raises during followup, followup raises that error, nothing
    is logged, has_pending stays False, status stays idle and no driver wakes."""
    world = make_world([text("never")])
    agent = await world.agent()
    seen = {}

    def listener(session, event):
        if event.type != "test/marker":
            return
        try:
            agent.followup(m("p"))
        except Exception as error:
            seen["error"] = error
        seen["seq"] = session.seq
        seen["pending"] = agent.inbox.has_pending
        seen["status"] = agent.status

    agent.ctx.on("session/event", listener)
    agent.session.append("test/marker", {})
    assert "cannot reenter" in str(seen["error"])
    assert seen["seq"] == 1 and seen["pending"] is False and seen["status"] == "idle"
    await settle_idle(agent)
    assert types_of(agent) == ["test/marker"]
    assert world.model.requests == []


async def test_c26_failed_durable_insert_non_json(make_world):
    """C-26 / §2.2.7: a message that is not lossless JSON makes followup raise before anything is
    logged; the log is empty, nothing pending, status idle."""
    world = make_world([text("never")])
    agent = await world.agent()
    bad = {"id": "bad", "role": "user", "content": [{"type": "text", "text": "x",
                                                      "n": float("inf")}],
           "source": {"kind": "user"}}
    with pytest.raises(Exception, match="non-JSON-serializable"):
        agent.followup(bad)
    assert list(agent.session.events) == []
    assert agent.inbox.has_pending is False
    assert agent.status == "idle"


async def settle_idle(agent):
    await bounded(agent.when_idle())
    for _ in range(20):
        await asyncio.sleep(0)


def types_of(agent):
    return [e.type for e in agent.session.events]


async def test_c96_reentrant_append_from_sync_session_listener_is_lost(make_world):
    """C-96 / §1.2.3: a synchronous session/event listener cannot append; a followup it attempts
    while the splice is being published raises inside the listener, is contained, and the nested
    message is simply lost (one turn with only the outer message)."""
    world = make_world([text("first"), text("unused")])
    agent = await world.agent()
    nested = []

    def listener(session, event):
        if session is agent.session and event.type == "agent/inbox/spliced" and \
                event.data["inserted"] and not nested:
            nested.append(True)
            agent.followup(m("queued listener message"))

    world.ctx.on("session/event", listener)
    agent.followup(m("outer message"))
    await bounded(agent.when_idle())
    assert nested == [True]
    assert filtered(agent, "turn/start") == ["turn/start"]
    assert user_texts(agent) == ["outer message"]
    assert len(splices(agent)) == 2  # the outer insertion and its claim, nothing nested
    assert agent.inbox.has_pending is False


@pytest.mark.parametrize("op", ["steer", "inject", "append", "clear_cancel"])
async def test_c96_every_sync_listener_mutation_is_lost(make_world, op):
    """C-96 / §1.2.3: steer/inject/inbox mutations (and a cancel that must clear a pending inbox)
    from a synchronous session/event listener raise the reentrancy error, which is contained;
    the log and the projection are unchanged."""
    world = make_world([])
    agent = await world.agent()
    agent.inject(ctx_msg("pending"))
    errors = []

    def listener(session, event):
        if event.type != "test/marker":
            return
        try:
            if op == "steer":
                agent.steer(m("s"))
            elif op == "inject":
                agent.inject(m("i"))
            elif op == "append":
                agent.inbox.append("next-turn", m("a"))
            else:
                agent.cancel()
        except Exception as error:
            errors.append(str(error))
            raise

    agent.ctx.on("session/event", listener)
    agent.session.append("test/marker", {})
    assert len(errors) == 1 and "append cannot reenter" in errors[0]
    assert types_of(agent) == ["agent/inbox/spliced", "test/marker"]
    assert [x.text for x in agent.inbox.next_step] == ["pending"]
    assert agent.inbox.next_turn == ()
    assert agent.status == "idle"


async def test_c96_deferred_send_from_listener_works(make_world):
    """§1.2.3: deferring the send to a later tick from the listener works (the message runs)."""
    world = make_world([text("first"), text("second")])
    agent = await world.agent()
    nested = []

    def listener(session, event):
        if session is agent.session and event.type == "agent/inbox/spliced" and \
                event.data["inserted"] and not nested:
            nested.append(True)
            asyncio.get_running_loop().call_soon(agent.followup, m("deferred"))

    world.ctx.on("session/event", listener)
    agent.followup(m("outer"))
    await bounded(agent.when_idle())
    await settle_idle(agent)
    assert user_texts(agent) == ["outer", "deferred"]


async def test_rule_durable_splice_observed_before_projection_changes(make_world):
    """§1.6.10 / §2.2: the durable splice is committed and its session/event observers run before
    the live projection changes; agent/inbox/* notifications fire after it changed."""
    world = make_world([])
    agent = await world.agent()
    seen = []
    world.ctx.on("session/event", lambda s, e: seen.append(
        ("durable", e.type, len(agent.inbox.next_step))))
    world.ctx.on("agent/inbox/inserted", lambda p: seen.append(
        ("inserted", len(agent.inbox.next_step))))
    world.ctx.on("agent/inbox/discarded", lambda p: seen.append(
        ("discarded", len(agent.inbox.next_step))))
    c = ctx_msg("c")
    agent.inject(c)
    agent.inbox.remove(c.id)
    assert seen == [("durable", "agent/inbox/spliced", 0), ("inserted", 1),
                    ("durable", "agent/inbox/spliced", 1), ("discarded", 0)]


async def test_rule_inserted_message_key_set_and_stored_copy(make_world):
    """§1.4/§2.2.8: inserted messages are stored with exactly the keys content,id,role,source; the
    projection holds the stored copy (not the caller's object) with the same id."""
    world = make_world([])
    agent = await world.agent()
    raw = {"id": "m-1", "role": "user", "content": [{"type": "text", "text": "hello"}],
           "source": {"kind": "plugin", "plugin": "p"}}
    agent.inject(raw)
    raw["content"][0]["text"] = "changed"
    stored = splices(agent)[0]["inserted"][0]
    assert sorted(stored) == ["content", "id", "role", "source"]
    assert stored["content"] == [{"type": "text", "text": "hello"}]
    pending = agent.inbox.next_step[0]
    assert pending.id == "m-1" and pending.text == "hello"
    with pytest.raises((AttributeError, TypeError)):
        pending.id = "other"
    with pytest.raises(TypeError):
        pending.content[0]["text"] = "x"


async def test_rule_cancel_without_keep_inbox_on_idle_agent_clears_durably(make_world):
    """§3.3 / §9.5: an idle cancel() without keep_inbox durably cancels pending items
    (canceled splices, discarded notifications) and arms nothing; with nothing pending it is a
    complete no-op; keep_inbox=True logs no canceled splice."""
    world = make_world([text("ok")])
    agent = await world.agent()
    rec = Recorder(world.ctx).inbox(agent).status(agent)
    agent.cancel()
    assert list(agent.session.events) == [] and rec.log == []
    c = ctx_msg("c")
    agent.inject(c)
    agent.cancel(keep_inbox=True)
    assert agent.inbox.next_step == (c,) and len(splices(agent)) == 1
    agent.cancel({"kind": "user"})
    assert splices(agent)[-1] == {"target": "next-step", "start": 0, "removedCount": 1,
                                  "inserted": [], "outcome": "canceled"}
    assert rec.of("discarded") == [c]
    assert rec.statuses() == []
    agent.followup(m("p"))
    await bounded(agent.when_idle())
    assert user_texts(agent) == ["p"]


# -- bare inbox rules --------------------------------------------------------------------------


def test_c20_replace_changes_identity():
    """C-20: next_turn=[o], next_step=[s]: replace(missing) → False; replace(o.id, r) → True logging
    {next-turn, 0, removedCount 1, [r], canceled}; replace(s.id, s') with the same id → True;
    then next_turn == [r], next_step == [s']; discarded [o, s]; inserted [o, s, r, s'];
    replace(s'.id, r) raises 'message "<r.id>" is already pending'."""
    session, inbox, notes = bare_inbox()
    o, s, r = m("original"), m("step"), m("replacement")
    s2 = s.with_text("edited step")
    inbox.append("next-turn", o)
    inbox.append("next-step", s)
    before = session.seq
    assert inbox.replace(m("missing").id, r) is False
    assert session.seq == before
    assert inbox.replace(o.id, r) is True
    assert session.events[-1].data == {"target": "next-turn", "start": 0, "removedCount": 1,
                                       "inserted": [r.to_json()], "outcome": "canceled"}
    assert inbox.replace(s.id, s2) is True
    assert session.events[-1].data == {"target": "next-step", "start": 0, "removedCount": 1,
                                       "inserted": [s2.to_json()], "outcome": "canceled"}
    assert inbox.next_turn == (r,)
    assert inbox.next_step == (s2,)
    assert inbox.next_step[0].text == "edited step"
    assert notes.of("discarded") == [o.id, s.id]
    assert notes.of("inserted") == [o.id, s.id, r.id, s2.id]
    before = session.seq
    with pytest.raises(Exception, match=f'message "{r.id}" is already pending'):
        inbox.replace(s2.id, r)
    assert session.seq == before and inbox.next_step == (s2,)


def test_c21_duplicate_id_rejected():
    """C-21: append('next-step', first) while first is pending in next_turn raises
    'message "<id>" is already pending'; no event; projection unchanged."""
    session, inbox, notes = bare_inbox()
    first = m("first")
    inbox.append("next-turn", first)
    before = session.seq
    with pytest.raises(Exception, match=f'message "{first.id}" is already pending'):
        inbox.append("next-step", first)
    with pytest.raises(Exception, match="already pending"):
        inbox.prepend("next-turn", first)
    with pytest.raises(Exception, match="already pending"):
        inbox.splice("next-step", 0, 0, [first])
    dup = m("dup")
    with pytest.raises(Exception, match="already pending"):
        inbox.splice("next-step", 0, 0, [dup, dup])
    assert session.seq == before
    assert inbox.next_turn == (first,) and inbox.next_step == ()
    assert notes.of("inserted") == [first.id]


def test_rule_splice_normalises_coordinates():
    """§2.2.1–2: NaN start/count → 0; a negative start counts from the end; the count is clamped
    to what is available; inf start → end; removals report the removed messages."""
    session, inbox, _ = bare_inbox()
    first, second, third = m("first"), m("second"), m("third")
    inbox.splice("next-turn", math.nan, math.nan, [first, second])
    assert inbox.next_turn == (first, second)
    assert session.events[-1].data == {"target": "next-turn", "start": 0,
                                       "inserted": [first.to_json(), second.to_json()]}
    assert inbox.splice("next-turn", -1, 1, []) == [second]
    assert session.events[-1].data == {"target": "next-turn", "start": 1, "removedCount": 1,
                                       "inserted": [], "outcome": "canceled"}
    assert inbox.remove(second.id) is False
    inbox.splice("next-turn", math.inf, 0, [third])
    assert session.events[-1].data["start"] == 1
    assert inbox.splice("next-turn", -math.inf, math.inf, []) == [first, third]
    assert session.events[-1].data == {"target": "next-turn", "start": 0, "removedCount": 2,
                                       "inserted": [], "outcome": "canceled"}
    inbox.splice("next-step", 1.9, -3, [first])  # start clamps to len 0; count to 0
    assert session.events[-1].data == {"target": "next-step", "start": 0,
                                       "inserted": [first.to_json()]}
    inbox.splice("next-step", 0.9, 0.9, [second])  # truncation toward zero: start 0, count 0
    assert inbox.next_step == (second, first)
    assert inbox.splice("next-step", -1.5, 99, []) == [first]  # -1.5 → -1 → index 1
    assert inbox.splice("next-step", -99, 1, []) == [second]   # max(len - 99, 0) = 0


def test_rule_noop_splice_logs_and_notifies_nothing():
    """§2.2.3: nothing removed and nothing inserted is a no-op: returns [], no event, no
    notification (incl. clamped/NaN/negative counts and clear() on an empty inbox)."""
    session, inbox, notes = bare_inbox()
    inbox.append("next-turn", m("a"))
    before, log = session.seq, list(notes.log)
    assert inbox.splice("next-turn", 0, 0, []) == []
    assert inbox.splice("next-turn", 5, 3, []) == []
    assert inbox.splice("next-turn", 0, math.nan, []) == []
    assert inbox.splice("next-turn", 0, -math.inf, []) == []
    assert inbox.splice("next-step", 0, 10, []) == []
    assert session.seq == before and notes.log == log
    inbox.splice("next-turn", 0, 1, [])
    before = session.seq
    log = list(notes.log)
    inbox.clear()
    assert session.seq == before and notes.log == log


def test_c23_clear():
    """C-23: next_turn=[t], next_step=[s]: clear() logs the next-step cancellation then the
    next-turn one; discarded [s, t]; has_pending False; a second clear() logs nothing."""
    session, inbox, notes = bare_inbox()
    t, s = m("turn"), m("step")
    inbox.append("next-turn", t)
    inbox.append("next-step", s)
    before = session.seq
    inbox.clear()
    assert inbox.has_pending is False
    assert notes.of("discarded") == [s.id, t.id]
    assert [e.data for e in session.events[before:]] == [
        {"target": "next-step", "start": 0, "removedCount": 1, "inserted": [],
         "outcome": "canceled"},
        {"target": "next-turn", "start": 0, "removedCount": 1, "inserted": [],
         "outcome": "canceled"},
    ]
    inbox.clear()
    assert session.seq == before + 2


def test_rule_clear_with_only_next_turn_logs_one_splice():
    """§2.3: clear() is two independent mutations, each a no-op if its list is empty."""
    session, inbox, notes = bare_inbox()
    t1, t2 = m("t1"), m("t2")
    inbox.append("next-turn", t1)
    inbox.append("next-turn", t2)
    before = session.seq
    inbox.clear()
    assert [e.data for e in session.events[before:]] == [
        {"target": "next-turn", "start": 0, "removedCount": 2, "inserted": [],
         "outcome": "canceled"}]
    assert notes.of("discarded") == [t1.id, t2.id]


def test_rule_prepend_and_append_records():
    """§2.3: append logs start = old length, prepend logs start 0; neither carries removedCount
    nor outcome; each notifies inserted(m)."""
    session, inbox, notes = bare_inbox()
    a, b, c = m("a"), m("b"), m("c")
    inbox.append("next-step", a)
    inbox.append("next-step", b)
    inbox.prepend("next-step", c)
    assert [e.data for e in session.events] == [
        {"target": "next-step", "start": 0, "inserted": [a.to_json()]},
        {"target": "next-step", "start": 1, "inserted": [b.to_json()]},
        {"target": "next-step", "start": 0, "inserted": [c.to_json()]},
    ]
    assert inbox.next_step == (c, a, b)
    assert inbox.has_pending is True
    assert notes.of("inserted") == [a.id, b.id, c.id]


def test_rule_claim_is_pure_and_notifies_claimed_after_both():
    """§2.3 claim: deletes all of next_step then the first next_turn item without `outcome`, no
    discarded notifications, then claimed(message, turn) for each, next-step items first; at a
    later boundary ('next-step') only next_step is claimed."""
    session, inbox, notes = bare_inbox()
    t1, t2, s1, s2 = m("t1"), m("t2"), m("s1"), m("s2")
    for target, msg in (("next-turn", t1), ("next-turn", t2), ("next-step", s1),
                        ("next-step", s2)):
        inbox.append(target, msg)
    notes.log.clear()
    before = session.seq
    claimed = inbox.claim("next-turn", 7)
    assert [x.id for x in claimed] == [s1.id, s2.id, t1.id]
    assert [e.data for e in session.events[before:]] == [
        {"target": "next-step", "start": 0, "removedCount": 2, "inserted": []},
        {"target": "next-turn", "start": 0, "removedCount": 1, "inserted": []},
    ]
    assert notes.log == [("claimed", s1.id, 7), ("claimed", s2.id, 7), ("claimed", t1.id, 7)]
    assert inbox.next_turn == (t2,) and inbox.next_step == ()
    s3 = m("s3")
    inbox.append("next-step", s3)
    assert [x.id for x in inbox.claim("next-step", 7)] == [s3.id]
    assert inbox.next_turn == (t2,)
    before = session.seq
    assert inbox.claim("next-step", 8) == []
    assert session.seq == before


def test_c25_invalid_replay():
    """C-25: a session whose first event is agent/inbox/spliced{next-turn, start 1, inserted []}
    makes Inbox construction raise 'invalid persisted inbox splice at session seq 0'."""
    session = Session("invalid-inbox-replay")
    session.append("agent/inbox/spliced", {"target": "next-turn", "start": 1, "inserted": []})
    with pytest.raises(Exception, match="invalid persisted inbox splice at session seq 0"):
        Inbox(session, Notes())


@pytest.mark.parametrize("record", [
    {"target": "next-turn", "start": 0, "removedCount": 2, "inserted": []},
    {"target": "next-turn", "start": 0.5, "inserted": []},
    {"target": "next-turn", "start": -1, "inserted": []},
    {"target": "next-turn", "start": 0, "removedCount": -1, "inserted": []},
    {"target": "elsewhere", "start": 0, "inserted": []},
    {"target": "next-step", "start": 0, "inserted": ["DUP", "DUP"]},
    {"target": "next-step", "start": 0, "inserted": ["PENDING"]},
])
def test_rule_replay_validation_failures(record):
    """§2.5/§2.6: replay validates each splice against the projection (integer start in [0, len],
    removedCount ≥ 0 within bounds, unique ids across both lists); a failure names the seq."""
    session = Session("bad-replay")
    pending = m("pending")
    session.append("agent/inbox/spliced", {"target": "next-turn", "start": 0,
                                           "inserted": [pending.to_json()]})
    dup = m("dup").to_json()
    inserted = [pending.to_json() if x == "PENDING" else dup if x == "DUP" else x
                for x in record["inserted"]]
    session.append("agent/inbox/spliced", {**record, "inserted": inserted})
    with pytest.raises(Exception, match="invalid persisted inbox splice at session seq 1"):
        Inbox(session, Notes())


def test_rule_replay_reproduces_projection_without_notifications():
    """§2.6: a new Inbox on the same session replays every splice (index ≥ seedLength) to the same
    projection and emits no notifications; non-splice events are ignored."""
    session, inbox, _ = bare_inbox()
    a, b, c = m("a"), m("b"), m("c")
    inbox.append("next-turn", a)
    session.append("turn/start", {"turn": 1})
    inbox.append("next-step", b)
    inbox.replace(a.id, c)
    inbox.claim("next-step", 1)
    notes = Notes()
    replayed = Inbox(session, notes)
    assert replayed.next_turn == inbox.next_turn == (c,)
    assert replayed.next_step == () and notes.log == []


def test_rule_replay_ignores_events_before_seed_length():
    """§1.3/§2.6: only events with index ≥ header.seedLength are replayed, so a forked child does
    not inherit the parent's pending items."""
    parent, inbox, _ = bare_inbox("parent")
    inbox.append("next-turn", m("parent pending"))
    seed = list(parent.events)
    child = Session("child", seed, {"version": 0, "id": "child", "createdAt": 1,
                                     "seedLength": len(seed), "parentSession": "parent"})
    assert child.events[-1].type == "session/end-seed"
    assert Inbox(child, Notes()).has_pending is False
    # without a seedLength in the header the same seed would be replayed
    resumed = Session("child2", seed)
    assert [x.text for x in Inbox(resumed, Notes()).next_turn] == ["parent pending"]


# -- property: random inbox operations against a plain-list model ------------------------------

coords = st.one_of(
    st.integers(min_value=-8, max_value=8),
    st.floats(allow_nan=True, allow_infinity=True, width=64),
    st.sampled_from([math.nan, math.inf, -math.inf, 0.5, -0.5, 2.7, -2.7, 1e300, -1e300]),
)
targets = st.sampled_from(["next-turn", "next-step"])
operation = st.one_of(
    st.tuples(st.just("append"), targets),
    st.tuples(st.just("prepend"), targets),
    st.tuples(st.just("splice"), targets, coords, coords, st.integers(0, 2),
              st.booleans()),
    st.tuples(st.just("replace"), st.integers(0, 9), st.sampled_from(["new", "same", "dup"])),
    st.tuples(st.just("remove"), st.integers(0, 9)),
    st.tuples(st.just("clear")),
    st.tuples(st.just("claim"), targets, st.integers(1, 3)),
)


def _norm_start(value, length):
    if isinstance(value, float):
        if math.isnan(value):
            return 0
        if math.isinf(value):
            return length if value > 0 else 0
    number = int(value)
    return max(length + number, 0) if number < 0 else min(number, length)


def _norm_count(value, available):
    if isinstance(value, float):
        if math.isnan(value):
            return 0
        if math.isinf(value):
            return available if value > 0 else 0
    return min(max(int(value), 0), available)


class Model:
    """The plain-list reference model of §2."""

    def __init__(self):
        self.lists = {"next-turn": [], "next-step": []}
        self.records = []
        self.notes = []

    def ids(self):
        return [x.id for lst in self.lists.values() for x in lst]

    def mutate(self, target, start, count, inserted, discard):
        items = self.lists[target]
        s = _norm_start(start, len(items))
        c = _norm_count(count, len(items) - s)
        if c == 0 and not inserted:
            return "noop", []
        leaving = {x.id for x in items[s:s + c]}
        remaining = [i for i in self.ids() if i not in leaving]
        new_ids = [x.id for x in inserted]
        if len(set(new_ids)) != len(new_ids) or any(i in remaining for i in new_ids):
            return "raise", []
        record = {"target": target, "start": s}
        if c:
            record["removedCount"] = c
        record["inserted"] = [x.to_json() for x in inserted]
        if discard and c:
            record["outcome"] = "canceled"
        removed = items[s:s + c]
        items[s:s + c] = inserted
        self.records.append(record)
        if discard:
            self.notes += [("discarded", x.id) for x in removed]
        self.notes += [("inserted", x.id) for x in inserted]
        return "ok", removed

    def locate(self, message_id):
        for target in ("next-turn", "next-step"):
            for index, x in enumerate(self.lists[target]):
                if x.id == message_id:
                    return target, index
        return None


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(operation, max_size=25))
def test_property_inbox_matches_list_model_and_replays(ops):
    """§2.2–§2.6 property: for any sequence of append/prepend/splice/replace/remove/clear/claim with
    arbitrary coordinates (negative, fractional, NaN, ±inf), the projection equals a plain-list
    model, the logged records and notifications match it, a rejected op changes nothing, and a
    fresh Inbox(session) replays the log to the same projection without notifications."""
    session, inbox, notes = bare_inbox()
    model = Model()
    counter = iter(range(10_000))
    known: list = []

    def fresh():
        msg = user_message(f"m{next(counter)}")
        known.append(msg)
        return msg

    for op in ops:
        before_seq = session.seq
        kind = op[0]
        expect = "ok"
        if kind in ("append", "prepend"):
            msg = fresh()
            start = math.inf if kind == "append" else 0
            expect, _ = model.mutate(op[1], start, 0, [msg], True)
            getattr(inbox, kind)(op[1], msg)
        elif kind == "splice":
            _, target, start, count, n_new, reuse = op
            inserted = [fresh() for _ in range(n_new)]
            if reuse and known and n_new:
                inserted[0] = known[len(known) // 2]  # maybe pending → may be a duplicate
            expect, removed = model.mutate(target, start, count, inserted, True)
            if expect == "raise":
                with pytest.raises(Exception, match="already pending"):
                    inbox.splice(target, start, count, inserted)
            else:
                got = inbox.splice(target, start, count, inserted)
                assert [x.id for x in got] == [x.id for x in removed]
        elif kind in ("replace", "remove"):
            ids = model.ids()
            message_id = ids[op[1] % len(ids)] if ids and op[1] < 7 else "missing-id"
            found = model.locate(message_id)
            if kind == "remove":
                if found:
                    model.mutate(found[0], found[1], 1, [], True)
                assert inbox.remove(message_id) is bool(found)
            else:
                mode = op[2]
                if mode == "same" and found:
                    new = model.lists[found[0]][found[1]].with_text("edited")
                elif mode == "dup" and len(ids) > 1:
                    new = next(x for lst in model.lists.values() for x in lst
                               if x.id != message_id)
                else:
                    new = fresh()
                if not found:
                    assert inbox.replace(message_id, new) is False
                else:
                    expect, _ = model.mutate(found[0], found[1], 1, [new], True)
                    if expect == "raise":
                        with pytest.raises(Exception, match="already pending"):
                            inbox.replace(message_id, new)
                    else:
                        assert inbox.replace(message_id, new) is True
        elif kind == "clear":
            model.mutate("next-step", 0, math.inf, [], True)
            model.mutate("next-turn", 0, math.inf, [], True)
            inbox.clear()
        else:
            _, target, turn = op
            _, claimed_step = model.mutate("next-step", 0, math.inf, [], False)
            claimed_turn = []
            if target == "next-turn":
                _, claimed_turn = model.mutate("next-turn", 0, 1, [], False)
            claimed = [*claimed_step, *claimed_turn]
            model.notes += [("claimed", x.id, turn) for x in claimed]
            assert [x.id for x in inbox.claim(target, turn)] == [x.id for x in claimed]
        if expect == "raise":
            assert session.seq == before_seq
        # projection equals the model after every operation
        assert [x.id for x in inbox.next_turn] == [x.id for x in model.lists["next-turn"]]
        assert [x.id for x in inbox.next_step] == [x.id for x in model.lists["next-step"]]
        assert [x.text for x in inbox.next_turn] == [x.text for x in model.lists["next-turn"]]
        assert inbox.has_pending == bool(model.ids())

    assert [e.data for e in session.events] == model.records
    assert all(e.type == "agent/inbox/spliced" for e in session.events)
    assert [e.seq for e in session.events] == list(range(len(model.records)))
    assert notes.log == model.notes
    replay_notes = Notes()
    replayed = Inbox(session, replay_notes)
    assert replayed.next_turn == inbox.next_turn
    assert replayed.next_step == inbox.next_step
    assert replay_notes.log == []
