"""Failure lines shared by the console and JUnit: identical trials shown once with a count,
and the same marks as ``assertly check`` (``✗`` failed, ``!`` could not be judged)."""

from __future__ import annotations

from typing import Any

from assertly.reports._failures import test_failure_lines as failure_lines
from assertly.runner import TestRecord as Record
from assertly.runner import TrialRecord
from records_support import given

WRONG_STATUS = {
    "assertion": "status",
    "outcome": "failed",
    "message": "Expected status 'success', got 'error'",
    "path": "status",
    "expected": "success",
    "actual": "error",
}
NO_COST = {
    "assertion": "cost",
    "outcome": "error",
    "message": "cost_usd was not measured for this output, so cost cannot be judged",
}


def record(*trials: tuple[str, list[dict[str, Any]]]) -> Record:
    return Record(
        key="f::s::t",
        id="t",
        name="t",
        suite="s",
        file="f",
        status="failed",
        score=0.0,
        trials=[
            TrialRecord("f::s::t", number, status, 1.0, kept_failures=given(failures))  # type: ignore[arg-type]
            for number, (status, failures) in enumerate(trials, start=1)
        ],
    )


def test_identical_trials_are_shown_once_with_their_count() -> None:
    test = record(
        ("failed", [WRONG_STATUS]),
        ("passed", []),
        ("failed", [WRONG_STATUS]),
        ("failed", [NO_COST]),
    )
    assert list(failure_lines(test)) == [
        "  trials 1, 3 (2 of 4): ✗ status: Expected status 'success', got 'error'",
        "      path:     status",
        "      expected: 'success'",
        "      actual:   'error'",
        "  trial 4: ! cost: cost_usd was not measured for this output, so cost cannot be judged",
        "  flaky: 1/4 trials passed",
    ]


def test_one_trial_has_no_prefix() -> None:
    assert list(failure_lines(record(("error", [NO_COST])))) == [
        "  ! cost: cost_usd was not measured for this output, so cost cannot be judged"
    ]
