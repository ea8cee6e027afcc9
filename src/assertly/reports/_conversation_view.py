"""A conversation trial as reports and the viewer show it: turns, checks, how it ended.

Typed views built once from a trial's records (`_records.StepRecord`: the turns, then the
conversation's own step), so the Markdown report, the HTML report and ``assertly view`` format
the same fields instead of each reading steps. Text stays as the agent and the user wrote it:
each renderer escapes it its own way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .._records import CONVERSATION_STEP, StepRecord, TestRecord, TrialRecord
from ..engine.graded._reply_text import assistant_reply

__all__ = ["ENDED", "CheckLine", "ConversationView", "TurnView", "conversation_view", "shown_trial"]

# Why a conversation ended, as people read it.
ENDED = {
    "turns": "its scripted turns ran out",
    "stop_token": "the simulated user wrote its stop token",
    "stop_when": "stop_when passed on the agent's reply",
    "max_turns": "it reached max_turns",
}


@dataclass(slots=True)
class CheckLine:
    """One assertion's verdict on a turn or on the whole conversation."""

    assertion: str
    outcome: str
    message: str


@dataclass(slots=True)
class TurnView:
    """One turn: what the user said, what the agent answered, and the turn's checks."""

    number: int
    user: str
    reply: str
    tools: list[str]
    status: str
    checks: list[CheckLine]
    error: str | None = None
    simulated: bool = False  # the simulated user wrote the message
    simulator_cost_usd: float | None = None


@dataclass(slots=True)
class ConversationView:
    """A trial's conversation: its turns, then the whole conversation's verdict."""

    trial: int
    status: str
    turns: list[TurnView] = field(default_factory=list)
    # The conversation's own checks (None: not judged, a turn's call failed).
    whole_status: str | None = None
    whole_checks: list[CheckLine] = field(default_factory=list)
    ended: str | None = None  # as people read it (`ENDED`)
    error: str | None = None


def shown_trial(test: TestRecord) -> TrialRecord | None:
    """The trial a report shows: the first that did not pass, else the first."""
    return next((t for t in test.trials if t.status in ("failed", "error")), None) or (
        test.trials[0] if test.trials else None
    )


def conversation_view(trial: TrialRecord) -> ConversationView:
    """The trial's conversation, turn by turn."""
    view = ConversationView(trial.trial, trial.status, error=trial.error)
    for step in trial.steps:
        if step.user is None and step.name == CONVERSATION_STEP:
            view.whole_status = step.status
            view.whole_checks = _checks(step)
            view.ended = ENDED.get(step.ended or "", step.ended)
            continue
        view.turns.append(
            TurnView(
                number=len(view.turns) + 1,
                user=step.user or "",
                reply="" if step.output is None else assistant_reply(step.output, None)[0],
                tools=_tools(step.tool_calls),
                status=step.status,
                checks=_checks(step),
                error=step.error,
                simulated=step.simulator_tokens is not None,
                simulator_cost_usd=step.simulator_cost_usd,
            )
        )
    return view


def _checks(step: StepRecord) -> list[CheckLine]:
    return [
        CheckLine(result.assertion, result.outcome, result.message)
        for check in step.checks
        for result in check.results
    ]


def _tools(calls: Any) -> list[str]:
    if not isinstance(calls, list):
        return []
    return [str(call.get("name")) for call in calls if isinstance(call, dict)]
