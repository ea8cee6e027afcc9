"""A matrix run's McNemar p-values and Wilson intervals against scipy's, on generated runs.

scipy is a development extra: without it these tests are skipped (the pure-Python statistics
are also checked against exact rational oracles in test_stats.py and test_matrix.py).
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from assertly._records import RunRecord, TrialRecord
from assertly._records import TestRecord as Cell
from assertly.compare._matrix import matrix_view

stats: Any = pytest.importorskip("scipy.stats")

CASES = 40


def generated_run(rng: random.Random) -> tuple[RunRecord, list[list[str]]]:
    """A two-target run of random verdicts (skips and errors included)."""
    size = rng.choice([1, 3, 10, 40, 200, 1500])
    weights = rng.choice([(8, 1, 1, 1), (1, 1, 0, 0), (1, 8, 1, 1), (3, 3, 1, 1)])
    statuses = ("passed", "failed", "error", "skipped")
    rows = [rng.choices(statuses, weights, k=2) for _ in range(size)]
    cells = []
    for index, pair in enumerate(rows):
        for label, status in zip(("a", "b"), pair, strict=True):
            key = f"t.yaml::s::t{index}[{label}]"
            trial = TrialRecord(key, 1, status, 1.0)  # type: ignore[arg-type]
            test = Cell(key, f"t{index}", f"t{index}", "s", "t.yaml", status, None, [trial])  # type: ignore[arg-type]
            test.target = label
            cells.append(test)
    return RunRecord("r", "2026-01-01T00:00:00Z", 1.0, tests=cells, targets=["a", "b"]), rows


@pytest.mark.parametrize("seed", range(CASES))
def test_mcnemar_and_wilson_match_scipy(seed: int) -> None:
    record, rows = generated_run(random.Random(seed))
    view = matrix_view(record)
    assert view is not None
    comparison = view.comparison()[0]
    b, c = comparison["regressed"], comparison["fixed"]
    if b + c:
        reference = stats.binomtest(b, b + c, 0.5)
        assert comparison["mcnemar_p"] == pytest.approx(reference.pvalue, rel=1e-9, abs=1e-300)
        worse = stats.binomtest(b, b + c, 0.5, alternative="greater").pvalue
        assert comparison["p_worse"] == pytest.approx(worse, rel=1e-9, abs=1e-300)
    else:
        assert comparison["mcnemar_p"] == 1.0
    for side, label in enumerate(("a", "b")):
        judged = sum(1 for pair in rows if pair[side] != "skipped")
        passed = sum(1 for pair in rows if pair[side] == "passed")
        low, high = view.by_target()[label]["pass_rate_ci95"]
        if judged == 0:
            assert (low, high) == (0.0, 1.0)
            continue
        interval = stats.binomtest(passed, judged).proportion_ci(0.95, method="wilson")
        assert low == pytest.approx(interval.low, rel=1e-9, abs=1e-12)
        assert high == pytest.approx(interval.high, rel=1e-9, abs=1e-12)
