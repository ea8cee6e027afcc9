"""From trials to a test's verdict, and from the store back to a whole run.

Live runs and ``assertly report`` build their `RunRecord` with the same functions from the
same stored rows, so a re-rendered report can never disagree with the run that made it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import islice
from pathlib import Path
from typing import Any, cast, overload

from .._records import (
    EvalCaseRecord,
    EvalRecord,
    PassThreshold,
    RunRecord,
    Status,
    TestRecord,
    TrialRecord,
    status_of,
    status_of_counts,
    test_status,
)
from .._test_meta import TestMeta
from ._base import RunStore

__all__ = [
    "PassThreshold",
    "StoredTests",
    "build_run",
    "eval_records",
    "status_of",
    "status_of_counts",
    "stored_test_record",
    "test_status",
]


def _score(trials: list[TrialRecord]) -> float | None:
    scores = [trial.score for trial in trials if trial.score is not None]
    return sum(scores) / len(scores) if scores else None


def stored_test_record(
    meta: dict[str, Any], by_trial: dict[int, dict[str, Any]], threshold: PassThreshold
) -> TestRecord:
    """A test's record from its stored metadata and trials (``threshold``: the run's)."""
    test = TestMeta.from_json(meta)
    trials = [TrialRecord.from_dict(by_trial[number]) for number in sorted(by_trial)]
    # The test's own threshold (its file's, stored with it), else the run's.
    threshold = cast(PassThreshold, test.pass_threshold or threshold)
    status: Status = test_status(trials, threshold) if trials else "error"
    record = TestRecord(
        key=test.key,
        id=test.id,
        name=test.name,
        suite=test.suite,
        file=test.file,
        status=status,
        score=_score(trials),
        trials=trials,
        line=test.line,
        tags=test.tags,
        priority=test.priority,
        description=test.description,
        definition=test.definition,
        input=test.input,
        multi_step=test.multi_step,
        conversation=test.conversation,
        pass_threshold=threshold,
        target=test.target,
    )
    if not trials:
        record.trials = [
            TrialRecord(test.key, 1, "error", 0.0, error="not run (the run was interrupted)")
        ]
    return record


_NOT_PASSED = ("failed", "error")

# A stored run is kept in memory after its first pass when it is at most this big.
KEEP_TESTS = 20_000
KEEP_BYTES = 16 * 2**20


class StoredTests(Sequence[TestRecord]):
    """The tests of a stored run, read from the store each time they are iterated.

    A run's records are never all in memory: a million-test run renders its console summary
    and JSON report test by test, and counts its verdicts from the trials' status column.
    Each iteration opens its own read-only connection, so the view outlives the store object
    that built it (and works while a run is still writing).
    """

    def __init__(self, store_path: str | Path, run_id: str, threshold: PassThreshold) -> None:
        self.store_path = store_path
        self.run_id = run_id
        self.threshold: PassThreshold = threshold
        self._length: int | None = None
        self._counts: dict[Status, int] | None = None
        self._kept: list[TestRecord] | None = None

    def _open(self) -> RunStore:
        return RunStore(self.store_path, must_exist=True, read_only=True)

    def __iter__(self) -> Iterator[TestRecord]:
        if self._kept is not None:
            yield from self._kept
            return
        with self._open() as store:
            # A small run is kept after its first full pass: the console summary and each
            # report read it again, and parsing every record once more cost a tenth of a run.
            kept: list[TestRecord] | None = [] if self._small(store) else None
            for meta, by_trial in store.iter_tests(self.run_id):
                record = stored_test_record(meta, by_trial, self.threshold)
                if kept is not None:
                    kept.append(record)
                yield record
        self._kept = kept

    def not_passed(self) -> Iterator[TestRecord]:
        """The tests that failed or errored, in run order; no other record is parsed.

        The console summary shows only these: on a run that mostly passes, reading back every
        record would cost more than the rest of the summary.
        """
        if self._kept is not None:
            yield from (test for test in self._kept if test.status in _NOT_PASSED)
            return

        def failing(statuses: list[str], threshold: Any) -> bool:
            return status_of(statuses, threshold or self.threshold) in _NOT_PASSED

        with self._open() as store:
            for meta, by_trial in store.iter_tests(self.run_id, keep=failing):
                yield stored_test_record(meta, by_trial, self.threshold)

    def _small(self, store: RunStore) -> bool:
        if len(self) > KEEP_TESTS:
            return False
        return store.stored_bytes(self.run_id) <= KEEP_BYTES

    def __len__(self) -> int:
        if self._length is None:
            with self._open() as store:
                self._length = store.count_tests(self.run_id)
        return self._length

    @overload
    def __getitem__(self, index: int) -> TestRecord: ...

    @overload
    def __getitem__(self, index: slice) -> list[TestRecord]: ...

    def __getitem__(self, index: int | slice) -> TestRecord | list[TestRecord]:
        if isinstance(index, slice):
            return list(self)[index]
        position = index + len(self) if index < 0 else index
        if not 0 <= position < len(self):
            raise IndexError("test index out of range")
        return next(islice(self, position, None))

    def status_counts(self) -> dict[Status, int]:
        """Tests by final status, from the trials' statuses (no record is parsed)."""
        if self._counts is None:
            counts: dict[Status, int] = {"passed": 0, "failed": 0, "error": 0, "skipped": 0}
            with self._open() as store:
                for meta, by_trial in store.iter_tests(self.run_id, records=False):
                    statuses = [by_trial[number] for number in sorted(by_trial)]
                    threshold = meta["pass_threshold"] or self.threshold
                    counts[status_of(statuses, threshold) if statuses else "error"] += 1
            self._counts = counts
        return self._counts


def build_run(store: RunStore, run_id: str) -> RunRecord:
    """The run as stored: tests in run order (read lazily), trials in trial order."""
    info = store.run_info(run_id)
    options = info.get("options", {})
    threshold: PassThreshold = options.get("pass_threshold", "all")
    evals = eval_records(store.evals(run_id))
    return RunRecord(
        run_id=run_id,
        started_at=info.get("started_at", ""),
        duration_ms=info.get("duration_ms") or 0.0,
        tests=StoredTests(store.location, run_id, threshold),
        evals=evals,
        problems=options.get("problems", []),
        warnings=options.get("warnings", []),
        shard=options.get("shard"),
        plan=options.get("plan"),
        judge=store.judge_spend(run_id),
        simulator=store.simulator_spend(run_id),
        targets=list(options.get("target_labels") or []),
        name=options.get("name"),
        provenance=options.get("provenance"),
        cached=options.get("cached") or 0,
        budget_stopped=options.get("budget_stopped"),
    )


def eval_records(stored: list[dict[str, Any]]) -> list[EvalRecord]:
    """A run's eval suites from their stored records (`RunStore.evals`)."""
    return [
        EvalRecord(
            file=data["file"],
            score=data["score"],
            threshold=data["threshold"],
            passed=data["passed"],
            cases=[EvalCaseRecord.from_json(case) for case in data.get("cases", [])],
        )
        for data in stored
    ]
