"""Status, content and field assertions.

``status``, ``error_code``, ``contains``, ``message_contains``, ``summary_contains``,
``has_fields``, ``has_field``, ``field_equals`` and ``field_contains``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..._json import dumps
from .._base import BuildContext, Checker
from .._entries import expect_assertion
from .._paths import DotPath, PathMiss
from .._response import NOT_JSON
from .._result import AssertionResult, failed, passed
from .._shape import Field
from .._text import fold, nfc
from .._values import fmt, json_equal
from ._common import JsonChecker, Params, miss_result, walkable

if TYPE_CHECKING:
    from .._context import CheckContext
    from .._fast import FastGen
    from .._response import Response


class TopLevelEquals(JsonChecker):
    """``status`` / ``error_code``: the top-level field equals the value."""

    __slots__ = ("field", "value", "where")

    def __init__(self, field: str, value: Any, where: Field | None = None) -> None:
        self.key = field
        self.field = field
        self.value = value
        # Where the shape puts the field; None: the seed's top level (the fast dict lookup).
        self.where = where if where is not None and where.path is not None else None

    def describe(self) -> str:
        return f"{self.field} is {fmt(self.value)}"

    def emit(self, gen: FastGen) -> bool:
        keys = (self.field,) if self.where is None else self.where.path.keys  # type: ignore[union-attr]
        if keys is None:
            return False
        gen.require(gen.equal_test(gen.field(keys), self.value))
        return True

    def check_data(self, data: Any, ctx: CheckContext) -> AssertionResult:
        if self.where is not None:
            actual = self.where.get(data)
            if type(actual) is PathMiss:
                actual = NOT_JSON
            path = self.where.text
        else:
            actual = data.get(self.field, NOT_JSON) if type(data) is dict else NOT_JSON
            path = self.field
        if actual is not NOT_JSON and json_equal(actual, self.value):
            return passed(self.key)
        if actual is NOT_JSON:
            got = f"no '{path}' field"
            actual = None
        else:
            got = fmt(actual)
        return failed(
            self.key,
            f"Expected {self.field} {fmt(self.value)}, got {got}",
            path=path,
            expected=self.value,
            actual=actual,
        )


def _scalar(value: Any, ctx: BuildContext) -> bool:
    if isinstance(value, dict | list):
        ctx.problem(f"expected a single value such as 'success', got {dumps(value)}")
        return False
    return True


@expect_assertion("status")
def build_status(value: Any, ctx: BuildContext) -> Checker | None:
    """The response's top-level ``status`` equals the value."""
    where = Field("status", ctx.options.shape)
    return TopLevelEquals("status", value, where) if _scalar(value, ctx) else None


@expect_assertion("error_code")
def build_error_code(value: Any, ctx: BuildContext) -> Checker | None:
    """The response's top-level ``error_code`` equals the value."""
    return TopLevelEquals("error_code", value) if _scalar(value, ctx) else None


def _walk_strings(value: Any, needle: str) -> bool:
    """True when ``needle`` occurs in any string value or key of a JSON value."""
    stack = [value]
    while stack:
        item = stack.pop()
        if type(item) is str:
            if needle in nfc(item):
                return True
        elif isinstance(item, dict):
            for key, child in item.items():
                if isinstance(key, str) and needle in nfc(key):
                    return True
                stack.append(child)
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return False


class ResponseContains(Checker):
    """``contains``: the text occurs anywhere in the response (compared in NFC)."""

    __slots__ = ("needle", "text")

    def __init__(self, text: str) -> None:
        self.key = "contains"
        self.text = text  # as written, for messages
        self.needle = nfc(text)

    def describe(self) -> str:
        return f"response contains {fmt(self.text)}"

    def emit(self, gen: FastGen) -> bool:
        # Only the raw-text match: the detailed path reads the JSON when that fails.
        gen.require(f"{gen.const(self.needle)} in {gen.text('nfc_text')}")
        return True

    def check(self, response: Response, ctx: CheckContext) -> AssertionResult:
        needle = self.needle
        if needle in response.nfc_text:
            return passed(self.key)
        # Pretty-printed or escaped JSON text can hide a match that the values contain.
        data = response.json
        if data is not NOT_JSON and (needle in nfc(dumps(data)) or _walk_strings(data, needle)):
            return passed(self.key)
        return failed(self.key, f"Response does not contain {fmt(self.text)}", expected=self.text)


