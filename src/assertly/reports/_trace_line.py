"""One line on what a trial's spans show, for the console and the Markdown report (issue 33).

``trace: 12 spans, tools search → fetch, 2 model calls, 1 error span (fetch: Timeout)`` under
a failed or errored test, read from the typed records (`StepRecord.spans`), never from report
dicts; ``trace: no spans arrived …`` for a call whose spans never came. The text came from the
agent's spans: it is clipped here, and made inert by the console and the Markdown report.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from .._records import TestRecord, TrialRecord
from .._spans import SpanSet

__all__ = ["trace_line", "trace_lines"]

TOOLS_LISTED: Final = 8  # tool names on a line
LINES_SHOWN: Final = 5  # distinct trace lines per test


def _plural(count: int, word: str) -> str:
    return f"{count:,} {word}{'' if count == 1 else 's'}"


def trace_line(trial: TrialRecord) -> str | None:
    """One line on what a trial's spans show, or None when no call asked for spans.

    ``trace: 12 spans, tools search → fetch, 2 model calls, 1 error span (fetch: Timeout)``;
    ``trace: no spans arrived …`` for a call whose spans never came.
    """
    sets = [step.spans for step in trial.steps if step.spans is not None]
    if not sets:
        return None
    parts: list[str] = []
    kept = [spans for spans in sets if isinstance(spans, SpanSet)]
    if kept:
        from ._analysis import clip  # the reports' analysis: loaded only for a traced test

        count = sum(len(spans) for spans in kept)
        tools = [str(call["name"]) for spans in kept for call in spans.tool_calls()]
        models = sum(len(spans.model_calls()) for spans in kept)
        failing = [span for spans in kept for span in spans.spans if span.failed]
        dropped = sum(spans.dropped for spans in kept)
        parts.append(_plural(count, "span"))
        if tools:
            listed = " → ".join(clip(name, 60) for name in tools[:TOOLS_LISTED])
            if len(tools) > TOOLS_LISTED:
                listed += f" … ({len(tools):,} tool calls)"
            parts.append(f"tools {listed}")
        if models:
            parts.append(_plural(models, "model call"))
        if failing:
            first = failing[0]
            why = first.error_text() or f"status {first.status}"
            parts.append(
                f"{_plural(len(failing), 'error span')} ({clip(first.name, 60)}: {clip(why, 120)})"
            )
        if dropped:
            parts.append(f"{dropped:,} more over the span limit not kept")
    parts.extend(spans for spans in sets if isinstance(spans, str))
    return "trace: " + ", ".join(parts)


def trace_lines(test: TestRecord) -> Iterator[str]:
    """The trace lines of a test's trials that failed or errored (each distinct line once)."""
    several = len(test.trials) > 1
    lines: dict[str, list[int]] = {}
    for trial in test.trials:
        if trial.status not in ("failed", "error"):
            continue
        line = trace_line(trial)
        if line is not None:
            lines.setdefault(line, []).append(trial.trial)
    for number, (line, trials) in enumerate(lines.items()):
        if number == LINES_SHOWN:
            more = len(lines) - LINES_SHOWN
            yield f"… {more:,} more trace lines (the JSON report has each trial's trace)"
            return
        if several:
            which = "trial" if len(trials) == 1 else "trials"
            yield f"{which} {', '.join(map(str, trials))} {line}"
        else:
            yield line
