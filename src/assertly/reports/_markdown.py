r"""The Markdown report: an executive summary, then the tests that need attention.

Sections: summary (totals, pass rate, duration and average per test), problems and warnings,
per-suite table, failed tests with their diffs, errored tests with reasons, skipped tests with
reasons, flaky tests, slowest tests, and evals (failing cases listed even when the suite passed).

Everything that comes from a test file or an agent is escaped: backslash escapes for text, code
spans and fences longer than any backtick run inside, and ``\|`` for pipes in tables, so agent
output cannot break the layout or inject HTML. The analysis helpers here (``ReportData``) are
shared with the HTML report.
"""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson

from ..engine._values import dumps
from ..runner import EvalCaseRecord, EvalRecord, RunRecord, TestRecord

__all__ = ["Failure", "ReportData", "SuiteRow", "render_markdown"]

SLOWEST = 10
NONE = "\u2013"  # en dash: no value
SEP = "\u203a"  # single right-pointing angle quote, between suite and test
MESSAGE_LIMIT = 500
VALUE_LIMIT = 2000


# -- shared analysis -------------------------------------------------------------------------


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


def test_failures(test: TestRecord) -> list[Failure]:
    """Distinct failing assertions of a test, each with the trials it failed in."""
    groups: dict[str, Failure] = {}
    for trial in test.trials:
        for item in trial.failures:
            failure = Failure(
                assertion=str(item.get("assertion", "?")),
                message=str(item.get("message") or ""),
                outcome=str(item.get("outcome") or "failed"),
                step=item.get("step"),
                path=item.get("path"),
                expected=item.get("expected"),
                actual=item.get("actual"),
            )
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
        for item in result.get("results", []):
            if item.get("passed"):
                continue
            failures.append(
                Failure(
                    assertion=str(item.get("assertion", "?")),
                    message=str(item.get("message") or ""),
                    outcome=str(item.get("outcome") or "failed"),
                    step=block,
                    path=item.get("path"),
                    expected=item.get("expected"),
                    actual=item.get("actual"),
                )
            )
    return failures


def label(test: TestRecord) -> str:
    """How a test is named in reports: its name, with the id when they differ."""
    return test.id if not test.name or test.name == test.id else f"{test.name} ({test.id})"


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

    @classmethod
    def from_run(cls, run: RunRecord) -> ReportData:
        """Analyse ``run``."""
        # One pass: a stored run's tests are read from the store each time they are iterated.
        suites: dict[tuple[str, str], SuiteRow] = {}
        by_status: dict[str, list[TestRecord]] = {"failed": [], "error": [], "skipped": []}
        flaky: list[TestRecord] = []
        timed: list[TestRecord] = []  # the slowest so far, at most SLOWEST
        latencies: list[float] = []
        ran = 0
        ran_ms = 0.0
        multi_trial = False
        for test in run.tests:
            key = (test.file, test.suite)
            suites.setdefault(key, SuiteRow(test.file, test.suite)).add(test.status)
            by_status.get(test.status, []).append(test)
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
        )

    @property
    def failing_evals(self) -> list[tuple[EvalRecord, list[EvalCaseRecord]]]:
        """Every eval file with its cases that did not pass (even when the suite passed)."""
        return [
            (suite, [case for case in suite.cases if case.status != "passed"])
            for suite in self.run.evals
            if any(case.status != "passed" for case in suite.cases)
        ]


# -- Markdown escaping -----------------------------------------------------------------------

_SPECIAL = re.compile(r"([\\`*_\[\]<>|~&!#])")
_LINE_START = re.compile(r"^(\s*)([-+=]|\d+(?=[.)]))")  # list items, headings underlined
_NEWLINES = re.compile(r"\r\n|\r|\n")
_BACKTICKS = re.compile(r"`+")


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"… ({len(text) - limit} more chars)"


def _escape_start(match: re.Match[str]) -> str:
    indent, mark = match.groups()
    if mark.isdigit():  # "1." / "1)" starts an ordered list: escape the punctuation after it
        return f"{indent}{mark}\\"
    return f"{indent}\\{mark}"


