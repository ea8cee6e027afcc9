"""``results_schema``: a type (and optional bounds) for fields required in every result.

``{field: "type"}`` or ``{field: {"type": T, "min": a, "max": b, "format": F}}`` with JSON type
names (``string``, ``number``, ``integer``, ``boolean``, ``object``, ``array``, ``null``).
``min`` and ``max`` bound numbers, and the length of strings and arrays; ``format`` is a JSON
Schema format a string must have (``date-time``, ``email``, ``uuid`` …). Fields may be dot
paths.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .._base import BuildContext, Checker
from .._entries import expect_assertion
from .._jsonschema import FORMATS, format_validator
from .._paths import DotPath, PathMiss
from .._result import AssertionResult, failed, passed
from .._shape import Field
from .._values import fmt, json_type
from ._common import VACUOUS, JsonChecker, results_field, results_of

if TYPE_CHECKING:
    from .._context import CheckContext

_TYPES: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: type(v) is str,
    "number": lambda v: type(v) is int or type(v) is float,
    "integer": lambda v: type(v) is int or (type(v) is float and v.is_integer()),
    "boolean": lambda v: type(v) is bool,
    "object": lambda v: type(v) is dict,
    "array": lambda v: type(v) is list,
    "null": lambda v: v is None,
}


_BOUNDED = frozenset({"number", "integer", "string", "array"})


def _article(value: Any) -> str:
    name = json_type(value)
    return f"an {name}" if name[0] in "aeiou" else f"a {name}"


class FieldRule:
    """One field's type, bounds and format."""

    __slots__ = ("format_name", "format_validator", "high", "is_type", "low", "path", "type_name")

    def __init__(
        self,
        path: DotPath,
        type_name: str,
        low: float | None,
        high: float | None,
        format_name: str | None = None,
    ):
        self.path = path
        self.type_name = type_name
        self.is_type = _TYPES[type_name]
        self.low = low
        self.high = high
        self.format_name = format_name
        self.format_validator = format_validator(format_name) if format_name else None

    def problem(self, value: Any) -> str | None:
        if not self.is_type(value):
            got = "null" if value is None else f"{json_type(value)} {fmt(value)}"
            return f"expected {self.type_name}, got {got}"
        if self.format_validator is not None and not self.format_validator.is_valid(value):
            return f'{fmt(value)} is not a "{self.format_name}"'
        if self.low is None and self.high is None:
            return None
        measure = len(value) if type(value) in (str, list) else value
        what = "length " if type(value) in (str, list) else ""
        if self.low is not None and measure < self.low:
            return f"{what}{fmt(measure)} is below min {self.low:g}"
        if self.high is not None and measure > self.high:
            return f"{what}{fmt(measure)} is above max {self.high:g}"
        return None


class ResultsSchema(JsonChecker):
    """Every result has every field, of the right type and within bounds."""

    __slots__ = ("results", "rules")

    def __init__(self, rules: list[FieldRule], results: Field) -> None:
        self.key = "results_schema"
        self.rules = rules
        self.results = results  # where the shape puts `results`

    def describe(self) -> str:
        fields = ", ".join(f"{rule.path.text}: {rule.type_name}" for rule in self.rules)
        return f"every result has {fields}"

    def check_data(self, data: Any, ctx: CheckContext) -> AssertionResult:
        name = self.results.text
        results = results_of(data, self.results)
        if type(results) is str:
            return failed(self.key, f"Expected a '{name}' array, but {results}", path=name)
        if not results:
            return AssertionResult(self.key, passed(self.key).outcome, 1.0, details=VACUOUS)
        for index, result in enumerate(results):
            if type(result) is not dict:
                return failed(
                    self.key,
                    f"Result {index} is {_article(result)} ({fmt(result)}), not an object",
                    path=f"{name}[{index}]",
                    actual=result,
                )
            for rule in self.rules:
                value = rule.path.get(result)
                where = f"{name}[{index}].{rule.path.text}"
                if type(value) is PathMiss:
                    return failed(
                        self.key,
                        f"Result {index}: missing field '{rule.path.text}'",
                        path=where,
                        expected=rule.type_name,
                    )
                problem = rule.problem(value)
                if problem is not None:
                    return failed(
                        self.key,
                        f"Result {index}: field '{rule.path.text}' {problem}",
                        path=where,
                        expected=rule.type_name,
                        actual=value,
                    )
        return passed(self.key)


def _bound(spec: dict[str, Any], name: str, ctx: BuildContext) -> float | None:
    value = spec.get(name)
    if value is None:
        return None
    if type(value) not in (int, float) or math.isnan(value):
        ctx.at(name).problem(f"expected a number, got {value!r}")
        return None
    return float(value)


def _format_problem(name: Any, type_name: str) -> str:
    if type_name != "string":
        return f"format applies to strings, not {type_name}"
    close = difflib.get_close_matches(str(name), FORMATS, n=1, cutoff=0.6)
    hint = f" (did you mean '{close[0]}'?)" if close else ""
    return f"unknown format {name!r}{hint}; checked formats: {', '.join(FORMATS)}"


@expect_assertion("results_schema")
def build_results_schema(value: Any, ctx: BuildContext) -> Checker | None:
    """Every result has these fields with these JSON types (and optional min/max)."""
    if not isinstance(value, dict) or not value:
        ctx.problem(f"expected a mapping such as {{score: number}}, got {value!r}")
        return None
    rules: list[FieldRule] = []
    before = len(ctx.problems)
    for field, spec in value.items():
        field_ctx = ctx.at(str(field))
        path = field_ctx.dot_path(field, relative=True)
        rule_spec = {"type": spec} if isinstance(spec, str) else spec
        if not isinstance(rule_spec, dict):
            field_ctx.problem(f"expected a type name or {{type, min, max}}, got {spec!r}")
            continue
        unknown = set(rule_spec) - {"type", "min", "max", "format"}
        if unknown:
            field_ctx.problem(f"unknown keys {sorted(unknown)} (allowed: type, min, max, format)")
        type_name = rule_spec.get("type")
        if type_name not in _TYPES:
            field_ctx.at("type").problem(
                f"unknown type {type_name!r} (expected one of: {', '.join(_TYPES)})"
            )
            continue
        low, high = _bound(rule_spec, "min", field_ctx), _bound(rule_spec, "max", field_ctx)
        if (low is not None or high is not None) and type_name not in _BOUNDED:
            field_ctx.problem(
                f"min/max apply to number, integer, string (length) and array (length), "
                f"not {type_name}"
            )
            continue
        if low is not None and high is not None and low > high:
            field_ctx.problem(f"min {low:g} is greater than max {high:g}")
        format_name = rule_spec.get("format")
        if format_name is not None and (type_name != "string" or format_name not in FORMATS):
            field_ctx.at("format").problem(_format_problem(format_name, type_name))
            continue
        if path is not None:
            rules.append(FieldRule(path, type_name, low, high, format_name))
    if len(ctx.problems) > before:
        return None
    return ResultsSchema(rules, results_field(ctx))
