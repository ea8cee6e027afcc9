"""The Markdown report's section on a matrix run's targets: summaries, comparisons, matrix.

A table of the targets (counts, pass rate with its Wilson 95% interval, reported cost, median
call latency), one line per comparison with the first target, and the matrix: one row per
test, one column per target label, the marks of `MARKS` for passed, failed, error, skipped
(blank: not run under that target). Test names are escaped as everywhere in the report
(`md_text`); labels are plain by construction and escaped all the same.
"""

from __future__ import annotations

from ._analysis import MATRIX_LISTED, SEP, MatrixData, format_cost, format_ms, format_rate
from ._markdown import _table, md_text
from ._matrix_text import MARKS, comparison_line, format_ci, row_label

__all__ = ["matrix_lines"]


def matrix_lines(matrix: MatrixData) -> list[str]:
    """The ``## Targets`` section."""
    view = matrix.view
    header = ["Target", "Total", "Passed", "Failed", "Errored", "Skipped", "Pass rate"]
    header += ["95% CI", "Cost", "p50 latency"]
    rows = []
    for label in view.targets:
        summary = view.summaries[label]
        rows.append(
            [
                md_text(label),
                *(
                    str(count)
                    for count in (
                        summary.total,
                        summary.passed,
                        summary.failed,
                        summary.errored,
                        summary.skipped,
                    )
                ),
                format_rate(summary.pass_rate if summary.judged else None),
                format_ci(*summary.pass_rate_ci95).removeprefix("95% CI "),
                format_cost(summary.cost_usd),
                format_ms(summary.latency_p50_ms),
            ]
        )
    lines = ["", "## Targets", "", *_table(header, rows, "lrrrrrrrrr")]
    if view.comparisons:
        lines.append("")
        lines += [f"- {md_text(comparison_line(item))}" for item in view.comparisons]
    title = f"### Matrix ({len(view.rows)} tests; the targets disagree on {matrix.disagreements})"
    lines += ["", title, ""]
    if matrix.only_disagreements:
        lines += [
            f"*More than {MATRIX_LISTED} tests: only those where the targets disagree are "
            f"shown ({len(matrix.rows)}); the JSON report has every test.*",
            "",
        ]
    if not matrix.rows:
        return [*lines, "*The targets agree on every test.*"]
    table_rows = [
        [
            ("≠ " if row.disagree else "")
            + f"{md_text(row.suite)} {SEP} {md_text(row_label(row))}",
            *(MARKS.get(row.statuses.get(label, ""), " ") for label in view.targets),
        ]
        for row in matrix.rows
    ]
    header = ["Test", *(md_text(label) for label in view.targets)]
    lines += _table(header, table_rows, "l" + "c" * len(view.targets))
    legend = " · ".join(f"{mark} {status}" for status, mark in MARKS.items())
    lines += ["", f"*{legend} · ≠ the targets disagree*"]
    return lines
