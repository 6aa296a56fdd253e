"""§8 fold_consumed_work (C-86 … C-94) and §7, plus folds of real agent logs."""

from __future__ import annotations

from dsh_tui.harness import Session, fold_consumed_work, user_message
from dsh_tui.llm.scripted import hang, text

from .conftest import bounded, events_of, m, text_deltas, until


def accept(session, text_):
    session.append("agent/inbox/spliced", {"target": "next-turn", "start": 0,
                                           "inserted": [user_message(text_).to_json()]})


def claim(session):
    session.append("agent/inbox/spliced", {"target": "next-turn", "start": 0,
                                           "removedCount": 1, "inserted": []})


def cancel_pending(session):
    session.append("agent/inbox/spliced", {"target": "next-turn", "start": 0,
                                           "removedCount": 1, "inserted": [],
                                           "outcome": "canceled"})


def stepped_turn(session, turn, reason):
    session.append("turn/start", {"turn": turn})
    claim(session)
    session.append("step/start", {"turn": turn, "step": 1})
    session.append("step/end", {"turn": turn, "step": 1})
    session.append("turn/end", {"turn": turn, "reason": reason})


def claimed_turn(session, turn, reason):
    session.append("turn/start", {"turn": turn})
    claim(session)
    session.append("turn/end", {"turn": turn, "reason": reason})


COMPLETED = {"kind": "completed"}


def test_c86_only_an_accepted_insertion():
    """C-86: a log with only an accepted insertion → {dropped_unrun: False} without 'end'."""
    session = Session("empty")
    accept(session, "queued")
    assert fold_consumed_work(session.events) == {"dropped_unrun": False}
    assert fold_consumed_work([]) == {"dropped_unrun": False}


def test_c87_latest_stepped_turn():
    """C-87: two stepped turns (completed, max-tokens) → end is turn 2 (max-tokens)."""
    session = Session("stepped")
    stepped_turn(session, 1, COMPLETED)
    stepped_turn(session, 2, {"kind": "max-tokens"})
    result = fold_consumed_work(session.events)
    assert result["end"].data == {"turn": 2, "reason": {"kind": "max-tokens"}}
    assert result["end"] is session.events[-1]
    assert result["dropped_unrun"] is False


def test_rule_claimed_then_failed_or_stopped_before_any_step():
    """§7 (held-back C-88): a turn that claimed its input and then failed, was aborted or was
    blocked before any step accounts for the work."""
    for reason in ({"kind": "error", "error": {"message": "ENOSPC", "code": "UNKNOWN"}},
                   {"kind": "aborted", "reason": {"kind": "user"}}, {"kind": "blocked"},
                   {"kind": "interrupted"}, {"kind": "some-extension"}):
        session = Session("failed-claim")
        stepped_turn(session, 1, COMPLETED)
        claimed_turn(session, 2, reason)
        assert fold_consumed_work(session.events)["end"].data["turn"] == 2, reason


def test_c89_turns_without_claim_do_not_account():
    """C-89: turns 2–4 with no claim ending aborted/error/blocked → end stays turn 1."""
    session = Session("no-claim")
    stepped_turn(session, 1, COMPLETED)
    session.append("turn/start", {"turn": 2})
    session.append("turn/end", {"turn": 2, "reason": {"kind": "aborted",
                                                      "reason": {"kind": "parent"}}})
    session.append("turn/start", {"turn": 3})
    session.append("turn/end", {"turn": 3, "reason": {"kind": "error", "error": {
        "message": "x", "code": "UNKNOWN"}}})
    session.append("turn/start", {"turn": 4})
    session.append("turn/end", {"turn": 4, "reason": {"kind": "blocked"}})
    assert fold_consumed_work(session.events)["end"].data["turn"] == 1


