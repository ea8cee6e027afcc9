"""Numeric range assertions: ``all_in_range`` (every value) and ``range_check`` (one value).

Bounds are inclusive; booleans and strings are not numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .._base import BuildContext, Checker
from .._entries import expect_assertion
from .._paths import DotPath
from .._result import AssertionResult, failed, passed
from .._values import fmt, fmt_number, is_number
from ._common import Number, Params, WildcardChecker

if TYPE_CHECKING:
    from .._context import CheckContext
    from .._fast import FastGen, Loop


class RangeParams(Params):
    """Parameters of the range assertions; at least one bound is required."""

    path: str
    min: Number | None = None
    max: Number | None = None


class InRange(WildcardChecker):
    """Every value reached is a number within [min, max]."""

    __slots__ = ("high", "low", "single")

    def __init__(
        self, key: str, path: DotPath, low: float | None, high: float | None, single: bool
    ) -> None:
        self.key = key
        self.path = path
        self.low = low
        self.high = high
        self.single = single

    def _range(self) -> str:
        low, high = self.low, self.high
        if low is not None and high is not None:
            return f"{fmt_number(low)}-{fmt_number(high)}"
        if low is not None:
            return f">= {fmt_number(low)}"
        return f"<= {fmt_number(high)}"  # type: ignore[arg-type]

    def describe(self) -> str:
        return f"{self.path.text} in range {self._range()}"

    def emit_value(self, gen: FastGen, where: FastGen | Loop, var: str) -> bool:
        test = f"(type({var}) is int or type({var}) is float) and {var} == {var}"
        if self.low is not None:
            test += f" and {var} >= {gen.const(self.low)}"
        if self.high is not None:
            test += f" and {var} <= {gen.const(self.high)}"
        where.require(test)
        return True

    def check_values(
        self,
        path: DotPath,
        values: list[Any],
        indexes: Sequence[tuple[int, ...]],
        ctx: CheckContext,
    ) -> AssertionResult:
        low, high = self.low, self.high
        for position, value in enumerate(values):
            if (
                is_number(value)
                and (low is None or value >= low)
                and (high is None or value <= high)
            ):
                continue
            location = path.location(indexes[position])
            prefix = f"{location}: value" if self.single else "Value"
            if not is_number(value):
                message = f"{prefix} {fmt(value)} is not a number"
                if not self.single:
                    message += f" (at {location})"
            else:
                message = f"{prefix} {fmt_number(value)} is outside range {self._range()}"
            return failed(
                self.key,
                message,
                path=location,
                expected={"min": low, "max": high},
                actual=value,
            )
        return passed(self.key)


def _build(key: str, value: Any, ctx: BuildContext, single: bool) -> Checker | None:
    params = ctx.model(RangeParams, value, '{path: "results[*].relevance", min: 0.0, max: 1.0}')
    if params is None:
        return None
    if params.min is None and params.max is None:
        ctx.problem("give min, max or both")
        return None
    if params.min is not None and params.max is not None and params.min > params.max:
        ctx.problem(f"min {params.min!r} is greater than max {params.max!r}")
        return None
    path = ctx.at("path").dot_path(params.path)
    return InRange(key, path, params.min, params.max, single) if path else None


@expect_assertion("all_in_range", params=RangeParams)
def build_all_in_range(value: Any, ctx: BuildContext) -> Checker | None:
    """Every number at the path lies within [min, max]."""
    return _build("all_in_range", value, ctx, single=False)


@expect_assertion("range_check", params=RangeParams)
def build_range_check(value: Any, ctx: BuildContext) -> Checker | None:
    """The number at the path lies within [min, max]."""
    return _build("range_check", value, ctx, single=True)
