"""The HTML report: one self-contained file, viewable offline and safe to open.

Rendered with Jinja2 with autoescaping on, so every piece of agent output and test text is
escaped. The page has no script at all (expandable parts are ``<details>``), inline CSS only,
inline SVG charts (pass rate per suite, step latency distribution), and a Content-Security-Policy
that forbids everything else, so even a bug in escaping could not run code or fetch anything.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

import jinja2

from .. import __version__
from .._json import dumps
from .._records import RunRecord, TestRecord
from .._terminal import inert_text
from ._analysis import (
    DETAILED_NOT_PASSED,
    LISTED_PASSED,
    MATRIX_LISTED,
    NONE,
    ReportData,
    SuiteRow,
    clip,
    eval_case_failures,
    format_cost,
    format_metrics,
    format_ms,
    format_rate,
    label,
    percentile,
    skip_reason,
    test_detail,
    test_errors,
    test_failures,
    value_text,
    where,
)
from ._conversation_view import conversation_view, shown_trial
from ._diff import comparison_view
from ._waterfall import waterfalls

if TYPE_CHECKING:
    from ._analysis import MatrixData

__all__ = ["CSP", "render_html"]

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
HTML_VALUE_LIMIT = 10_000
OUTPUT_SHOWN = 8_000  # characters of one distinct output (the JSON report has up to 64 KiB)
PREVIEW = 140  # characters of a passing test's output on its one collapsed line
OPEN_FAILURES = 5  # the first failing tests are expanded; the rest stay one line each


@cache
def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("assertly.reports", "templates"),
        autoescape=True,  # every value is escaped; the template marks nothing safe
        # Controls and bidirectional overrides shown as escapes, never obeyed (Markup is not a
        # plain str: what the template built is left alone).
        finalize=lambda value: inert_text(value) if type(value) is str else value,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(
        ms=format_ms,
        rate=format_rate,
        value=lambda value: value_text(value, HTML_VALUE_LIMIT),
    )
    return env


# -- charts ----------------------------------------------------------------------------------


@dataclass(slots=True)
class Segment:
    """One coloured part of a stacked bar."""

    status: str
    x: float
    width: float
    count: int


@dataclass(slots=True)
class SuiteBar:
    """One suite's row in the pass-rate chart."""

    row: SuiteRow
    y: float
    segments: list[Segment]

    @property
    def name(self) -> str:
        """The label: the suite, or the eval file."""
        return f"eval · {self.row.file}" if self.row.is_eval else self.row.suite


SUITE_CHART = {"width": 520, "label": 150, "bar_x": 160, "bar": 236, "row": 30, "top": 8}
# Right of the bar: the pass rate right-aligned so that its right edge is fixed whatever its
# width ("100.0%" is the widest), then the passed/judged count a little after it.
SUITE_CHART["pct_x"] = SUITE_CHART["bar_x"] + SUITE_CHART["bar"] + 60
SUITE_CHART["count_x"] = SUITE_CHART["pct_x"] + 8


def _suite_chart(rows: list[SuiteRow]) -> dict[str, Any]:
    bars: list[SuiteBar] = []
    for index, row in enumerate(rows):
        x = float(SUITE_CHART["bar_x"])
        segments: list[Segment] = []
        for status, count in (
            ("passed", row.passed),
            ("failed", row.failed),
            ("error", row.errored),
            ("skipped", row.skipped),
        ):
            if count and row.total:
                width = SUITE_CHART["bar"] * count / row.total
                segments.append(Segment(status, round(x, 2), round(width, 2), count))
                x += width
        bars.append(SuiteBar(row, SUITE_CHART["top"] + index * SUITE_CHART["row"], segments))
    height = SUITE_CHART["top"] * 2 + len(rows) * SUITE_CHART["row"]
    return {**SUITE_CHART, "bars": bars, "height": height}


def _nice_step(raw: float) -> float:
    exponent = 10.0 ** math.floor(math.log10(raw))
    for mantissa in (1, 2, 2.5, 5, 10):
        if mantissa * exponent >= raw:
            return mantissa * exponent
    return 10 * exponent  # pragma: no cover - the loop always returns


def _axis_ms(value: float) -> str:
    value = round(value, 6)
    if value >= 1000:
        return f"{value / 1000:g} s"
    return f"{value:g} ms"


