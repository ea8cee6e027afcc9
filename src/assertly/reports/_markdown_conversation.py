"""The Markdown report's transcript of a conversation test (issue 32).

One table per trial shown: each turn's user message, the agent's reply (its text and tool
calls, as the conversation kept them), the turn's verdict and the failing checks' messages;
then the whole conversation's verdict and how it ended. Every cell is untrusted text, escaped
as everywhere in the report (`md_text`).
"""

from __future__ import annotations

from typing import Any

from .._records import CONVERSATION_STEP, TestRecord, TrialRecord
from ..engine.graded._reply_text import assistant_reply
from ._markdown import _table, md_text
from ._matrix_text import MARKS

__all__ = ["conversation_lines"]

# Why a conversation ended, as the report says it.
ENDED = {
    "turns": "its scripted turns ran out",
    "stop_token": "the simulated user wrote its stop token",
    "stop_when": "stop_when passed on the agent's reply",
    "max_turns": "it reached max_turns",
}
_CELL = 300  # characters of a message shown in a cell


def conversation_lines(test: TestRecord) -> list[str]:
    """The transcript of the test's first trial that did not pass (else its first)."""
    shown = next((t for t in test.trials if t.status in ("failed", "error")), None)
    shown = shown or (test.trials[0] if test.trials else None)
    if shown is None or not shown.steps:
        return []
    title = "**Conversation**"
    if len(test.trials) > 1:
        title += f" (trial {shown.trial})"
    return ["", title, "", *_table(["Turn", "User", "Agent", "Verdict"], _rows(shown), "rlll")]


def _rows(trial: TrialRecord) -> list[list[str]]:
    rows: list[list[str]] = []
    for step in trial.steps:
        verdict = f"{MARKS.get(step.status, '?')} {step.status}"
        problems = [failure.message for failure in step.failures() if failure.message]
        if step.error:
            problems.insert(0, step.error)
        if problems:
            verdict += ": " + "; ".join(problems)
        if step.name == CONVERSATION_STEP and step.user is None:
            ended = ENDED.get(step.ended or "", step.ended or "")
            whole = "whole conversation" + (f" (ended: {ended})" if ended else "")
            rows.append(["", md_text(whole), "", md_text(verdict, _CELL)])
            continue
        number = step.name.removeprefix("turn ")
        rows.append(
            [
                md_text(number),
                md_text(step.user or "", _CELL),
                md_text(_reply(step.output, step.tool_calls), _CELL),
                md_text(verdict, _CELL),
            ]
        )
    return rows


def _reply(output: Any, calls: Any) -> str:
    """A reply's text as the transcript shows it, with its tool calls' names."""
    text = "" if output is None else assistant_reply(output, None)[0]
    if isinstance(calls, list) and calls:
        names = ", ".join(str(call.get("name")) for call in calls if isinstance(call, dict))
        text = f"{text} [tools: {names}]" if text else f"[tools: {names}]"
    return text
