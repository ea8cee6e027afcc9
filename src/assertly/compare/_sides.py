"""One side of a comparison: a stored run, or a JSON report, read as tests sorted by key.

A stored run is streamed from SQLite in key order (the primary key's index), one row per
test with its trial statuses counted in SQL, so two million-test runs merge in flat memory.
A JSON report is read whole (reports are files people keep; the store is for scale).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from .._check_records import AssertionRecord
from .._exceptions import StoreError
from .._records import TrialRecord
from .._test_meta import TestMeta
from ..store._files import is_sqlite_file, read_report

__all__ = ["EvalOutcome", "RunSide", "TestOutcome", "open_side"]


@dataclass(slots=True)
class TestOutcome:
    """What a comparison needs of one test of one run."""

    key: str
    id: str
    suite: str
    file: str
    status: str  # passed, failed, error, skipped
    passes: int  # trials that passed
    ran: int  # trials that ran (not skipped)
    score: float | None
    definition: str | None

    @property
    def pass_rate(self) -> float | None:
        """Passes over trials run; None when none ran."""
        return self.passes / self.ran if self.ran else None


@dataclass(slots=True)
class EvalOutcome:
    """An eval suite's score in one run."""

    file: str
    score: float
    passed: bool


@dataclass
class RunSide:
    """A run to compare: its identity, its evals, and its tests in key order (`tests`)."""

    run_id: str
    started_at: str
    source: str  # the store's path or the report's, for messages
    evals: list[EvalOutcome] = field(default_factory=list)
    threshold: str = "all"
    _store_path: str | None = None  # what opens the store again (a path or a URL)
    _tests: list[TestOutcome] | None = None  # a report's tests, sorted

    def tests(self, *, scores: bool = True) -> Iterator[TestOutcome]:
        """Every test, sorted by key (streamed from a store).

        Args:
            scores: Read each test's mean score (a stored run reads every trial record for
                it; without, a test's score is None).
        """
        if self._tests is not None:
            yield from self._tests
            return
        assert self._store_path is not None
        yield from _stored_tests(self._store_path, self.run_id, self.threshold, scores=scores)

    def failures_of(self, key: str) -> list[AssertionRecord]:
        """The failing assertions of one test (its first trial that did not pass)."""
        if self._store_path is None:
            return self._report_failures.get(key, [])
        from ..store import open_store

        with open_store(self._store_path, must_exist=True, read_only=True) as store:
            record = store.first_not_passed(self.run_id, key)
        if record is None:
            return []
        trial = TrialRecord.from_dict(record)
        return _failures(trial.failures, trial.error)

    _report_failures: dict[str, list[AssertionRecord]] = field(default_factory=dict)


def open_side(name: str, store_path: str | Path | None) -> RunSide:
    """A run named as users name it: a JSON report's path, or a run of the store.

    Args:
        name: ``last``, ``last~N``, ``blessed``, a run id, or a path to a ``.json`` report.
        store_path: The run store, for names that are not report files.

    Raises:
        StoreError: The report or the run cannot be read.
    """
    path = Path(name)
    if name.endswith(".json") or (
        "://" not in name and path.is_file() and not is_sqlite_file(path)
    ):
        return _report_side(path)
    if store_path is None:
        raise StoreError(f"{name!r} is not a report file, and no run store is configured")
    from ..store import open_store

    with open_store(store_path, must_exist=True, read_only=True) as store:
        run_id = store.resolve_run_id(name)
        info = store.run_info(run_id)
        evals = [
            EvalOutcome(str(data["file"]), float(data["score"]), bool(data["passed"]))
            for data in store.evals(run_id)
        ]
        location, shown = store.location, store.shown
    options = info.get("options") or {}
    return RunSide(
        run_id=run_id,
        started_at=str(info.get("started_at") or ""),
        source=shown,
        evals=evals,
        threshold=str(options.get("pass_threshold") or "all"),
        _store_path=location,
    )


def _stored_tests(
    store_path: str, run_id: str, threshold: str, *, scores: bool
) -> Iterator[TestOutcome]:
    from .._records import PassThreshold, status_of_counts
    from ..store import open_store

    with open_store(store_path, must_exist=True, read_only=True) as store:
        rows = store.test_counts(run_id, scores=scores)
        for key, data, passed, failed, errored, skipped, score in rows:
            meta = TestMeta.from_json(data, key)
            own = cast(PassThreshold, meta.pass_threshold or threshold)
            yield TestOutcome(
                key,
                meta.id,
                meta.suite,
                meta.file,
                status_of_counts(passed, failed, errored, skipped, own),
                passed,
                passed + failed + errored,
                score,
                meta.definition,
            )


