"""A trial's spans as a waterfall: typed rows the HTML report and ``assertly view`` draw.

Built once from the typed records (`StepRecord.spans`), never from report dicts: each span is a
row in tree order (children under their parent, siblings by start time), indented by its depth,
with a bar placed by its start and sized by its duration relative to the whole trace. Names,
attributes and errors stay as the agent sent them: each template escapes them (and the HTML
autoescapes), so a span named ``<script>`` or holding terminal escapes is shown, never obeyed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from .._records import TestRecord, TrialRecord
from .._spans import Span, SpanSet

__all__ = ["MAX_ROWS", "SpanRow", "Waterfall", "waterfalls"]

# The most rows a trial's waterfall shows; the JSON report and the store keep every span.
MAX_ROWS: Final = 200
# The most characters of a tool call's arguments shown on its row.
_ARGUMENTS: Final = 160
# The most trials of a test shown (those that did not pass first).
_TRIALS: Final = 3


@dataclass(slots=True)
class SpanRow:
    """One span, placed.

    Attributes:
        depth: Its depth in the span tree (0: a root).
        name: The span's name.
        duration_ms: How long it took.
        offset: Where its bar starts, in percent of the trace's duration.
        width: Its bar's width, in percent (at least a sliver, so instant spans show).
        status: unset, ok or error; ``failed`` also counts an ``exception`` event.
        failed: Whether the span failed (status error, or an exception event).
        error: Why it failed ("" when it did not).
        detail: The tool and its arguments, or the model and tokens, when the span is one.
    """

    depth: int
    name: str
    duration_ms: float
    offset: float
    width: float
    status: str
    failed: bool
    error: str
    detail: str


@dataclass(slots=True)
class Waterfall:
    """The spans of one call of a trial (a step, or a conversation's turn)."""

    trial: int
    step: str
    rows: list[SpanRow] = field(default_factory=list)
    more: int = 0  # spans not drawn (over MAX_ROWS)
    dropped: int = 0  # spans over the per-call limit, never kept
    total_ms: float = 0.0
    missing: str | None = None  # why this call has no spans


def waterfalls(test: TestRecord) -> list[Waterfall]:
    """The waterfalls of a test's shown trials (those that did not pass first), call by call."""
    trials = sorted(test.trials, key=lambda trial: (trial.status == "passed", trial.trial))
    found: list[Waterfall] = []
    for trial in trials[:_TRIALS]:
        found += _trial_waterfalls(trial)
    return found


def _trial_waterfalls(trial: TrialRecord) -> list[Waterfall]:
    found: list[Waterfall] = []
    for step in trial.steps:
        spans = step.spans
        if spans is None or step.ended is not None:  # (a conversation's own step: its turns')
            continue
        if isinstance(spans, str):
            found.append(Waterfall(trial.trial, step.name, missing=spans))
        else:
            found.append(_waterfall(trial.trial, step.name, spans))
    return found


def _waterfall(trial: int, step: str, spans: SpanSet) -> Waterfall:
    ordered = _tree_order(spans)
    start = min((span.start_ns for span in spans.spans), default=0)
    end = max((span.end_ns for span in spans.spans), default=0)
    total = max(end - start, 1)
    rows = [
        SpanRow(
            depth=min(depth, 12),
            name=span.name,
            duration_ms=span.duration_ms,
            offset=round(100 * max(span.start_ns - start, 0) / total, 2),
            width=round(max(100 * max(span.end_ns - span.start_ns, 0) / total, 0.4), 2),
            status=span.status,
            failed=span.failed,
            error=span.error_text(),
            detail=_detail(span),
        )
        for span, depth in ordered[:MAX_ROWS]
    ]
    return Waterfall(
        trial,
        step,
        rows,
        more=max(len(ordered) - MAX_ROWS, 0),
        dropped=spans.dropped,
        total_ms=(end - start) / 1e6 if spans.spans else 0.0,
    )


def _tree_order(spans: SpanSet) -> list[tuple[Span, int]]:
    """Spans depth-first, children by start time; a span whose parent is absent is a root."""
    ids = {span.span_id for span in spans.spans}
    children: dict[str | None, list[Span]] = {}
    for span in spans.spans:  # (already in start order)
        parent = span.parent_id if span.parent_id in ids else None
        children.setdefault(parent, []).append(span)
    ordered: list[tuple[Span, int]] = []
    seen: set[str] = set()
    stack = [(span, 0) for span in reversed(children.get(None, []))]
    while stack:  # iterative: a hostile trace may nest thousands of levels deep
        span, depth = stack.pop()
        if span.span_id in seen:  # a cycle of parent ids (a forged trace)
            continue
        seen.add(span.span_id)
        ordered.append((span, depth))
        stack += [(child, depth + 1) for child in reversed(children.get(span.span_id, []))]
    # Spans in a cycle of parents (none of them a root) are shown too, at depth 0.
    ordered += [(span, 0) for span in spans.spans if span.span_id not in seen]
    return ordered


def _detail(span: Span) -> str:
    attributes = span.attributes
    operation = attributes.get("gen_ai.operation.name")
    if operation == "execute_tool" or attributes.get("openinference.span.kind") == "TOOL":
        tool = attributes.get("gen_ai.tool.name") or attributes.get("tool.name") or span.name
        arguments = attributes.get("gen_ai.tool.call.arguments")
        if arguments is None:
            arguments = attributes.get("input.value")
        text = "" if arguments is None else str(arguments)
        if len(text) > _ARGUMENTS:
            text = text[:_ARGUMENTS] + "…"
        return f"tool {tool}({text})"
    model = attributes.get("gen_ai.response.model") or attributes.get("gen_ai.request.model")
    if model is not None:
        tokens = [
            f"{attributes[key]} {label}"
            for key, label in (
                ("gen_ai.usage.input_tokens", "in"),
                ("gen_ai.usage.output_tokens", "out"),
            )
            if key in attributes
        ]
        return f"model {model}" + (f" ({', '.join(tokens)} tokens)" if tokens else "")
    return ""
