"""cost and latency: judged from the call's context, never the output text (seed 003, spec B)."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

import assertly
from assertly import AssertionResult, CheckContext, ConfigError, Outcome


def judge(spec: dict[str, Any], context: Any = None, output: Any = "output") -> AssertionResult:
    """Compile one typed assertion and check one output with ``context``; return its result."""
    return assertly.compile([spec]).check(output, context=context).results[0]


def test_seed_cost_example() -> None:
    spec = yaml.safe_load("- type: cost\n  threshold: 0.50\n")[0]
    assert judge(spec, {"cost_usd": 0.31}).outcome is Outcome.PASSED
    assert judge(spec, {"cost_usd": 0.5}).passed  # at the threshold passes
    over = judge(spec, {"cost_usd": 0.75})
    assert over.outcome is Outcome.FAILED
    assert over.message == "cost_usd 0.75 USD exceeds 0.5 USD"
    assert over.expected == 0.5
    assert over.actual == 0.75


def test_seed_latency_example() -> None:
    spec = yaml.safe_load("- type: latency\n  threshold: 5000\n")[0]
    assert judge(spec, {"latency_ms": 4999.5}).passed
    over = judge(spec, {"latency_ms": 6200})
    assert over.outcome is Outcome.FAILED
    assert over.message == "latency_ms 6200 ms exceeds 5000 ms"


def test_cost_and_latency_read_a_check_context_object() -> None:
    context = CheckContext(cost_usd=0.01, latency_ms=120)
    assert judge({"type": "cost", "threshold": 0.02}, context).passed
    assert judge({"type": "latency", "threshold": 100}, context).message == (
        "latency_ms 120 ms exceeds 100 ms"
    )


def test_default_threshold_is_zero() -> None:
    assert judge({"type": "cost"}, {"cost_usd": 0}).passed
    assert judge({"type": "cost"}, {"cost_usd": 0.001}).message == (
        "cost_usd 0.001 USD exceeds 0 USD"
    )
    assert judge({"type": "latency"}, {"latency_ms": 0.0}).passed
    assert judge({"type": "latency"}, {"latency_ms": 1}).outcome is Outcome.FAILED


def test_the_output_text_is_not_read() -> None:
    # A number in the output is not the cost of the call.
    result = judge({"type": "cost", "threshold": 1}, None, output='{"cost_usd": 0.1}')
    assert result.outcome is Outcome.ERROR


@pytest.mark.parametrize(("kind", "attribute"), [("cost", "cost_usd"), ("latency", "latency_ms")])
def test_unmeasured_metric_is_an_error_not_a_pass(kind: str, attribute: str) -> None:
    for context in (None, {}, {attribute: None}, CheckContext()):
        check = assertly.compile([{"type": kind, "threshold": 10}]).check("x", context=context)
        result = check.results[0]
        assert result.outcome is Outcome.ERROR
        assert result.passed is False
        assert result.score == 0.0
        assert result.message == (
            f"{attribute} was not measured for this output, so {kind} cannot be judged"
        )
        assert check.outcome is Outcome.ERROR
        assert check.passed is False


def test_non_numeric_measurement_is_an_error() -> None:
    result = judge({"type": "cost", "threshold": 1}, {"cost_usd": "cheap"})
    assert result.outcome is Outcome.ERROR
    assert result.message == "cost_usd is not a number: 'cheap'"


@pytest.mark.parametrize("kind", ["cost", "latency"])
@pytest.mark.parametrize("threshold", [-1, float("nan")])
def test_bad_threshold_is_a_config_error(kind: str, threshold: float) -> None:
    with pytest.raises(ConfigError) as info:
        assertly.compile([{"type": kind, "threshold": threshold}])
    assert len(info.value.problems) == 1
    assert info.value.problems[0].location == "assertions[0].threshold"


@pytest.mark.parametrize("measured", [float("nan"), float("inf"), float("-inf")])
@pytest.mark.parametrize(
    ("kind", "attribute"),
    [
        ("cost", "cost_usd"),
        ("not-cost", "cost_usd"),
        ("latency", "latency_ms"),
        ("not-latency", "latency_ms"),
    ],
)
def test_a_non_finite_metric_is_an_error_under_both_forms(
    kind: str, attribute: str, measured: float
) -> None:
    # NaN compares false with everything: it used to fail, so its not- form passed.
    result = judge({"type": kind, "threshold": 10}, {attribute: measured})
    assert result.outcome is Outcome.ERROR
    name = kind.removeprefix("not-")
    assert result.message == (
        f"{attribute} is {measured!r}, not a finite number, so {name} cannot be judged"
    )
    assert result.score == 0.0