def _failures(found: list[AssertionRecord], error: Any) -> list[AssertionRecord]:
    """A trial's failing assertions; a trial that errored before judging: its error."""
    if not found and error:
        return [AssertionRecord("error", "error", str(error))]
    return found


_STATUSES = ("passed", "failed", "error", "skipped")


def _check_report(path: Path, data: dict[str, Any]) -> None:
    """Refuse a report whose tests or evals a comparison would misread.

    Issue 28 red team, probes R1 and R2: a test whose status is not one of the four (e.g.
    ``PASSED``) was neither passing nor failing, so a candidate report with it passed ``diff``
    against a passing baseline; other malformed entries were internal errors.

    Raises:
        StoreError: Naming the report, the entry and what is wrong.
    """

    def bad(where: str, what: str) -> StoreError:
        return StoreError(
            f"{path} is not a valid assertly JSON report: {where}: {what}; write one with "
            "`assertly run … -o report.json` or `assertly report RUN -o report.json`"
        )

    seen: set[str] = set()
    for index, test in enumerate(data["tests"]):
        where = f"tests[{index}]"
        if not isinstance(test, dict):
            raise bad(where, "is not an object")
        for name in ("key", "id", "suite", "file", "definition"):
            if test.get(name) is not None and not isinstance(test[name], str):
                raise bad(f"{where}.{name}", f"{test[name]!r} is not a string")
        key = test.get("key") or f"{test.get('file')}::{test.get('suite')}::{test.get('id')}"
        if key in seen:
            raise bad(where, f"test {key!r} appears twice")
        seen.add(key)
        if test.get("status") not in _STATUSES:
            raise bad(f"{where}.status", f"{test.get('status')!r} is not one of {_STATUSES}")
        score = test.get("score")
        if score is not None and (
            isinstance(score, bool)
            or not isinstance(score, int | float)
            or not math.isfinite(float(score) if abs(score) < 1e308 else math.inf)
        ):
            raise bad(f"{where}.score", f"{score!r} is not a finite number or null")
        trials = test.get("trials") or []
        if not isinstance(trials, list):
            raise bad(f"{where}.trials", "is not a list")
        for number, trial in enumerate(trials):
            if not isinstance(trial, dict) or trial.get("status") not in _STATUSES:
                raise bad(f"{where}.trials[{number}]", f"has no status among {_STATUSES}")
    evals = data.get("evals") or []
    if not isinstance(evals, list):
        raise bad("evals", "is not a list")
    for index, suite in enumerate(evals):
        score = suite.get("score") if isinstance(suite, dict) else None
        if (
            not isinstance(suite, dict)
            or isinstance(score, bool)
            or not isinstance(score, int | float)
            or not isinstance(suite.get("passed"), bool)
        ):
            raise bad(f"evals[{index}]", "is not an object with a numeric score and passed")


def _report_side(path: Path) -> RunSide:
    data = read_report(path)
    _check_report(path, data)
    tests: list[TestOutcome] = []
    failures: dict[str, list[AssertionRecord]] = {}
    for test in data["tests"]:
        key = test.get("key") or f"{test.get('file')}::{test.get('suite')}::{test.get('id')}"
        trials = test.get("trials") or []
        ran = [trial for trial in trials if trial.get("status") != "skipped"]
        tests.append(
            TestOutcome(
                key=key,
                id=str(test.get("id")),
                suite=str(test.get("suite")),
                file=str(test.get("file")),
                status=str(test.get("status")),
                passes=sum(1 for trial in ran if trial.get("status") == "passed"),
                ran=len(ran),
                score=test.get("score"),
                definition=test.get("definition"),
            )
        )
        for trial in ran:
            if trial.get("status") != "passed":
                found = trial.get("failures")
                failures[key] = _failures(
                    [AssertionRecord.from_json(item) for item in found or ()], trial.get("error")
                )
                break
    tests.sort(key=lambda outcome: outcome.key)
    evals = [
        EvalOutcome(
            str(suite.get("file")), float(suite.get("score") or 0.0), bool(suite.get("passed"))
        )
        for suite in data.get("evals") or []
    ]
    return RunSide(
        run_id=str(data.get("run_id") or path.name),
        started_at=str(data.get("started_at") or ""),
        source=str(path),
        evals=evals,
        _tests=tests,
        _report_failures=failures,
    )
