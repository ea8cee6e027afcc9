"""Cost and latency assertions, judged from the call's context rather than the output text.

A metric that was not measured for this output, or is NaN or infinite, is an error, never a
pass (nor, under ``not-``, a pass either).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from .._base import BuildContext, Checker
from .._entries import typed_assertion
from .._result import AssertionResult, errored, failed, passed
from ._wrapper import TypedSpec

if TYPE_CHECKING:
    from .._context import CheckContext
    from .._response import Response


class AtMost(Checker):
    """A measured quantity of the call is at most the threshold."""

    __slots__ = ("attribute", "threshold", "unit")

    def __init__(self, key: str, attribute: str, unit: str, threshold: float) -> None:
        self.key = key
        self.attribute = attribute
        self.unit = unit
        self.threshold = threshold

    def describe(self) -> str:
        return f"{self.attribute} <= {self.threshold:g}{self.unit}"

    def check(self, response: Response, ctx: CheckContext) -> AssertionResult:
        measured = getattr(ctx, self.attribute)
        if measured is None:
            return errored(
                self.key,
                f"{self.attribute} was not measured for this output, so {self.key} cannot be "
                "judged",
                expected=self.threshold,
            )
        if not isinstance(measured, int | float) or isinstance(measured, bool):
            return errored(self.key, f"{self.attribute} is not a number: {measured!r}")
        if not math.isfinite(measured):
            # NaN compares false with everything, so it would fail and its not- form pass;
            # an infinite cost is no measurement either.
            return errored(
                self.key,
                f"{self.attribute} is {measured!r}, not a finite number, so {self.key} cannot "
                "be judged",
                expected=self.threshold,
            )
        if measured <= self.threshold:
            return passed(self.key)
        return failed(
            self.key,
            f"{self.attribute} {measured:g}{self.unit} exceeds {self.threshold:g}{self.unit}",
            expected=self.threshold,
            actual=measured,
        )


def _limit(spec: TypedSpec, ctx: BuildContext) -> float | None:
    threshold = 0.0 if spec.threshold is None else spec.threshold
    if not math.isfinite(threshold) or threshold < 0:
        ctx.at("threshold").problem(f"threshold must be a number >= 0, got {threshold!r}")
        return None
    return threshold


@typed_assertion("cost", threshold=True, value=False)
def build_cost(spec: TypedSpec, ctx: BuildContext) -> Checker | None:
    """The call's cost_usd is at most the threshold (default 0.0)."""
    limit = _limit(spec, ctx)
    return None if limit is None else AtMost("cost", "cost_usd", " USD", limit)


@typed_assertion("latency", threshold=True, value=False)
def build_latency(spec: TypedSpec, ctx: BuildContext) -> Checker | None:
    """The call's latency_ms is at most the threshold (default 0.0)."""
    limit = _limit(spec, ctx)
    return None if limit is None else AtMost("latency", "latency_ms", " ms", limit)
