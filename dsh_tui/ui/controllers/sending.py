"""Sending and stopping: the composer's keys (follow-up, steer, inject, newline, delete
word) and the stop keys (escape keeps the inbox, ctrl+l discards it, asking first).

Each lane maps to one public Agent call in `send_on`, a match a reader and mypy follow;
the inbox rules themselves are plain functions in `state/inbox_rules.py`.
"""

from __future__ import annotations

from typing import Protocol

from dsh_tui.harness import Agent, UserMessage, user_message

from ..screens.confirm import ConfirmScreen
from ..state.inbox_edits import Remove, item_of
from ..state.inbox_rules import deliver_kept, pending_count
from ..state.lanes import source_for
from .edits import InboxEdits
from .seams import Panes, Screenside, Selection, World

READ_ONLY_NOTICE = "Read-only view of a session log: sending and editing are disabled."
LANE_PHRASE = {"follow-up": "a follow-up", "steer": "a steer", "inject": "injected context"}


def send_on(agent: Agent, lane: str, message: UserMessage) -> None:
    """Send `message` in `lane` (follow-up, steer or inject): the one public call each
    lane means. Raises ValueError for any other lane."""
    match lane:
        case "follow-up":
            agent.followup(message)
        case "steer":
            agent.steer(message)
        case "inject":
            agent.inject(message)
        case _:
            raise ValueError(f"no such lane: {lane!r}")


class Host(World, Panes, Selection, Screenside, Protocol):
    """What sending needs of the screen."""


class Sending:
    """The composer's keys and the stop keys, on the selected agent."""

    def __init__(self, host: Host, edits: InboxEdits | None = None) -> None:
        self.host = host
        self.edits = edits
        """The inbox history: a stop that clears the inbox is recorded there (ctrl+z)."""

    def send(self, lane: str) -> None:
        """Send the composer's text in `lane`; an empty follow-up delivers kept work."""
        host = self.host
        agent = host.writable_agent()
        if agent is None:
            return
        composer = host.composer
        text = composer.text
        if not text.strip():
            if lane == "follow-up" and agent.status != "running" and agent.inbox.has_pending:
                self.deliver_kept(agent)
            else:
                host.say("Nothing to send: type a message first.")
            return
        if self.send_text(agent, text, lane):  # refused: the text stays in the composer
            composer.remember(text)
            composer.clear()

    def send_text(self, agent: Agent, text: str, lane: str) -> bool:
        """Send `text` as a new message in `lane`; False (after saying why) if it failed."""
        try:
            send_on(agent, lane, user_message(text, source=source_for(lane)))
        except Exception as error:
            self.host.say(f"Could not send to {self.host.display_name(agent.id)}: {error}",
                          "error")
            return False
        return True

    def deliver_kept(self, agent: Agent) -> None:
        """Wake an idle agent on the work it kept after a stop, in the same order."""
        try:
            count = deliver_kept(agent)
        except Exception as error:
            self.host.say(f"Could not deliver the kept inbox: {error}", "error")
            return
        self.host.say(f"Delivering {count} kept item{'s' if count != 1 else ''} to "
                      f"{self.host.display_name(agent.id)}.")

    def delete_word(self) -> None:
        self.host.composer.action_delete_word_left()
        self.host.composer.focus()

    def newline(self) -> None:
        if self.host.read_only:
            self.host.say(READ_ONLY_NOTICE, "warning")
            return
        self.host.composer.action_newline()
        self.host.composer.focus()

    # -- stopping ----------------------------------------------------------------------------

    def cancel_keep_inbox(self) -> None:
        host = self.host
        agent = host.writable_agent()
        if agent is None:
            return
        name = host.display_name(agent.id)
        if agent.status != "running":
            host.say(f"{name} is not running.")
            return
        agent.cancel(None, keep_inbox=True)
        kept = pending_count(agent.inbox)
        if kept:
            host.say(f"Stopped {name}. {kept} inbox item{'s' if kept != 1 else ''} kept "
                     "(paused): enter on an empty composer delivers them.")
        else:
            host.say(f"Stopped {name}.")

    def cancel_clear(self) -> None:
        host = self.host
        agent = host.writable_agent()
        if agent is None:
            return
        name = host.display_name(agent.id)
        pending = pending_count(agent.inbox)
        running = agent.status == "running"
        if not running and not pending:
            host.say(f"{name} is idle with an empty inbox: nothing to stop or clear.")
            return

        def answer(yes: bool | None) -> None:
            if not yes:
                return
            items = [item for message in (*agent.inbox.next_step, *agent.inbox.next_turn)
                     if (item := item_of(agent.inbox, agent.id, message.id)) is not None]
            agent.cancel(None, keep_inbox=False)
            if self.edits is not None and items:
                self.edits.record(Remove(items, name=f"stop and clear {len(items)} item"
                                                     f"{'s' if len(items) != 1 else ''}"))
            host.say(f"Stopped {name} and discarded {pending} inbox item"
                     f"{'s' if pending != 1 else ''} ({undo_keys(host)} undoes).")

        what = "Stop" if running else "Clear the inbox of"
        host.ask(ConfirmScreen(
            f"{what} {name} and discard {pending} pending item{'s' if pending != 1 else ''}?",
            "The running turn ends as aborted. Undo (ctrl+z) puts the discarded items "
            "back.", yes="Stop and clear"), answer)


def undo_keys(host: Screenside) -> str:
    """The inbox's undo keys as prose says them ("ctrl+z"), for "… undoes" notes."""
    return host.keys_label("undo_discard") or "undo"
