"""Structure assertions: ``is-json`` and ``contains-json``.

``is-json``: the whole output is JSON; ``contains-json``: some JSON object or array appears in
it. Each is optionally validated against a JSON Schema compiled once at load time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..._json import TOO_DEEP_MESSAGE, JsonTooDeep
from .._base import BuildContext, Checker
from .._entries import typed_assertion
from .._jsonschema import compile_schema, first_error
from .._response import NOT_JSON, fenced_spans, iter_json_values
from .._result import AssertionResult, errored, failed, passed
from ._wrapper import TypedSpec

if TYPE_CHECKING:
    from .._context import CheckContext
    from .._fast import FastGen
    from .._response import Response


def _schema_validator(spec: TypedSpec, ctx: BuildContext) -> tuple[Any, bool]:
    """(validator or None, ok). No value, null or "" (the seed's default) means no schema."""
    schema = spec.value
    if schema is None or schema == "" or not spec.given("value"):
        return None, True
    if not isinstance(schema, dict | bool):
        ctx.at("value").problem(f"expected a JSON Schema object, got {schema!r}")
        return None, False
    validator = compile_schema(schema, ctx.at("value"))
    return validator, validator is not None


class IsJson(Checker):
    """The whole output parses as JSON (scalars count) and matches the schema, if any."""

    __slots__ = ("validator",)

    def __init__(self, validator: Any) -> None:
        self.key = "is-json"
        self.validator = validator

    def describe(self) -> str:
        return "output is JSON" + (" matching the schema" if self.validator else "")

    def emit(self, gen: FastGen) -> bool:
        value = gen.text("whole_json")
        gen.require(f"{value} is not _NOT_JSON")
        if self.validator is not None:
            gen.require(f"{gen.const(self.validator.is_valid)}({value})")
        return True

    def check(self, response: Response, ctx: CheckContext) -> AssertionResult:
        value = response.whole_json
        if value is NOT_JSON:
            if response.too_deep:
                return errored(self.key, TOO_DEEP_MESSAGE)
            return failed(self.key, "Output is not valid JSON", actual=response.text[:200] or None)
        if self.validator is None or self.validator.is_valid(value):
            return passed(self.key)
        return failed(
            self.key,
            f"Output JSON does not match the schema: {first_error(self.validator, value)}",
            actual=value,
        )


@typed_assertion("is-json")
def build_is_json(spec: TypedSpec, ctx: BuildContext) -> Checker | None:
    """The output is valid JSON, optionally matching a JSON Schema."""
    validator, ok = _schema_validator(spec, ctx)
    return IsJson(validator) if ok else None


class ContainsJson(Checker):
    """Some JSON object or array appears in the output (and matches the schema, if any)."""

    __slots__ = ("validator",)

    def __init__(self, validator: Any) -> None:
        self.key = "contains-json"
        self.validator = validator

    def describe(self) -> str:
        return "output contains JSON" + (" matching the schema" if self.validator else "")

    def check(self, response: Response, ctx: CheckContext) -> AssertionResult:
        validator = self.validator
        whole = response.whole_json
        if response.too_deep:
            return errored(self.key, TOO_DEEP_MESSAGE)
        # Output that is one JSON object or array is its own single outermost value.
        prose = type(whole) is not dict and type(whole) is not list
        values = iter_json_values(response.text) if prose else [(0, 0, whole)]
        found = 0
        first_rejected: Any = NOT_JSON
        try:
            for start, _end, value in values:
                if prose and _citation(value) and not _fenced(response.text, start):
                    continue  # "as shown in [1]" in prose is a reference, not JSON
                if validator is None or validator.is_valid(value):
                    return passed(self.key)
                found += 1
                if first_rejected is NOT_JSON:
                    first_rejected = value
        except JsonTooDeep:
            return errored(self.key, TOO_DEEP_MESSAGE)
        if not found:
            return failed(self.key, "Output contains no JSON object or array")
        noun = "value" if found == 1 else "values"
        return failed(
            self.key,
            f"Output contains {found} JSON {noun}, none matching the schema; first: "
            f"{first_error(validator, first_rejected)}",
            actual=first_rejected,
            details={"found": found},
        )


def _citation(value: Any) -> bool:
    """An array of only numbers, such as ``[1]`` or ``[2, 3]``: how prose cites sources."""
    return (
        type(value) is list
        and bool(value)
        and all((type(item) is int or type(item) is float) for item in value)
    )


def _fenced(text: str, position: int) -> bool:
    """Whether ``position`` lies in a fenced json (or unmarked) code block."""
    return any(start <= position < end for start, end in fenced_spans(text))


@typed_assertion("contains-json")
def build_contains_json(spec: TypedSpec, ctx: BuildContext) -> Checker | None:
    """A JSON object or array appears in the output, optionally matching a schema."""
    validator, ok = _schema_validator(spec, ctx)
    return ContainsJson(validator) if ok else None


__all__ = ["ContainsJson", "IsJson"]
