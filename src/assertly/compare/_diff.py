"""What changed between two runs, test by test, and whether it is more than chance.

The two runs' tests are merged in key order as they stream, so a diff of two million-test
runs keeps in memory only the tests that changed and one p-value per compared test (for the
Holm correction, which needs them all). Writing every test (``--format json``) streams the
merge a second time.

A test's change:

* ``regressed``: passed (or skipped) in the base, failed or error in the candidate;
* ``fixed``: failed or error in the base, passed (or skipped) in the candidate;
* ``changed_definition``: its input, expectations, target, trials or pass threshold changed
  between the runs (their stored digests differ), so its verdicts are about two different
  tests: never a regression or a fix;
* ``added`` / ``removed``: in one run only;
* ``unchanged``: anything else (failed and error are both "not passing").
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

from .._check_records import AssertionRecord
from ._sides import RunSide, TestOutcome
from ._stats import (
    fisher_exact,
    mcnemar_exact,
    paired_regression_p_value,
    regression_p_value,
    wilson_interval,
)

__all__ = [
    "CHANGES",
    "FAILURES_READ",
    "FAIL_ON",
    "SKIPPED_NAMED",
    "EvalChange",
    "Change",
    "RunDiff",
    "TestChange",
    "compare_runs",
]

Change = Literal["regressed", "fixed", "unchanged", "added", "removed", "changed_definition"]
CHANGES: tuple[Change, ...] = (
    "regressed",
    "fixed",
    "unchanged",
    "added",
    "removed",
    "changed_definition",
)
FAIL_ON = ("regressions", "changes", "significant", "never")
# Regressed tests whose failing assertions are read (what the console and a pull-request
# comment show in full; beyond, they name the tests).
FAILURES_READ = 50
# Newly skipped tests named in a diff (their count is always exact).
SKIPPED_NAMED = 5
_PASSING = ("passed", "skipped")
_NOT_PASSING = ("failed", "error")


@dataclass(slots=True)
class TestChange:
    """One test compared across the two runs."""

    key: str
    id: str
    suite: str
    file: str
    base: str | None
    candidate: str | None
    change: Change
    base_pass_rate: float | None = None
    candidate_pass_rate: float | None = None
    p_value: float | None = None  # two-sided Fisher exact test on passes/trials
    p_adjusted: float | None = None  # p_value, Holm-adjusted across every compared test
    p_regression: float | None = None  # one-sided "candidate worse", Holm-adjusted (the gate's)
    score_delta: float | None = None
    p_worse: float | None = None  # one-sided "candidate worse", before adjustment
    failures: list[AssertionRecord] = field(default_factory=list)  # the candidate's, if failing

    def significant(self, alpha: float) -> bool:
        """Whether the drop in pass rate is significant at ``alpha`` (one-sided, after Holm)."""
        return self.p_regression is not None and self.p_regression <= alpha

    def to_dict(self) -> dict[str, Any]:
        """The pinned shape of a test in ``assertly diff --format json``."""
        return {
            "key": self.key,
            "id": self.id,
            "suite": self.suite,
            "file": self.file,
            "base": self.base,
            "candidate": self.candidate,
            "change": self.change,
            "base_pass_rate": self.base_pass_rate,
            "candidate_pass_rate": self.candidate_pass_rate,
            "p_value": self.p_value,
            "p_adjusted": self.p_adjusted,
            "p_regression": self.p_regression,
            "score_delta": self.score_delta,
        }


@lru_cache(maxsize=4096)
def _p_values(
    base_passes: int, base_ran: int, cand_passes: int, cand_ran: int
) -> tuple[float, float]:
    """(two-sided Fisher, one-sided "candidate worse" Fisher) of a test's trials.

    Most tests of a run share a handful of tables (1/1 against 1/1): computed once each.
    """
    base_fails = base_ran - base_passes
    cand_fails = cand_ran - cand_passes
    return (
        fisher_exact(base_passes, base_fails, cand_passes, cand_fails),
        regression_p_value(base_passes, base_ran, cand_passes, cand_ran),
    )


class _Holm:
    """Holm-adjusted p-values of a whole family, kept as two flat arrays (16 bytes a member).

    Holm (1979): with the m p-values sorted, p(1) <= ... <= p(m), the adjusted value of the
    j-th is max over i <= j of min(1, (m - i + 1) p(i)). Looking a p-value up by its rank
    gives the same numbers as `holm` without a list of a million floats per family.
    """

    def __init__(self, p_values: Iterable[float]) -> None:
        ordered = array("d", sorted(p_values))
        size = len(ordered)
        adjusted = array("d", ordered)
        running = 0.0
        for rank, value in enumerate(ordered):
            running = max(running, min(1.0, (size - rank) * value))
            adjusted[rank] = running
        self._sorted = ordered
        self._adjusted = adjusted

    def __call__(self, p_value: float) -> float:
        """The adjusted value of a member of the family."""
        return self._adjusted[bisect_right(self._sorted, p_value) - 1]


def _merged(
    base: Iterator[TestOutcome], candidate: Iterator[TestOutcome]
) -> Iterator[tuple[TestOutcome | None, TestOutcome | None]]:
    """Pairs of the same test from two key-sorted streams (None where one run lacks it)."""
    left = next(base, None)
    right = next(candidate, None)
    while left is not None or right is not None:
        if right is None or (left is not None and left.key < right.key):
            yield left, None
            left = next(base, None)
        elif left is None or right.key < left.key:
            yield None, right
            right = next(candidate, None)
        else:
            yield left, right
            left, right = next(base, None), next(candidate, None)


def _classify(
    base: TestOutcome | None, candidate: TestOutcome | None
) -> tuple[Change, TestOutcome]:
    if base is None:
        assert candidate is not None
        return "added", candidate
    if candidate is None:
        return "removed", base
    if base.definition and candidate.definition and base.definition != candidate.definition:
        return "changed_definition", candidate
    if base.status in _PASSING and candidate.status in _NOT_PASSING:
        return "regressed", candidate
    if base.status in _NOT_PASSING and candidate.status in _PASSING:
        return "fixed", candidate
    return "unchanged", candidate


def _change(base: TestOutcome | None, candidate: TestOutcome | None) -> TestChange:
    kind, named = _classify(base, candidate)
    item = TestChange(
        key=named.key,
        id=named.id,
        suite=named.suite,
        file=named.file,
        base=base.status if base else None,
        candidate=candidate.status if candidate else None,
        change=kind,
        base_pass_rate=base.pass_rate if base else None,
        candidate_pass_rate=candidate.pass_rate if candidate else None,
    )
    if base is not None and candidate is not None and kind != "changed_definition":
        if base.ran and candidate.ran:
            item.p_value, item.p_worse = _p_values(
                base.passes, base.ran, candidate.passes, candidate.ran
            )
        if base.score is not None and candidate.score is not None:
            item.score_delta = candidate.score - base.score
    return item


@dataclass(slots=True)
class EvalChange:
    """An eval suite's score in both runs."""

    file: str
    base_score: float | None
    candidate_score: float | None

    @property
    def delta(self) -> float | None:
        """Candidate score minus base score."""
        if self.base_score is None or self.candidate_score is None:
            return None
        return self.candidate_score - self.base_score

    def to_dict(self) -> dict[str, Any]:
        """The pinned shape of an eval in ``assertly diff --format json``."""
        return {
            "file": self.file,
            "base_score": self.base_score,
            "candidate_score": self.candidate_score,
            "delta": self.delta,
        }


