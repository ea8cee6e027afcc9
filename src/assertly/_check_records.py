"""What a record keeps of a check: one `CheckRecord` per expectation, one `AssertionRecord` each.

Typed so that reports, run comparison, the viewer and the pytest plugin format fields instead
of re-parsing dicts. The JSON forms are those of ``assertly check --format json`` (a check) and
of a report's trial ``failures`` (an assertion that did not pass, with its step), so the store
and the JSON report keep their shapes. ``from_json`` is lenient on purpose: it reads what an
older assertly, a hand-written store row or a report file holds (a missing field is empty, a
missing name ``"?"``), so no renderer has to be. This module imports only the standard library.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["AssertionRecord", "CheckRecord"]


@dataclass(slots=True)
class AssertionRecord:
    """One assertion's verdict: a result within a check, or a failure of a trial.

    Attributes:
        assertion: The assertion's name as written (``"?"`` when a record did not say).
        outcome: passed, failed, error or skipped.
        message: Why it failed or errored ("" when it passed).
        path: Where in the output the verdict was decided, if anywhere.
        expected: What the assertion wanted.
        actual: What the output had.
        score: In [0, 1] (None when a record did not say: a failure keeps none).
        step: The step it judged, for a trial's failures (None within a check).
        children: Results of nested assertions (``one_of``, ``if_*``).
        details: Extra facts (``trace_format``, ``weight`` …), if any.
    """

    assertion: str
    outcome: str
    message: str = ""
    path: str | None = None
    expected: Any = None
    actual: Any = None
    score: float | None = None
    step: str | None = None
    children: list[AssertionRecord] = field(default_factory=list)
    details: dict[str, Any] | None = None

    @property
    def passed(self) -> bool:
        """True for passed and skipped (a skipped conditional counts as passing)."""
        return self.outcome in ("passed", "skipped")

    def to_json(self) -> dict[str, Any]:
        """The result as a check's ``results`` hold it; a failure (``step`` set) as a trial's."""
        if self.step is not None:
            return self.failure_json()
        data: dict[str, Any] = {
            "assertion": self.assertion,
            "outcome": self.outcome,
            "passed": self.passed,
            "score": self.score,
            "message": self.message,
            "path": self.path,
            "expected": self.expected,
            "actual": self.actual,
        }
        if self.children:
            data["children"] = [child.to_json() for child in self.children]
        if self.details:
            data["details"] = self.details
        return data

    def failure_json(self) -> dict[str, Any]:
        """The pinned shape of one of a trial's ``failures`` in the JSON report."""
        return {
            "step": self.step,
            "assertion": self.assertion,
            "outcome": self.outcome,
            "message": self.message,
            "path": self.path,
            "expected": self.expected,
            "actual": self.actual,
        }

    @classmethod
    def from_json(cls, data: Any) -> AssertionRecord:
        """Read either JSON form (or anything else, as an unnamed failure)."""
        if not isinstance(data, dict):
            return cls("?", "failed")
        outcome = data.get("outcome")
        if not isinstance(outcome, str):
            outcome = "passed" if data.get("passed") is True else "failed"
        score = data.get("score")
        step = data.get("step")
        children = data.get("children")
        details = data.get("details")
        return cls(
            assertion=str(data.get("assertion", "?")),
            outcome=outcome,
            message=str(data.get("message") or ""),
            path=data.get("path"),
            expected=data.get("expected"),
            actual=data.get("actual"),
            score=score if isinstance(score, int | float) and not isinstance(score, bool) else None,
            step=None if step is None else str(step),
            children=[cls.from_json(child) for child in children]
            if isinstance(children, list)
            else [],
            details=details if isinstance(details, dict) else None,
        )

    @property
    def weight(self) -> float:
        """Its weight in its check's score (``details.weight``; 1 when not given)."""
        weight = (self.details or {}).get("weight", 1.0)
        return float(weight) if isinstance(weight, int | float) else 1.0

    def as_failure(self, step: str) -> AssertionRecord:
        """This result as one of a trial's failures: of ``step``, without score or children."""
        return AssertionRecord(
            self.assertion, self.outcome, self.message, self.path, self.expected, self.actual,
            step=step,
        )  # fmt: skip


