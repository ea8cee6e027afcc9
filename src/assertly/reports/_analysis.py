"""What the Markdown and HTML reports say about a run, computed once for both.

Failures with their diffs, errors, skip reasons, per-suite rows, timings and percentiles,
and how values read as text. The renderers only format this.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson

from .._check_records import AssertionRecord
from .._json import dumps
from .._records import (
    EvalCaseRecord,
    EvalRecord,
    RunRecord,
    TestRecord,
    combined_metrics,
    report_output,
)

if TYPE_CHECKING:  # imported when a run has targets: a run of one pays nothing for them
    from ..compare._matrix import MatrixBuilder, MatrixRow, MatrixView

__all__ = [
    "AssertionRow",
    "Failure",
    "MatrixData",
    "OutputView",
    "ReportData",
    "SuiteRow",
    "TestDetail",
    "clip",
    "eval_case_failures",
    "format_ms",
    "format_rate",
    "label",
    "percentile",
    "skip_reason",
    "test_errors",
    "test_detail",
    "test_failures",
    "format_cost",
    "format_metrics",
    "value_text",
    "where",
]

SLOWEST = 10
NONE = "\u2013"  # en dash: no value
SEP = "\u203a"  # single right-pointing angle quote, between suite and test
MESSAGE_LIMIT = 500
VALUE_LIMIT = 2000
# Passing tests listed with their input, output and assertions; beyond these (in run order)
# a report says how many it leaves out (the JSON report has every test).
LISTED_PASSED = 200
# Failing and errored tests are all listed; the first this many with their input and outputs.
DETAILED_NOT_PASSED = 200
# Distinct outputs shown per test (trials that answered alike share one).
SHOWN_OUTPUTS = 3
# Rows of a matrix run's table (tests by targets); beyond, the table shows only the tests
# where the targets disagree (at most as many), and says how many it leaves out.
MATRIX_LISTED = 200


# -- analysis -------------------------------------------------------------------------


@dataclass(slots=True)
class Failure:
    """One distinct failing assertion, with the trials (or eval block) where it happened."""

    assertion: str
    message: str
    outcome: str = "failed"
    step: str | None = None
    path: str | None = None
    expected: Any = None
    actual: Any = None
    trials: list[int] = field(default_factory=list)

    @classmethod
    def of(cls, record: AssertionRecord, step: str | None) -> Failure:
        """A failing assertion's record, shown under ``step`` (a step, or an eval block)."""
        return cls(
            record.assertion,
            record.message,
            record.outcome,
            step,
            record.path,
            record.expected,
            record.actual,
        )

    @property
    def has_expected(self) -> bool:
        """An expected value worth showing."""
        return self.expected is not None

    @property
    def has_actual(self) -> bool:
        """An actual value worth showing."""
        return self.actual is not None


@dataclass(slots=True)
class SuiteRow:
    """Counts of one suite of one file (or one eval file)."""

    file: str
    suite: str
    total: int = 0
    passed: int = 0
    failed: int = 0
    errored: int = 0
    skipped: int = 0
    is_eval: bool = False

    @property
    def judged(self) -> int:
        """Tests that ran to a verdict other than skipped."""
        return self.total - self.skipped

    @property
    def pass_rate(self) -> float | None:
        """Passed over judged; None when nothing was judged."""
        return self.passed / self.judged if self.judged else None

    def add(self, status: str) -> None:
        """Count one verdict."""
        self.total += 1
        if status == "passed":
            self.passed += 1
        elif status == "failed":
            self.failed += 1
        elif status == "error":
            self.errored += 1
        else:
            self.skipped += 1


@dataclass(slots=True)
class AssertionRow:
    """One assertion of a test (a step's, for a multi-step test) over the trials that ran it."""

    assertion: str
    step: str | None
    outcomes: list[str] = field(default_factory=list)  # per trial, in trial order
    scores: list[float] = field(default_factory=list)
    first_message: str = ""
    problem_message: str = ""  # the first message of a trial it did not pass in

    @property
    def message(self) -> str:
        """Why it did not pass in some trial; else what it said when it passed."""
        return self.problem_message or self.first_message

    @property
    def outcome(self) -> str:
        """The worst outcome over the trials: error, failed, skipped or passed."""
        for worst in ("error", "failed", "skipped"):
            if worst in self.outcomes:
                return worst
        return "passed"

    @property
    def score(self) -> float | None:
        """The mean score over the trials."""
        return sum(self.scores) / len(self.scores) if self.scores else None


