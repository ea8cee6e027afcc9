"""The span assertions of the typed list: values validated and compiled here, once.

``span-count`` (``{name?, operation?, attributes?, min?, max?}``), ``span-duration``
(``{name?, max_ms}``), ``no-error-spans`` and ``span-attribute`` (``{name, key, value |
regex}``). Each marks the expectation as needing spans (`Options.spans`), which makes the
runner ask the agent's call for them.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from .._base import BuildContext, Checker
from .._entries import typed_assertion
from ..trajectory.typed import count_bounds
from ..typed._wrapper import TypedSpec
from ._checks import NoErrorSpans, SpanAttribute, SpanCount, SpanDuration, SpanFilter

__all__ = ["SpanAttributeValue", "SpanCountValue", "SpanDurationValue"]


class SpanCountValue(BaseModel):
    """``span-count``'s value."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    name: str | None = Field(default=None, min_length=1, description="The span's name.")
    operation: str | None = Field(
        default=None, min_length=1, description="gen_ai.operation.name (chat, execute_tool …)."
    )
    attributes: dict[str, Any] | None = Field(
        default=None, description="Attributes the span has, with these values."
    )
    min: int | None = Field(default=None, ge=0, description="Fewest matching spans.")
    max: int | None = Field(default=None, ge=0, description="Most matching spans.")


class SpanDurationValue(BaseModel):
    """``span-duration``'s value."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    name: str | None = Field(
        default=None, min_length=1, description="Each span of this name; none: the whole trace."
    )
    max_ms: float = Field(ge=0, allow_inf_nan=False, description="The longest it may last.")


class SpanAttributeValue(BaseModel):
    """``span-attribute``'s value."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    name: str = Field(min_length=1, description="The span's name.")
    key: str = Field(min_length=1, description="The attribute.")
    value: Any = Field(default=None, description="Its value (JSON types compared).")
    regex: str | None = Field(default=None, description="Or: a pattern its text matches.")


def _value(spec: TypedSpec, ctx: BuildContext, model: type[BaseModel], example: str) -> Any:
    where = ctx.at("value")
    if not isinstance(spec.value, dict):
        where.problem(f"{spec.type} needs a mapping such as {example}, got {spec.value!r}")
        return None
    return where.model(model, spec.value, example)


@typed_assertion("span-count")
def build_span_count(spec: TypedSpec, ctx: BuildContext) -> Checker | None:
    """The trace has between min and max spans (of a name, operation or attributes)."""
    example = "{operation: chat, max: 3} or {name: search, min: 1}"
    parsed = _value(spec, ctx, SpanCountValue, example)
    if parsed is None:
        return None
    where = ctx.at("value")
    if parsed.min is None and parsed.max is None:
        where.problem(f"give min, max or both (e.g. {example}); without them any count passes")
        return None
    if not count_bounds(parsed.min, parsed.max, where):  # (the trajectory counts' rules)
        return None
    ctx.options.spans = True
    found = SpanFilter(parsed.name, parsed.operation, parsed.attributes)
    return SpanCount(found, parsed.min, parsed.max)


@typed_assertion("span-duration")
def build_span_duration(spec: TypedSpec, ctx: BuildContext) -> Checker | None:
    """Each span of a name (or the whole trace) lasts at most max_ms."""
    parsed = _value(spec, ctx, SpanDurationValue, "{name: search, max_ms: 500}")
    if parsed is None:
        return None
    ctx.options.spans = True
    return SpanDuration(parsed.name, parsed.max_ms)


@typed_assertion("no-error-spans", value=False)
def build_no_error_spans(spec: TypedSpec, ctx: BuildContext) -> Checker | None:
    """No span has status ERROR or an exception event."""
    ctx.options.spans = True
    return NoErrorSpans()


@typed_assertion("span-attribute")
def build_span_attribute(spec: TypedSpec, ctx: BuildContext) -> Checker | None:
    """A span of a name has an attribute equal to a value (or matching a regex)."""
    example = "{name: 'chat gpt-4o', key: gen_ai.request.model, value: gpt-4o}"
    parsed = _value(spec, ctx, SpanAttributeValue, example)
    if parsed is None:
        return None
    where = ctx.at("value")
    given = parsed.model_fields_set
    if ("value" in given) == ("regex" in given):
        where.problem(f"give exactly one of value and regex (e.g. {example})")
        return None
    pattern = None
    if parsed.regex is not None:
        pattern = where.at("regex").pattern(parsed.regex)
        if pattern is None:
            return None
    ctx.options.spans = True
    return SpanAttribute(parsed.name, parsed.key, parsed.value, pattern)
