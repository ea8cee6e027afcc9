"""What the JSON report gives of a trial's steps: outputs (cut when long), turns, its trace.

Pure functions of typed step records (`_records.StepRecord`), shared by the report and the
record's own `TestRecord.to_report`; they import only the standard library, and the JSON codec.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import suppress
from typing import Any

from ._json import loads, to_json_bytes

# A step is a `_records.StepRecord` (typed as Any: `_records` imports this module).
StepRecord = Any

__all__ = ["OUTPUT_LIMIT", "conversation_report", "report_output", "trace_report"]


# The most text of one response the JSON report holds (characters): a bigger response is cut
# there and marked ``output_truncated`` (the run store keeps it whole).
OUTPUT_LIMIT = 64 * 1024


def report_output(value: Any, limit: int = OUTPUT_LIMIT) -> tuple[Any, bool]:
    """A response as the JSON report gives it, and whether it was cut.

    Text that is a JSON object or array (an agent's stdout, an HTTP body) is given as that
    JSON; other text as text. Text longer than ``limit`` characters is cut to ``limit``; a JSON
    value whose JSON text is longer becomes that text, cut (a string: a cut JSON value is no
    longer JSON).
    """
    if value is None or isinstance(value, bool | int | float):
        return value, False
    if isinstance(value, str):
        if len(value) > limit:
            return value[:limit], True
        stripped = value.strip()
        if stripped[:1] in ("{", "[") and stripped[-1:] in ("}", "]"):
            with suppress(ValueError, RecursionError):
                return loads(stripped), False
        return value, False
    text = to_json_bytes(value)
    if len(text) <= limit:  # bytes >= characters: within the limit either way
        return value, False
    decoded = text.decode("utf-8", errors="replace")
    return (value, False) if len(decoded) <= limit else (decoded[:limit], True)


def conversation_report(
    steps: Sequence[StepRecord],
) -> tuple[list[dict[str, Any]], dict[str, Any] | None, Any, bool]:
    """A conversation trial as the JSON report gives it: (turns, whole, output, whether cut).

    Each turn ``{index, user, output, tool_calls, outcome, checks, metrics}``; ``whole`` is
    ``{outcome, checks, ended}`` of the conversation's own checks (None when a turn's call
    failed and they were not judged); the output is the agent's messages joined by blank
    lines, what those checks read.
    """
    turns: list[dict[str, Any]] = []
    truncated = False
    transcript: Any = None
    whole: dict[str, Any] | None = None
    for step in steps:
        if step.user is None:  # the conversation's own step
            transcript = step.output
            whole = {
                "outcome": step.status,
                "checks": [check.to_json() for check in step.checks],
                "ended": step.ended,
            }
            continue
        value, cut = report_output(step.output)
        truncated = truncated or cut
        turns.append(
            {
                "index": len(turns) + 1,
                "user": step.user,
                "output": value,
                "tool_calls": step.tool_calls,
                "outcome": step.status,
                "checks": [check.to_json() for check in step.checks],
                **({"error": step.error} if step.error else {}),
                "metrics": step.metrics(),
            }
        )
    output, cut = report_output(transcript)
    return turns, whole, output, truncated or cut


def trace_report(steps: Sequence[StepRecord]) -> dict[str, Any] | None:
    """A trial's ``trace`` in the JSON report, or None when none of its calls asked for spans.

    ``{"spans": N, "tools": [...], "model_calls": N, "error_spans": N}`` summed over the
    trial's calls (a conversation's turns, a multi-step test's steps), with ``dropped`` when
    spans over the per-call limit were not kept, and ``missing`` (why, per call) for a call
    whose spans never arrived.
    """
    sets = [step.spans for step in steps if step.spans is not None]
    if not sets:
        return None
    report: dict[str, Any] = {"spans": 0, "tools": [], "model_calls": 0, "error_spans": 0}
    missing: list[str] = []
    trace_ids: list[str] = []
    dropped = 0
    for spans in sets:
        if isinstance(spans, str):
            missing.append(spans)
            continue
        summary = spans.summary()
        trace_ids.append(spans.trace_id)
        report["spans"] += summary["spans"]
        report["tools"].extend(summary["tools"])
        report["model_calls"] += summary["model_calls"]
        report["error_spans"] += summary["error_spans"]
        dropped += spans.dropped
    report["trace_ids"] = trace_ids
    if dropped:
        report["dropped"] = dropped
    if missing:
        report["missing"] = missing
    return report
