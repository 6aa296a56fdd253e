"""The UI's state layer: everything the screen knows, kept in plain Python.

Nothing in this package imports Textual or Rich (an import-linter contract in
pyproject.toml enforces it), so the work of showing a session, the inbox rules and
the pacing decisions can be run and tested without a screen, and the Textual layer
around it (app, screens, widgets) stays a thin renderer of this state.

    bridge       session events → coalesced flushes for the screen
    agent_view   one agent as the screen knows it (transcript, inbox tombstones, unsent)
    transcript   a session's conversation as items, folded one event at a time
    transcript_lines  the transcript as lines: heights, y → (item, line), a line cache
    inbox_rows   the rows the inbox pane lists
    lanes        follow-up / steer / inject: how a message is filed and badged
    text         short ids, one-line summaries, durations, token counts, reason words
    unsent       messages a turn claimed and never sent (offered back)
    inbox_log    a log read as inbox operations, each with its actor (person, model, system)
    receipts     each message's life: pending, held, claimed, sent, answered, or where it went
    timeline     turns, steps, claims and inbox operations on one time axis, filtered
    inbox_edits  undoable inbox edits: remove, edit, move, re-file, merge, split, transfer
    undo         the session-long named undo/redo history of those edits
    marks        the items the person marked (what merge, move and copy act on)
    hold_view    edit holds as shown: the editor's line, the item's and the row's badges
    notices      the status line's one notice and when it goes
    search       transcript search
    breakpoints  pauses before a step and what the person chose
    export       a session as Markdown or JSONL
    config       the config file and its settings
    routes       named model routes ([routes.NAME]): what each new agent may run on
    world        creating, spawning and resuming agents through ctx.agents
"""