@dataclass
class RunDiff:
    """Two runs compared.

    Attributes:
        base: The run compared against.
        candidate: The run under judgement.
        alpha: Significance level for ``significant`` and ``--fail-on significant``.
        changed: Every test whose change is not ``unchanged``, in key order.
        counts: Tests by change.
        evals: Eval suites by file.
        mcnemar_p: Exact two-sided McNemar test on the paired verdicts (tests in both runs,
            same definition, judged in both): pass→not-pass against not-pass→pass.
        suite_p_regression: The one-sided exact McNemar test (more pass→not-pass than
            back), not adjusted: the suite is one question of its own, so it is not in the
            tests' Holm family; the suite regressed significantly when it is at most ``alpha``.
        paired_regressions: Paired tests that went from passing to not passing.
        paired_fixes: Paired tests that went from not passing to passing.
        newly_skipped: Tests the base judged (passed, failed or error) that the candidate
            skipped (any change but removed): a gate must not pass on what it did not judge.
        newly_skipped_keys: The first `SKIPPED_NAMED` of them, for messages.
    """

    base: RunSide
    candidate: RunSide
    alpha: float = 0.05
    changed: list[TestChange] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CHANGES, 0))
    evals: list[EvalChange] = field(default_factory=list)
    mcnemar_p: float = 1.0
    suite_p_regression: float = 1.0
    paired_regressions: int = 0
    paired_fixes: int = 0
    newly_skipped: int = 0
    newly_skipped_keys: list[str] = field(default_factory=list)
    base_rate: tuple[int, int] = (0, 0)  # (passed, judged) over the base's tests
    candidate_rate: tuple[int, int] = (0, 0)
    _two_sided: _Holm | None = None
    _one_sided: _Holm | None = None

    # -- what people ask -------------------------------------------------------------------
    @property
    def regressions(self) -> list[TestChange]:
        """The tests that regressed."""
        return [item for item in self.changed if item.change == "regressed"]

    @property
    def fixes(self) -> list[TestChange]:
        """The tests that were fixed."""
        return [item for item in self.changed if item.change == "fixed"]

    def significant_regressions(self) -> list[TestChange]:
        """Regressed tests whose drop in pass rate is significant after Holm's correction."""
        return [item for item in self.regressions if item.significant(self.alpha)]

    @property
    def suite_regressed_significantly(self) -> bool:
        """More tests regressed than were fixed, beyond chance (one-sided exact McNemar)."""
        return self.suite_p_regression <= self.alpha

    def failing_rule(self, fail_on: str) -> str | None:
        """Why the diff fails the ``--fail-on`` rule, or None when it does not."""
        if fail_on == "regressions" and self.counts["regressed"]:
            return f"{_count(self.counts['regressed'], 'test')} regressed"
        if fail_on == "changes":
            changed = len(self.changed)
            if changed:
                return f"{_count(changed, 'test')} changed"
        if fail_on == "significant":
            significant = self.significant_regressions()
            if significant:
                return (
                    f"{_count(len(significant), 'test')} regressed significantly "
                    f"(one-sided Fisher, Holm-adjusted p ≤ {self.alpha:g})"
                )
            if self.suite_regressed_significantly:
                return (
                    f"the suite regressed significantly: {self.paired_regressions} "
                    f"passing→failing against {self.paired_fixes} failing→passing, one-sided "
                    f"exact McNemar p = {self.suite_p_regression:.3g} ≤ {self.alpha:g}"
                )
        return None

    def pass_rate(self, side: str) -> tuple[float | None, tuple[float, float]]:
        """A run's pass rate over its judged tests, with its 95 % Wilson interval."""
        passed, judged = self.base_rate if side == "base" else self.candidate_rate
        return (passed / judged if judged else None), wilson_interval(passed, judged)

    def summary(self) -> dict[str, Any]:
        """The pinned ``summary`` of ``assertly diff --format json``."""
        base_rate, base_interval = self.pass_rate("base")
        cand_rate, cand_interval = self.pass_rate("candidate")
        return {
            **self.counts,
            "base_pass_rate": base_rate,
            "base_pass_rate_interval": list(base_interval),
            "candidate_pass_rate": cand_rate,
            "candidate_pass_rate_interval": list(cand_interval),
            "mcnemar_p": self.mcnemar_p,
            "suite_p_regression": self.suite_p_regression,
            "alpha": self.alpha,
            "significant_regressions": len(self.significant_regressions()),
        }

    def tests(self) -> Iterator[TestChange]:
        """Every test of both runs, in key order, streamed again from the two runs."""
        for base, candidate in _merged(self.base.tests(), self.candidate.tests()):
            item = _change(base, candidate)
            self._adjust(item)
            yield item

    def _adjust(self, item: TestChange) -> None:
        if item.p_value is not None and self._two_sided is not None:
            item.p_adjusted = self._two_sided(item.p_value)
        if item.p_worse is not None and self._one_sided is not None:
            item.p_regression = self._one_sided(item.p_worse)


