"""Workflow eval sections: recorded block outputs judged case by case.

The suite passes on its mean score against its threshold; no agent is called.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from .._check_records import CheckRecord
from .._records import EvalCaseRecord, EvalRecord
from ..engine import Outcome
from ..loading import EvalSuite
from ._steps import check_record, step_status

__all__ = ["check_eval"]


def check_eval(
    suite: EvalSuite, now: datetime | None, listener: Callable[[str, Any], None]
) -> EvalRecord:
    """Judge a workflow eval section (recorded fixtures; no calls); ``listener`` hears each case."""
    cases: list[EvalCaseRecord] = []
    for case in suite.cases:
        if case.problems:
            message = "; ".join(str(problem) for problem in case.problems)
            cases.append(EvalCaseRecord(case.key, case.id, "error", 0.0, error=message))
            continue
        weighted = 0.0
        total_weight = 0.0
        blocks: dict[str, CheckRecord] = {}
        outcomes: list[Outcome] = []
        for block_id, (output, context, expectation) in case.blocks.items():
            result = expectation.check(output, context=context, now=now)
            outcomes.append(result.outcome)
            for item, weight in zip(result.results, result.weights, strict=True):
                weighted += item.score * weight
                total_weight += weight
            blocks[block_id] = check_record(result)
        score = weighted / total_weight if total_weight else 1.0
        status = step_status(outcomes)
        cases.append(
            EvalCaseRecord(case.key, case.id, status, score, blocks, None, case.description)
        )
        listener("eval_case", (suite, cases[-1]))
    suite_score = sum(c.score for c in cases) / len(cases) if cases else 0.0
    has_error = any(c.status == "error" for c in cases)
    passed = bool(cases) and not has_error and suite_score + 1e-12 >= suite.threshold
    return EvalRecord(suite.file, suite_score, suite.threshold, passed, cases)