@dataclass(slots=True, init=False, eq=False)
class CheckRecord:
    """One expectation's verdict on one output, as a step (or an eval block) keeps it.

    Attributes:
        passed: Whether the output met the expectation.
        score: The weighted mean of its assertions' scores.
        outcome: passed, failed or error.
        named_scores: Scores stored under an assertion's ``metric`` name, if any.
        threshold: The pass threshold on ``score``, if the expectation had one.
        extracted: How JSON was found in a text output (``fenced``, ``embedded``), if it was.
        results: One result per top-level assertion, in the order written.

    A record read from JSON keeps that JSON (so a stored record writes back exactly as it
    was, and an expectation's shared all-pass record is serialised once per run) and reads
    its results from it when they are first asked for: a run's report reads every stored
    trial, and most results are never looked at. Records are read-only.
    """

    passed: bool
    score: float
    outcome: str
    named_scores: dict[str, float] | None
    threshold: float | None
    extracted: str | None
    _results: list[AssertionRecord] | None
    _json: dict[str, Any] | None
    # The failures last asked for, with their step: a report asks for a failing trial's
    # failures several times (its entry, its console lines, their count).
    _failed: tuple[str, list[AssertionRecord]] | None

    def __init__(
        self,
        passed: bool,
        score: float,
        results: list[AssertionRecord] | None = None,
        outcome: str = "passed",
        named_scores: dict[str, float] | None = None,
        threshold: float | None = None,
        extracted: str | None = None,
    ) -> None:
        self.passed = passed
        self.score = score
        self.outcome = outcome
        self.named_scores = named_scores
        self.threshold = threshold
        self.extracted = extracted
        self._results = results if results is not None else []
        self._json = None
        self._failed = None

    @property
    def results(self) -> list[AssertionRecord]:
        """One result per top-level assertion, in the order written."""
        results = self._results
        if results is None:
            items = (self._json or {}).get("results")
            results = self._results = [AssertionRecord.from_json(item) for item in items or ()]
        return results

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CheckRecord):
            return NotImplemented
        return self.to_json() == other.to_json()

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value

    def to_json(self) -> dict[str, Any]:
        """The object ``assertly check --format json`` prints (what the store keeps)."""
        data = self._json
        if data is None:
            data = {
                "passed": self.passed,
                "score": self.score,
                "results": [result.to_json() for result in self.results],
                "outcome": self.outcome,
            }
            if self.named_scores:
                data["named_scores"] = self.named_scores
            if self.threshold is not None:
                data["threshold"] = self.threshold
            if self.extracted is not None:
                data["extracted"] = self.extracted
            self._json = data
        return data

    @classmethod
    def from_json(cls, data: Any) -> CheckRecord:
        """Read `to_json`'s form (leniently: a record of an older assertly, a report's)."""
        if not isinstance(data, dict):
            return cls(False, 0.0, [], "error")
        outcome = data.get("outcome")
        passed = data.get("passed") is True
        if not isinstance(outcome, str):
            outcome = "passed" if passed else "failed"
        score = data.get("score")
        named = data.get("named_scores")
        extracted = data.get("extracted")
        record = cls(
            passed,
            float(score) if isinstance(score, int | float) else 0.0,
            None,
            outcome,
            named if isinstance(named, dict) else None,
            data.get("threshold"),
            extracted if isinstance(extracted, str) else None,
        )
        record._results = None  # read from the JSON when first asked for
        if isinstance(data.get("results"), list):
            record._json = data
        else:
            record._results = []
        return record

    def failures(self, step: str) -> list[AssertionRecord]:
        """The top-level results that did not pass, as failures of ``step`` (a new list)."""
        if self._failed is not None and self._failed[0] == step:
            return list(self._failed[1])
        if self._results is None and self._json is not None:
            # Only the results that did not pass are read (a trial's failures are asked for
            # every trial a report writes).
            failed = [
                AssertionRecord.from_json(item).as_failure(step)
                for item in self._json["results"]
                if not (isinstance(item, dict) and _passed(item))
            ]
        else:
            failed = [result.as_failure(step) for result in self.results if not result.passed]
        self._failed = (step, failed)
        return list(failed)


def _passed(item: dict[str, Any]) -> bool:
    """Whether a result's JSON says it passed (as `AssertionRecord.from_json` reads it)."""
    outcome = item.get("outcome")
    if isinstance(outcome, str):
        return outcome in ("passed", "skipped")
    return item.get("passed") is True
