"""The text rendering of one check.

Every assertion on a line, failures with expected, actual and path underneath, readable at a
glance.
"""

from __future__ import annotations

from typing import Any

from .._json import dumps
from ..engine import AssertionResult, CheckResult, Outcome

_MARKS = {
    Outcome.PASSED: ("✓", "green"),
    Outcome.FAILED: ("✗", "red"),
    Outcome.ERROR: ("!", "magenta"),
    Outcome.SKIPPED: ("-", "dim"),
}
_LIMIT = 300


def _one_line(text: str) -> str:
    """Keep each report entry on its line: agent text often holds newlines."""
    return text.replace("\r", "\\r").replace("\n", "\\n")


def _value(value: Any) -> str:
    text = _one_line(value) if isinstance(value, str) else dumps(value)
    if isinstance(value, str):
        text = "'" + text + "'"
    return text if len(text) <= _LIMIT else text[: _LIMIT - 1] + "…"


def _lines(result: AssertionResult, depth: int, out: list[tuple[str, str]]) -> None:
    mark, style = _MARKS[result.outcome]
    pad = "  " * depth
    head = f"{pad}{mark} {result.assertion}"
    if result.details and result.details.get("vacuous"):
        head += "  (vacuous: the array is empty)"
    if result.outcome is Outcome.PASSED and not result.children:
        out.append((head if not result.message else f"{head}  {_one_line(result.message)}", style))
        return
    if result.message:
        head += f"  {_one_line(result.message)}"
    out.append((head, style))
    if result.outcome in (Outcome.FAILED, Outcome.ERROR):
        if result.path:
            out.append((f"{pad}    path:     {result.path}", ""))
        if result.expected is not None:
            out.append((f"{pad}    expected: {_value(result.expected)}", ""))
        if result.actual is not None:
            out.append((f"{pad}    actual:   {_value(result.actual)}", ""))
    for child in result.children:
        _lines(child, depth + 1, out)


def render_check(result: CheckResult) -> list[tuple[str, str]]:
    """Lines of the text report with a rich style name for each (empty for plain)."""
    failing = [r for r in result.results if not r.passed]
    total = len(result.results)
    verdict = {Outcome.PASSED: "PASS", Outcome.FAILED: "FAIL", Outcome.ERROR: "ERROR"}.get(
        result.outcome, result.outcome.value.upper()
    )
    style = _MARKS.get(result.outcome, ("", ""))[1]
    summary = f"{verdict}  {total - len(failing)} of {total} assertions passed"
    summary += f"  (score {result.score:.4g}"
    if result.threshold is not None:
        summary += f", threshold {result.threshold:g}"
    summary += ")"
    lines: list[tuple[str, str]] = [(summary, f"bold {style}")]
    if result.extracted:
        lines.append((f"  (JSON extracted from a {result.extracted} block in the text)", "dim"))
    for item in result.results:
        _lines(item, 1, lines)
    return lines
