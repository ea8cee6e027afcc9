"""A matrix run's targets side by side: per-target summaries, paired comparisons, disagreements.

A matrix run (``--target A=SPEC --target B=SPEC``) holds each test once per target label: the
cells share the test's `TestRecord.base_key`. This module reads the run's tests once, as they
stream (a stored run's ``tests`` is a lazy view of the store), and gives:

* per target: counts by status, the pass rate with its Wilson 95% interval, the agents'
  reported cost and the median call latency (`TargetSummary`);
* for each target after the first, the paired comparison against the first (the base):
  regressions, fixes and the exact McNemar p-values over the tests judged under both
  (`TargetComparison`);
* every test, one status per label (`MatrixRow`), and those where the targets disagree.

Definitions (docs/decisions.md, "Matrix reports"):

* *judged*: a cell whose status is passed, failed or error (not skipped);
* *paired*: a test judged under both targets of a comparison;
* *regressed*: paired, passed under the base, failed or error under the candidate; *fixed*:
  the reverse (failed and error are both "not passing", as in `compare_runs`);
* *disagree*: the test's final statuses under the targets it ran under are not all the same
  (`store.targets_disagree`, the rule of the viewer's "targets disagree" filter, so every view
  counts the same tests): failed against error and skipped against passed are disagreements
  (different verdicts), although neither counts as a regression or a fix; a target the test
  did not run under (a shard, a filtered run) is left out.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .._records import RunRecord, Status, TestRecord
from ..store import targets_disagree
from ._stats import mcnemar_exact, wilson_interval

__all__ = [
    "MatrixBuilder",
    "MatrixRow",
    "MatrixView",
    "TargetComparison",
    "TargetSummary",
    "matrix_view",
]

_STATUSES = ("passed", "failed", "error", "skipped")
_JUDGED = _STATUSES[:3]
_NOT_PASSING = ("failed", "error")


@dataclass(slots=True)
class TargetSummary:
    """One target's totals over the run's tests."""

    label: str
    # Tests by final status: passed, failed, error, skipped.
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(_STATUSES, 0))
    cost_usd: float | None = None  # summed over the calls that reported one
    costed_calls: int = 0
    calls: int = 0
    latencies: list[float] = field(default_factory=list, repr=False)

    @property
    def total(self) -> int:
        """Tests (cells of this target)."""
        return sum(self.counts.values())

    @property
    def passed(self) -> int:
        """Tests passed."""
        return self.counts["passed"]

    @property
    def failed(self) -> int:
        """Tests failed."""
        return self.counts["failed"]

    @property
    def errored(self) -> int:
        """Tests that ended in error."""
        return self.counts["error"]

    @property
    def skipped(self) -> int:
        """Tests skipped."""
        return self.counts["skipped"]

    @property
    def judged(self) -> int:
        """Tests judged (not skipped)."""
        return self.total - self.skipped

    @property
    def pass_rate(self) -> float:
        """Passed over judged; 0.0 when nothing was judged (as the run's ``summary``)."""
        return self.passed / self.judged if self.judged else 0.0

    @property
    def pass_rate_ci95(self) -> tuple[float, float]:
        """The Wilson score 95% interval of the pass rate (`wilson_interval`).

        ``(p + z²/2n ∓ z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)`` with p = passed / judged,
        n = judged, z = 1.96 (Wilson 1927); ``(0, 1)`` when nothing was judged.
        """
        return wilson_interval(self.passed, self.judged)

    @property
    def latency_p50_ms(self) -> float | None:
        """The median latency of the target's calls (steps) that measured one; None if none.

        The sample median: the middle value, or the mean of the two middle values
        (`statistics.median`).
        """
        return statistics.median(self.latencies) if self.latencies else None

    def add(self, test: TestRecord) -> None:
        """Count one test (one cell of this target) with its calls' cost and latency."""
        self.counts[test.status] += 1
        for trial in test.trials:
            for step in trial.steps:
                self.calls += 1
                cost = step.cost_usd
                if cost is not None and math.isfinite(cost):
                    self.cost_usd = (self.cost_usd or 0.0) + cost
                    self.costed_calls += 1
                latency = step.latency_ms
                if latency is not None and math.isfinite(latency):
                    self.latencies.append(latency)

    def to_dict(self) -> dict[str, Any]:
        """The report's ``summary.by_target[label]``."""
        low, high = self.pass_rate_ci95
        p50 = self.latency_p50_ms
        return {
            "total": self.total,
            "passed": self.passed,
            "failed": self.failed,
            "errored": self.errored,
            "skipped": self.skipped,
            "pass_rate": self.pass_rate,
            "pass_rate_ci95": [low, high],
            "cost_usd": self.cost_usd,
            "latency_p50_ms": None if p50 is None else round(p50, 3),
            "calls": self.calls,
            "costed_calls": self.costed_calls,
        }


@dataclass(slots=True)
class TargetComparison:
    """A candidate target against the base (the run's first target), test by test."""

    base: str
    candidate: str
    paired: int = 0  # tests judged under both
    regressed: int = 0
    fixed: int = 0
    both_passed: int = 0
    both_not_passed: int = 0

    @property
    def mcnemar_p(self) -> float:
        """Two-sided exact McNemar p-value over the paired tests (`mcnemar_exact`).

        With b = regressed and c = fixed, under no difference b ~ Binomial(b + c, 1/2):
        ``p = min(1, 2 · P(X <= min(b, c)))`` (McNemar 1947; Agresti 2013, section 11.1.1);
        1.0 when no paired verdict differs.
        """
        return mcnemar_exact(self.regressed, self.fixed)

    @property
    def p_worse(self) -> float:
        """One-sided exact McNemar p-value that the candidate is worse: ``P(X >= b)``."""
        return mcnemar_exact(self.regressed, self.fixed, "greater")

    @property
    def p_better(self) -> float:
        """One-sided exact McNemar p-value that the candidate is better: ``P(X <= b)``."""
        return mcnemar_exact(self.regressed, self.fixed, "less")

    def add(self, base: str | None, candidate: str | None) -> None:
        """Count one test from its statuses under the base and the candidate (None: absent)."""
        if base not in _JUDGED or candidate not in _JUDGED:
            return
        self.paired += 1
        if base == "passed":
            if candidate == "passed":
                self.both_passed += 1
            else:
                self.regressed += 1
        elif candidate == "passed":
            self.fixed += 1
        else:
            self.both_not_passed += 1

    def to_dict(self) -> dict[str, Any]:
        """One entry of the report's ``comparison``."""
        return {
            "base": self.base,
            "candidate": self.candidate,
            "paired": self.paired,
            "regressed": self.regressed,
            "fixed": self.fixed,
            "both_passed": self.both_passed,
            "both_not_passed": self.both_not_passed,
            "mcnemar_p": self.mcnemar_p,
            "p_worse": self.p_worse,
            "p_better": self.p_better,
        }


@dataclass(slots=True)
class MatrixRow:
    """One test of a matrix run: its status under each target that ran it."""

    base_key: str
    file: str
    suite: str
    id: str
    name: str
    line: int | None
    statuses: dict[str, Status] = field(default_factory=dict)

    @property
    def disagree(self) -> bool:
        """The targets gave the test different final statuses (`targets_disagree`)."""
        return targets_disagree(list(self.statuses.values()))


@dataclass(slots=True)
class MatrixView:
    """Everything the reports show of a matrix run's targets."""

    targets: list[str]
    summaries: dict[str, TargetSummary]
    comparisons: list[TargetComparison]
    rows: list[MatrixRow]

    @property
    def disagreements(self) -> list[MatrixRow]:
        """The tests where the targets disagree, in run order."""
        return [row for row in self.rows if row.disagree]

    def by_target(self) -> dict[str, dict[str, Any]]:
        """The report's ``summary.by_target``: each label's totals, in target order."""
        return {label: self.summaries[label].to_dict() for label in self.targets}

    def comparison(self) -> list[dict[str, Any]]:
        """The report's ``comparison``: each target after the first against the first."""
        return [item.to_dict() for item in self.comparisons]


class MatrixBuilder:
    """Builds a `MatrixView` from a matrix run's tests, fed one at a time (`add`).

    For a reader that already walks the run's tests (the Markdown and HTML analysis), so a
    stored run is read once.
    """

    def __init__(self, targets: Iterable[str]) -> None:
        self.targets = list(targets)
        self._summaries = {label: TargetSummary(label) for label in self.targets}
        self._rows: dict[str, MatrixRow] = {}

    def add(self, test: TestRecord) -> None:
        """Count one cell.

        A cell of a label not among the run's targets (a run stored by hand) adds that label
        after them; a test of no target is left out.
        """
        label = test.target
        if label is None:
            return
        summary = self._summaries.get(label)
        if summary is None:
            self.targets.append(label)
            summary = self._summaries[label] = TargetSummary(label)
        summary.add(test)
        key = test.base_key
        row = self._rows.get(key)
        if row is None:
            row = self._rows[key] = MatrixRow(
                key, test.file, test.suite, test.id, test.name or test.id, test.line
            )
        row.statuses[label] = test.status

    def view(self) -> MatrixView:
        """The summaries, the comparisons against the first target, and the rows."""
        rows = list(self._rows.values())
        comparisons = [TargetComparison(self.targets[0], label) for label in self.targets[1:]]
        for row in rows:
            for item in comparisons:
                item.add(row.statuses.get(item.base), row.statuses.get(item.candidate))
        return MatrixView(list(self.targets), self._summaries, comparisons, rows)


def matrix_view(run: RunRecord) -> MatrixView | None:
    """The matrix view of ``run``; None for a run of one target (``run.targets`` empty).

    Reads ``run.tests`` once (a stored run's tests stream from the store).
    """
    if not run.targets:
        return None
    builder = MatrixBuilder(run.targets)
    for test in run.tests:
        builder.add(test)
    return builder.view()
