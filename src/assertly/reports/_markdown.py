r"""The Markdown report: an executive summary, then the tests that need attention, then the rest.

Sections: summary (totals, pass rate, duration and average per test; calls, total cost, latency
percentiles, models), problems and warnings, per-suite table, failed tests with their diffs,
errored tests with reasons, skipped tests with reasons, flaky tests, slowest tests, evals
(failing cases listed even when the suite passed), and the passing tests (the first
`LISTED_PASSED`). Every listed test shows its input, its distinct outputs, each trial's metrics
and each assertion's outcome and score.

Everything that comes from a test file or an agent is escaped: backslash escapes for text, code
spans and fences longer than any backtick run inside, and ``\|`` for pipes in tables, so agent
output cannot break the layout or inject HTML. What the report says comes from the analysis it
shares with the HTML report (`_analysis`); this module only formats it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from .._records import RunRecord, TestRecord
from .._terminal import inert_text
from ._analysis import (
    DETAILED_NOT_PASSED,
    LISTED_PASSED,
    MESSAGE_LIMIT,
    NONE,
    SEP,
    VALUE_LIMIT,
    Failure,
    ReportData,
    clip,
    eval_case_failures,
    format_cost,
    format_metrics,
    format_ms,
    format_rate,
    label,
    skip_reason,
    test_detail,
    test_errors,
    test_failures,
    value_text,
    where,
)
from ._trace_line import trace_lines

__all__ = ["md_code", "md_text", "render_markdown"]

# -- Markdown escaping -----------------------------------------------------------------------

_SPECIAL = re.compile(r"([\\`*_\[\]<>|~&!#])")
_LINE_START = re.compile(r"^(\s*)([-+=]|\d+(?=[.)]))")  # list items, headings underlined
_NEWLINES = re.compile(r"\r\n|\r|\n")
_BACKTICKS = re.compile(r"`+")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def _escape_start(match: re.Match[str]) -> str:
    indent, mark = match.groups()
    if mark.isdigit():  # "1." / "1)" starts an ordered list: escape the punctuation after it
        return f"{indent}{mark}\\"
    return f"{indent}\\{mark}"


def md_text(text: Any, limit: int = MESSAGE_LIMIT) -> str:
    """Untrusted text as inline Markdown: special characters escaped, one line (``<br>``)."""
    lines = _NEWLINES.split(clip(str(text), limit))
    escaped = [_LINE_START.sub(_escape_start, _SPECIAL.sub(r"\\\1", line)) for line in lines]
    return "<br>".join(escaped)


def md_code(text: Any, *, table: bool = True, limit: int = VALUE_LIMIT) -> str:
    r"""Untrusted text as a code span (a fence longer than any backtick run inside).

    In a table, pipes become ``\|`` (GFM removes the backslash again). A backslash right before
    a pipe cannot be kept literally in a code span there, so such text is escaped as plain text.
    """
    value = _NEWLINES.sub("⏎", clip(str(text), limit))
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


def _split(text: str) -> list[str]:
    r"""``text``'s lines, split at line feeds only (``\r\n``, ``\r``, ``\n``).

    Not `str.splitlines`: it also splits at U+2028, U+2029, U+0085 and FS/GS/RS, which would
    turn them into real line breaks ("ok<U+2028>PASSED" as two lines) before `inert_text`
    could show them as escapes (red team of issue 29, probe "U+2028 in a Markdown report").
    """
    lines = _LINE_BREAK.split(text)
    return lines[:-1] if len(lines) > 1 and not lines[-1] else lines  # as splitlines: no last ""


def _value_lines(value: Any) -> list[str]:
    return _split(value_text(value))


def _info(value: Any) -> str:
    """The fence's info string: ``json`` for a JSON value (text is shown as it came)."""
    return "" if isinstance(value, str) else "json"


