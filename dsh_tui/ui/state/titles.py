"""The transcript pane's title, fitted to the width it has.

The title says whose transcript it is, what that agent is doing and, while the inbox pane
is folded away, what waits in its inbox. Its full form takes over 90 columns; at 60
columns Textual cut it at the border with an ellipsis, and the inbox counts were the
first thing lost. So each part has shorter forms, and the parts get shorter in a fixed
order, least needed first (`SHORTER`, spelled out on `TranscriptTitle.fit`), until the
title fits. The agent's name is never shortened here (Textual's ellipsis is the last
resort for a name that alone is too long).
"""

from __future__ import annotations

from dataclasses import dataclass

from .session_rows import cells

SEPARATOR = " · "

PREFIX, NAME, STATE, WAITING, INBOX, FIGURES = range(6)

SHORTER = [(FIGURES, 1), (FIGURES, 2), (PREFIX, 1), (WAITING, 1), (INBOX, 1), (STATE, 1), (WAITING, 2),
           (INBOX, 2), (STATE, 2)]
"""(part, form) in the order the title gets shorter: each step picks a shorter form of one
part (a form past the last one the part has keeps its last)."""


@dataclass(frozen=True)
class TranscriptTitle:
    """What the transcript's title shows, before it is fitted (`fit`)."""

    name: str
    """The agent's display name."""
    state: tuple[str, ...] = ()
    """Forms of the agent's state, longest first ("running · turn 1 step 1", "running · t1
    s1", "running"); empty when there is nothing to say (idle)."""
    waited: int | None = None
    """Seconds the model has been silent, once that is worth showing; None otherwise."""
    inbox: tuple[int, int] | None = None
    """(next step, next turn) counts, shown while the inbox pane is folded away."""
    inbox_keys: str = ""
    """The key that shows the inbox pane ("^o")."""
    figures: str = ""
    """Token figures of the last request ("ctx 1.5k · in 3.0k · out 800")."""

    def forms(self) -> list[list[str]]:
        """Every part's forms, longest first ("" leaves the part out)."""
        waiting = [] if self.waited is None else [
            f"waiting for the model… ({self.waited}s) · escape stops",
            f"waiting {self.waited}s · escape stops", f"waiting {self.waited}s"]
        inbox: list[str] = []
        if self.inbox is not None:
            counts = f"⚑{self.inbox[0]} ↵{self.inbox[1]}"
            keyed = f"{counts} ({self.inbox_keys})" if self.inbox_keys else counts
            inbox = [f"inbox {keyed}", keyed, counts]
        return [["Transcript", ""], [self.name], list(self.state), waiting, inbox,
                [self.figures, self.figures.split(SEPARATOR)[0], ""] if self.figures else []]

    def render(self, chosen: list[int]) -> str:
        """The title with form `chosen[i]` of each part i."""
        shown = []
        for part, forms in enumerate(self.forms()):
            if forms:
                text = forms[min(chosen[part], len(forms) - 1)]
                if text:
                    shown.append(text)
        return SEPARATOR.join(shown)

    def fit(self, width: int | None) -> str:
        """The longest form of the title that takes at most `width` cells (None, 0 or less:
        the width is not known yet, the full title); the shortest when none fits.

        The full form reads "Transcript · demo · running · turn 1 step 1 · waiting for the
        model… (5s) · escape stops · inbox ⚑0 ↵0 (^o) · ctx …". In order: the token
        figures keep their first figure (the context size), then go; then the pane's name
        goes, the waiting notice shrinks to "waiting 5s · escape stops", the counts lose
        the word "inbox", the state shortens to "running · t1 s1", the waiting notice to
        "waiting 5s", the counts lose their key, and the state becomes "running"."""
        chosen = [0] * len(self.forms())
        title = self.render(chosen)
        for part, form in SHORTER:
            if width is None or width <= 0 or cells(title) <= width:
                break
            chosen[part] = max(chosen[part], form)
            title = self.render(chosen)
        return title