def test_rule_claim_emptied_by_its_own_completed_turn_does_not_account():
    """§7 (held-back C-90): a claim in a turn that ends 'completed' without a step (the batch was
    rewritten away) does not account."""
    session = Session("emptied-claim")
    stepped_turn(session, 1, COMPLETED)
    claimed_turn(session, 2, COMPLETED)
    assert fold_consumed_work(session.events)["end"].data["turn"] == 1


def test_c91_claim_without_open_turn_is_credited_to_nobody():
    """C-91: a claim with no open turn in the suffix followed by turn/end{2, aborted} → end stays
    turn 1."""
    session = Session("mid-turn-suffix")
    stepped_turn(session, 1, COMPLETED)
    claim(session)
    session.append("turn/end", {"turn": 2, "reason": {"kind": "aborted",
                                                      "reason": {"kind": "user"}}})
    assert fold_consumed_work(session.events)["end"].data["turn"] == 1


def test_rule_cancel_after_last_accounting_turn_is_dropped_unrun():
    """§7 (held-back C-92): work cancelled out of the inbox after the last accounting turn, without
    a replacement → dropped_unrun True."""
    session = Session("dropped")
    stepped_turn(session, 1, COMPLETED)
    accept(session, "never runs")
    cancel_pending(session)
    result = fold_consumed_work(session.events)
    assert result == {"end": events_of(session, "turn/end")[0], "dropped_unrun": True}


def test_rule_replacement_is_not_dropped_work():
    """§7 (held-back C-93): a canceled splice that inserts a successor (a replace) keeps work
    pending and does not count as dropped."""
    session = Session("replaced")
    stepped_turn(session, 1, COMPLETED)
    session.append("agent/inbox/spliced", {
        "target": "next-turn", "start": 0, "removedCount": 1,
        "inserted": [user_message("rewritten").to_json()], "outcome": "canceled"})
    assert fold_consumed_work(session.events)["dropped_unrun"] is False


def test_c94_later_accounting_turn_absorbs_a_drop():
    """C-94: turn 1, a canceled deletion, stepped turn 2 → {end: turn 2, dropped_unrun: False}."""
    session = Session("absorbed")
    stepped_turn(session, 1, COMPLETED)
    cancel_pending(session)
    stepped_turn(session, 2, COMPLETED)
    assert fold_consumed_work(session.events) == {"end": events_of(session, "turn/end")[1],
                                                  "dropped_unrun": False}


def test_rule_fold_accepts_plain_json_records_and_suffixes():
    """§7: the fold is pure and works on an owned suffix and on plain JSON records (to_json)."""
    session = Session("plain")
    stepped_turn(session, 1, COMPLETED)
    accept(session, "x")
    cancel_pending(session)
    plain = [e.to_json() for e in session.events]
    result = fold_consumed_work(plain)
    assert result["end"]["data"]["turn"] == 1 and result["dropped_unrun"] is True
    suffix = list(session.events)[5:]
    assert fold_consumed_work(suffix) == {"dropped_unrun": True}


async def test_rule_fold_of_real_agent_logs(make_world):
    """§7/§10: folding real logs: a completed turn accounts; a cancel that drops queued work after it
    reports dropped_unrun; an aborted mid-step turn accounts with its aborted end."""
    world = make_world([text("done"), hang()])
    agent = await world.agent()
    agent.followup(m("first"))
    await bounded(agent.when_idle())
    result = fold_consumed_work(agent.session.events)
    assert result["end"].data == {"turn": 1, "reason": {"kind": "completed"}}
    assert result["dropped_unrun"] is False
    agent.inject(m("pending"))
    agent.cancel()
    assert fold_consumed_work(agent.session.events)["dropped_unrun"] is True
    boundary = agent.session.seq
    agent.followup(m("second"))
    await until(lambda: len(text_deltas(agent)) >= 7)
    agent.cancel()
    await bounded(agent.when_idle())
    suffix = fold_consumed_work(agent.session.events[boundary:])
    assert suffix["end"].data == {"turn": 2, "reason": {"kind": "aborted",
                                                        "reason": {"kind": "user"}}}
    assert suffix["dropped_unrun"] is False
