"""The span checkers: what each span assertion demands, judged on a call's `SpanSet`.

A call with no spans (the test asked for none, or none arrived in time) is an ``error`` for
every one of them, never a pass, and ``not-`` keeps it an error. A call whose spans were cut
at the per-call limit (`SpanSet.dropped`) gives a verdict only when the spans not kept could
not change it (a failing span found, an attribute found); otherwise an ``error``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from ..._spans import Span, SpanSet
from .._base import Checker
from .._result import AssertionResult, errored, failed, passed

if TYPE_CHECKING:
    from .._context import CheckContext
    from .._regex import Pattern
    from .._response import Response

__all__ = [
    "NO_TRACE",
    "FromSpans",
    "NoErrorSpans",
    "SpanAttribute",
    "SpanChecker",
    "SpanCount",
    "SpanDuration",
    "SpanFilter",
    "spans_of",
]

NO_TRACE: Final = (
    "this call has no trace: no spans were asked for (add traces: {receive: true} to the "
    "config, or give the recorded output a trace:)"
)
# How many spans a message names before "and N more".
_NAMED: Final = 5


def spans_of(ctx: CheckContext | None) -> SpanSet | str:
    """The call's spans, or why there are none (the text of an ``error``)."""
    spans = None if ctx is None else ctx.spans
    if spans is None:
        return NO_TRACE
    return spans  # type: ignore[no-any-return]


def _dropped(spans: SpanSet) -> str:
    return (
        f"{spans.dropped:,} span(s) of this call were over the per-call limit and not kept, "
        "so the spans kept cannot decide this (raise traces: {max_spans: …})"
    )


def _label(span: Span) -> str:
    return repr(span.name)


def _named(spans: list[Span], describe: Callable[[Span], str] = _label) -> str:
    shown = ", ".join(describe(span) for span in spans[:_NAMED])
    return shown + (f" and {len(spans) - _NAMED:,} more" if len(spans) > _NAMED else "")


class SpanFilter:
    """Which spans an assertion looks at: by name, GenAI operation and attributes (all given)."""

    __slots__ = ("attributes", "name", "operation")

    def __init__(
        self, name: str | None, operation: str | None, attributes: dict[str, Any] | None
    ) -> None:
        self.name = name
        self.operation = operation
        self.attributes = attributes or {}

    def matches(self, span: Span) -> bool:
        """Whether ``span`` is one of these."""
        if self.name is not None and span.name != self.name:
            return False
        attributes = span.attributes
        if self.operation is not None and attributes.get("gen_ai.operation.name") != self.operation:
            return False
        return all(
            key in attributes and _same(attributes[key], value)
            for key, value in self.attributes.items()
        )

    def describe(self) -> str:
        """``spans named 'search' with operation 'execute_tool'`` (or ``spans``)."""
        parts = ["spans"]
        if self.name is not None:
            parts.append(f"named {self.name!r}")
        if self.operation is not None:
            parts.append(f"with gen_ai.operation.name {self.operation!r}")
        if self.attributes:
            shown = ", ".join(f"{key}={value!r}" for key, value in self.attributes.items())
            parts.append(f"with {shown}")
        return " ".join(parts)


def _same(found: Any, wanted: Any) -> bool:
    """Attribute equality with JSON types (True is not 1; 1 and 1.0 are one number)."""
    if isinstance(found, bool) or isinstance(wanted, bool):
        return type(found) is type(wanted) and found == wanted
    return bool(found == wanted)


class SpanChecker(Checker):
    """A checker of the call's spans: the error for a call without them, then `judge`."""

    __slots__ = ()

    def check(self, response: Response, ctx: CheckContext) -> AssertionResult:
        spans = spans_of(ctx)
        if type(spans) is str:
            return errored(self.key, spans)
        return self.judge(spans)  # type: ignore[arg-type]

    def judge(self, spans: SpanSet) -> AssertionResult:
        """The verdict on the call's spans."""
        raise NotImplementedError


