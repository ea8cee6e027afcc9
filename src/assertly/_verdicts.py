"""The verdict rule over trials, and pass@k: a test's status from how its trials ended.

Shared by the run records (`assertly._records`), the store's reads and the viewer's queries
(which restate it in SQL, tested equal). Imports only the standard library.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

__all__ = ["PassThreshold", "Status", "pass_at_k", "status_of", "status_of_counts"]

Status = Literal["passed", "failed", "error", "skipped"]
PassThreshold = Literal["any", "all", "majority"]


def pass_at_k(n: int, c: int, k: int) -> float | None:
    """Unbiased estimator of pass@k from n trials with c passes.

    pass@k = 1 - C(n - c, k) / C(n, k)  (Chen et al., 2021, "Evaluating Large Language Models
    Trained on Code", eq. 1). Undefined when n < k: returns None rather than a biased guess.
    """
    if k <= 0 or n < k:
        return None
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def status_of(statuses: Sequence[str], threshold: PassThreshold) -> Status:
    """`test_status` from the trials' statuses alone."""
    return status_of_counts(
        statuses.count("passed"),
        statuses.count("failed"),
        statuses.count("error"),
        statuses.count("skipped"),
        threshold,
    )


def status_of_counts(
    passed: int, failed: int, errored: int, skipped: int, threshold: PassThreshold
) -> Status:
    """`test_status` from how many trials ended in each status."""
    run = passed + failed + errored
    if not run:
        return "skipped" if skipped else "error"
    if threshold == "any":
        verdict = passed > 0
    elif threshold == "majority":
        verdict = passed * 2 > run
    else:
        verdict = passed == run
    if verdict:
        return "passed"
    return "failed" if failed else "error"
