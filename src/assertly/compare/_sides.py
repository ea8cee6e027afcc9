"""One side of a comparison: a stored run, or a JSON report, read as tests sorted by key.

A stored run is streamed from SQLite in key order (the primary key's index), one row per
test with its trial statuses counted in SQL, so two million-test runs merge in flat memory.
A JSON report is read whole (reports are files people keep; the store is for scale).

A side may be one target of a matrix run (``RUN:LABEL``, `RunSide.restricted`): the run's
cells of that label, each keyed by its test's key without the ``[LABEL]`` suffix, and the
tests the matrix does not vary (those of an agent the config's ``matrix:`` leaves alone, run
once for every target). Two targets of one run, or a target and a run of one target, then
pair test by test like two runs. Such a side is read whole and sorted: dropping the suffix
can change the key order (``a[x]`` sorts after ``a-b[x]``, ``a`` before ``a-b``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, cast

from .._check_records import AssertionRecord
from .._exceptions import StoreError
from .._records import TrialRecord
from .._test_meta import TestMeta
from ..store._files import is_sqlite_file, read_report

__all__ = ["EvalOutcome", "RunSide", "TestOutcome", "open_side", "pairing_problem", "split_target"]

# A target label (loading's TARGET_LABEL_PATTERN): what may follow the last ':' of RUN:LABEL.
_LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


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
    target: str | None = None  # in a matrix run, the label of the target it ran against

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
    """A run to compare: its identity, its evals, and its tests in key order (`tests`).

    Attributes:
        labels: A matrix run's target labels, in order (empty for a run of one target).
        target: The one label this side is restricted to (`restricted`), or None for the
            whole run.
    """

    run_id: str
    started_at: str
    source: str  # the store's path or the report's, for messages
    evals: list[EvalOutcome] = field(default_factory=list)
    threshold: str = "all"
    labels: list[str] = field(default_factory=list)
    target: str | None = None
    _store_path: str | None = None  # what opens the store again (a path or a URL)
    _tests: list[TestOutcome] | None = None  # a report's tests, sorted

    @property
    def name(self) -> str:
        """The side as users name it: the run id, then ``:LABEL`` for one target of it."""
        return self.run_id if self.target is None else f"{self.run_id}:{self.target}"

    @property
    def is_matrix(self) -> bool:
        """A whole matrix run (its keys end in ``[LABEL]``), not one target of it."""
        return bool(self.labels) and self.target is None

    def restricted(self, label: str) -> RunSide:
        """This run's side of one target of its matrix (see the module's docstring).

        Raises:
            StoreError: The run is not a matrix run, or has no target ``label``.
        """
        if not self.labels:
            raise StoreError(
                f"run {self.run_id} ran one target (not a matrix run): it has no target "
                f"{label!r}; name it without ':{label}'"
            )
        if label not in self.labels:
            raise StoreError(
                f"run {self.run_id} has no target {label!r}; its targets: "
                f"{', '.join(self.labels)} (name one as {self.run_id}:{self.labels[0]})"
            )
        if self.target is not None:
            raise StoreError(f"{self.name} is already one target of run {self.run_id}")
        return replace(self, target=label)

    def tests(self, *, scores: bool = True) -> Iterator[TestOutcome]:
        """Every test, sorted by key (streamed from a store; one target's: read, then sorted).

        Args:
            scores: Read each test's mean score (a stored run reads every trial record for
                it; without, a test's score is None).
        """
        if self.target is not None:
            yield from sorted(self._target_tests(scores), key=lambda outcome: outcome.key)
            return
        yield from self._all_tests(scores)

    def _all_tests(self, scores: bool) -> Iterator[TestOutcome]:
        if self._tests is not None:
            yield from self._tests
            return
        assert self._store_path is not None
        yield from _stored_tests(self._store_path, self.run_id, self.threshold, scores=scores)

    def _target_tests(self, scores: bool) -> Iterable[TestOutcome]:
        """The cells of ``target`` (keys without the suffix) and the tests no target varies."""
        suffix = f"[{self.target}]"
        for outcome in self._all_tests(scores):
            if outcome.target is None:
                yield outcome
            elif outcome.target == self.target:
                yield replace(outcome, key=outcome.key.removesuffix(suffix))

    def failures_of(self, key: str) -> list[AssertionRecord]:
        """The failing assertions of one test (its first trial that did not pass)."""
        keys = [key] if self.target is None else [f"{key}[{self.target}]", key]
        if self._store_path is None:
            return next(
                (self._report_failures[one] for one in keys if one in self._report_failures), []
            )
        from ..store import open_store

        with open_store(self._store_path, must_exist=True, read_only=True) as store:
            found = (store.first_not_passed(self.run_id, one) for one in keys)
            record = next((one for one in found if one is not None), None)
        if record is None:
            return []
        trial = TrialRecord.from_dict(record)
        return _failures(trial.failures, trial.error)

    _report_failures: dict[str, list[AssertionRecord]] = field(default_factory=dict)


def split_target(name: str) -> tuple[str, str | None]:
    """``RUN:LABEL`` as ``(RUN, LABEL)``; any other name as ``(name, None)``.

    The rule (docs/decisions.md, "Diff inside a matrix run"): the name is split at its last
    ':' when what follows is a valid target label and what precedes is not empty, so run
    ids, ``last``, ``last~N``, ``blessed`` and report paths (``./r.json:cand``) all take a
    label. `open_side` keeps the whole name when it is an existing file or a run of the store.
    """
    head, sep, tail = name.rpartition(":")
    if sep and head and _LABEL.match(tail):
        return head, tail
    return name, None


def pairing_problem(base: RunSide, candidate: RunSide) -> str | None:
    """Why two sides cannot pair test by test (a whole matrix run against anything else).

    A matrix run's keys end in ``[LABEL]``: against a run of one target, or against one
    target of a run, no test pairs (every test would be removed and added). Two whole
    matrix runs pair cell by cell.
    """
    if base.is_matrix == candidate.is_matrix:
        return None
    matrix, other = (base, candidate) if base.is_matrix else (candidate, base)
    which = "one target of a run" if other.target is not None else "a run of one target"
    return (
        f"run {matrix.run_id} is a matrix run (targets {', '.join(matrix.labels)}) and "
        f"{other.name} is {which}: no test pairs; name the target to compare, e.g. "
        f"{matrix.run_id}:{matrix.labels[-1] if matrix is candidate else matrix.labels[0]}"
    )


def open_side(name: str, store_path: str | Path | None) -> RunSide:
    """A run named as users name it: a JSON report's path, or a run of the store.

    Args:
        name: ``last``, ``last~N``, ``blessed``, a run id, or a path to a ``.json`` report;
            any of them followed by ``:LABEL`` for one target of a matrix run
            (`split_target`).
        store_path: The run store, for names that are not report files.

    Raises:
        StoreError: The report or the run cannot be read, or has no target ``LABEL``.
    """
    whole, label = split_target(name)
    if label is not None and not _names_whole(name, store_path):
        return _open_whole(whole, store_path).restricted(label)
    return _open_whole(name, store_path)


def _names_whole(name: str, store_path: str | Path | None) -> bool:
    """Whether ``name``, though it ends in ``:LABEL``, is a file or a run id as it is."""
    if "://" not in name and Path(name).is_file():
        return True
    if store_path is None:
        return False
    from ..store import open_store

    try:
        with open_store(store_path, must_exist=True, read_only=True) as store:
            return store.resolve_run_id(name) == name
    except StoreError:
        return False


def _open_whole(name: str, store_path: str | Path | None) -> RunSide:
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
        labels=[str(label) for label in options.get("target_labels") or ()],
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
                meta.target,
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
        for name in ("key", "id", "suite", "file", "definition", "target"):
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
                target=test.get("target"),
            )
        )
        for trial in ran:
            if trial.get("status") != "passed":
                found = trial.get("failures")
                failures[key] = _failures(
                    [AssertionRecord.from_json(item) for item in found or ()], trial.get("error")
                )
                break
    labels = _report_labels(path, data, tests)  # in run order, before the sort
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
        labels=labels,
        _tests=tests,
        _report_failures=failures,
    )


def _report_labels(path: Path, data: dict[str, Any], tests: list[TestOutcome]) -> list[str]:
    """A report's ``targets`` (a matrix run's labels), checked.

    A report without ``targets`` whose tests carry a ``target`` (written by hand, or by a
    tool that kept only the tests) has the labels of its tests, in order of appearance.

    Raises:
        StoreError: ``targets`` is not a list of target labels, or misses a test's label.
    """
    labels = data.get("targets")
    if labels is None:
        labels = list(dict.fromkeys(test.target for test in tests if test.target is not None))
    _check_cell_targets(path, labels if isinstance(labels, list) else [], tests)
    if not data.get("targets"):
        return cast(list[str], labels)
    if not isinstance(labels, list) or not all(
        isinstance(label, str) and _LABEL.match(label) for label in labels
    ):
        raise StoreError(
            f"{path} is not a valid assertly JSON report: targets: {labels!r} is "
            "not a list of target labels"
        )
    stray = next((test.target for test in tests if test.target not in (None, *labels)), None)
    if stray is not None:
        raise StoreError(
            f"{path} is not a valid assertly JSON report: tests of target "
            f"{stray!r}, which is not among its targets ({', '.join(labels) or 'none'})"
        )
    return labels


def _check_cell_targets(path: Path, labels: list[Any], tests: list[TestOutcome]) -> None:
    """Refuse a report whose cell keys (``…::ID[LABEL]``) and ``target`` fields disagree.

    Raises:
        StoreError: A cell of target ``LABEL`` by its key carries no or another ``target``.
    """
    # red team, probe "report without target fields": with the tests' `target` fields
    # deleted, every cell counted as a test no target varies, so `diff r.json:base
    # r.json:cand` compared the whole report with itself: 0 regressed, exit 0.
    for test in tests:
        of_key = next(
            (
                label
                for label in labels
                if isinstance(label, str) and test.key.endswith(f"::{test.id}[{label}]")
            ),
            None,
        )
        if of_key is not None and test.target != of_key:
            raise StoreError(
                f"{path} is not a valid assertly JSON report: test {test.key!r} is a cell of "
                f"target {of_key!r} by its key, but its target is {test.target!r}"
            )
