"""Judging a trial's steps: one function for a run, a recheck, the pytest plugin and Ray workers.

`check_steps` walks a trial's steps in order: it asks for each step's answer, judges it with
the responses of the earlier steps in its context, records it, and stops at the first step that
did not pass (later steps build on it). It calls no target and judges nothing itself: the
answers come from ``respond`` (a call, a fixture, a recorded line, a stored step) and the
verdicts from ``judge`` (inline with `check_step`, in the check process, or with the model
judge's replies), so every way of running a trial shares the same bookkeeping.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from .._check_records import CheckRecord
from .._records import Status, StepRecord, TrialRecord
from ..engine import CheckContext, CheckResult, Outcome
from ..engine._context import CallMetrics
from ..loading import Step
from ._signals import checking, done

__all__ = [
    "Answer",
    "StepFailure",
    "StepChecker",
    "check_record",
    "check_step",
    "check_steps",
    "step_status",
]


@dataclass(slots=True)
class Answer:
    """A step's output to judge, with what came with it.

    Attributes:
        output: What the agent answered.
        metrics: The call's metrics (latency reported, or measured around a call; cost,
            model, tokens, tool calls as reported).
        called: Whether it came from a call made now (only those may go to the check process).
    """

    output: Any
    metrics: CallMetrics
    called: bool = False


@dataclass(slots=True)
class StepFailure:
    """A step that could not be answered: the trial ends in an error here.

    Attributes:
        error: The trial's error (None only as a stored trial had it).
        step: The step's record to keep, if any.
    """

    error: str | None
    step: StepRecord | None = None


# What judges one step: (step, output, context, called) -> its record.
StepChecker = Callable[[Step, Any, CheckContext, bool], Awaitable[StepRecord]]


async def check_steps(
    record: TrialRecord,
    steps: Iterable[Step | StepFailure],
    respond: Callable[[Step], Awaitable[Answer | StepFailure]],
    judge: StepChecker,
    *,
    now: datetime | None,
) -> None:
    """Judge a trial's steps in order into ``record`` (its steps, status, score).

    ``record`` comes in ``passed``; it leaves with the status of the first step that did not
    pass, or ``error`` at the first `StepFailure` (from ``steps`` or from ``respond``). No
    later step is answered. The score is the mean of the judged steps' scores (0.0 when none
    was judged).

    Args:
        record: The trial's record, filled in.
        steps: The steps in order; a `StepFailure` in their place ends the trial there.
        respond: A step's answer (awaited only for steps the trial reaches).
        judge: A step's verdict on an answer.
        now: The clock date assertions read (``--now``).
    """
    stored: dict[str, Any] = {}
    scores: list[float] = []
    for item in steps:
        if isinstance(item, StepFailure):
            _end_in_error(record, item)
            break
        step = item
        answer = await respond(step)
        if isinstance(answer, StepFailure):
            _end_in_error(record, answer)
            break
        metrics = answer.metrics
        context = CheckContext.of_call(metrics, steps=stored, now=now)
        judged = await judge(step, answer.output, context, answer.called)
        judged.latency_ms, judged.cost_usd = metrics.latency_ms, metrics.cost_usd
        judged.model, judged.tokens = metrics.model, metrics.tokens
        judged.tool_calls, judged.spans = metrics.tool_calls, metrics.spans
        record.steps.append(judged)
        scores.append(judged.score if judged.score is not None else 0.0)
        if step.store:
            stored[step.store] = answer.output
        if judged.status != "passed":
            # Later steps build on this one; a failed or errored step ends the trial.
            record.status = judged.status
            break
    record.score = sum(scores) / len(scores) if scores else 0.0


def _end_in_error(record: TrialRecord, failure: StepFailure) -> None:
    if failure.step is not None:
        record.steps.append(failure.step)
    record.status, record.error = "error", failure.error


# The record of each shared all-pass result seen last, by identity (`CheckResult.as_record`):
# built once, so a run of thousands of passing checks allocates none per trial. Each entry
# holds the result itself, so its id cannot be reused while it is here.
_SHARED: dict[int, tuple[CheckResult, CheckRecord]] = {}


def check_record(result: CheckResult) -> CheckRecord:
    """What a step keeps of one expectation's result (shared for a shared all-pass result)."""
    seen = _SHARED.get(id(result))
    if seen is not None and seen[0] is result:
        return seen[1]
    record = CheckRecord.from_json(result.as_record())
    if result.passed:  # only passes are shared; a failure is new every time
        if len(_SHARED) >= 256:
            _SHARED.clear()
        _SHARED[id(result)] = (result, record)
    return record


def step_status(outcomes: Iterable[Outcome]) -> Status:
    """A step's (or an eval case's) status from its checks: a failure outranks an error."""
    found = set(outcomes)
    if Outcome.FAILED in found:
        return "failed"
    return "error" if Outcome.ERROR in found else "passed"


def check_step(name: str, checks: Sequence[Any], output: Any, context: CheckContext) -> StepRecord:
    """The step's record: its status, score and checks (its failures are computed from them).

    Pure: what `check_steps`' judges run inline, in the check process, and (twice, around the
    judge's calls) for model-graded assertions.
    """
    # Pure, so abandoned on SIGTERM or Ctrl-C in the event loop's thread (`_signals`).
    marked = checking()
    try:
        results = [expectation.check(output, context=context) for expectation in checks]
    finally:
        if marked:
            done()
    status = step_status(result.outcome for result in results)
    score = sum(r.score for r in results) / len(results) if results else 1.0
    data = [check_record(result) for result in results]
    return StepRecord(name, status, output=output, checks=data, score=score)
