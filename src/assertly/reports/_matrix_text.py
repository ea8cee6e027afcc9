"""A matrix run's targets in words: the lines the console, Markdown and HTML reports share.

The numbers come from `assertly.compare._matrix`; this module only says them, the same way in
every report (``cand vs base: 1 regressed, 0 fixed of 4 paired tests, McNemar p = 1``).
Target labels are plain by construction (``--target`` refuses anything else); test names are
not, and each renderer escapes them its own way.
"""

from __future__ import annotations

from ..compare._matrix import MatrixRow, TargetComparison, TargetSummary
from ._analysis import NONE, format_cost, format_ms, format_rate

__all__ = [
    "ASCII_MARKS",
    "MARKS",
    "comparison_line",
    "format_ci",
    "format_p",
    "row_label",
    "row_name",
    "target_line",
]

# A cell of the matrix: the test's status under that target (a blank: not run under it).
MARKS = {"passed": "✓", "failed": "✗", "error": "!", "skipped": NONE}
# For a console whose encoding cannot write the marks above.
ASCII_MARKS = {"passed": "v", "failed": "x", "error": "!", "skipped": "-"}


def format_p(p: float) -> str:
    """A p-value with two significant digits: ``1``, ``0.5``, ``0.0039``, ``3.1e-05``."""
    return f"{p:.2g}"


def format_ci(low: float, high: float) -> str:
    """A 95% interval of a rate: ``95% CI [34.2%, 100.0%]``."""
    return f"95% CI [{format_rate(low)}, {format_rate(high)}]"


def target_line(summary: TargetSummary) -> str:
    """``base: 2 of 2 judged passed (100.0%, 95% CI [34.2%, 100.0%]), cost $0.01, p50 300 ms``.

    Failed, errored and skipped counts follow the passed count when there are any.
    """
    counts = [f"{summary.passed} of {summary.judged} judged passed"]
    for count, word in (
        (summary.failed, "failed"),
        (summary.errored, "errored"),
        (summary.skipped, "skipped"),
    ):
        if count:
            counts.append(f"{count} {word}")
    rate = format_rate(summary.pass_rate if summary.judged else None)
    ci = format_ci(*summary.pass_rate_ci95)
    cost = format_cost(summary.cost_usd)
    if summary.cost_usd is not None and summary.costed_calls < summary.calls:
        cost += f" ({summary.costed_calls} of {summary.calls} calls reported one)"
    p50 = format_ms(summary.latency_p50_ms)
    return f"{summary.label}: {', '.join(counts)} ({rate}, {ci}), cost {cost}, p50 latency {p50}"


def comparison_line(item: TargetComparison) -> str:
    """``cand vs base: 1 regressed, 0 fixed of 2 paired tests, McNemar p = 1``.

    The two-sided exact McNemar p-value; with a one-sided one when the verdicts moved one way
    more than the other (``p = 0.03 that cand is worse``).
    """
    plural = "" if item.paired == 1 else "s"
    line = (
        f"{item.candidate} vs {item.base}: {item.regressed} regressed, {item.fixed} fixed "
        f"of {item.paired} paired test{plural}, McNemar p = {format_p(item.mcnemar_p)}"
    )
    if item.regressed > item.fixed:
        line += f" (one-sided p = {format_p(item.p_worse)} that {item.candidate} is worse)"
    elif item.fixed > item.regressed:
        line += f" (one-sided p = {format_p(item.p_better)} that {item.candidate} is better)"
    return line


def row_label(row: MatrixRow) -> str:
    """How the Markdown and HTML matrices name a test: as `label` names it, without target."""
    return row.id if row.name == row.id else f"{row.name} ({row.id})"


def row_name(row: MatrixRow) -> str:
    """How a matrix row names its test: ``suite::id`` (as the console's failure headers)."""
    return f"{row.suite}::{row.id}"
