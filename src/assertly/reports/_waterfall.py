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

from .._json import dumps
from .._records import TestRecord, TrialRecord
from .._spans import Span, SpanSet

__all__ = ["MAX_ROWS", "SpanRow", "Waterfall", "waterfalls"]

# The most rows a trial's waterfall shows; the JSON report and the store keep every span.
MAX_ROWS: Final = 200
# The most characters of a tool call's arguments shown on its row.
_ARGUMENTS: Final = 160
# The most characters of a span's name (and a tool's or model's) and of its error.
_NAME: Final = 200
_ERROR: Final = 500
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
    details = _details(spans)
    rows = [
        SpanRow(
            depth=min(depth, 12),
            name=_clip(span.name, _NAME),
            duration_ms=span.duration_ms,
            offset=round(100 * max(span.start_ns - start, 0) / total, 2),
            width=round(max(100 * max(span.end_ns - span.start_ns, 0) / total, 0.4), 2),
            status=span.status,
            failed=span.failed,
            error=_clip(span.error_text(), _ERROR),
            detail=details.get(id(span), ""),
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
    """Spans depth-first, children by start time; a span whose parent is absent is a root.

    Every span is drawn once, even when span ids repeat (a forged trace): spans are told apart
    by their place in the set, not by their ids.
    """
    every = spans.spans
    ids = {span.span_id for span in every}
    children: dict[str | None, list[int]] = {}
    for index, span in enumerate(every):  # (already in start order)
        parent = span.parent_id if span.parent_id in ids else None
        children.setdefault(parent, []).append(index)
    ordered: list[tuple[Span, int]] = []
    seen: set[int] = set()
    expanded: set[str] = set()
    stack = [(index, 0) for index in reversed(children.get(None, []))]
    while stack:  # iterative: a hostile trace may nest thousands of levels deep
        index, depth = stack.pop()
        if index in seen:
            continue
        seen.add(index)
        span = every[index]
        ordered.append((span, depth))
        if span.span_id not in expanded:  # (a cycle of parent ids, or a repeated id)
            expanded.add(span.span_id)
            stack += [(child, depth + 1) for child in reversed(children.get(span.span_id, []))]
    # Spans in a cycle of parents (none of them a root) are shown too, at depth 0.
    ordered += [(span, 0) for index, span in enumerate(every) if index not in seen]
    return ordered


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def _details(spans: SpanSet) -> dict[int, str]:
    """Each tool span's tool and arguments, each model span's model and tokens (by span).

    Read through `SpanSet.tool_calls` and `SpanSet.model_calls`, so a row says what the
    trajectory and usage checks read (GenAI and OpenInference names, arguments from an event).
    """
    found: dict[int, str] = {}
    for span, call in zip(spans.tool_spans(), spans.tool_calls(), strict=True):
        arguments = call["arguments"]
        text = "" if arguments in (None, {}) else arguments
        text = text if isinstance(text, str) else dumps(text)
        found[id(span)] = f"tool {_clip(str(call['name']), _NAME)}({_clip(text, _ARGUMENTS)})"
    for model in spans.model_calls():
        if model.model is None:
            continue
        tokens = [
            f"{count} {label}"
            for count, label in ((model.input_tokens, "in"), (model.output_tokens, "out"))
            if count is not None
        ]
        text = f"model {_clip(model.model, _NAME)}"
        found[id(model.span)] = text + (f" ({', '.join(tokens)} tokens)" if tokens else "")
    return found