def md_text(text: Any, limit: int = MESSAGE_LIMIT) -> str:
    """Untrusted text as inline Markdown: special characters escaped, one line (``<br>``)."""
    lines = _NEWLINES.split(_clip(str(text), limit))
    escaped = [_LINE_START.sub(_escape_start, _SPECIAL.sub(r"\\\1", line)) for line in lines]
    return "<br>".join(escaped)


def md_code(text: Any, *, table: bool = True, limit: int = VALUE_LIMIT) -> str:
    r"""Untrusted text as a code span (a fence longer than any backtick run inside).

    In a table, pipes become ``\|`` (GFM removes the backslash again). A backslash right before
    a pipe cannot be kept literally in a code span there, so such text is escaped as plain text.
    """
    value = _NEWLINES.sub("⏎", _clip(str(text), limit))
    if not value:
        return "` `"
    if table and "\\|" in value:
        return md_text(value, limit)
    longest = max((len(run) for run in _BACKTICKS.findall(value)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if value[0] in "` " or value[-1] in "` " else ""
    if table:
        value = value.replace("|", "\\|")
    return f"{fence}{pad}{value}{pad}{fence}"


def _fence(lines: list[str], info: str = "") -> list[str]:
    body = "\n".join(lines)
    longest = max((len(run) for run in _BACKTICKS.findall(body)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}{info}", *lines, fence]


def value_text(value: Any, limit: int = VALUE_LIMIT) -> str:
    """A value as people read it: JSON (pretty when long), long or multi-line text as is."""
    if isinstance(value, str) and ("\n" in value.strip("\n") or len(value) > 120):
        return _clip(value.rstrip("\n"), limit)
    text = dumps(value)
    if len(text) > 100 and isinstance(value, dict | list):
        with contextlib.suppress(TypeError, orjson.JSONEncodeError):
            text = orjson.dumps(
                value, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS
            ).decode()
    return _clip(text, limit)


def _value_lines(value: Any) -> list[str]:
    return value_text(value).splitlines() or [""]


def _diff(
    failures: Iterable[Failure],
    multi_trial: bool,
    test_id: str | None = None,
    *,
    step_label: str = "step",
) -> list[str]:
    """Failing assertions as one fenced diff: ``-`` expected, ``+`` actual.

    ``step_label`` names what ``Failure.step`` holds: a test's step, or an eval case's block.
    """
    lines: list[str] = []
    for failure in failures:
        if lines:
            lines.append("")
        shown_step = failure.step and failure.step != test_id
        where_parts = [f"{step_label} {failure.step}"] if shown_step else []
        if failure.path:
            where_parts.append(f"path {failure.path}")
        if multi_trial and failure.trials:
            trials = ", ".join(str(n) for n in failure.trials)
            where_parts.append(f"trial{'s' if len(failure.trials) > 1 else ''} {trials}")
        outcome = "" if failure.outcome == "failed" else f" [{failure.outcome}]"
        head = f"@@ {failure.assertion}{outcome}"
        head = f"{head} ({'; '.join(where_parts)}) @@" if where_parts else f"{head} @@"
        lines.append(_NEWLINES.sub("⏎", head))
        lines.extend(f"# {line}" for line in _clip(failure.message, MESSAGE_LIMIT).splitlines())
        for sign, name, present, value in (
            ("-", "expected", failure.has_expected, failure.expected),
            ("+", "actual", failure.has_actual, failure.actual),
        ):
            if not present:
                continue
            values = _value_lines(value)
            lines.append(f"{sign} {name + ':':9} {values[0]}")
            lines.extend(f"{sign} {'':9} {line}" for line in values[1:])
    return _fence(lines, "diff")


def _table(header: list[str], rows: Iterable[list[str]], align: str = "") -> list[str]:
    """A GFM table; ``align`` holds one of ``l``/``r`` per column (default left)."""
    marks = [("---:" if a == "r" else "---") for a in align.ljust(len(header), "l")]
    out = ["| " + " | ".join(header) + " |", "| " + " | ".join(marks) + " |"]
    out.extend("| " + " | ".join(row) + " |" for row in rows)
    return out


# -- sections ---------------------------------------------------------------------------------

_ICON = {"passed": "✅", "failed": "❌", "error": "💥", "skipped": "⏭️"}


def _summary(data: ReportData) -> list[str]:
    run, s = data.run, data.summary
    verdict = "✅ PASSED" if run.ok else "❌ FAILED"
    judged = s["total"] - s["skipped"]
    lines = [
        "# assertly report",
        "",
        f"**{verdict}** — {s['passed']} of {judged} judged tests passed "
        f"({format_rate(s['pass_rate'])})"
        f" · run {md_code(run.run_id, table=False)} · started {md_text(run.started_at)}",
        "",
        "## Summary",
        "",
    ]
    row = [
        str(s["total"]),
        str(s["passed"]),
        str(s["failed"]),
        str(s["errored"]),
        str(s["skipped"]),
        format_rate(s["pass_rate"] if judged else None),
        format_ms(run.duration_ms),
        format_ms(data.average_ms),
    ]
    header = ["Total", "Passed", "Failed", "Errored", "Skipped", "Pass rate", "Duration"]
    lines += _table([*header, "Avg per test"], [row], "rrrrrrrr")
    extras = []
    if run.tests:
        extras.append(f"{len(run.tests)} tests")
    if run.evals:
        cases = sum(len(suite.cases) for suite in run.evals)
        met = sum(1 for suite in run.evals if suite.passed)
        extras.append(
            f"{met} of {len(run.evals)} eval file(s) met the threshold "
            f"({cases} eval cases, judged by score, not counted in the totals)"
        )
    if data.flaky:
        extras.append(f"{len(data.flaky)} flaky")
    if data.latencies:
        p50 = percentile(data.latencies, 0.5)
        p95 = percentile(data.latencies, 0.95)
        extras.append(
            f"step latency p50 {format_ms(p50)}, p95 {format_ms(p95)}, "
            f"max {format_ms(data.latencies[-1])} over {len(data.latencies)} calls"
        )
    if extras:
        lines += ["", "; ".join(extras) + "."]
    lines += [
        "",
        "*Duration is wall-clock time; the average per test is the mean of each test's "
        "total trial time.*",
    ]
    return lines


def _problems(run: RunRecord) -> list[str]:
    lines: list[str] = []
    if run.problems:
        lines += ["", f"## Problems ({len(run.problems)})", ""]
        lines += [f"- {md_text(problem)}" for problem in run.problems]
    if run.warnings:
        lines += ["", f"## Warnings ({len(run.warnings)})", ""]
        lines += [f"- {md_text(warning)}" for warning in run.warnings]
    return lines


def _suites(data: ReportData) -> list[str]:
    if not data.suites:
        return []
    header = ["Suite", "File", "Total", "Passed", "Failed", "Errored", "Skipped", "Pass rate"]
    rows = [
        [
            "*eval*" if row.is_eval else md_text(row.suite),
            md_code(row.file),
            str(row.total),
            str(row.passed),
            str(row.failed),
            str(row.errored),
            str(row.skipped),
            format_rate(row.pass_rate),
        ]
        for row in data.suites
    ]
    return ["", "## Suites", "", *_table(header, rows, "llrrrrrr")]


def _trials_note(test: TestRecord) -> str:
    if len(test.trials) <= 1:
        return ""
    return f" · {test.passes}/{len(test.trials)} trials passed"


def _failed(data: ReportData) -> list[str]:
    if not data.failed:
        return []
    lines = ["", f"## Failed tests ({len(data.failed)})"]
    for test in data.failed:
        lines += [
            "",
            f"### ❌ {md_text(test.suite)} {SEP} {md_text(label(test))}",
            "",
            f"{md_code(where(test), table=False)}{_trials_note(test)}"
            + (" · **flaky**" if test.flaky else ""),
        ]
        for error, trials in test_errors(test):
            which = f" (trial {', '.join(map(str, trials))})" if len(test.trials) > 1 else ""
            lines += ["", f"- error{which}: {md_text(error)}"]
        failures = test_failures(test)
        if failures:
            lines += ["", *_diff(failures, len(test.trials) > 1, test.id)]
        elif not test_errors(test):
            lines += ["", "- no failing assertion was recorded"]
    return lines


def _errored(data: ReportData) -> list[str]:
    if not data.errored:
        return []
    rows = []
    for test in data.errored:
        reasons = test_errors(test) or [("no error message was recorded", [])]
        errored = sum(1 for trial in test.trials if trial.status == "error")
        for reason, _trials in reasons:
            rows.append(
                [
                    md_text(test.suite),
                    md_text(label(test)),
                    md_code(where(test)),
                    f"{errored}/{len(test.trials)}",
                    md_text(reason),
                ]
            )
    header = ["Suite", "Test", "Where", "Trials errored", "Reason"]
    lines = ["", f"## Errored tests ({len(data.errored)})", "", *_table(header, rows, "lllrl")]
    with_failures = [test for test in data.errored if test_failures(test)]
    for test in with_failures:
        lines += [
            "",
            f"Failing assertions of {md_text(test.suite)} {SEP} {md_text(label(test))}:",
            "",
            *_diff(test_failures(test), len(test.trials) > 1, test.id),
        ]
    return lines


def _skipped(data: ReportData) -> list[str]:
    if not data.skipped:
        return []
    rows = [
        [
            md_text(test.suite),
            md_text(label(test)),
            md_code(where(test)),
            md_text(skip_reason(test)),
        ]
        for test in data.skipped
    ]
    header = ["Suite", "Test", "Where", "Reason"]
    return ["", f"## Skipped tests ({len(data.skipped)})", "", *_table(header, rows)]


def _flaky(data: ReportData) -> list[str]:
    if not data.flaky:
        return []
    rows = []
    for test in data.flaky:
        marks = " ".join(
            {"passed": "✓", "failed": "✗", "error": "!", "skipped": NONE}[t.status]
            for t in test.trials
        )
        rows.append(
            [
                md_text(test.suite),
                md_text(label(test)),
                f"{test.passes}/{len(test.trials)}",
                marks,
                f"{_ICON[test.status]} {test.status}",
            ]
        )
    header = ["Suite", "Test", "Passes/trials", "Trials", "Verdict"]
    return ["", f"## Flaky tests ({len(data.flaky)})", "", *_table(header, rows, "llrll")]


def _slowest(data: ReportData) -> list[str]:
    if not data.slowest:
        return []
    rows = [
        [
            str(rank),
            md_text(test.suite),
            md_text(label(test)),
            format_ms(test.duration_ms),
            str(len(test.trials)),
            format_ms(test.duration_ms / max(1, len(test.trials))),
            f"{_ICON[test.status]} {test.status}",
        ]
        for rank, test in enumerate(data.slowest, 1)
    ]
    header = ["#", "Suite", "Test", "Duration", "Trials", "Per trial", "Status"]
    title = f"## Slowest tests (top {len(data.slowest)})"
    return ["", title, "", *_table(header, rows, "rllrrrl")]


def _evals(data: ReportData) -> list[str]:
    run = data.run
    if not run.evals:
        return []
    rows = [
        [
            md_code(suite.file),
            f"{suite.score:.3f}",
            f"{suite.threshold:g}",
            "✅ passed" if suite.passed else "❌ failed",
            f"{sum(1 for c in suite.cases if c.status == 'passed')}/{len(suite.cases)}",
        ]
        for suite in run.evals
    ]
    header = ["File", "Score", "Threshold", "Result", "Cases passed"]
    lines = ["", "## Evals", "", *_table(header, rows, "lrrlr")]
    for suite, cases in data.failing_evals:
        note = " (the suite passed its threshold)" if suite.passed else ""
        lines += ["", f"### Failing cases in {md_code(suite.file, table=False)}{note}"]
        for case in cases:
            description = f" — {md_text(case.description)}" if case.description else ""
            lines += [
                "",
                f"- **{md_text(case.id)}**: {case.status}, score {case.score:.3f}{description}",
            ]
            if case.error:
                lines += [f"  - error: {md_text(case.error)}"]
            failures = eval_case_failures(case)
            if failures:
                lines += ["", *_diff(failures, multi_trial=False, step_label="block")]
    return lines


def render_markdown(run: RunRecord) -> str:
    """The run as a Markdown report."""
    data = ReportData.from_run(run)
    lines = [
        *_summary(data),
        *_problems(run),
        *_suites(data),
        *_failed(data),
        *_errored(data),
        *_skipped(data),
        *_flaky(data),
        *_slowest(data),
        *_evals(data),
    ]
    return "\n".join(lines).rstrip() + "\n"
