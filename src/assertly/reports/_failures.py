"""Plain-text lines describing why a test did not pass, shared by the console and JUnit."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..engine._values import dumps
from ..runner import EvalCaseRecord, TestRecord

__all__ = ["eval_case_detail", "test_failure_lines", "value_text"]


def value_text(value: Any, limit: int = 300) -> str:
    """A value as it reads in a report line: strings quoted, the rest as JSON, clipped."""
    text = f"'{value}'" if isinstance(value, str) else dumps(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def test_failure_lines(test: TestRecord) -> Iterator[str]:
    """Each failing trial's error and failing assertions with path, expected and actual."""
    several = len(test.trials) > 1
    for trial in test.trials:
        if trial.status in ("passed", "skipped"):
            continue
        prefix = f"  trial {trial.trial}: " if several else "  "
        if trial.error:
            yield f"{prefix}error: {trial.error}"
        for failure in trial.failures:
            yield f"{prefix}✗ {failure['assertion']}: {failure['message']}"
            if failure.get("path"):
                yield f"      path:     {failure['path']}"
            if failure.get("expected") is not None:
                yield f"      expected: {value_text(failure['expected'])}"
            if failure.get("actual") is not None:
                yield f"      actual:   {value_text(failure['actual'])}"
    if test.flaky:
        yield f"  flaky: {test.passes}/{len(test.trials)} trials passed"


def eval_case_detail(case: EvalCaseRecord) -> str:
    """Why an eval case did not pass: its error, or its failing assertions per block."""
    return case.error or "; ".join(
        f"[{block}] {result['assertion']}: {result['message']}"
        for block, check in case.blocks.items()
        for result in check.get("results", [])
        if not result.get("passed")
    )