class SpanCount(SpanChecker):
    """The number of matching spans is within [low, high]."""

    __slots__ = ("high", "low", "where")

    def __init__(self, where: SpanFilter, low: int | None, high: int | None) -> None:
        self.key = "span-count"
        self.where = where
        self.low = low
        self.high = high

    def _bounds(self) -> str:
        low, high = self.low, self.high
        if high is None:
            return f"at least {low}"
        if not low:
            return f"at most {high}"
        return f"exactly {low}" if low == high else f"between {low} and {high}"

    def describe(self) -> str:
        return f"the trace has {self._bounds()} {self.where.describe()}"

    def judge(self, spans: SpanSet) -> AssertionResult:
        found = [span for span in spans.spans if self.where.matches(span)]
        count = len(found)
        too_many = self.high is not None and count > self.high
        if spans.dropped and not too_many:
            return errored(self.key, _dropped(spans))  # the dropped ones may match
        if not too_many and (self.low is None or count >= self.low):
            return passed(self.key)
        listed = f": {_named(found)}" if found else ""
        return failed(
            self.key,
            f"Expected {self._bounds()} {self.where.describe()}, found {count}{listed}",
            expected={"min": self.low, "max": self.high},
            actual=count,
        )


class SpanDuration(SpanChecker):
    """Each span named ``name`` (or, without a name, the whole trace) lasts at most max_ms."""

    __slots__ = ("max_ms", "name")

    def __init__(self, name: str | None, max_ms: float) -> None:
        self.key = "span-duration"
        self.name = name
        self.max_ms = max_ms

    def describe(self) -> str:
        what = "the trace" if self.name is None else f"each span named {self.name!r}"
        return f"{what} lasts at most {self.max_ms:g} ms"

    def verdict(self, response: Response, ctx: CheckContext) -> AssertionResult:
        # A step that never ran failing its time limit is a failure that proves nothing:
        # its not- form ("it was slow") must not pass on it.
        spans = spans_of(ctx)
        if (
            self.name is not None
            and type(spans) is not str
            and not spans.dropped  # type: ignore[union-attr]
            and not any(span.name == self.name for span in spans.spans)  # type: ignore[union-attr]
        ):
            return errored(self.key, f"No span named {self.name!r} in the call's trace to time")
        return self.check(response, ctx)

    def judge(self, spans: SpanSet) -> AssertionResult:
        if self.name is None:
            if spans.dropped:
                return errored(self.key, _dropped(spans))
            if not spans.spans:
                return errored(self.key, "the call's trace has no spans to time")
            start = min(span.start_ns for span in spans.spans)
            end = max(span.end_ns for span in spans.spans)
            total = max(0, end - start) / 1e6
            if total <= self.max_ms:
                return passed(self.key)
            return failed(
                self.key,
                f"The trace lasted {total:,.1f} ms (its first span's start to its last span's "
                f"end), over {self.max_ms:g} ms",
                expected=self.max_ms,
                actual=round(total, 3),
            )
        named = [span for span in spans.spans if span.name == self.name]
        slow = [span for span in named if span.duration_ms > self.max_ms]
        if slow:
            return failed(
                self.key,
                f"{len(slow)} span(s) named {self.name!r} lasted over {self.max_ms:g} ms: "
                + _named(slow, lambda span: f"{span.duration_ms:,.1f} ms"),
                expected=self.max_ms,
                actual=round(max(span.duration_ms for span in slow), 3),
            )
        if spans.dropped:
            return errored(self.key, _dropped(spans))
        if not named:
            # Nothing to time: a limit on a step that never ran proves nothing.
            return failed(self.key, f"No span named {self.name!r} in the call's trace")
        return passed(self.key)