@dataclass(slots=True)
class OutputView:
    """One distinct response of a test (of a step), with the trials that gave it."""

    output: Any
    step: str | None
    trials: list[int]
    truncated: bool = False


@dataclass(slots=True)
class TestDetail:
    """What a report lists for every test: input, each trial's metrics, outputs, assertions."""

    __test__ = False  # not a pytest class

    input: Any
    trials: list[tuple[int, str, dict[str, Any]]]  # (trial, status, metrics)
    outputs: list[OutputView]
    more_outputs: int
    assertions: list[AssertionRow]


def test_detail(test: TestRecord) -> TestDetail:
    """A test's input, metrics per trial, distinct outputs and assertions, for people."""
    outputs: dict[str, OutputView] = {}
    rows: dict[tuple[str | None, int, int], AssertionRow] = {}
    trials: list[tuple[int, str, dict[str, Any]]] = []
    for trial in test.trials:
        trials.append((trial.trial, trial.status, combined_metrics(trial.steps)))
        for step in trial.steps:
            step_name = step.name if test.multi_step else None
            if step.output is not None:
                shown, truncated = report_output(step.output)
                key = dumps([step_name, shown])
                view = outputs.get(key)
                if view is None:
                    view = outputs[key] = OutputView(shown, step_name, [], truncated)
                view.trials.append(trial.trial)
            for check_index, check in enumerate(step.checks):
                for index, item in enumerate(check.results):
                    row = rows.get((step_name, check_index, index))
                    if row is None:
                        row = rows[(step_name, check_index, index)] = AssertionRow(
                            item.assertion, step_name
                        )
                    row.outcomes.append(item.outcome)
                    if item.score is not None and math.isfinite(item.score):
                        row.scores.append(float(item.score))
                    row.first_message = row.first_message or item.message
                    if item.outcome != "passed" and not row.problem_message:
                        row.problem_message = item.message
    views = list(outputs.values())
    return TestDetail(
        input=test.input,
        trials=trials,
        outputs=views[:SHOWN_OUTPUTS],
        more_outputs=max(0, len(views) - SHOWN_OUTPUTS),
        assertions=list(rows.values()),
    )


def format_cost(cost: float | None) -> str:
    """A cost in US dollars: ``$0.0123``; an en dash when unknown."""
    if cost is None or not math.isfinite(cost):
        return NONE
    return f"${cost:.4f}" if cost < 100 else f"${cost:,.2f}"


def format_metrics(metrics: dict[str, Any]) -> str:
    """``840 ms · $0.0012 · m-1 · 120 tokens``: the metrics that are known."""
    parts = []
    if metrics.get("latency_ms") is not None:
        parts.append(format_ms(metrics["latency_ms"]))
    if metrics.get("cost_usd") is not None:
        parts.append(format_cost(metrics["cost_usd"]))
    if metrics.get("model"):
        parts.append(str(metrics["model"]))
    tokens = metrics.get("tokens")
    if tokens:
        total = tokens.get("total")
        if not isinstance(total, int):
            total = sum(v for v in tokens.values() if isinstance(v, int))
        parts.append(f"{total} tokens")
    return " · ".join(parts) or NONE


def test_failures(test: TestRecord) -> list[Failure]:
    """Distinct failing assertions of a test, each with the trials it failed in."""
    groups: dict[str, Failure] = {}
    for trial in test.trials:
        for item in trial.failures:
            failure = Failure.of(item, item.step)
            key = dumps(
                [
                    *(failure.step, failure.assertion, failure.outcome, failure.message),
                    *(failure.path, failure.expected, failure.actual),
                ]
            )
            groups.setdefault(key, failure).trials.append(trial.trial)
    return list(groups.values())


