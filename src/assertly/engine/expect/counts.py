"""Count assertions on the ``results`` array.

``results_min``, ``results_max`` and ``results_count``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .._base import BuildContext, Checker
from .._registry import expect_assertion
from .._result import AssertionResult, failed, passed
from ._common import JsonChecker, results_of

if TYPE_CHECKING:
    from .._context import CheckContext


def _results(n: int) -> str:
    return "result" if n == 1 else "results"


class ResultsCount(JsonChecker):
    """The length of ``results`` against a bound."""

    __slots__ = ("bound", "phrase", "test")

    def __init__(self, key: str, bound: int, phrase: str, test: Callable[[int, int], bool]) -> None:
        self.key = key
        self.bound = bound
        self.phrase = phrase
        self.test = test

    def describe(self) -> str:
        return f"the response has {self.phrase} {self.bound} {_results(self.bound)}"

    def judge(self, data: Any, ctx: CheckContext) -> AssertionResult:
        results = results_of(data)
        expected = f"Expected {self.phrase} {self.bound} {_results(self.bound)}"
        if type(results) is str:
            return failed(
                self.key,
                f"{expected}, but {results}",
                path="results",
                expected=self.bound,
                actual=data.get("results") if type(data) is dict else None,
            )
        count = len(results)
        if self.test(count, self.bound):
            return passed(self.key)
        return failed(
            self.key,
            f"{expected}, got {count}",
            path="results",
            expected=self.bound,
            actual=count,
        )


@expect_assertion("results_min")
def build_results_min(value: Any, ctx: BuildContext) -> Checker | None:
    """``results`` has at least N items."""
    bound = ctx.whole_number(value)
    return None if bound is None else ResultsCount("results_min", bound, "at least", int.__ge__)


@expect_assertion("results_max")
def build_results_max(value: Any, ctx: BuildContext) -> Checker | None:
    """``results`` has at most N items."""
    bound = ctx.whole_number(value)
    return None if bound is None else ResultsCount("results_max", bound, "at most", int.__le__)


@expect_assertion("results_count")
def build_results_count(value: Any, ctx: BuildContext) -> Checker | None:
    """``results`` has exactly N items."""
    bound = ctx.whole_number(value)
    return None if bound is None else ResultsCount("results_count", bound, "exactly", int.__eq__)
