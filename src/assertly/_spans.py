"""The spans of one agent call, and what they show: tool calls, model calls, errors (issue 33).

An instrumented agent exports OpenTelemetry spans; `assertly.traces` receives (or reads) them
and decodes them into `Span` records, grouped per call into a `SpanSet`. This module is the
typed form every layer shares: the engine judges a `SpanSet` (span assertions, trajectory
assertions with ``source: trace``), the store keeps it (`SpanSet.to_json`, compact rows), the
reports and the viewer draw it. It imports only the standard library, so the engine may import
it.

What is read (the OpenTelemetry GenAI semantic conventions, and OpenInference's names):

* a **tool call** is a span with ``gen_ai.operation.name = execute_tool`` (or OpenInference's
  ``openinference.span.kind = TOOL``); its name is ``gen_ai.tool.name`` (``tool.name``, else
  the span's name), its arguments ``gen_ai.tool.call.arguments`` (``input.value``, else the
  ``arguments`` of a ``gen_ai.tool.message`` event), as an object or JSON text;
* a **model call** is a span with ``gen_ai.operation.name`` one of ``chat``,
  ``text_completion``, ``generate_content`` (or OpenInference's ``LLM``): its model
  ``gen_ai.response.model`` (else ``gen_ai.request.model``, ``llm.model_name``), its tokens
  ``gen_ai.usage.input_tokens`` / ``output_tokens`` (``llm.token_count.prompt`` /
  ``completion``), its cost ``gen_ai.usage.cost`` when the instrumentation reports one;
* an **error span** has status ERROR or an ``exception`` event.

Calls are in start-time order (ties: the order received).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final, Literal

__all__ = [
    "MODEL_OPERATIONS",
    "MissingCalls",
    "ModelCall",
    "Span",
    "SpanEvent",
    "SpanCalls",
    "SpanSet",
    "SpanStatus",
    "merged_spans",
    "spans_missing",
]

SpanStatus = Literal["unset", "ok", "error"]

TOOL_OPERATION: Final = "execute_tool"
MODEL_OPERATIONS: Final = frozenset({"chat", "text_completion", "generate_content"})
_KIND: Final = "openinference.span.kind"


@dataclass(slots=True, frozen=True)
class SpanEvent:
    """An event inside a span (``exception``, ``gen_ai.tool.message`` …)."""

    name: str
    time_ns: int
    attributes: dict[str, Any] = field(default_factory=dict)


# Not frozen: a frozen dataclass's __init__ costs a tenth of decoding a span, and nothing
# changes a decoded span.
@dataclass(slots=True)
class Span:
    """One span as decoded from OTLP (attribute values as JSON values).

    Attributes:
        trace_id: 32 lowercase hex digits.
        span_id: 16 lowercase hex digits.
        parent_id: The parent's span id; None for a root (or a span whose parent is the
            caller's, i.e. assertly's ``traceparent``: see `SpanSet.root`).
        name: The span's name.
        kind: OTLP's SpanKind number (0 unspecified, 1 internal, 2 server, 3 client …).
        start_ns: Start, Unix nanoseconds.
        end_ns: End, Unix nanoseconds.
        status: unset, ok or error.
        status_message: The status's description ("" when none).
        attributes: The span's attributes (nested values flattened to JSON values).
        events: The span's events in order.
    """

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    kind: int
    start_ns: int
    end_ns: int
    status: SpanStatus = "unset"
    status_message: str = ""
    attributes: dict[str, Any] = field(default_factory=dict)
    events: tuple[SpanEvent, ...] = ()

    @property
    def duration_ms(self) -> float:
        """How long the span took, in milliseconds (0 for a span that ends before it starts)."""
        return max(0, self.end_ns - self.start_ns) / 1e6

    @property
    def failed(self) -> bool:
        """Status ERROR, or an ``exception`` event."""
        return self.status == "error" or any(e.name == "exception" for e in self.events)

    def error_text(self) -> str:
        """Why the span failed: its status message, else the exception's type and message."""
        for event in self.events:
            if event.name == "exception":
                kind = event.attributes.get("exception.type")
                message = event.attributes.get("exception.message")
                text = ": ".join(str(part) for part in (kind, message) if part not in (None, ""))
                if text:
                    return text
        return self.status_message

    def to_row(self, trace_id: str) -> list[Any]:
        """The compact row the store keeps (the trace id only when not ``trace_id``)."""
        events = [[e.name, e.time_ns, e.attributes] for e in self.events]
        row: list[Any] = [
            self.span_id,
            self.parent_id,
            self.name,
            self.kind,
            self.start_ns,
            self.end_ns,
            self.status,
            self.status_message,
            self.attributes,
            events,
        ]
        if self.trace_id != trace_id:
            row.append(self.trace_id)
        return row

    @classmethod
    def from_row(cls, row: list[Any], trace_id: str) -> Span:
        """Rebuild from `to_row`."""
        events = tuple(SpanEvent(name, time, attrs) for name, time, attrs in row[9])
        return cls(
            row[10] if len(row) > 10 else trace_id,
            row[0],
            row[1],
            row[2],
            row[3],
            row[4],
            row[5],
            row[6],
            row[7],
            row[8],
            events,
        )


