"""Numeric range assertions (engine/expect/ranges.py): ``all_in_range`` and ``range_check``.

Bounds are inclusive; booleans and strings are not numbers; min > max is a load error.
"""

from __future__ import annotations

from typing import Any

import pytest

import assertly
from assertly import AssertionResult, ConfigError, Outcome

RELEVANCE = {"all_in_range": {"path": "results[*].relevance", "min": 0.0, "max": 1.0}}
DURATION = {"range_check": {"path": "performance.search_duration_ms", "min": 0, "max": 5000}}


def only(expect: dict[str, Any], response: Any) -> AssertionResult:
    result = assertly.compile(expect).check(response)
    assert len(result.results) == 1
    return result.results[0]


def relevance(*values: Any) -> dict[str, Any]:
    return {"results": [{"relevance": value} for value in values]}


def duration(value: Any) -> dict[str, Any]:
    return {"performance": {"search_duration_ms": value}}


def problems(expect: Any) -> list[tuple[str, str]]:
    with pytest.raises(ConfigError) as caught:
        assertly.compile(expect)
    return [(p.location, p.message) for p in caught.value.problems]


# --- all_in_range ---------------------------------------------------------------------------


def test_all_in_range_bounds_are_inclusive() -> None:
    assert only(RELEVANCE, relevance(0.0, 0, 0.5, 1, 1.0)).passed


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (1.2, "Value 1.2 is outside range 0.0-1.0"),
        (-0.01, "Value -0.01 is outside range 0.0-1.0"),
        (2, "Value 2 is outside range 0.0-1.0"),
        (1.0000001, "Value 1.0000001 is outside range 0.0-1.0"),
    ],
)
def test_all_in_range_out_of_range(value: Any, message: str) -> None:
    result = only(RELEVANCE, relevance(0.5, value))
    assert result.outcome is Outcome.FAILED
    assert result.message == message
    assert result.path == "results[1].relevance"
    assert result.expected == {"min": 0.0, "max": 1.0}
    assert result.actual == value


@pytest.mark.parametrize(
    ("value", "shown"),
    [(True, "true"), (False, "false"), ("0.5", "'0.5'"), (None, "null"), ([0.5], "[0.5]")],
)
def test_all_in_range_non_numbers_fail(value: Any, shown: str) -> None:
    result = only(RELEVANCE, relevance(0.5, value))
    assert result.outcome is Outcome.FAILED
    assert result.message == f"Value {shown} is not a number (at results[1].relevance)"
    assert result.path == "results[1].relevance"


def test_all_in_range_reports_the_first_offender() -> None:
    result = only(RELEVANCE, relevance(0.5, 3, -1))
    assert result.message == "Value 3 is outside range 0.0-1.0"
    assert result.path == "results[1].relevance"


def test_bounds_read_as_written() -> None:
    expect = {"all_in_range": {"path": "results[*].relevance", "min": 0, "max": 100}}
    assert only(expect, relevance(101)).message == "Value 101 is outside range 0-100"


def test_one_sided_bounds() -> None:
    at_least = {"all_in_range": {"path": "results[*].relevance", "min": 0.5}}
    assert only(at_least, relevance(0.5, 1e9)).passed
    assert only(at_least, relevance(0.4)).message == "Value 0.4 is outside range >= 0.5"
    at_most = {"all_in_range": {"path": "results[*].relevance", "max": 0.5}}
    assert only(at_most, relevance(-1e9, 0.5)).passed
    assert only(at_most, relevance(0.6)).message == "Value 0.6 is outside range <= 0.5"
    explicit_null = {"all_in_range": {"path": "results[*].relevance", "min": None, "max": 1}}
    assert only(explicit_null, relevance(-5)).passed


def test_all_in_range_wildcard_rules() -> None:
    vacuous = only(RELEVANCE, {"results": []})
    assert vacuous.outcome is Outcome.PASSED
    assert vacuous.details == {"vacuous": True}
    assert only(RELEVANCE, {}).message == (
        "Missing field: results[*].relevance (results is missing)"
    )
    assert only(RELEVANCE, {"results": [{"relevance": 0.1}, {"score": 2}]}).message == (
        "Missing field: results[*].relevance (results[1].relevance is missing)"
    )
    assert only(RELEVANCE, "text").message == "response is not JSON"


# --- range_check ----------------------------------------------------------------------------


@pytest.mark.parametrize("value", [0, 1, 4999.5, 5000, 5000.0])
def test_range_check_pass(value: Any) -> None:
    assert only(DURATION, duration(value)).passed


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (5001, "performance.search_duration_ms: value 5001 is outside range 0-5000"),
        (-1, "performance.search_duration_ms: value -1 is outside range 0-5000"),
        (True, "performance.search_duration_ms: value true is not a number"),
        ("120", "performance.search_duration_ms: value '120' is not a number"),
        (None, "performance.search_duration_ms: value null is not a number"),
    ],
)
def test_range_check_fail(value: Any, message: str) -> None:
    result = only(DURATION, duration(value))
    assert result.outcome is Outcome.FAILED
    assert result.message == message
    assert result.path == "performance.search_duration_ms"
    assert result.actual == value


def test_range_check_missing_field() -> None:
    result = only(DURATION, {"performance": {}})
    assert result.message == "Missing field: performance.search_duration_ms"
    result = only(DURATION, {"status": "ok"})
    assert (
        result.message == "Missing field: performance.search_duration_ms (performance is missing)"
    )
    assert result.path == "performance"


def test_range_check_indexed_path() -> None:
    expect = {"range_check": {"path": "results[0].relevance", "min": 0.5}}
    assert only(expect, relevance(0.9, 0.1)).passed
    assert only(expect, relevance(0.1, 0.9)).message == (
        "results[0].relevance: value 0.1 is outside range >= 0.5"
    )


# --- parameters -----------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["all_in_range", "range_check"])
def test_min_greater_than_max(key: str) -> None:
    assert problems({key: {"path": "x", "min": 2, "max": 1}}) == [
        (f"expect.{key}", "min 2 is greater than max 1")
    ]


@pytest.mark.parametrize("key", ["all_in_range", "range_check"])
def test_min_equal_to_max_is_allowed(key: str) -> None:
    expect = {key: {"path": "x", "min": 1, "max": 1.0}}
    assert only(expect, {"x": 1}).passed
    assert not only(expect, {"x": 1.5}).passed


@pytest.mark.parametrize("key", ["all_in_range", "range_check"])
def test_a_bound_is_required(key: str) -> None:
    assert problems({key: {"path": "x"}}) == [(f"expect.{key}", "give min, max or both")]


@pytest.mark.parametrize("key", ["all_in_range", "range_check"])
@pytest.mark.parametrize("bad", ["0", True, [0], float("nan")])
def test_bounds_must_be_numbers(key: str, bad: Any) -> None:
    assert problems({key: {"path": "x", "min": bad}}) == [
        (
            f"expect.{key}.min",
            f"input should be a number, got {bad!r} "
            '(e.g. {path: "results[*].relevance", min: 0.0, max: 1.0})',
        )
    ]


@pytest.mark.parametrize("key", ["all_in_range", "range_check"])
def test_other_parameter_problems(key: str) -> None:
    [(location, message)] = problems({key: {"path": "x", "min": 0, "maximum": 1}})
    assert location == f"expect.{key}.maximum"
    assert message.startswith("unknown parameter (allowed: path, min, max)")
    assert problems({key: {"path": "x[", "min": 0}}) == [
        (f"expect.{key}.path", "invalid path 'x[': unexpected '[' at column 2")
    ]
