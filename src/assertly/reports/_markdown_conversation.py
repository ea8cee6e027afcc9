"""The Markdown report's transcript of a conversation test (issue 32).

One table for the trial shown (`shown_trial`): each turn's user message, the agent's reply
(its text and tool calls), the turn's verdict and its failing checks' messages; then the whole
conversation's verdict and how it ended. Every cell is untrusted text, escaped as everywhere in
the report (`md_text`).
"""

from __future__ import annotations

from .._records import TestRecord
from ._conversation_view import CheckLine, conversation_view, shown_trial
from ._markdown import _table, md_text
from ._matrix_text import MARKS

__all__ = ["conversation_lines"]

_CELL = 300  # characters of a message shown in a cell


def conversation_lines(test: TestRecord) -> list[str]:
    """The transcript of the test's first trial that did not pass (else its first)."""
    trial = shown_trial(test)
    if trial is None or not trial.steps:
        return []
    view = conversation_view(trial)
    title = "**Conversation**" + (f" (trial {view.trial})" if len(test.trials) > 1 else "")
    rows: list[list[str]] = []
    for turn in view.turns:
        reply = turn.reply + (f" [tools: {', '.join(turn.tools)}]" if turn.tools else "")
        user = turn.user + (" (simulated user)" if turn.simulated else "")
        verdict = _verdict(turn.status, turn.checks, turn.error)
        rows.append([str(turn.number), md_text(user, _CELL), md_text(reply, _CELL), verdict])
    if view.whole_status is not None:
        whole = "whole conversation" + (f" (ended: {view.ended})" if view.ended else "")
        rows.append(["", md_text(whole), "", _verdict(view.whole_status, view.whole_checks)])
    return ["", title, "", *_table(["Turn", "User", "Agent", "Verdict"], rows, "rlll")]


def _verdict(status: str, checks: list[CheckLine], error: str | None = None) -> str:
    problems = [c.message for c in checks if c.outcome in ("failed", "error") and c.message]
    if error:
        problems.insert(0, error)
    text = f"{MARKS.get(status, '?')} {status}" + (": " + "; ".join(problems) if problems else "")
    return md_text(text, _CELL)
