"""What the plugin tells the user: failure reports, warnings, and the exceptions that carry them.

A failed test's report names the first reason (pytest's short summary shows that line), then
every failed or errored trial: its error, each judged step's checks (rendered as ``assertly
check`` renders them) and the response, cut to a readable length.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._records import CONVERSATION_STEP

if TYPE_CHECKING:
    from .._check_records import AssertionRecord, CheckRecord
    from ..engine import AssertionResult, CheckResult
    from ..loading import EvalCase, TestCase
    from ..runner import EvalCaseRecord, EvalRecord, TrialRecord

__all__ = [
    "AssertlyFailure",
    "AssertlyWarning",
    "check_from_record",
    "eval_failure_lines",
    "one_line",
    "failure_lines",
]

_VALUE_LIMIT = 500  # characters of a response shown under a failure


class AssertlyWarning(UserWarning):
    """Something about an assertly test that deserves attention but is not a failure."""


class AssertlyFailure(AssertionError):
    """An assertly test or eval case that did not pass; the message is the whole report."""


def failure_lines(
    test: TestCase, records: list[TrialRecord], status: str, threshold: str
) -> list[str]:
    """The report of a test whose trials did not meet the pass threshold."""
    passes = sum(1 for record in records if record.status == "passed")
    first = next(record for record in records if record.status in ("failed", "error"))
    lines = [f"{test.id} {status}: {_headline(first)}"]
    about = f"assertly test {test.suite}::{test.id} of agent {test.agent}"
    if len(records) > 1:
        about += f": {passes} of {len(records)} trials passed (pass threshold: {threshold})"
    lines.append(about)
    seen: dict[str, int] = {}
    for record in records:
        label = f"trial {record.trial}: {record.status}"
        if record.score is not None and record.status != "skipped":
            label += f" (score {record.score:.4g})"
        if len(records) > 1:
            lines.append(label)
        if record.status in ("passed", "skipped"):
            continue
        body = _trial_lines(record, single_step=len(test.steps) == 1)
        key = "\n".join(body)
        if key in seen and len(records) > 1:
            lines[-1] += f", the same as trial {seen[key]}"
            continue
        seen.setdefault(key, record.trial)
        pad = "  " if len(records) > 1 else ""
        lines.extend(pad + line if line else line for line in body)
    return lines


def eval_failure_lines(
    declared: EvalCase, case: EvalCaseRecord, record: EvalRecord, suite_line: str
) -> list[str]:
    """The report of an eval case that failed (with its suite) or errored."""
    reasons = [
        f"{block_id}: {result.assertion}: {result.message}"
        for block_id, data in case.blocks.items()
        for result in data.results
        if not result.passed
    ]
    headline = one_line(case.error or (reasons[0] if reasons else f"score {case.score:.4g}"))
    if len(reasons) > 1:
        headline += f" (and {len(reasons) - 1} more)"
    lines = [
        f"{case.id} {case.status}: {headline}",
        f"assertly eval case {case.id} (score {case.score:.4g}; {suite_line})",
    ]
    if case.error:
        lines.append(f"ERROR: {case.error}")
    for block_id, data in case.blocks.items():
        if check_from_record(data).passed:
            lines.append(f"block {block_id}: passed")
            continue
        lines.append(f"block {block_id}:")
        lines.extend("  " + line for line in _check_lines(data))
        output = declared.blocks.get(block_id, (None,))[0]
        lines.append(f"  output: {_short(output)}")
    return lines


def one_line(text: str) -> str:
    """A message on one line: its first and last lines (a traceback's cause comes last)."""
    parts = [part.strip() for part in text.strip().splitlines() if part.strip()]
    if len(parts) > 2:
        return f"{parts[0]} … {parts[-1]}"
    return " / ".join(parts)


def _headline(record: TrialRecord) -> str:
    """The first reason a trial did not pass, on one line (pytest's short summary shows it)."""
    if record.error:
        return one_line(record.error)
    if record.failures:
        failure = record.failures[0]
        more = len(record.failures) - 1
        text = one_line(f"{_turn_of(record, failure.step)}{failure.assertion}: {failure.message}")
        return text + (f" (and {more} more)" if more else "")
    return f"the trial ended {record.status}"


def _turn_of(record: TrialRecord, name: str | None) -> str:
    """A failure's conversation turn and what the user said there ("" for another step).

    Or the whole conversation. The short summary line is all many users read.
    """
    step = next((step for step in record.steps if step.name == name), None)
    if step is not None and step.user is not None:
        said = " ".join(step.user.split())  # on the one line, whatever its line breaks
        return f"{step.name} (user: {_short(said, 60)}): "
    if step is not None and name == CONVERSATION_STEP and record.steps[0].user is not None:
        return "the whole conversation: "
    return ""


def _short(value: Any, limit: int = _VALUE_LIMIT) -> str:
    from .._json import dumps

    text = value.rstrip() if isinstance(value, str) else dumps(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def check_from_record(data: CheckRecord) -> CheckResult:
    """Rebuild a stored check as the engine's result, so it renders like ``assertly check``."""
    from ..engine import AssertionResult, CheckResult, Outcome

    def result(item: AssertionRecord) -> AssertionResult:
        return AssertionResult(
            item.assertion,
            Outcome(item.outcome),
            item.score if item.score is not None else 0.0,
            item.message,
            item.path,
            item.expected,
            item.actual,
            [result(child) for child in item.children],
            item.details,
        )

    return CheckResult(
        Outcome(data.outcome),
        data.score,
        [result(item) for item in data.results],
        data.named_scores,
        data.threshold,
        data.extracted,
        tuple(item.weight for item in data.results),
    )


def _check_lines(data: CheckRecord) -> list[str]:
    from ..reports._check_text import render_check

    return [line for line, _ in render_check(check_from_record(data))]


def _trial_lines(record: TrialRecord, *, single_step: bool) -> list[str]:
    """A failed or errored trial: its error, then every judged step's checks and response."""
    lines: list[str] = []
    if record.error:
        lines.append("ERROR: " + record.error.strip().replace("\n", "\n  "))
    for step in record.steps:
        pad = "" if single_step else "  "
        if step.user is not None:  # a conversation's turn: named with what the user said
            lines.append(f"{step.name}: {step.status} (user: {_short(step.user)})")
        elif step.name == CONVERSATION_STEP and record.steps[0].user is not None:
            lines.append(f"the whole conversation: {step.status}")
        elif not single_step:
            lines.append(f"step {step.name}: {step.status}")
        if step.status == "passed" and not single_step:
            continue
        for check in step.checks:
            lines.extend(pad + line for line in _check_lines(check))
        if step.checks or step.output is not None:
            lines.append(f"{pad}response: {_short(step.output)}")
    return lines
