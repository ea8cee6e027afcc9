"""Conditional assertions: ``one_of`` and the ``if_*`` family.

``one_of`` passes when any alternative passes. ``if_results``, ``if_has_history`` and
``if_sensitive_results`` hold nested assertions checked only when a condition holds; otherwise
the result is ``skipped``, which counts as passing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..._json import dumps
from .._base import BuildContext, Checker
from .._entries import expect_assertion
from .._paths import DotPath, PathMiss
from .._response import NOT_JSON
from .._result import (
    ERROR,
    FAILED,
    PASSED,
    AssertionResult,
    combine_outcome,
    failed,
    skipped,
)
from .._shape import Field
from .._values import fmt, json_equal
from ._common import not_json, results_field

if TYPE_CHECKING:
    from .._context import CheckContext
    from .._response import Response


def _group(name: str, results: list[AssertionResult]) -> AssertionResult:
    """A result standing for a group of nested results (all must pass)."""
    outcome = combine_outcome(results)
    message = "; ".join(r.message for r in results if not r.passed)
    score = 1.0 if outcome is PASSED else 0.0
    return AssertionResult(name, outcome, score, message, children=results)


class OneOf(Checker):
    """Passes when any alternative passes entirely."""

    __slots__ = ("alternatives",)

    def __init__(self, alternatives: list[list[Checker]]) -> None:
        self.key = "one_of"
        self.alternatives = alternatives

    @staticmethod
    def _describe(alternative: list[Checker]) -> str:
        if len(alternative) == 1:
            return alternative[0].describe()
        # Parenthesised so "Neither (a and b) nor c" cannot be misread.
        return "(" + " and ".join(checker.describe() for checker in alternative) + ")"

    def describe(self) -> str:
        return "one of: " + "; ".join(self._describe(a) for a in self.alternatives)

    def fast_pure(self) -> bool:
        return all(c.fast_pure() for alternative in self.alternatives for c in alternative)

    def check(self, response: Response, ctx: CheckContext) -> AssertionResult:
        groups: list[AssertionResult] = []
        for index, alternative in enumerate(self.alternatives):
            group = _group(f"one_of[{index}]", [c.check(response, ctx) for c in alternative])
            if group.outcome is PASSED:
                return AssertionResult(self.key, PASSED, 1.0, children=[*groups, group])
            groups.append(group)
        descriptions = [self._describe(a) for a in self.alternatives]
        if len(descriptions) == 2:
            message = f"Neither {descriptions[0]} nor {descriptions[1]}"
        else:
            message = "None of: " + "; ".join(descriptions)
        outcome = ERROR if all(group.outcome is ERROR for group in groups) else FAILED
        return AssertionResult(self.key, outcome, 0.0, message, children=groups)


@expect_assertion("one_of")
def build_one_of(value: Any, ctx: BuildContext) -> Checker | None:
    """At least one of these expect dicts passes entirely."""
    if not isinstance(value, list) or len(value) < 2:
        ctx.problem(f"expected a list of at least two expect dicts, got {dumps(value)}")
        return None
    alternatives = []
    before = len(ctx.problems)
    for index, alternative in enumerate(value):
        item_ctx = ctx.at(index)
        item_before = len(ctx.problems)
        checkers = item_ctx.compile_expect(alternative)
        if not checkers and len(ctx.problems) == item_before:
            item_ctx.problem("an alternative needs at least one assertion")
        alternatives.append(checkers)
    return OneOf(alternatives) if len(ctx.problems) == before else None


class Conditional(Checker):
    """Nested assertions, checked only when the condition holds."""

    __slots__ = ("body", "condition_text")

    def __init__(self, key: str, body: list[Checker], condition_text: str) -> None:
        self.key = key
        self.body = body
        self.condition_text = condition_text

    def describe(self) -> str:
        inner = " and ".join(checker.describe() for checker in self.body)
        return f"if {self.condition_text}: {inner}"

    def fast_pure(self) -> bool:
        return all(checker.fast_pure() for checker in self.body)

    def holds(self, data: Any, ctx: CheckContext) -> bool:
        """Whether the nested assertions apply to this response."""
        raise NotImplementedError

    def check(self, response: Response, ctx: CheckContext) -> AssertionResult:
        data = response.json
        if data is NOT_JSON:
            if response.too_deep:
                return not_json(self.key, response)  # an error: it may hold the condition
            return skipped(self.key, "skipped: the response is not JSON")
        if not self.holds(data, ctx):
            return skipped(self.key, f"skipped: the response has no {self.condition_text}")
        group = _group(self.key, [checker.check(response, ctx) for checker in self.body])
        return group


class IfResults(Conditional):
    """Applies when ``results`` is a non-empty array."""

    __slots__ = ("results",)

    def __init__(self, body: list[Checker], results: Field) -> None:
        super().__init__("if_results", body, results.text)
        self.results = results

    def holds(self, data: Any, ctx: CheckContext) -> bool:
        results = self.results.get(data)
        return type(results) is list and bool(results)


class IfHasHistory(Conditional):
    """Applies when ``history_results`` exists (even as null)."""

    __slots__ = ()

    def holds(self, data: Any, ctx: CheckContext) -> bool:
        return type(data) is dict and "history_results" in data


def _sensitive_indexes(results: Any, prefixes: tuple[str, ...]) -> list[int]:
    if type(results) is not list:
        return []
    found = []
    for index, result in enumerate(results):
        file = result.get("file") if type(result) is dict else None
        if type(file) is str and file.startswith(prefixes):
            found.append(index)
    return found


class IfSensitiveResults(Conditional):
    """Applies when some ``results[*].file`` starts with a sensitive prefix."""

    __slots__ = ("prefixes", "results")

    def __init__(self, body: list[Checker], prefixes: tuple[str, ...], results: Field) -> None:
        super().__init__("if_sensitive_results", body, "sensitive results")
        self.prefixes = prefixes
        self.results = results

    def holds(self, data: Any, ctx: CheckContext) -> bool:
        return bool(_sensitive_indexes(self.results.get(data), self.prefixes))


class SensitiveFieldEquals(Checker):
    """Every sensitive result has field F equal to V (``{has_field: F, value: V}``)."""

    __slots__ = ("field", "prefixes", "results", "value")

    def __init__(
        self, field: DotPath, value: Any, prefixes: tuple[str, ...], results: Field
    ) -> None:
        self.key = "has_field"
        self.field = field
        self.value = value
        self.prefixes = prefixes
        self.results = results

    def describe(self) -> str:
        return f"every sensitive result has {self.field.text} = {fmt(self.value)}"

    def check(self, response: Response, ctx: CheckContext) -> AssertionResult:
        data = response.json
        if data is NOT_JSON:
            return not_json(self.key, response)
        results = self.results.get(data)
        name = self.field.text
        for index in _sensitive_indexes(results, self.prefixes):
            result = results[index]
            where = f"{self.results.text}[{index}].{name}"
            actual = self.field.get(result)
            if type(actual) is PathMiss:
                return failed(
                    self.key,
                    f"Sensitive result {index} ({fmt(result['file'])}) has no field '{name}'",
                    path=where,
                    expected=self.value,
                )
            if not json_equal(actual, self.value):
                return failed(
                    self.key,
                    f"Sensitive result {index} ({fmt(result['file'])}): {name} expected "
                    f"{fmt(self.value)}, got {fmt(actual)}",
                    path=where,
                    expected=self.value,
                    actual=actual,
                )
        return AssertionResult(self.key, PASSED, 1.0)


def _body(value: Any, ctx: BuildContext) -> list[Checker] | None:
    before = len(ctx.problems)
    body = ctx.compile_expect(value)
    if len(ctx.problems) > before:
        return None
    if not body:
        ctx.problem("expected at least one nested assertion")
        return None
    return body


@expect_assertion("if_results")
def build_if_results(value: Any, ctx: BuildContext) -> Checker | None:
    """When ``results`` is a non-empty array, these nested assertions must pass."""
    body = _body(value, ctx)
    return IfResults(body, results_field(ctx)) if body else None


@expect_assertion("if_has_history")
def build_if_has_history(value: Any, ctx: BuildContext) -> Checker | None:
    """When ``history_results`` exists, these nested assertions must pass."""
    body = _body(value, ctx)
    return IfHasHistory("if_has_history", body, "history_results") if body else None


@expect_assertion("if_sensitive_results")
def build_if_sensitive_results(value: Any, ctx: BuildContext) -> Checker | None:
    """When a result's file starts with a sensitive prefix, these assertions must pass."""
    prefixes = ctx.options.sensitive_prefixes
    if not prefixes:
        # With no prefix no result is ever sensitive, and the assertion would pass unseen.
        ctx.problem(
            "no sensitive prefixes are set: give them with sensitive_prefixes in the config "
            "(assertly.yaml), such as [people/, documents/], or sensitive_prefixes= to "
            "assertly.compile"
        )
        return None
    if isinstance(value, dict) and set(value) == {"has_field", "value"}:
        field = ctx.at("has_field").dot_path(value["has_field"], relative=True)
        if field is None:
            return None
        if field.has_wildcard:
            ctx.at("has_field").problem("expected a field of each result, without [*]")
            return None
        results = results_field(ctx)
        checks: list[Checker] = [SensitiveFieldEquals(field, value["value"], prefixes, results)]
        return IfSensitiveResults(checks, prefixes, results)
    body = _body(value, ctx)
    return IfSensitiveResults(body, prefixes, results_field(ctx)) if body else None
