"""Pieces shared by the expect-dict families: JSON access, wildcard walks, parameter models."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Any, ClassVar

from pydantic import BaseModel, ConfigDict, PlainValidator, WithJsonSchema
from pydantic_core import PydanticCustomError

from ..._json import TOO_DEEP_MESSAGE
from .._base import BuildContext, Checker
from .._paths import DotPath, PathMiss, _Identity
from .._response import NOT_JSON
from .._result import AssertionResult, errored, failed, passed
from .._shape import Field
from .._values import fmt, json_type

if TYPE_CHECKING:
    from .._context import CheckContext
    from .._fast import FastGen, Loop
    from .._response import Response

__all__ = [
    "VACUOUS",
    "JsonChecker",
    "Number",
    "Params",
    "WildcardChecker",
    "item_label",
    "miss_result",
    "not_json",
    "results_field",
    "results_of",
]

# Shared, read-only: marks a wildcard assertion that passed because the array was empty.
VACUOUS: dict[str, Any] = {"vacuous": True}


class Params(BaseModel):
    """Base of the parameter models: strict, unknown keys rejected."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


def _number(value: Any) -> Any:
    if (type(value) is int or type(value) is float) and value == value:  # noqa: PLR0124
        return value
    raise PydanticCustomError("number_type", "input should be a number")


Number = Annotated[int | float, PlainValidator(_number), WithJsonSchema({"type": "number"})]
"""A JSON number parameter kept as written (``0`` stays int, ``0.0`` float); not a bool or NaN.

One error per bad value (a plain ``int | float`` union reports one per member).
"""


def _article(value: Any) -> str:
    name = json_type(value)
    return f"an {name}" if name[0] in "aeiou" else f"a {name}"


def results_field(ctx: BuildContext) -> Field:
    """Where ``results`` lives, by the shape the expectation is compiled with."""
    return Field("results", ctx.options.shape)


def results_keys(field: Field) -> tuple[str, ...] | None:
    """The keys leading to ``results`` (for the fast path), or None when not keys only."""
    return ("results",) if field.path is None else field.path.keys


def walkable(path: DotPath) -> bool:
    """Whether the fast path can walk ``path``: keys only, or keys around one ``[*]``."""
    return path.keys is not None or path.fast_walk


def results_of(data: Any, field: Field | None = None) -> list[Any] | str:
    """The response's ``results`` array, or a clause saying why there is none.

    The clause reads after "but": ``the response has no 'results' field``,
    ``'results' is an object, not an array``, ``the response is an array, not an object``.
    With a shape that moves ``results`` (``field``), the clause names the shape's path:
    ``data.hits is missing``.
    """
    if field is not None and field.path is not None:
        value = field.path.get(data)
        if type(value) is PathMiss:
            return value.describe()
        if type(value) is not list:
            return f"'{field.text}' is {_article(value)}, not an array"
        return value
    if type(data) is not dict:
        return f"the response is {_article(data)}, not an object"
    if "results" not in data:
        return "the response has no 'results' field"
    results = data["results"]
    if type(results) is not list:
        return f"'results' is {_article(results)}, not an array"
    return results


# `miss_result`'s default: the field's path is what was expected (it should exist).
PATH_EXPECTED: Any = object()


def not_json(name: str, response: Response) -> AssertionResult:
    """The failure of a field assertion on a response with no JSON in it.

    JSON nested deeper than the engine judges is not "not JSON": that is an error.
    """
    if response.too_deep:
        return errored(name, TOO_DEEP_MESSAGE)
    # The spec's words, with the start of what came instead as the actual value, so the
    # console and reports show it.
    text = response.text
    start = text if len(text) <= 120 else text[:119] + "…"
    return failed(name, "response is not JSON", actual=start)