@dataclass(slots=True, frozen=True)
class ModelCall:
    """A model call read from a span."""

    span: Span
    model: str | None
    input_tokens: int | None
    output_tokens: int | None
    cost_usd: float | None


class SpanSet:
    """The spans of one call (or one recorded trace), in start order, and what they show.

    Args:
        spans: The spans (any order: sorted by start time here).
        trace_id: The call's trace id (the one assertly sent, or the recorded trace's).
        dropped: Spans of this trace not kept (over the per-call limit): a judgement that
            counts spans is then an error, not a guess.
        parent_id: The span id assertly's ``traceparent`` named as the parent (its spans'
            root has it as parent); None for a recorded trace.
    """

    __slots__ = ("_model_calls", "_tool_calls", "dropped", "parent_id", "spans", "trace_id")

    def __init__(
        self,
        spans: list[Span] | tuple[Span, ...],
        trace_id: str,
        dropped: int = 0,
        parent_id: str | None = None,
    ) -> None:
        order = sorted(range(len(spans)), key=lambda i: spans[i].start_ns)
        self.spans: tuple[Span, ...] = tuple(spans[i] for i in order)
        self.trace_id = trace_id
        self.dropped = dropped
        self.parent_id = parent_id
        self._tool_calls: list[dict[str, Any]] | None = None
        self._model_calls: list[ModelCall] | None = None

    def __len__(self) -> int:
        return len(self.spans)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, SpanSet)
            and self.spans == other.spans
            and self.trace_id == other.trace_id
            and self.dropped == other.dropped
            and self.parent_id == other.parent_id
        )

    __hash__ = None  # type: ignore[assignment]

    def roots(self) -> list[Span]:
        """The spans whose parent is not in the set (the caller's, or none)."""
        ids = {span.span_id for span in self.spans}
        return [span for span in self.spans if span.parent_id not in ids]

    def has_root_ended(self) -> bool:
        """Whether a span that is the call's root arrived (an exported span has ended)."""
        parent = self.parent_id
        return any(
            span.parent_id is None or (parent is not None and span.parent_id == parent)
            for span in self.spans
        )

    def tool_calls(self) -> list[dict[str, Any]]:
        """The tool calls, ``[{"name", "arguments"}]`` in start order (what trajectories read)."""
        if self._tool_calls is None:
            self._tool_calls = SpanCalls(_tool_call(span) for span in self.spans if _is_tool(span))
        return self._tool_calls

    def tool_spans(self) -> list[Span]:
        """The spans read as tool calls, in the order of `tool_calls`."""
        return [span for span in self.spans if _is_tool(span)]

    def model_calls(self) -> list[ModelCall]:
        """The model calls, in start order."""
        if self._model_calls is None:
            self._model_calls = [_model_call(span) for span in self.spans if _is_model(span)]
        return self._model_calls

    def usage(self) -> tuple[str | None, dict[str, int] | None, float | None]:
        """Model (the last one named), tokens and cost summed over the model calls.

        None for what no model call reported.
        """
        model: str | None = None
        tokens: dict[str, int] = {}
        cost: float | None = None
        for call in self.model_calls():
            model = call.model or model
            for key, count in (("input", call.input_tokens), ("output", call.output_tokens)):
                if count is not None:
                    tokens[key] = tokens.get(key, 0) + count
            if call.cost_usd is not None:
                cost = (cost or 0.0) + call.cost_usd
        if tokens:
            tokens["total"] = tokens.get("input", 0) + tokens.get("output", 0)
        return model, tokens or None, cost

    def summary(self) -> dict[str, Any]:
        """The JSON report's ``trace``: ``{"spans", "tools", "model_calls"}`` (and dropped)."""
        data: dict[str, Any] = {
            "trace_id": self.trace_id,
            "spans": len(self.spans),
            "tools": [call["name"] for call in self.tool_calls()],
            "model_calls": len(self.model_calls()),
            "error_spans": sum(1 for span in self.spans if span.failed),
        }
        if self.dropped:
            data["dropped"] = self.dropped
        return data

    def to_json(self) -> dict[str, Any]:
        """The compact form the store keeps."""
        data: dict[str, Any] = {
            "trace_id": self.trace_id,
            "spans": [span.to_row(self.trace_id) for span in self.spans],
        }
        if self.dropped:
            data["dropped"] = self.dropped
        if self.parent_id is not None:
            data["parent_id"] = self.parent_id
        return data

    @classmethod
    def from_json(cls, data: Any) -> SpanSet | str:
        """Rebuild from `to_json`; a string (why no spans arrived) is kept as it is."""
        if isinstance(data, str):
            return data
        trace_id = data["trace_id"]
        spans = [Span.from_row(row, trace_id) for row in data.get("spans") or ()]
        return cls(spans, trace_id, data.get("dropped", 0), data.get("parent_id"))


