"""Assertions over every value a path reaches.

``all_match``, ``all_match_one_of``, ``all_match_pattern``, ``none_match_pattern``,
``sorted_desc``, ``sorted_asc`` and ``array_contains``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pydantic import JsonValue

from .._base import BuildContext, Checker
from .._entries import expect_assertion
from .._paths import DotPath, PathMiss
from .._regex import Pattern
from .._result import AssertionResult, failed, passed
from .._values import fmt, is_number, json_equal
from ._common import JsonChecker, Params, WildcardChecker, item_label, miss_result

if TYPE_CHECKING:
    from .._context import CheckContext
    from .._fast import FastGen, Loop


def _and_more(message: str, extra: int) -> str:
    return f"{message} (and {extra} more)" if extra else message


class PathValue(Params):
    """Parameters of ``all_match``."""

    path: str
    value: JsonValue


class AllMatch(WildcardChecker):
    """Every value equals ``value`` (or one of ``values``)."""

    __slots__ = ("_strings", "allowed")

    def __init__(self, key: str, path: DotPath, allowed: list[Any]) -> None:
        self.key = key
        self.path = path
        self.allowed = allowed
        self._strings = frozenset(allowed) if all(type(a) is str for a in allowed) else None

    def describe(self) -> str:
        if self.key == "all_match":
            return f"every {self.path.text} is {fmt(self.allowed[0])}"
        return f"every {self.path.text} is one of " + ", ".join(map(fmt, self.allowed))

    def emit_value(self, gen: FastGen, where: FastGen | Loop, var: str) -> bool:
        if self._strings is not None:
            where.require(f"type({var}) is str and {var} in {gen.const(self._strings)}")
        elif len(self.allowed) == 1:
            where.require(gen.equal_test(var, self.allowed[0]))
        else:
            allowed = gen.const(tuple(self.allowed))
            where.require(f"any(_json_equal({var}, a) for a in {allowed})")
        return True

    def check_values(
        self,
        path: DotPath,
        values: list[Any],
        indexes: Sequence[tuple[int, ...]],
        ctx: CheckContext,
    ) -> AssertionResult:
        allowed = self.allowed
        strings = self._strings
        if strings is not None:  # all allowed values are strings: a set lookup decides
            bad = [i for i, v in enumerate(values) if type(v) is not str or v not in strings]
        else:
            bad = [i for i, v in enumerate(values) if not any(json_equal(v, a) for a in allowed)]
        if not bad:
            return passed(self.key)
        first = bad[0]
        location = path.location(indexes[first])
        message = f"Found non-matching item: {fmt(values[first])} at {location}"
        if self.key != "all_match":
            message += " (allowed: " + ", ".join(map(fmt, allowed)) + ")"
        return failed(
            self.key,
            _and_more(message, len(bad) - 1),
            path=location,
            expected=allowed[0] if self.key == "all_match" else allowed,
            actual=values[first],
        )


def _path(ctx: BuildContext, text: str) -> DotPath | None:
    return ctx.at("path").dot_path(text)


@expect_assertion("all_match", params=PathValue)
def build_all_match(value: Any, ctx: BuildContext) -> Checker | None:
    """Every value at the path equals the value."""
    params = ctx.model(PathValue, value, '{path: "results[*].type", value: "note"}')
    path = params and _path(ctx, params.path)
    return AllMatch("all_match", path, [params.value]) if params and path else None


class PathValues(Params):
    """Parameters of ``all_match_one_of`` and ``array_contains``."""

    path: str
    values: list[JsonValue]


@expect_assertion("all_match_one_of", params=PathValues)
def build_all_match_one_of(value: Any, ctx: BuildContext) -> Checker | None:
    """Every value at the path is one of the allowed values."""
    params = ctx.model(PathValues, value, '{path: "results[*].type", values: ["note", "log"]}')
    if params is None:
        return None
    if not params.values:
        ctx.at("values").problem("expected at least one allowed value")
        return None
    path = _path(ctx, params.path)
    return AllMatch("all_match_one_of", path, list(params.values)) if path else None


class PathRegex(Params):
    """Parameters of ``all_match_pattern`` and ``none_match_pattern``."""

    path: str
    regex: str


class MatchPattern(WildcardChecker):
    """Every value matches (or, negated, none matches) a regex; non-strings fail."""

    __slots__ = ("excluded", "pattern")

    def __init__(self, key: str, path: DotPath, pattern: Pattern, excluded: bool) -> None:
        self.key = key
        self.path = path
        self.pattern = pattern
        self.excluded = excluded

    def describe(self) -> str:
        verb = "matches no" if self.excluded else "matches"
        return f"every {self.path.text} {verb} pattern {fmt(self.pattern.source)}"

    def emit_value(self, gen: FastGen, where: FastGen | Loop, var: str) -> bool:
        test = gen.match_test(self.pattern, var)
        where.require(f"type({var}) is str and {'not ' if self.excluded else ''}({test})")
        return True

    def check_values(
        self,
        path: DotPath,
        values: list[Any],
        indexes: Sequence[tuple[int, ...]],
        ctx: CheckContext,
    ) -> AssertionResult:
        search = self.pattern.search
        excluded = self.excluded
        for position, value in enumerate(values):
            if type(value) is not str:
                label, location = item_label(path, indexes[position])
                return failed(
                    self.key,
                    f"{label} {fmt(value)} at {location} is not a string "
                    f"(pattern {fmt(self.pattern.source)})",
                    path=path.location(indexes[position]),
                    expected=self.pattern.source,
                    actual=value,
                )
            if (search(value) is not None) is excluded:
                label, location = item_label(path, indexes[position])
                verb = "matches excluded pattern" if excluded else "doesn't match pattern"
                return failed(
                    self.key,
                    f"{label} {fmt(value)} at {location} {verb} {fmt(self.pattern.source)}",
                    path=path.location(indexes[position]),
                    expected=self.pattern.source,
                    actual=value,
                    details={"regex_engine": self.pattern.engine},
                )
        return passed(self.key)


def _build_pattern(key: str, value: Any, ctx: BuildContext, excluded: bool) -> Checker | None:
    params = ctx.model(PathRegex, value, '{path: "results[*].file", regex: "^journal/"}')
    if params is None:
        return None
    path = _path(ctx, params.path)
    pattern = ctx.at("regex").pattern(params.regex)
    if path is None or pattern is None:
        return None
    return MatchPattern(key, path, pattern, excluded)


@expect_assertion("all_match_pattern", params=PathRegex)
def build_all_match_pattern(value: Any, ctx: BuildContext) -> Checker | None:
    """Every value at the path is a string the regex finds a match in."""
    return _build_pattern("all_match_pattern", value, ctx, excluded=False)


@expect_assertion("none_match_pattern", params=PathRegex)
def build_none_match_pattern(value: Any, ctx: BuildContext) -> Checker | None:
    """No value at the path matches the regex (every value is a string)."""
    return _build_pattern("none_match_pattern", value, ctx, excluded=True)


class PathOnly(Params):
    """Parameters of ``sorted_desc`` and ``sorted_asc``."""

    path: str


def _comparable(values: list[Any]) -> bool:
    if all(is_number(value) for value in values):
        return True
    return all(type(value) is str for value in values)


class Sorted(WildcardChecker):
    """Values are non-increasing (``sorted_desc``) or non-decreasing (``sorted_asc``)."""

    __slots__ = ("descending",)
    scalar_allowed = False  # one value has no order: a path must reach an array

    def __init__(self, key: str, path: DotPath, descending: bool) -> None:
        self.key = key
        self.path = path
        self.descending = descending

    def describe(self) -> str:
        order = "descending" if self.descending else "ascending"
        return f"{self.path.text} sorted {order}"

    def emit(self, gen: FastGen) -> bool:
        # Numbers in order, over a wildcard walk (all strings, or a path reaching an array,
        # are left to the detailed path).
        if not self.path.has_wildcard or not self.path.fast_walk:
            return False
        loop, var = gen.wildcard(self.path, vacuous=True)  # type: ignore[misc]
        previous = gen.fresh("prev")
        loop.before.append(f"{previous} = None")
        loop.require(f"(type({var}) is int or type({var}) is float) and {var} == {var}")
        wrong = ">" if self.descending else "<"
        loop.require(f"{previous} is None or not ({var} {wrong} {previous})")
        loop.statement(f"{previous} = {var}")
        return True

    def check_values(
        self,
        path: DotPath,
        values: list[Any],
        indexes: Sequence[tuple[int, ...]],
        ctx: CheckContext,
    ) -> AssertionResult:
        order = "descending" if self.descending else "ascending"
        if not _comparable(values):
            return failed(
                self.key,
                f"Values at {path.text} cannot be ordered: they must be all numbers or all strings",
                path=path.text,
                actual=values,
            )
        descending = self.descending
        for index in range(1, len(values)):
            before, current = values[index - 1], values[index]
            if (current > before) if descending else (current < before):
                return failed(
                    self.key,
                    f"Values not sorted {order} at index {index}",
                    path=path.location(indexes[index]) if path.has_wildcard else None,
                    expected=f"{order} order",
                    actual=values,
                )
        return passed(self.key)


@expect_assertion("sorted_desc", params=PathOnly)
def build_sorted_desc(value: Any, ctx: BuildContext) -> Checker | None:
    """Values at the path are in non-increasing order (ties allowed)."""
    params = ctx.model(PathOnly, value, '{path: "results[*].relevance"}')
    path = params and _path(ctx, params.path)
    return Sorted("sorted_desc", path, descending=True) if params and path else None


@expect_assertion("sorted_asc", params=PathOnly)
def build_sorted_asc(value: Any, ctx: BuildContext) -> Checker | None:
    """Values at the path are in non-decreasing order (ties allowed)."""
    params = ctx.model(PathOnly, value, '{path: "results[*].created"}')
    path = params and _path(ctx, params.path)
    return Sorted("sorted_asc", path, descending=False) if params and path else None


class PathPattern(Params):
    """Parameters of ``array_contains`` with a pattern."""

    path: str
    pattern: str


class ArrayContains(JsonChecker):
    """The array at ``path`` holds all of ``values``, or an element matching ``pattern``."""

    __slots__ = ("path", "pattern", "values")

    def __init__(self, path: DotPath, values: list[Any] | None, pattern: Pattern | None) -> None:
        self.key = "array_contains"
        self.path = path
        self.values = values
        self.pattern = pattern

    def describe(self) -> str:
        if self.pattern is not None:
            return f"{self.path.text} has an element matching {fmt(self.pattern.source)}"
        return f"{self.path.text} contains " + ", ".join(map(fmt, self.values or []))

    def check_data(self, data: Any, ctx: CheckContext) -> AssertionResult:
        resolved = self.path.resolve(data)
        if type(resolved) is PathMiss:
            return miss_result(self.key, self.path, resolved)
        found, _ = resolved  # type: ignore[misc]
        if not self.path.has_wildcard:
            elements = found[0]
            if type(elements) is not list:
                return failed(
                    self.key,
                    f"{self.path.text}: expected an array, got {fmt(elements)}",
                    path=self.path.text,
                    actual=elements,
                )
        else:
            elements = found
        if self.pattern is not None:
            search = self.pattern.search
            if any(type(e) is str and search(e) is not None for e in elements):
                return passed(self.key)
            return failed(
                self.key,
                f"{self.path.text}: no element matches pattern {fmt(self.pattern.source)}",
                path=self.path.text,
                expected=self.pattern.source,
                actual=elements,
            )
        missing = [
            value for value in self.values or [] if not any(json_equal(e, value) for e in elements)
        ]
        if not missing:
            return passed(self.key)
        noun = "value" if len(missing) == 1 else "values"
        return failed(
            self.key,
            f"{self.path.text}: missing {noun} " + ", ".join(map(fmt, missing)),
            path=self.path.text,
            expected=self.values,
            actual=elements,
        )


@expect_assertion("array_contains", params=(PathValues, PathPattern))
def build_array_contains(value: Any, ctx: BuildContext) -> Checker | None:
    """The array at the path contains all ``values`` (or an element matching ``pattern``)."""
    if isinstance(value, dict) and "pattern" in value and "values" in value:
        ctx.problem("give either values (all present) or pattern (one element matches), not both")
        return None
    if isinstance(value, dict) and "pattern" in value:
        pattern_params = ctx.model(PathPattern, value, '{path: "tags", pattern: "^sec"}')
        if pattern_params is None:
            return None
        path = _path(ctx, pattern_params.path)
        pattern = ctx.at("pattern").pattern(pattern_params.pattern)
        return ArrayContains(path, None, pattern) if path and pattern else None
    params = ctx.model(PathValues, value, '{path: "dirs", values: ["people/"]}')
    if params is None:
        return None
    if not params.values:
        ctx.at("values").problem("expected at least one value")
        return None
    path = _path(ctx, params.path)
    return ArrayContains(path, list(params.values), None) if path else None