def miss_result(
    name: str, path: DotPath, miss: PathMiss, expected: Any = PATH_EXPECTED
) -> AssertionResult:
    """A failure naming the first segment of ``path`` that could not be followed.

    ``expected`` is what the assertion looked for at ``path`` (the text a ``message_contains``
    seeks); by default the path itself, for assertions about the field's existence.
    """
    reason, extra = miss.reason, ""
    if reason.startswith("missing (") and reason.endswith(")"):
        # An index past the end: "missing (the array has 2 items)".
        reason, extra = "missing", reason[len("missing (") : -1]
    if reason == "missing" and miss.at == path.text:
        message = f"Missing field: {path.text}" + (f" ({extra})" if extra else "")
    else:
        detail = f"{miss.at or 'the response'} is {reason}" + (f", {extra}" if extra else "")
        message = f"Missing field: {path.text} ({detail})"
    if expected is PATH_EXPECTED:
        expected = path.text
    return failed(name, message, path=miss.at, expected=expected)


def item_label(path: DotPath, indexes: tuple[int, ...]) -> tuple[str, str]:
    """How a wildcard item reads in a message: ``("File", "results[2]")``.

    The last key names the thing (capitalised); the location is the item that holds it.
    """
    key = path.last_key
    if key is None or not path.has_wildcard:
        return "Value", path.location(indexes)
    return key[:1].upper() + key[1:], path.location(indexes, upto=len(path.segments) - 1)


class JsonChecker(Checker):
    """A checker that needs the response's JSON; a response without JSON fails."""

    __slots__ = ()

    def check(self, response: Response, ctx: CheckContext) -> AssertionResult:
        data = response.json
        if data is NOT_JSON:
            return not_json(self.key, response)
        return self.check_data(data, ctx)

    def check_data(self, data: Any, ctx: CheckContext) -> AssertionResult:
        """Judge the response's JSON."""
        raise NotImplementedError


class WildcardChecker(JsonChecker):
    """A checker over every value a (usually wildcard) path reaches.

    A missing or non-array array fails; an empty array passes vacuously (marked ``vacuous``);
    an element lacking the rest of the path fails, naming it.
    """

    __slots__ = ("_elements", "path")

    path: DotPath
    # A path without [*] that reaches an array judges its elements (``scores`` means
    # ``scores[*]``); reaching a single value judges that value, unless the assertion is only
    # meaningful over an array (order).
    scalar_allowed: ClassVar[bool] = True

    def check_data(self, data: Any, ctx: CheckContext) -> AssertionResult:
        path = self.path
        resolved = path.resolve(data)
        if type(resolved) is PathMiss:
            return miss_result(self.key, path, resolved)
        values, indexes = resolved  # type: ignore[misc]
        if not path.has_wildcard:
            single = values[0]
            if type(single) is list:
                path = self._element_path()
                values, indexes = single, _Identity(len(single))
            elif not self.scalar_allowed:
                return failed(
                    self.key,
                    f"{path.text}: expected an array, got {_article(single)} {fmt(single)}",
                    path=path.text,
                    actual=single,
                )
        if not values and path.has_wildcard:
            return AssertionResult(self.key, passed(self.key).outcome, 1.0, details=VACUOUS)
        return self.check_values(path, values, indexes, ctx)

    def emit(self, gen: FastGen) -> bool:
        """Write the pass test of every value reached (see `emit_value`) into ``gen``.

        A wildcard walk joins the loop over its array (shared with the other checkers); a
        path without one reads one value, which must not be an array (an array's elements
        are judged one by one, which the detailed path does).
        """
        if not walkable(self.path) or type(self).emit_value is WildcardChecker.emit_value:
            return False
        if self.path.has_wildcard:
            loop, var = gen.wildcard(self.path, vacuous=True)  # type: ignore[misc]
            return self.emit_value(gen, loop, var)
        var = gen.field(self.path.keys or ())
        gen.require(f"type({var}) is not list")
        return self.emit_value(gen, gen, var)

    def emit_value(self, gen: FastGen, where: FastGen | Loop, var: str) -> bool:
        """Require (``where.require``) that the value in ``var`` passes; False: cannot."""
        return False

    def _element_path(self) -> DotPath:
        try:
            return self._elements
        except AttributeError:
            self._elements: DotPath = DotPath(f"{self.path.text}[*]")
            return self._elements

    def check_values(
        self,
        path: DotPath,
        values: list[Any],
        indexes: Sequence[tuple[int, ...]],
        ctx: CheckContext,
    ) -> AssertionResult:
        """Judge the values reached (at least one)."""
        raise NotImplementedError