def _histogram(latencies: list[float]) -> dict[str, Any] | None:
    """Step latency distribution: nice-width bins, drawn as an SVG bar chart."""
    if not latencies:
        return None
    low, high = latencies[0], latencies[-1]
    span = high - low if high > low else max(high, 1.0) * 0.5
    step = _nice_step(span / 10)
    start = math.floor(low / step) * step
    count = max(1, math.floor((high - start) / step) + 1)
    counts = [0] * count
    for value in latencies:
        counts[min(count - 1, int((value - start) // step))] += 1
    width, height = 520, 220
    left, right, top, bottom = 44, 12, 14, 40
    plot_w, plot_h = width - left - right, height - top - bottom
    peak = max(counts)
    bar_w = plot_w / count
    bins = []
    for index, n in enumerate(counts):
        bar_h = plot_h * n / peak if peak else 0
        bins.append(
            {
                "x": round(left + index * bar_w + 1, 2),
                "y": round(top + plot_h - bar_h, 2),
                "w": round(max(bar_w - 2, 1), 2),
                "h": round(bar_h, 2),
                "count": n,
                "low": _axis_ms(start + index * step),
                "high": _axis_ms(start + (index + 1) * step),
            }
        )
    every = 1 if count <= 8 else 2 if count <= 16 else 4
    x_ticks = [
        {"x": round(left + index * bar_w, 2), "label": _axis_ms(start + index * step)}
        for index in range(0, count + 1, every)
    ]
    y_values = sorted({0, peak // 2, peak}) if peak > 1 else [0, peak]
    y_ticks = [{"y": round(top + plot_h - plot_h * v / peak, 2), "label": v} for v in y_values]
    stats = [
        ("calls", str(len(latencies))),
        ("p50", format_ms(percentile(latencies, 0.5))),
        ("p90", format_ms(percentile(latencies, 0.9))),
        ("p99", format_ms(percentile(latencies, 0.99))),
        ("max", format_ms(high)),
    ]
    return {
        "width": width,
        "height": height,
        "left": left,
        "top": top,
        "plot_w": plot_w,
        "plot_h": plot_h,
        "bins": bins,
        "x_ticks": x_ticks,
        "y_ticks": y_ticks,
        "stats": stats,
    }


# -- tests -----------------------------------------------------------------------------------


def _shown(value: Any, limit: int) -> str:
    """A value as the page shows it: text as it came, JSON pretty-printed; clipped."""
    if isinstance(value, str):
        return clip(value.rstrip("\n"), limit)
    return value_text(value, limit)


def _detail_view(test: TestRecord) -> dict[str, Any]:
    """Input, distinct outputs, metrics per trial and every assertion, as text to escape."""
    detail = test_detail(test)
    inputs = [(step, _shown(value, HTML_VALUE_LIMIT)) for step, value in test.step_inputs()]
    outputs = [
        {
            "step": view.step,
            "trials": view.trials,
            "truncated": view.truncated,
            "text": _shown(view.output, OUTPUT_SHOWN),
        }
        for view in detail.outputs
    ]
    preview = ""
    if outputs:
        value = detail.outputs[0].output
        text = value[: PREVIEW * 4] if isinstance(value, str) else dumps(value)[: PREVIEW * 4]
        first = " ".join(text.split())
        preview = first if len(first) <= PREVIEW else first[: PREVIEW - 1] + "…"
    return {
        "inputs": inputs,
        "outputs": outputs,
        "more_outputs": detail.more_outputs,
        "preview": preview,
        "trials": [
            {
                "trial": number,
                "status": status,
                "latency": format_ms(metrics["latency_ms"]),
                "cost": format_cost(metrics["cost_usd"]),
                "model": metrics["model"] or NONE,
                "tokens": format_metrics({"tokens": metrics["tokens"]}),
                "metrics": format_metrics(metrics),
            }
            for number, status, metrics in detail.trials
        ],
        "assertions": [
            {
                "assertion": row.assertion,
                "step": row.step,
                "outcome": row.outcome,
                "outcomes": row.outcomes,
                "score": NONE if row.score is None else f"{row.score:.3g}",
                "message": clip(row.message, 1000),
            }
            for row in detail.assertions
        ],
        "messages": any(row.message for row in detail.assertions),
    }


def _test_view(test: TestRecord, data: ReportData, *, detailed: bool = True) -> dict[str, Any]:
    shown = shown_trial(test) if test.conversation and detailed else None
    return {
        "conversation": None if shown is None else conversation_view(shown),
        "waterfalls": waterfalls(test) if detailed else [],
        "test": test,
        "label": label(test),
        "where": where(test),
        "failures": test_failures(test),
        "errors": test_errors(test),
        "detail": _detail_view(test) if detailed else None,
        "trial_count": len(test.trials),
        "multi_trial": len(test.trials) > 1,
        "errored_trials": sum(1 for trial in test.trials if trial.status == "error"),
    }


def _calls(data: ReportData) -> dict[str, Any] | None:
    """Calls, total cost, latency percentiles and models, for the summary."""
    if not data.calls:
        return None
    cost = format_cost(data.cost_usd)
    note = None
    if data.cost_usd is not None and data.costed_calls < data.calls:
        note = f"{data.costed_calls} of {data.calls} calls reported a cost"
    return {
        "count": data.calls,
        "cost": cost,
        "cost_note": note,
        "p50": format_ms(data.latency(0.5)),
        "p90": format_ms(data.latency(0.9)),
        "p99": format_ms(data.latency(0.99)),
        "models": list(data.models.items()),
    }


def _matrix(matrix: MatrixData) -> dict[str, Any]:
    """A matrix run's targets, comparisons and matrix, as text to escape."""
    from ._matrix_text import MARKS, comparison_line, format_ci, row_label

    view = matrix.view
    targets = []
    for name in view.targets:
        summary = view.summaries[name]
        targets.append(
            {
                "label": name,
                "summary": summary,
                "rate": format_rate(summary.pass_rate if summary.judged else None),
                "ci": format_ci(*summary.pass_rate_ci95).removeprefix("95% CI "),
                "cost": format_cost(summary.cost_usd),
                "p50": format_ms(summary.latency_p50_ms),
            }
        )
    rows = [
        {
            "suite": row.suite,
            "name": row_label(row),
            "key": row.base_key,
            "disagree": row.disagree,
            "cells": [
                (target, status, MARKS[status])
                if (status := row.statuses.get(target)) is not None
                else (target, "absent", "")
                for target in view.targets
            ],
        }
        for row in matrix.rows
    ]
    return {
        "labels": view.targets,
        "targets": targets,
        "comparisons": [(comparison_line(item), item.regressed) for item in view.comparisons],
        "rows": rows,
        "tests": len(view.rows),
        "disagreements": matrix.disagreements,
        "only_disagreements": matrix.only_disagreements,
        "listed": MATRIX_LISTED,
        "legend": list(MARKS.items()),
    }


def render_html(run: RunRecord) -> str:
    """The run as one self-contained HTML page."""
    data = ReportData.from_run(run)
    summary = data.summary
    judged = summary["total"] - summary["skipped"]
    slowest_ms = data.slowest[0].duration_ms if data.slowest else 0.0
    context = {
        "version": __version__,
        "run": run,
        "data": data,
        "s": summary,
        "judged": judged,
        "pass_rate": format_rate(summary["pass_rate"] if judged else None),
        "duration": format_ms(run.duration_ms),
        "average": format_ms(data.average_ms),
        "failed": [
            _test_view(test, data, detailed=n < DETAILED_NOT_PASSED)
            for n, test in enumerate(data.failed)
        ],
        "passed": [_test_view(test, data) for test in data.passed],
        "listed_passed": LISTED_PASSED,
        "calls": _calls(data),
        "errored": [
            _test_view(test, data, detailed=n < DETAILED_NOT_PASSED)
            for n, test in enumerate(data.errored)
        ],
        "detailed_not_passed": DETAILED_NOT_PASSED,
        "skipped": [(test, label(test), where(test), skip_reason(test)) for test in data.skipped],
        "flaky": [(test, label(test)) for test in data.flaky],
        "slowest": [
            (test, label(test), 100 * test.duration_ms / slowest_ms if slowest_ms else 0)
            for test in data.slowest
        ],
        "evals": [
            (
                suite,
                [
                    (case, eval_case_failures(case))
                    for case in suite.cases
                    if case.status != "passed"
                ],
            )
            for suite in run.evals
        ],
        "suite_chart": _suite_chart(data.suites),
        "histogram": _histogram(data.latencies),
        "open_failures": OPEN_FAILURES,
        "comparison": comparison_view(run.comparison) if run.comparison is not None else None,
        "matrix": _matrix(data.matrix) if data.matrix is not None else None,
    }
    return _environment().get_template("report.html.j2").render(context)
