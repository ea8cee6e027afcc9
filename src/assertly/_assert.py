"""``assertly.assert_response``: one check as a plain ``assert`` for test code (pytest or not).

Kept light: importing it loads nothing beyond the engine; the text renderer of a failure is
imported only when a check does not pass.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from datetime import date, datetime
from typing import Any

from ._exceptions import ConfigError, Problem
from .engine import CheckContext, CheckResult, Expectation
from .engine import compile as compile_expectation

__all__ = ["assert_response"]


def _unwrap(expectation: Any) -> tuple[Any, float | None]:
    """A bare expectation, or a test case holding one under ``expect`` / ``assertions``.

    The same forms ``assertly check --expect`` accepts.
    """
    if isinstance(expectation, Mapping) and (
        "expect" in expectation or "assertions" in expectation
    ):
        if "expect" in expectation and "assertions" in expectation:
            raise ConfigError(
                [Problem("expectation", "give expect or assertions to assert_response, not both")]
            )
        threshold = expectation.get("threshold")
        return expectation.get("expect", expectation.get("assertions")), threshold
    return expectation, None


def _split_response(
    response: Any, context: CheckContext | Mapping[str, Any] | None
) -> tuple[Any, CheckContext | Mapping[str, Any] | None]:
    """A target's response object → its output, and its cost/latency/model as the context.

    The targets module is only consulted when it is already loaded: a response cannot be a
    ``TargetResponse`` otherwise, and plain values need no import.
    """
    base = sys.modules.get("assertly.targets._base")
    response_type = getattr(base, "TargetResponse", None)
    if response_type is None or not isinstance(response, response_type):
        return response, context
    if context is None:
        context = {
            "cost_usd": response.cost_usd,
            "latency_ms": response.latency_ms,
            "model": response.model,
            "tool_calls": response.reported_tool_calls(),
        }
    return response.output, context


def assert_response(
    response: Any,
    expectation: Any,
    *,
    context: CheckContext | Mapping[str, Any] | None = None,
    now: str | datetime | date | None = None,
    threshold: float | None = None,
) -> CheckResult:
    """Check ``response`` and raise ``AssertionError`` unless it passes.

    The message of the error is the text ``assertly check`` prints: the verdict, every
    assertion on its own line, and under each failure its path, expected and actual value. An
    ``error`` outcome (an assertion that could not judge the response) raises too: an error is
    never a pass.

    Args:
        response: A JSON value, JSON text, prose (possibly with JSON inside), bytes, or the
            response object the ``assertly_target`` pytest fixture returns (its cost, latency
            and model then serve as the context); or a value that stands for JSON, judged as
            it (an SDK's reply object or another pydantic model, a dataclass, a tuple).
        expectation: A compiled `Expectation`, an expect dict, a list of typed assertions, or
            a test case holding one under ``expect`` / ``assertions`` (with an optional
            ``threshold``). Anything but an `Expectation` is compiled on each call; compile it
            once with `assertly.compile` to check many responses.
        context: Cost, latency, model and stored steps of the call (`CheckContext` or a
            mapping with those keys).
        now: "Today" for date assertions (ISO string or datetime); defaults to the clock.
        threshold: Pass threshold on the aggregate score of a typed list.

    Returns:
        The passing `CheckResult`, for tests that look further (scores, named metrics).

    Raises:
        AssertionError: The response failed the expectation, or could not be judged.
        ConfigError: The expectation itself is invalid (nothing was judged).
        TypeError: ``threshold`` was given with an already compiled `Expectation`, or the
            response is a value with no JSON reading (a set, an arbitrary object).
    """
    __tracebackhide__ = True  # pytest shows the caller's line, not this function's
    if isinstance(expectation, Expectation):
        if threshold is not None:
            raise TypeError(
                "threshold is fixed when an expectation is compiled: "
                "pass it to assertly.compile(..., threshold=...)"
            )
        compiled = expectation
    else:
        data, wrapped_threshold = _unwrap(expectation)
        compiled = compile_expectation(
            data, threshold=threshold if threshold is not None else wrapped_threshold
        )
    output, context = _split_response(response, context)
    result = compiled.check(output, context=context, now=now)
    if not result.passed:
        from .reports._check_text import render_check

        raise AssertionError("\n".join(line for line, _ in render_check(result)))
    return result
