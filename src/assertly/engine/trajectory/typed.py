"""Trajectory assertions: the tool calls an agent made.

``tool-called`` (a tool, optionally with arguments, called between min and max times),
``tool-sequence`` (the calls against a list, by ``config.mode``) and ``tool-call-count``.
The calls are read from the response (OpenAI Chat Completions or Responses, Anthropic
Messages, a top-level ``tool_calls`` list) or from the call's metadata; see `_read`.
Everything the user wrote is validated and compiled here, once.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .._base import BuildContext, Checker
from .._entries import typed_assertion
from ..spans._checks import FromSpans
from ..typed._wrapper import TypedSpec
from ._checks import CallPattern, ToolCalled, ToolCount
from ._sequence import ToolSequence

__all__ = [
    "CallSpec",
    "CountValue",
    "SequenceOptions",
    "SourceOptions",
    "ToolCalledValue",
    "compile_call",
    "compile_calls",
    "count_bounds",
]


class CallSpec(BaseModel):
    """One call to look for: a tool name and, optionally, its arguments."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    name: str = Field(min_length=1, description="The tool's name.")
    args: dict[str, Any] | None = Field(
        default=None, description="Arguments the call must have (a subset by default)."
    )
    args_match: Literal["subset", "exact"] = Field(
        default="subset",
        description="subset: the call has at least these arguments (nested objects too); "
        "exact: exactly these.",
    )


class ToolCalledValue(CallSpec):
    """``tool-called``'s value as a mapping."""

    min: int = Field(
        default=1, ge=0, description="Fewest matching calls (1 by default; 0 when max is 0)."
    )
    max: int | None = Field(default=None, ge=0, description="Most matching calls.")


class SourceOptions(BaseModel):
    """Where a trajectory assertion reads the tool calls (``config: {source: trace}``)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    source: Literal["response", "trace"] = Field(
        default="response",
        description="response: the reply's calls (or the calls the agent reported); trace: "
        "the call's OpenTelemetry execute_tool spans (docs/traces.md).",
    )


class SequenceOptions(SourceOptions):
    """``tool-sequence``'s config."""

    mode: Literal["in_order", "exact", "unordered", "subset", "superset"] = Field(
        default="in_order",
        description="in_order: the listed calls in this order, others between allowed; exact: "
        "exactly these calls in this order; unordered: exactly these calls in any order; "
        "subset: every call made is one of these; superset: every listed call is made.",
    )


class CountValue(BaseModel):
    """``tool-call-count``'s value."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    min: int | None = Field(default=None, ge=0, description="Fewest calls.")
    max: int | None = Field(default=None, ge=0, description="Most calls.")
    name: str | None = Field(default=None, min_length=1, description="Count only this tool.")


_CALL_EXAMPLE = "{name: search, args: {query: 'x'}}"


def _pattern(spec: CallSpec, ctx: BuildContext) -> CallPattern | None:
    if spec.args is None and "args_match" in spec.model_fields_set:
        ctx.at("args_match").problem(
            "args_match applies to args, and no args are given (e.g. "
            "{name: search, args: {query: 'x'}, args_match: exact}; for a call without "
            "arguments write args: {} with args_match: exact)"
        )
        return None
    return CallPattern(spec.name, spec.args, spec.args_match == "exact")


def compile_call(value: Any, ctx: BuildContext) -> CallPattern | None:
    """A call pattern from a tool name or ``{name, args?, args_match?}``."""
    if isinstance(value, str) and value:
        return CallPattern(value)
    if isinstance(value, dict):
        spec = ctx.model(CallSpec, value, _CALL_EXAMPLE)
        return None if spec is None else _pattern(spec, ctx)
    ctx.problem(f"expected a tool name or a mapping such as {_CALL_EXAMPLE}, got {value!r}")
    return None


def compile_calls(value: Any, ctx: BuildContext) -> list[CallPattern] | None:
    """A non-empty list of call patterns (names or mappings)."""
    if isinstance(value, str) and value:
        value = [value]
    if not isinstance(value, list) or not value:
        ctx.problem(
            f"expected a non-empty list of tool names or {_CALL_EXAMPLE} mappings, "
            f"got {value!r} (e.g. [search, fetch, answer])"
        )
        return None
    before = len(ctx.problems)
    patterns = [compile_call(item, ctx.at(index)) for index, item in enumerate(value)]
    if len(ctx.problems) > before:
        return None
    return [pattern for pattern in patterns if pattern is not None]


def count_bounds(low: int | None, high: int | None, ctx: BuildContext) -> bool:
    """Whether min/max of a count can both hold and can fail; records the problem if not."""
    if low is not None and high is not None and low > high:
        ctx.problem(f"min ({low}) is greater than max ({high})")
        return False
    if not low and high is None:
        # Any number of calls is at least 0: an assertion that cannot fail (and whose `not-`
        # form cannot pass) is refused, as an empty `contains` is.
        ctx.problem("min 0 without a max can never fail (any count passes); give min: 1 or a max")
        return False
    return True


def _sourced(checker: Checker | None, spec: TypedSpec, ctx: BuildContext) -> Checker | None:
    """The checker, reading the calls from the call's spans under ``source: trace``."""
    if checker is None or spec.config.get("source", "response") != "trace":
        return checker
    ctx.options.spans = True
    return FromSpans(checker)