def _output_lines(value: Any) -> list[str]:
    """A response as it came: text as is (clipped), JSON pretty-printed."""
    if isinstance(value, str):
        return _split(clip(value.rstrip("\n"), VALUE_LIMIT))
    return _value_lines(value)


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
        where_parts = [f"{step_label} {failure.step}".strip()] if shown_step else []
        if failure.path:
            where_parts.append(f"path {failure.path}")
        if multi_trial and failure.trials:
            trials = ", ".join(str(n) for n in failure.trials)
            where_parts.append(f"trial{'s' if len(failure.trials) > 1 else ''} {trials}")
        outcome = "" if failure.outcome == "failed" else f" [{failure.outcome}]"
        head = f"@@ {failure.assertion}{outcome}"
        head = f"{head} ({'; '.join(where_parts)}) @@" if where_parts else f"{head} @@"
        lines.append(_NEWLINES.sub("⏎", head))
        lines.extend(f"# {line}" for line in _split(clip(failure.message, MESSAGE_LIMIT)))
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
    """A GFM table; ``align`` holds one of ``l``/``r``/``c`` per column (default left)."""
    shapes = {"r": "---:", "c": ":---:"}
    marks = [shapes.get(a, "---") for a in align.ljust(len(header), "l")[: len(header)]]
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
    if extras:
        lines += ["", "; ".join(extras) + "."]
    lines += _calls(data)
    lines += [
        "",
        "*Duration is wall-clock time; the average per test is the mean of each test's "
        "total trial time.*",
    ]
    return lines


def _calls(data: ReportData) -> list[str]:
    """Calls, total cost, latency percentiles and the models used."""
    if not data.calls:
        return []
    cost = format_cost(data.cost_usd)
    if data.cost_usd is not None and data.costed_calls < data.calls:
        cost += f" ({data.costed_calls} of {data.calls} calls reported a cost)"
    models = ", ".join(
        f"{md_code(model, limit=100)} ({count})" for model, count in data.models.items()
    )
    row = [
        str(data.calls),
        cost,
        format_ms(data.latency(0.5)),
        format_ms(data.latency(0.9)),
        format_ms(data.latency(0.99)),
        format_ms(data.latencies[-1] if data.latencies else None),
        models or NONE,
    ]
    header = ["Calls", "Total cost", "Latency p50", "p90", "p99", "max", "Models (calls)"]
    return ["", *_table(header, [row], "rrrrrrl")]


def _problems(run: RunRecord) -> list[str]:
    lines: list[str] = []
    if run.problems:
        lines += ["", f"## Problems ({len(run.problems)})", ""]
        lines += [f"- {md_text(problem)}" for problem in run.problems]
    if run.warnings:
        lines += ["", f"## Warnings ({len(run.warnings)})", ""]
        lines += [f"- {md_text(warning)}" for warning in run.warnings]
    return lines


def _comparison(run: RunRecord) -> list[str]:
    """The comparison with the ``--baseline`` run, as `assertly diff --format md` writes it."""
    if run.comparison is None:
        return []
    from ._diff import render_diff_markdown  # it imports this module's escapes

    return ["", "## Compared with the baseline", "", render_diff_markdown(run.comparison).rstrip()]


def _matrix(data: ReportData) -> list[str]:
    if data.matrix is None:
        return []
    from ._markdown_matrix import matrix_lines  # it imports this module's escapes

    return matrix_lines(data.matrix)


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


def _step(test: TestRecord) -> str:
    """What a failure's step is called: a conversation's are turns (named ``turn 2``)."""
    return "" if test.conversation else "step"


def _trials_note(test: TestRecord) -> str:
    if len(test.trials) <= 1:
        return ""
    return f" · {test.passes}/{len(test.trials)} trials passed"


_MARK = {"passed": "✓", "failed": "✗", "error": "!", "skipped": NONE}