def compare_runs(
    base: RunSide, candidate: RunSide, *, alpha: float = 0.05, failures: bool = True
) -> RunDiff:
    """Compare two runs test by test (streamed), with the statistics of `RunDiff`.

    Args:
        base: The run compared against.
        candidate: The run under judgement.
        alpha: Significance level.
        failures: Read the candidate's failing assertions of each regressed test (for the
            console and the pull-request comment).
    """
    diff = RunDiff(base, candidate, alpha)
    two_sided = array("d")  # every compared test's p-values, for the Holm corrections
    one_sided = array("d")
    base_passed = base_judged = cand_passed = cand_judged = 0
    # Counting needs no scores (which cost reading every trial record of a stored run): the
    # score deltas of the changed tests are read after, those of all tests only by `tests()`.
    for left, right in _merged(base.tests(scores=False), candidate.tests(scores=False)):
        if left is not None and left.status != "skipped":
            base_judged += 1
            base_passed += left.status == "passed"
        if right is not None and right.status != "skipped":
            cand_judged += 1
            cand_passed += right.status == "passed"
        elif right is not None and left is not None and left.status != "skipped":
            diff.newly_skipped += 1
            if len(diff.newly_skipped_keys) < SKIPPED_NAMED:
                diff.newly_skipped_keys.append(right.key)
        item = _change(left, right)
        diff.counts[item.change] += 1
        if item.p_value is not None and item.p_worse is not None:
            two_sided.append(item.p_value)
            one_sided.append(item.p_worse)
        if item.change != "unchanged":
            diff.changed.append(item)
        if (
            left is not None
            and right is not None
            and item.change != "changed_definition"
            and "skipped" not in (left.status, right.status)
        ):
            was, now = left.status == "passed", right.status == "passed"
            diff.paired_regressions += was and not now
            diff.paired_fixes += now and not was
    diff.base_rate = (base_passed, base_judged)
    diff.candidate_rate = (cand_passed, cand_judged)
    # Holm within the per-test family only ("which tests got worse?"). The suite's McNemar
    # test asks another question ("is the suite worse?") and is not one more member of that
    # family: adjusting it with 13 per-test p-values turned a real 100 % → 53.8 % drop
    # (p = 0.0156) into 0.219 (issue 28). Each question is answered at alpha.
    diff._two_sided = _Holm(two_sided)
    diff._one_sided = _Holm(one_sided)
    del two_sided, one_sided
    diff.suite_p_regression = paired_regression_p_value(diff.paired_regressions, diff.paired_fixes)
    for item in diff.changed:
        diff._adjust(item)
    if failures:
        for item in diff.regressions[:FAILURES_READ]:
            item.failures = candidate.failures_of(item.key)
    diff.mcnemar_p = mcnemar_exact(diff.paired_regressions, diff.paired_fixes)
    scores = {suite.file: suite.score for suite in base.evals}
    cand_scores = {suite.file: suite.score for suite in candidate.evals}
    diff.evals = [
        EvalChange(file, scores.get(file), cand_scores.get(file))
        for file in sorted(scores.keys() | cand_scores.keys())
    ]
    return diff


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"