@expect_assertion("contains")
def build_contains(value: Any, ctx: BuildContext) -> Checker | None:
    """The text occurs anywhere in the response (raw text, any string value or key)."""
    if not isinstance(value, str) or not value:
        ctx.problem(f"expected a non-empty string to look for, got {value!r}")
        return None
    return ResponseContains(value)


class FieldContainsText(JsonChecker):
    """``message_contains`` / ``summary_contains`` / ``field_contains``."""

    __slots__ = ("needle", "path", "text")

    def __init__(self, key: str, path: DotPath, text: str) -> None:
        self.key = key
        self.path = path
        self.text = text  # as written, for messages
        self.needle = nfc(text)

    def describe(self) -> str:
        return f"{self.path.text} contains {fmt(self.text)}"

    def emit(self, gen: FastGen) -> bool:
        keys = self.path.keys
        if keys is None:
            return False
        var = gen.field(keys)
        needle, normal = gen.const(self.needle), gen.const(nfc)
        gen.require(f"type({var}) is str and {needle} in {normal}({var})")
        return True

    def check_data(self, data: Any, ctx: CheckContext) -> AssertionResult:
        value = self.path.get(data)
        if type(value) is str and self.needle in nfc(value):
            return passed(self.key)
        name = self.path.text
        if type(value) is PathMiss:
            return miss_result(self.key, self.path, value, expected=self.text)
        if type(value) is not str:
            return failed(
                self.key,
                f"{name}: expected a string containing {fmt(self.text)}, got {fmt(value)}",
                path=name,
                expected=self.text,
                actual=value,
            )
        message = f"{name}: expected to contain {fmt(self.text)}, got {fmt(_clip(value))}"
        if fold(self.text) in fold(value):
            message += " (a case-insensitive match exists; this check is case-sensitive)"
        return failed(self.key, message, path=name, expected=self.text, actual=value)