class NoErrorSpans(SpanChecker):
    """No span has status ERROR or an ``exception`` event."""

    __slots__ = ()

    def __init__(self) -> None:
        self.key = "no-error-spans"

    def describe(self) -> str:
        return "no span of the trace failed"

    def judge(self, spans: SpanSet) -> AssertionResult:
        failing = [span for span in spans.spans if span.failed]
        if failing:

            def reason(span: Span) -> str:
                why = span.error_text()
                return f"{span.name!r}" + (f" ({why})" if why else "")

            return failed(
                self.key,
                f"{len(failing)} span(s) failed: {_named(failing, reason)}",
                actual=[span.name for span in failing[:_NAMED]],
            )
        if spans.dropped:
            return errored(self.key, _dropped(spans))
        return passed(self.key)

    def observed(self, response: Response, ctx: CheckContext) -> str:
        spans = spans_of(ctx)
        return "" if type(spans) is str else f"{len(spans):,} span(s), none failed"


class SpanAttribute(SpanChecker):
    """Some span named ``name`` has attribute ``key`` equal to ``value`` (or matching a regex)."""

    __slots__ = ("attribute", "name", "pattern", "value")

    def __init__(self, name: str, attribute: str, value: Any, pattern: Pattern | None) -> None:
        self.key = "span-attribute"
        self.name = name
        self.attribute = attribute
        self.value = value
        self.pattern = pattern

    def describe(self) -> str:
        wanted = (
            f"matching /{self.pattern.source}/" if self.pattern is not None else f"= {self.value!r}"
        )
        return f"a span named {self.name!r} has {self.attribute} {wanted}"

    def _holds(self, span: Span) -> bool:
        attributes = span.attributes
        if self.attribute not in attributes:
            return False
        found = attributes[self.attribute]
        if self.pattern is not None:
            return isinstance(found, str) and self.pattern.search(found) is not None
        return _same(found, self.value)

    def judge(self, spans: SpanSet) -> AssertionResult:
        named = [span for span in spans.spans if span.name == self.name]
        if any(self._holds(span) for span in named):
            return passed(self.key)
        if spans.dropped:
            return errored(self.key, _dropped(spans))
        if not named:
            return failed(self.key, f"No span named {self.name!r} in the call's trace")
        seen = [span.attributes.get(self.attribute, "(absent)") for span in named[:_NAMED]]
        return failed(
            self.key,
            f"No span named {self.name!r} has {self.attribute} "
            + (f"matching /{self.pattern.source}/" if self.pattern else f"= {self.value!r}")
            + f"; found {', '.join(repr(value)[:200] for value in seen)}",
            expected=self.value if self.pattern is None else self.pattern.source,
            actual=seen[0] if len(seen) == 1 else seen,
        )


class FromSpans(Checker):
    """A trajectory checker that reads the tool calls from the call's spans (``source: trace``)."""

    __slots__ = ("inner",)

    def __init__(self, inner: Checker) -> None:
        self.key = inner.key
        self.inner = inner

    def describe(self) -> str:
        return f"{self.inner.describe()} (from the trace)"

    def _context(self, ctx: CheckContext) -> CheckContext | str:
        spans = spans_of(ctx)
        if type(spans) is str:
            return spans
        assert isinstance(spans, SpanSet)
        if spans.dropped:
            return _dropped(spans)
        return ctx.with_calls(spans.tool_calls())

    def check(self, response: Response, ctx: CheckContext) -> AssertionResult:
        inner = self._context(ctx)
        if type(inner) is str:
            return errored(self.key, inner)
        return self.inner.check(response, inner)  # type: ignore[arg-type]

    def verdict(self, response: Response, ctx: CheckContext) -> AssertionResult:
        inner = self._context(ctx)
        if type(inner) is str:
            return errored(self.key, inner)
        return self.inner.verdict(response, inner)  # type: ignore[arg-type]

    def observed(self, response: Response, ctx: CheckContext) -> str:
        inner = self._context(ctx)
        return "" if type(inner) is str else self.inner.observed(response, inner)  # type: ignore[arg-type]