def test_errors(test: TestRecord) -> list[tuple[str, list[int]]]:
    """Distinct trial errors of a test, each with the trials it happened in."""
    groups: dict[str, list[int]] = {}
    for trial in test.trials:
        if trial.error:
            groups.setdefault(trial.error, []).append(trial.trial)
    return list(groups.items())


def skip_reason(test: TestRecord) -> str:
    """Why a test was skipped."""
    return next((trial.reason for trial in test.trials if trial.reason), None) or "skipped"


def eval_case_failures(case: EvalCaseRecord) -> list[Failure]:
    """The failing assertions of an eval case, the block id standing in for the step."""
    failures: list[Failure] = []
    for block, result in case.blocks.items():
        failures.extend(Failure.of(item, block) for item in result.results if not item.passed)
    return failures


def label(test: TestRecord) -> str:
    """How a test is named in reports: its name, with the id when they differ.

    In a matrix run, with the target it ran against: ``two [cand]``.
    """
    name = test.id if not test.name or test.name == test.id else f"{test.name} ({test.id})"
    return name if test.target is None else f"{name} [{test.target}]"


def where(test: TestRecord) -> str:
    """file:line of a test."""
    return f"{test.file}:{test.line}" if test.line else test.file


def format_ms(ms: float | None) -> str:
    """A duration for people: ``840 ms``, ``1.24 s``, ``2m 05s``."""
    if ms is None or not math.isfinite(ms):
        return NONE
    if ms < 1:
        return f"{ms:.2f} ms"
    if ms < 1000:
        return f"{ms:.0f} ms"
    seconds = ms / 1000
    if seconds < 60:
        return f"{seconds:.2f} s"
    minutes, seconds = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes}m {seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes:02d}m"


def format_rate(rate: float | None) -> str:
    """A pass rate as a percentage, an en dash when there is none."""
    return NONE if rate is None else f"{rate * 100:.1f}%"


def percentile(values: list[float], q: float) -> float | None:
    """Linear-interpolated percentile (q in 0..1) of sorted ``values``."""
    if not values:
        return None
    position = (len(values) - 1) * q
    low = math.floor(position)
    high = math.ceil(position)
    return values[low] + (values[high] - values[low]) * (position - low)


@dataclass(slots=True)
class MatrixData:
    """A matrix run's targets as the Markdown and HTML reports show them."""

    view: MatrixView
    rows: list[MatrixRow]  # the rows the table shows
    only_disagreements: bool  # the run had more than MATRIX_LISTED tests
    disagreements: int

    @classmethod
    def of(cls, view: MatrixView) -> MatrixData:
        """The table's rows: every test up to `MATRIX_LISTED`, else the disagreements."""
        disagreeing = view.disagreements
        if len(view.rows) <= MATRIX_LISTED:
            return cls(view, view.rows, False, len(disagreeing))
        return cls(view, disagreeing[:MATRIX_LISTED], True, len(disagreeing))

    @property
    def left_out(self) -> int:
        """Tests the table does not show."""
        return len(self.view.rows) - len(self.rows)


