"""Count assertions on the ``results`` array.

``results_min``, ``results_max`` and ``results_count``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .._base import BuildContext, Checker
from .._entries import expect_assertion
from .._paths import PathMiss
from .._result import AssertionResult, failed, passed
from .._shape import Field
from ._common import JsonChecker, results_field, results_keys, results_of

if TYPE_CHECKING:
    from .._context import CheckContext
    from .._fast import FastGen


_OPERATORS: dict[Callable[[int, int], bool], str] = {
    int.__ge__: ">=",
    int.__le__: "<=",
    int.__eq__: "==",
}


def _results(n: int) -> str:
    return "result" if n == 1 else "results"


class ResultsCount(JsonChecker):
    """The length of ``results`` against a bound."""

    __slots__ = ("bound", "phrase", "results", "test")

    def __init__(
        self,
        key: str,
        bound: int,
        phrase: str,
        test: Callable[[int, int], bool],
        results: Field,
    ) -> None:
        self.key = key
        self.bound = bound
        self.phrase = phrase
        self.test = test
        self.results = results

    def describe(self) -> str:
        return f"the response has {self.phrase} {self.bound} {_results(self.bound)}"

    def emit(self, gen: FastGen) -> bool:
        keys = results_keys(self.results)
        operator = _OPERATORS.get(self.test)
        if keys is None or operator is None:
            return False
        results = gen.field(keys)
        gen.require(f"type({results}) is list and len({results}) {operator} {self.bound:d}")
        return True

    def check_data(self, data: Any, ctx: CheckContext) -> AssertionResult:
        where = self.results
        results = results_of(data, where)
        expected = f"Expected {self.phrase} {self.bound} {_results(self.bound)}"
        if type(results) is str:
            actual = where.get(data)
            return failed(
                self.key,
                f"{expected}, but {results}",
                path=where.text,
                expected=self.bound,
                actual=None if type(actual) is PathMiss else actual,
            )
        count = len(results)
        if self.test(count, self.bound):
            return passed(self.key)
        return failed(
            self.key,
            f"{expected}, got {count}",
            path=where.text,
            expected=self.bound,
            actual=count,
        )


@expect_assertion("results_min")
def build_results_min(value: Any, ctx: BuildContext) -> Checker | None:
    """``results`` has at least N items."""
    bound = ctx.whole_number(value)
    if bound is None:
        return None
    return ResultsCount("results_min", bound, "at least", int.__ge__, results_field(ctx))


@expect_assertion("results_max")
def build_results_max(value: Any, ctx: BuildContext) -> Checker | None:
    """``results`` has at most N items."""
    bound = ctx.whole_number(value)
    if bound is None:
        return None
    return ResultsCount("results_max", bound, "at most", int.__le__, results_field(ctx))


@expect_assertion("results_count")
def build_results_count(value: Any, ctx: BuildContext) -> Checker | None:
    """``results`` has exactly N items."""
    bound = ctx.whole_number(value)
    if bound is None:
        return None
    return ResultsCount("results_count", bound, "exactly", int.__eq__, results_field(ctx))