def _detail(test: TestRecord) -> list[str]:
    """A test's input, metrics per trial, distinct outputs and every assertion."""
    detail = test_detail(test)
    lines: list[str] = []
    if test.conversation:  # the transcript says what was sent and answered, turn by turn
        from ._markdown_conversation import conversation_lines  # it imports this module

        lines += conversation_lines(test)
    inputs = test.step_inputs()
    for step, value in inputs:
        title = "**Input**" + (f" of step {md_code(step, table=False)}" if step else "")
        lines += ["", title, "", *_fence(_value_lines(value), _info(value))]
    if len(detail.trials) == 1:
        lines += ["", f"Metrics: {md_text(format_metrics(detail.trials[0][2]))}"]
    elif detail.trials:
        rows = [
            [str(number), f"{_ICON[status]} {status}", md_text(format_metrics(metrics))]
            for number, status, metrics in detail.trials
        ]
        lines += ["", *_table(["Trial", "Status", "Metrics"], rows, "rll")]
    for view in [] if test.conversation else detail.outputs:  # (the transcript has them)
        title = "**Output**"
        if view.step is not None:
            title += f" of step {md_code(view.step, table=False)}"
        if len(detail.trials) > 1:
            title += f" (trial{'s' if len(view.trials) > 1 else ''} "
            title += ", ".join(map(str, view.trials)) + ")"
        if view.truncated:
            title += " — cut (the JSON report has the first 65,536 characters)"
        lines += ["", title, "", *_fence(_output_lines(view.output), _info(view.output))]
    if detail.more_outputs:
        lines += ["", f"*{detail.more_outputs} more distinct output(s): see the JSON report.*"]
    if detail.assertions:
        multi = len(detail.trials) > 1
        messages = any(row.message for row in detail.assertions)
        rows = []
        for row in detail.assertions:
            outcome = f"{_ICON.get(row.outcome, '')} {row.outcome}"
            if multi:
                outcome += " " + " ".join(_MARK.get(o, "?") for o in row.outcomes)
            score = NONE if row.score is None else f"{row.score:.3g}"
            cells = [md_code(row.assertion), outcome, score]
            if test.multi_step:
                cells.insert(1, md_code(row.step or ""))
            if messages:
                cells.append(md_text(row.message))
            rows.append(cells)
        header = ["Assertion", "Outcome", "Score"]
        if test.multi_step:
            header.insert(1, "Step")
        if messages:
            header.append("Message")
        lines += ["", *_table(header, rows, "lllrl" if test.multi_step else "llrl")]
    return lines


def _failed(data: ReportData) -> list[str]:
    if not data.failed:
        return []
    lines = ["", f"## Failed tests ({len(data.failed)})", *_detail_note(len(data.failed))]
    for index, test in enumerate(data.failed):
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
        lines += _trace_lines(test)
        failures = test_failures(test)
        if failures:
            lines += ["", *_diff(failures, len(test.trials) > 1, test.id, step_label=_step(test))]
        elif not test_errors(test):
            lines += ["", "- no failing assertion was recorded"]
        if index < DETAILED_NOT_PASSED:
            lines += _detail(test)
    return lines


def _trace_lines(test: TestRecord) -> list[str]:
    """What the failed or errored trials' spans show, one line each (issue 33)."""
    found = [f"- {md_text(line)}" for line in trace_lines(test)]
    return ["", *found] if found else []


def _detail_note(count: int) -> list[str]:
    if count <= DETAILED_NOT_PASSED:
        return []
    return [
        "",
        f"*The first {DETAILED_NOT_PASSED} show their input and outputs; the JSON report has "
        "every test's.*",
    ]


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
    lines += _detail_note(len(data.errored))
    for index, test in enumerate(data.errored):
        failures = test_failures(test)
        detailed = index < DETAILED_NOT_PASSED
        if not failures and not detailed:
            continue
        lines += ["", f"### 💥 {md_text(test.suite)} {SEP} {md_text(label(test))}"]
        lines += _trace_lines(test)
        if failures:
            lines += ["", "Failing assertions:", ""]
            lines += _diff(failures, len(test.trials) > 1, test.id, step_label=_step(test))
        if detailed:
            lines += _detail(test)
    return lines


def _passed(data: ReportData) -> list[str]:
    if not data.passed_total:
        return []
    lines = ["", f"## Passed tests ({data.passed_total})"]
    if data.passed_not_listed:
        lines += [
            "",
            f"*The first {LISTED_PASSED} are listed; {data.passed_not_listed} more passed "
            "(the JSON report has every test).*",
        ]
    for test in data.passed:
        lines += [
            "",
            f"### ✅ {md_text(test.suite)} {SEP} {md_text(label(test))}",
            "",
            f"{md_code(where(test), table=False)}{_trials_note(test)}",
            *_detail(test),
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
        *_comparison(run),
        *_matrix(data),
        *_suites(data),
        *_failed(data),
        *_errored(data),
        *_skipped(data),
        *_flaky(data),
        *_slowest(data),
        *_evals(data),
        *_passed(data),
    ]
    return inert_text("\n".join(lines).rstrip() + "\n")  # no control reaches a terminal