@dataclass(slots=True)
class ReportData:
    """What both human-readable reports show, computed once from a run."""

    run: RunRecord
    summary: dict[str, Any]
    suites: list[SuiteRow]
    failed: list[TestRecord]
    errored: list[TestRecord]
    skipped: list[TestRecord]
    flaky: list[TestRecord]
    slowest: list[TestRecord]
    latencies: list[float]
    average_ms: float | None
    multi_trial: bool
    passed: list[TestRecord] = field(default_factory=list)  # the first LISTED_PASSED
    passed_total: int = 0
    calls: int = 0  # steps that got a response or an error from the agent
    cost_usd: float | None = None  # over the calls that reported a cost
    costed_calls: int = 0
    models: dict[str, int] = field(default_factory=dict)  # calls per reported model
    matrix: MatrixData | None = None  # a matrix run's targets side by side

    def latency(self, q: float) -> float | None:
        """A percentile of step latency (q in 0..1)."""
        return percentile(self.latencies, q)

    @property
    def passed_not_listed(self) -> int:
        """Passing tests beyond `LISTED_PASSED`, counted but not listed."""
        return self.passed_total - len(self.passed)

    @classmethod
    def from_run(cls, run: RunRecord) -> ReportData:
        """Analyse ``run``."""
        # One pass: a stored run's tests are read from the store each time they are iterated.
        suites: dict[tuple[str, str], SuiteRow] = {}
        by_status: dict[str, list[TestRecord]] = {"failed": [], "error": [], "skipped": []}
        flaky: list[TestRecord] = []
        timed: list[TestRecord] = []  # the slowest so far, at most SLOWEST
        latencies: list[float] = []
        passed: list[TestRecord] = []
        passed_total = calls = costed = 0
        cost = 0.0
        models: dict[str, int] = {}
        ran = 0
        ran_ms = 0.0
        multi_trial = False
        matrix: MatrixBuilder | None = None
        if run.targets:
            from ..compare._matrix import MatrixBuilder

            matrix = MatrixBuilder(run.targets)
        for test in run.tests:
            if matrix is not None:
                matrix.add(test)
            key = (test.file, test.suite)
            suites.setdefault(key, SuiteRow(test.file, test.suite)).add(test.status)
            by_status.get(test.status, []).append(test)
            if test.status == "passed":
                passed_total += 1
                if len(passed) < LISTED_PASSED:
                    passed.append(test)
            for trial in test.trials:
                for step in trial.steps:
                    calls += 1
                    if step.cost_usd is not None and math.isfinite(step.cost_usd):
                        cost += step.cost_usd
                        costed += 1
                    if step.model:
                        models[step.model] = models.get(step.model, 0) + 1
            if test.flaky:
                flaky.append(test)
            multi_trial = multi_trial or len(test.trials) > 1
            latencies.extend(
                step.latency_ms
                for trial in test.trials
                for step in trial.steps
                if step.latency_ms is not None and math.isfinite(step.latency_ms)
            )
            if test.status != "skipped":
                ran += 1
                ran_ms += test.duration_ms
                if test.duration_ms > 0:
                    timed.append(test)
                    if len(timed) > 4 * SLOWEST:
                        timed = sorted(timed, key=lambda t: -t.duration_ms)[:SLOWEST]
        rows = list(suites.values())
        for suite in run.evals:
            row = SuiteRow(suite.file, "eval", is_eval=True)
            for case in suite.cases:
                row.add(case.status)
            rows.append(row)
        latencies.sort()
        return cls(
            run=run,
            summary=run.summary(),
            suites=rows,
            failed=by_status["failed"],
            errored=by_status["error"],
            skipped=by_status["skipped"],
            flaky=flaky,
            slowest=sorted(timed, key=lambda t: -t.duration_ms)[:SLOWEST],
            latencies=latencies,
            average_ms=ran_ms / ran if ran else None,
            multi_trial=multi_trial,
            passed=passed,
            passed_total=passed_total,
            calls=calls,
            cost_usd=cost if costed else None,
            costed_calls=costed,
            models=dict(sorted(models.items(), key=lambda item: (-item[1], item[0]))),
            matrix=MatrixData.of(matrix.view()) if matrix is not None else None,
        )

    @property
    def failing_evals(self) -> list[tuple[EvalRecord, list[EvalCaseRecord]]]:
        """Every eval file with its cases that did not pass (even when the suite passed)."""
        return [
            (suite, [case for case in suite.cases if case.status != "passed"])
            for suite in self.run.evals
            if any(case.status != "passed" for case in suite.cases)
        ]


# -- values as text --------------------------------------------------------------------------


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"… ({len(text) - limit} more chars)"


def value_text(value: Any, limit: int = VALUE_LIMIT) -> str:
    """A value as people read it: JSON (pretty when long), long or multi-line text as is."""
    if isinstance(value, str) and ("\n" in value.strip("\n") or len(value) > 120):
        return clip(value.rstrip("\n"), limit)
    text = dumps(value)
    if len(text) > 100 and isinstance(value, dict | list):
        with contextlib.suppress(TypeError, orjson.JSONEncodeError):
            text = orjson.dumps(
                value, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS
            ).decode()
    return clip(text, limit)