class SpanCalls(list):  # type: ignore[type-arg]
    """The tool calls read from a call's spans (`SpanSet.tool_calls`).

    A list of ``{"name", "arguments"}`` that says where it came from: messages name
    "OpenTelemetry spans", not the agent's reported calls.
    """

    __slots__ = ()


class MissingCalls(str):
    """The tool calls of a call whose spans did not arrive, under ``traces: {prefer: true}``.

    Given as the call's reported tool calls: not a list, so trajectory assertions give an
    error with this text (why no spans arrived), never a pass on the reply's own calls.
    """

    __slots__ = ()


def merged_spans(sets: list[SpanSet | str | None]) -> SpanSet | str | None:
    """The spans of several calls as one set (a conversation's turns, judged as a whole).

    None when no call asked for spans; a call's reason when its spans are missing (the whole
    cannot be judged without them); else every span, the first call's trace id, the dropped
    counts summed.
    """
    found: list[SpanSet] = []
    for spans in sets:
        if isinstance(spans, str):
            return spans
        if spans is not None:
            found.append(spans)
    if not found:
        return None
    if len(found) == 1:
        return found[0]
    every = [span for spans in found for span in spans.spans]
    return SpanSet(every, found[0].trace_id, sum(spans.dropped for spans in found))


def spans_missing(wait_ms: float, strays: int = 0) -> str:
    """Why a call that asked for spans has none: the error its trace-based checks give."""
    text = f"no spans arrived for this call within {wait_ms:,.0f} ms"
    if strays:
        text += (
            f" ({strays:,} span(s) of other trace ids arrived: does the agent continue the "
            "trace of the `traceparent` it was given? See docs/traces.md)"
        )
    return text


def _operation(span: Span) -> Any:
    return span.attributes.get("gen_ai.operation.name")


def _is_tool(span: Span) -> bool:
    return _operation(span) == TOOL_OPERATION or span.attributes.get(_KIND) == "TOOL"


def _is_model(span: Span) -> bool:
    operation = _operation(span)
    if isinstance(operation, str) and operation in MODEL_OPERATIONS:
        return True
    return span.attributes.get(_KIND) == "LLM"


def _tool_call(span: Span) -> dict[str, Any]:
    attributes = span.attributes
    name = attributes.get("gen_ai.tool.name")
    if not isinstance(name, str) or not name:
        name = attributes.get("tool.name")
    if not isinstance(name, str) or not name:
        name = span.name
    arguments = attributes.get("gen_ai.tool.call.arguments")
    if arguments is None:
        arguments = attributes.get("input.value")
    if arguments is None:
        for event in span.events:
            if event.name == "gen_ai.tool.message":
                arguments = event.attributes.get("arguments")
                if arguments is None:
                    arguments = event.attributes.get("content")
                break
    # JSON text stays text: the trajectory reader parses it on first use, as it does a
    # reply's (and text that is not an object is an unreadable call's arguments there).
    return {"name": name, "arguments": {} if arguments is None else arguments}


def _int(value: Any) -> int | None:
    return value if type(value) is int and value >= 0 else None


def _model_call(span: Span) -> ModelCall:
    attributes = span.attributes
    model = attributes.get("gen_ai.response.model") or attributes.get("gen_ai.request.model")
    if not isinstance(model, str):
        model = attributes.get("llm.model_name")
    input_tokens = _int(attributes.get("gen_ai.usage.input_tokens"))
    if input_tokens is None:
        input_tokens = _int(attributes.get("llm.token_count.prompt"))
    output_tokens = _int(attributes.get("gen_ai.usage.output_tokens"))
    if output_tokens is None:
        output_tokens = _int(attributes.get("llm.token_count.completion"))
    cost = attributes.get("gen_ai.usage.cost")
    if not (isinstance(cost, int | float) and not isinstance(cost, bool) and cost >= 0):
        cost = None
    return ModelCall(
        span,
        model if isinstance(model, str) and model else None,
        input_tokens,
        output_tokens,
        None if cost is None else float(cost),
    )
