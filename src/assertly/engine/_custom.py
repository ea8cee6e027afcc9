"""User assertions: a plain function ``function(output, context)`` made into a checker.

The shapes a function may return follow promptfoo's custom assertions, so existing
``get_assert`` functions work unchanged: a bool; a number (a score, passing at ``threshold``
when given, else above 0); a dict with ``pass``/``score``/``reason``; or an `AssertionResult`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ._base import BuildContext, Checker
from ._response import NOT_JSON
from ._result import PASSED, AssertionResult, errored, failed, passed

if TYPE_CHECKING:
    from ._context import CheckContext
    from ._response import Response

__all__ = ["CustomChecker", "custom_builder"]


class CustomChecker(Checker):
    """Calls a user function and turns what it returns into a result."""

    __slots__ = ("config", "function", "threshold", "value")

    def __init__(
        self,
        key: str,
        function: Callable[..., Any],
        value: Any,
        threshold: float | None,
        config: dict[str, Any],
    ) -> None:
        self.key = key
        self.function = function
        self.value = value
        self.threshold = threshold
        self.config = config

    def describe(self) -> str:
        return f"{self.key} passes"

    def fast_pure(self) -> bool:
        # A user's function (perhaps a paid model call) runs once per response, never twice.
        return False

    def check(self, response: Response, ctx: CheckContext) -> AssertionResult:
        json_value = response.json
        context = {
            "value": self.value,
            "threshold": self.threshold,
            "config": self.config,
            "cost_usd": ctx.cost_usd,
            "latency_ms": ctx.latency_ms,
            "model": ctx.model,
            "tool_calls": ctx.tool_calls,
            "steps": ctx.steps,
            "now": ctx.now,
            "vars": dict(ctx.extra.get("vars", {}) or {}),
            **{k: v for k, v in ctx.extra.items() if k != "vars"},
        }
        context["json"] = None if json_value is NOT_JSON else json_value
        try:
            returned = self.function(response.text, context)
        except Exception as error:  # a user's bug is data, not a crash
            return errored(self.key, f"custom assertion raised {type(error).__name__}: {error}")
        return self._interpret(returned)

    def _interpret(self, returned: Any) -> AssertionResult:
        if isinstance(returned, AssertionResult):
            return returned
        if type(returned) is bool:
            return passed(self.key) if returned else failed(self.key, f"{self.key} returned False")
        if isinstance(returned, int | float) and not isinstance(returned, bool):
            return self._from_score(float(returned), None, None)
        if isinstance(returned, dict):
            score = returned.get("score")
            verdict = returned.get("pass", returned.get("passed"))
            reason = returned.get("reason") or returned.get("message")
            if score is not None and not (isinstance(score, int | float) and math.isfinite(score)):
                return errored(self.key, f"custom assertion returned a non-numeric score {score!r}")
            if verdict is None and score is None:
                return errored(self.key, "custom assertion returned a dict without pass or score")
            return self._from_score(
                None if score is None else float(score),
                None if verdict is None else bool(verdict),
                None if reason is None else str(reason),
            )
        return errored(
            self.key,
            f"custom assertion returned {type(returned).__name__}; "
            "expected bool, number, dict with pass/score/reason, or AssertionResult",
        )

    def _from_score(
        self, score: float | None, verdict: bool | None, reason: str | None
    ) -> AssertionResult:
        if score is not None and not math.isfinite(score):
            return errored(self.key, f"custom assertion returned a non-finite score {score!r}")
        if verdict is None:
            assert score is not None
            verdict = score >= self.threshold if self.threshold is not None else score > 0
        if score is None:
            score = 1.0 if verdict else 0.0
        score = min(1.0, max(0.0, score))
        if verdict:
            return AssertionResult(self.key, PASSED, score, reason or "")
        return failed(self.key, reason or f"{self.key} scored {score:g}", score=score)


def custom_builder(name: str, function: Callable[..., Any]) -> Callable[[Any, BuildContext], Any]:
    """A builder for both dialects: the expect value, or the typed spec's fields."""

    def build(spec: Any, ctx: BuildContext) -> CustomChecker:
        if hasattr(spec, "model_fields_set") and hasattr(spec, "type"):  # typed-list spec
            return CustomChecker(name, function, spec.value, spec.threshold, dict(spec.config))
        return CustomChecker(name, function, spec, None, {})

    return build
