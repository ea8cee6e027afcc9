"""Plain-text lines describing why a test did not pass, shared by the console and JUnit."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .._json import dumps
from .._records import CONVERSATION_STEP, EvalCaseRecord, TestRecord, TrialRecord

__all__ = ["eval_case_detail", "test_failure_lines", "turn_labels", "value_text"]


def value_text(value: Any, limit: int = 300) -> str:
    """A value as it reads in a report line: strings quoted, the rest as JSON, clipped."""
    text = f"'{value}'" if isinstance(value, str) else dumps(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def test_failure_lines(test: TestRecord) -> Iterator[str]:
    """Each failing trial's error and failing assertions with path, expected and actual.

    Trials that failed in exactly the same way are shown once, with their numbers and count
    (``trials 1, 3 (2 of 3):``). An assertion that could not be judged is marked ``!``, as
    ``assertly check`` marks it; one that failed, ``✗``.
    """
    several = len(test.trials) > 1
    groups: dict[str, list[Any]] = {}
    for trial in test.trials:
        if trial.status in ("passed", "skipped"):
            continue
        signature = dumps([trial.error, [item.failure_json() for item in trial.failures]])
        groups.setdefault(signature, []).append(trial)
    for trials in groups.values():
        first = trials[0]
        if not several:
            prefix = "  "
        elif len(trials) == 1:
            prefix = f"  trial {first.trial}: "
        else:
            numbers = ", ".join(str(trial.trial) for trial in trials)
            prefix = f"  trials {numbers} ({len(trials)} of {len(test.trials)}): "
        if first.error:
            yield f"{prefix}error: {first.error}"
            last = first.steps[-1] if test.conversation and first.steps else None
            if last is not None and last.user and last.status == "error":  # "": none written
                yield f"      user said: {value_text(last.user)}"  # the turn that failed
        turns = turn_labels(first) if test.conversation else {}
        for failure in first.failures:
            mark = "!" if failure.outcome == "error" else "✗"
            where = turns.get(failure.step or "")
            where = f"{where}: " if where else ""
            yield f"{prefix}{mark} {where}{failure.assertion}: {failure.message}"
            if failure.path:
                yield f"      path:     {failure.path}"
            if failure.expected is not None:
                yield f"      expected: {value_text(failure.expected)}"
            if failure.actual is not None:
                yield f"      actual:   {value_text(failure.actual)}"
    if test.flaky:
        yield f"  flaky: {test.passes}/{len(test.trials)} trials passed"


def turn_labels(trial: TrialRecord) -> dict[str, str]:
    """A conversation trial's steps as failures name them: ``turn 2 (user: 'Where is it?')``."""
    labels = {CONVERSATION_STEP: "the whole conversation"}
    for step in trial.steps:
        if step.user is not None:
            labels[step.name] = f"{step.name} (user: {value_text(step.user, 60)})"
    return labels


def eval_case_detail(case: EvalCaseRecord) -> str:
    """Why an eval case did not pass: its error, or its failing assertions per block."""
    return case.error or "; ".join(
        f"[{block}] {result.assertion}: {result.message}"
        for block, check in case.blocks.items()
        for result in check.results
        if not result.passed
    )