def _clip(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _text_param(value: Any, ctx: BuildContext) -> str | None:
    if not isinstance(value, str) or not value:
        ctx.problem(f"expected a non-empty string, got {value!r}")
        return None
    return value


@expect_assertion("message_contains")
def build_message_contains(value: Any, ctx: BuildContext) -> Checker | None:
    """The string field ``message`` contains the text (case-sensitive)."""
    text = _text_param(value, ctx)
    path = DotPath(ctx.options.shape.text("message"))
    return FieldContainsText("message_contains", path, text) if text else None


@expect_assertion("summary_contains")
def build_summary_contains(value: Any, ctx: BuildContext) -> Checker | None:
    """The string field ``summary`` contains the text (case-sensitive)."""
    text = _text_param(value, ctx)
    path = DotPath(ctx.options.shape.text("summary"))
    return FieldContainsText("summary_contains", path, text) if text else None


class FieldContainsParams(Params):
    """Parameters of ``field_contains``."""

    path: str
    text: str


@expect_assertion("field_contains", params=FieldContainsParams)
def build_field_contains(value: Any, ctx: BuildContext) -> Checker | None:
    """The string at ``path`` contains ``text``."""
    params = ctx.model(FieldContainsParams, value, '{path: "summary", text: "security"}')
    if params is None:
        return None
    path = ctx.at("path").dot_path(params.path)
    if path is None:
        return None
    if path.has_wildcard:
        ctx.at("path").problem("field_contains takes one field; use all_match_pattern for [*]")
        return None
    return FieldContainsText("field_contains", path, params.text)


class FieldsExist(JsonChecker):
    """``has_fields`` / ``has_field``: every path exists (a null value exists)."""

    __slots__ = ("paths",)

    def __init__(self, key: str, paths: list[DotPath]) -> None:
        self.key = key
        self.paths = paths

    def emit(self, gen: FastGen) -> bool:
        if not all(walkable(path) for path in self.paths):
            return False
        for path in self.paths:
            if path.keys is not None:
                gen.require(f"{gen.field(path.keys)} is not _MISSING")
            else:
                loop, var = gen.wildcard(path, vacuous=False)  # type: ignore[misc]
                loop.require(f"{var} is not _MISSING")
        return True

    def describe(self) -> str:
        if len(self.paths) == 1:
            return f"field {self.paths[0].text} exists"
        return "fields " + ", ".join(path.text for path in self.paths) + " exist"

    def check_data(self, data: Any, ctx: CheckContext) -> AssertionResult:
        misses = []
        for path in self.paths:
            resolved = path.resolve(data)
            if type(resolved) is PathMiss:
                misses.append(miss_result(self.key, path, resolved))
        if not misses:
            return passed(self.key)
        if len(misses) == 1:
            return misses[0]
        return failed(
            self.key,
            "; ".join(miss.message for miss in misses),
            path=misses[0].path,
            expected=[path.text for path in self.paths],
            actual=[miss.path for miss in misses],
        )


@expect_assertion("has_fields")
def build_has_fields(value: Any, ctx: BuildContext) -> Checker | None:
    """Every listed path exists (dot notation, ``[N]`` and ``[*]``)."""
    if not isinstance(value, list) or not value:
        ctx.problem(f"expected a non-empty list of paths such as ['results'], got {value!r}")
        return None
    paths = [ctx.at(i).dot_path(item) for i, item in enumerate(value)]
    if any(path is None for path in paths):
        return None
    return FieldsExist("has_fields", [path for path in paths if path is not None])


@expect_assertion("has_field")
def build_has_field(value: Any, ctx: BuildContext) -> Checker | None:
    """The path exists."""
    path = ctx.dot_path(value)
    return FieldsExist("has_field", [path]) if path else None


class FieldEquals(JsonChecker):
    """``field_equals``: each path holds the expected value."""

    __slots__ = ("pairs",)

    def __init__(self, pairs: list[tuple[DotPath, Any]]) -> None:
        self.key = "field_equals"
        self.pairs = pairs

    def describe(self) -> str:
        return ", ".join(f"{path.text} is {fmt(value)}" for path, value in self.pairs)

    def emit(self, gen: FastGen) -> bool:
        if not all(walkable(path) for path, _ in self.pairs):
            return False
        for path, expected in self.pairs:
            if path.keys is not None:
                gen.require(gen.equal_test(gen.field(path.keys), expected))
            else:
                loop, var = gen.wildcard(path, vacuous=False)  # type: ignore[misc]
                loop.require(gen.equal_test(var, expected))
        return True

    def check_data(self, data: Any, ctx: CheckContext) -> AssertionResult:
        problems: list[tuple[str, str, Any, Any]] = []
        for path, expected in self.pairs:
            resolved = path.resolve(data)
            if type(resolved) is PathMiss:
                problems.append(
                    (
                        resolved.at,
                        f"{path.text}: expected {fmt(expected)}, but {resolved.describe()}",
                        expected,
                        None,
                    )
                )
                continue
            values, indexes = resolved  # type: ignore[misc]
            for value, where in zip(values, indexes, strict=True):
                if not json_equal(value, expected):
                    location = path.location(where)
                    problems.append(
                        (
                            location,
                            f"{location}: expected {fmt(expected)}, got {fmt(value)}",
                            expected,
                            value,
                        )
                    )
                    break
        if not problems:
            return passed(self.key)
        location, message, expected, actual = problems[0]
        if len(problems) > 1:
            message = "; ".join(problem[1] for problem in problems)
        return failed(self.key, message, path=location, expected=expected, actual=actual)


@expect_assertion("field_equals")
def build_field_equals(value: Any, ctx: BuildContext) -> Checker | None:
    """Each path equals its value: ``{path: value, ...}`` or ``{path: P, value: V}``."""
    if not isinstance(value, dict) or not value:
        ctx.problem(f"expected a mapping such as {{'pagination.offset': 0}}, got {value!r}")
        return None
    if set(value) == {"path", "value"}:
        path = ctx.at("path").dot_path(value["path"])
        return FieldEquals([(path, value["value"])]) if path else None
    pairs = []
    for text, expected in value.items():
        path = ctx.at(str(text)).dot_path(text)
        if path is not None:
            pairs.append((path, expected))
    return FieldEquals(pairs) if len(pairs) == len(value) else None
