"""Verdicts: the outcome of one assertion and of a whole check.

Results are plain data. A passed result carries no message text: messages are only formatted
for failures and errors, so the hot path allocates as little as possible.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from typing import Any

__all__ = ["AssertionResult", "CheckResult", "Outcome"]


class Outcome(StrEnum):
    """How one assertion or one check ended.

    ``skipped`` is only produced by conditional assertions (``if_*``) whose condition does not
    hold; it counts as passing. ``error`` means the response could not be judged and is never
    a pass.
    """

    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"
    SKIPPED = "skipped"


PASSED = Outcome.PASSED
FAILED = Outcome.FAILED
ERROR = Outcome.ERROR
SKIPPED = Outcome.SKIPPED


class AssertionResult:
    """The verdict of one assertion on one response.

    Attributes:
        assertion: The assertion's name as written (``status``, ``not-contains``).
        outcome: passed, failed, error or skipped.
        score: In [0, 1]; 1/0 for binary assertions, graded for metrics such as BLEU.
        message: Why it failed or errored ("" when it passed).
        path: Where in the response the verdict was decided (``results[2].file``), if anywhere.
        expected: What the assertion wanted.
        actual: What the response had.
        children: Results of nested assertions (``one_of``, ``if_*``).
        details: Extra facts worth keeping (``vacuous``, ``distance``, ``regex_engine`` …).

    Results are read-only: full-score passes are shared between checks.
    """

    __slots__ = (
        "actual",
        "assertion",
        "children",
        "details",
        "expected",
        "message",
        "outcome",
        "path",
        "score",
    )

    def __init__(
        self,
        assertion: str,
        outcome: Outcome,
        score: float,
        message: str = "",
        path: str | None = None,
        expected: Any = None,
        actual: Any = None,
        children: Sequence[AssertionResult] = (),
        details: dict[str, Any] | None = None,
    ) -> None:
        self.assertion = assertion
        self.outcome = outcome
        self.score = score
        self.message = message
        self.path = path
        self.expected = expected
        self.actual = actual
        self.children = children
        self.details = details

    @property
    def passed(self) -> bool:
        """True for passed and skipped (a skipped conditional counts as passing)."""
        return self.outcome is PASSED or self.outcome is SKIPPED

    def to_dict(self, weight: float = 1.0) -> dict[str, Any]:
        """Return the result in the shape of ``assertly check --format json``.

        The pinned keys always appear; ``children`` and ``details`` are added only when present
        (``details.weight`` when the assertion's weight is not 1).
        """
        data: dict[str, Any] = {
            "assertion": self.assertion,
            "outcome": self.outcome.value,
            "passed": self.passed,
            "score": self.score,
            "message": self.message,
            "path": self.path,
            "expected": self.expected,
            "actual": self.actual,
        }
        if self.children:
            data["children"] = [child.to_dict() for child in self.children]
        details = dict(self.details) if self.details else {}
        if weight != 1.0:
            details["weight"] = weight
        if details:
            data["details"] = details
        return data

    def __repr__(self) -> str:
        text = f"AssertionResult({self.assertion!r}, {self.outcome.value}, score={self.score:g}"
        if self.message:
            text += f", message={self.message!r}"
        return text + ")"


_FULL_PASSES: dict[str, AssertionResult] = {}


def passed(name: str, score: float = 1.0) -> AssertionResult:
    """A passed result without message text (the common, cheap case).

    Full-score passes are shared per name, so the hot path allocates nothing for them;
    results are treated as read-only everywhere for that reason.
    """
    if score == 1.0:
        shared = _FULL_PASSES.get(name)
        if shared is None:
            shared = _FULL_PASSES[name] = AssertionResult(name, PASSED, 1.0)
        return shared
    return AssertionResult(name, PASSED, score)


_TRACED_PASSES: dict[tuple[str, str], AssertionResult] = {}


def traced_pass(name: str, trace_format: str) -> AssertionResult:
    """A full pass of a trajectory assertion, saying which format its calls were read from.

    Shared per name and format, as `passed` is per name (the generated fast path returns
    them, and prebuilt results hold them).
    """
    shared = _TRACED_PASSES.get((name, trace_format))
    if shared is None:
        shared = _TRACED_PASSES[(name, trace_format)] = AssertionResult(
            name, PASSED, 1.0, details={"trace_format": trace_format}
        )
    return shared


def failed(
    name: str,
    message: str,
    *,
    path: str | None = None,
    expected: Any = None,
    actual: Any = None,
    score: float = 0.0,
    details: dict[str, Any] | None = None,
) -> AssertionResult:
    """Build a failed result."""
    return AssertionResult(name, FAILED, score, message, path, expected, actual, (), details)


def errored(
    name: str,
    message: str,
    *,
    path: str | None = None,
    expected: Any = None,
    details: dict[str, Any] | None = None,
) -> AssertionResult:
    """Build an error result: the assertion could not judge the response."""
    return AssertionResult(name, ERROR, 0.0, message, path, expected, None, (), details)


def skipped(name: str, message: str) -> AssertionResult:
    """Build a skipped result (a conditional whose condition does not hold)."""
    return AssertionResult(name, SKIPPED, 1.0, message)


def combine_outcome(results: Sequence[AssertionResult]) -> Outcome:
    """Overall outcome of several results: a definite failure wins over an error.

    A failed assertion is a verdict we are sure of, so the whole is ``failed`` even if another
    assertion errored; with no failure, any error makes the whole ``error`` (never a pass).
    """
    has_error = False
    for result in results:
        outcome = result.outcome
        if outcome is FAILED:
            return FAILED
        if outcome is ERROR:
            has_error = True
    return ERROR if has_error else PASSED


class CheckResult:
    """The verdict of a whole expectation on one response.

    Attributes:
        outcome: passed, failed or error (see ``combine_outcome`` and the threshold rule).
        passed: True only when the outcome is passed.
        score: Weighted mean of the assertion scores (weight-0 assertions excluded).
        results: One result per top-level assertion, in the order written.
        named_scores: Scores stored under an assertion's ``metric`` name (averaged per name).
        threshold: The pass threshold on ``score``, if the expectation had one.
        extracted: How JSON was found in a text response: ``"fenced"``, ``"embedded"`` or None.
        weights: Each top-level result's weight in ``score``, in the same order.
    """

    __slots__ = (
        "_record",
        "extracted",
        "named_scores",
        "outcome",
        "results",
        "score",
        "threshold",
        "weights",
    )

    def __init__(
        self,
        outcome: Outcome,
        score: float,
        results: list[AssertionResult],
        named_scores: dict[str, float] | None = None,
        threshold: float | None = None,
        extracted: str | None = None,
        weights: tuple[float, ...] = (),
    ) -> None:
        self.outcome = outcome
        self.score = score
        self.results = results
        self.named_scores = named_scores or {}
        self.threshold = threshold
        self.extracted = extracted
        self.weights = weights or (1.0,) * len(results)
        self._record: dict[str, Any] | None = None

    @property
    def passed(self) -> bool:
        """True when the response met the expectation."""
        return self.outcome is PASSED

    @property
    def failures(self) -> list[AssertionResult]:
        """The top-level results that failed or errored."""
        return [r for r in self.results if not r.passed]

    def to_dict(self) -> dict[str, Any]:
        """Return exactly the object printed by ``assertly check --format json``.

        Pinned keys: ``passed``, ``score``, ``results``. Added: ``outcome`` always;
        ``named_scores``, ``threshold`` and ``extracted`` when they apply.
        """
        data: dict[str, Any] = {
            "passed": self.passed,
            "score": self.score,
            "results": [r.to_dict(w) for r, w in zip(self.results, self.weights, strict=True)],
            "outcome": self.outcome.value,
        }
        if self.named_scores:
            data["named_scores"] = dict(self.named_scores)
        if self.threshold is not None:
            data["threshold"] = self.threshold
        if self.extracted is not None:
            data["extracted"] = self.extracted
        return data

    def as_record(self) -> dict[str, Any]:
        """`to_dict`, built once per result and shared: read-only, for stores and reports.

        An all-pass result of the fast path is one object per expectation, so a run that
        stores thousands of passing checks serialises each expectation's pass only once.
        """
        record = self._record
        if record is None:
            record = self._record = self.to_dict()
        return record

    def __repr__(self) -> str:
        return (
            f"CheckResult({self.outcome.value}, score={self.score:g}, {len(self.results)} results)"
        )