@typed_assertion("tool-called", options=SourceOptions)
def build_tool_called(spec: TypedSpec, ctx: BuildContext) -> Checker | None:
    """A tool (optionally with these arguments) is called between min (1) and max times."""
    return _sourced(_tool_called(spec, ctx), spec, ctx)


def _tool_called(spec: TypedSpec, ctx: BuildContext) -> Checker | None:
    where = ctx.at("value")
    value = spec.value
    if isinstance(value, str) and value:
        return ToolCalled("tool-called", CallPattern(value), 1, None)
    if not isinstance(value, dict):
        where.problem(
            f"tool-called needs a tool name or a mapping such as "
            f"{{name: search, args: {{query: 'x'}}, min: 1, max: 2}}, got {value!r}"
        )
        return None
    parsed = where.model(ToolCalledValue, value, "{name: search, args: {query: 'x'}, max: 2}")
    if parsed is None:
        return None
    low = parsed.min
    if parsed.max == 0 and "min" not in parsed.model_fields_set:
        low = 0  # {name: delete, max: 0}: never called (the default min of 1 would contradict)
    pattern = _pattern(parsed, where)
    if pattern is None or not count_bounds(low, parsed.max, where):
        return None
    return ToolCalled("tool-called", pattern, low, parsed.max)


@typed_assertion("tool-sequence", options=SequenceOptions, threshold=True)
def build_tool_sequence(spec: TypedSpec, ctx: BuildContext) -> Checker | None:
    """The tool calls against a list of calls, by config.mode (in_order by default)."""
    patterns = compile_calls(spec.value, ctx.at("value"))
    threshold = spec.threshold
    if threshold is not None and not 0 <= threshold <= 1:
        ctx.at("threshold").problem(f"threshold must be a number in [0, 1], got {threshold!r}")
        return None
    if patterns is None:
        return None
    mode = spec.config.get("mode", "in_order")  # validated against SequenceOptions already
    return _sourced(ToolSequence("tool-sequence", patterns, mode, threshold), spec, ctx)


@typed_assertion("tool-call-count", options=SourceOptions)
def build_tool_call_count(spec: TypedSpec, ctx: BuildContext) -> Checker | None:
    """The number of tool calls (of one tool, with name) is between min and max."""
    return _sourced(_tool_call_count(spec, ctx), spec, ctx)


def _tool_call_count(spec: TypedSpec, ctx: BuildContext) -> Checker | None:
    where = ctx.at("value")
    example = "{max: 5} or {min: 1, max: 2, name: search}"
    if not isinstance(spec.value, dict):
        where.problem(f"tool-call-count needs a mapping such as {example}, got {spec.value!r}")
        return None
    parsed = where.model(CountValue, spec.value, example)
    if parsed is None:
        return None
    if parsed.min is None and parsed.max is None:
        where.problem(f"give min, max or both (e.g. {example}); without them any count passes")
        return None
    if not count_bounds(parsed.min, parsed.max, where):
        return None
    return ToolCount("tool-call-count", parsed.min, parsed.max, parsed.name)
