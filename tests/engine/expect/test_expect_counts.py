"""Count assertions on ``results`` (engine/expect/counts.py): min, max, exact."""

from __future__ import annotations

from typing import Any

import pytest

import assertly
from assertly import AssertionResult, ConfigError, Outcome


def only(expect: dict[str, Any], response: Any) -> AssertionResult:
    result = assertly.compile(expect).check(response)
    assert len(result.results) == 1
    return result.results[0]


def results(n: int) -> dict[str, Any]:
    return {"results": [{"file": f"journal/{i}.md"} for i in range(n)]}


@pytest.mark.parametrize(
    ("expect", "count", "verdict"),
    [
        ({"results_min": 1}, 1, True),
        ({"results_min": 1}, 2, True),
        ({"results_min": 0}, 0, True),
        ({"results_min": 2}, 1, False),
        ({"results_max": 5}, 5, True),
        ({"results_max": 5}, 0, True),
        ({"results_max": 5}, 6, False),
        ({"results_max": 0}, 0, True),
        ({"results_count": 3}, 3, True),
        ({"results_count": 3}, 2, False),
        ({"results_count": 3}, 4, False),
        ({"results_count": 0}, 0, True),
    ],
)
def test_bounds_are_inclusive(expect: dict[str, Any], count: int, verdict: bool) -> None:
    result = only(expect, results(count))
    assert result.passed is verdict
    assert result.outcome is (Outcome.PASSED if verdict else Outcome.FAILED)


@pytest.mark.parametrize(
    ("expect", "count", "message"),
    [
        ({"results_min": 1}, 0, "Expected at least 1 result, got 0"),
        ({"results_min": 3}, 2, "Expected at least 3 results, got 2"),
        ({"results_max": 1}, 2, "Expected at most 1 result, got 2"),
        ({"results_max": 10}, 11, "Expected at most 10 results, got 11"),
        ({"results_count": 5}, 4, "Expected exactly 5 results, got 4"),
        ({"results_count": 1}, 0, "Expected exactly 1 result, got 0"),
    ],
)
def test_failure_messages(expect: dict[str, Any], count: int, message: str) -> None:
    result = only(expect, results(count))
    assert result.message == message
    assert result.path == "results"
    assert result.expected == next(iter(expect.values()))
    assert result.actual == count


@pytest.mark.parametrize("key", ["results_min", "results_max", "results_count"])
def test_missing_results_fails(key: str) -> None:
    result = only({key: 0}, {"status": "success"})
    assert result.outcome is Outcome.FAILED
    assert result.message.endswith(", but the response has no 'results' field")


@pytest.mark.parametrize(
    ("value", "clause"),
    [
        (None, "'results' is a null, not an array"),
        ({}, "'results' is an object, not an array"),
        ("3", "'results' is a string, not an array"),
        (3, "'results' is an integer, not an array"),
    ],
)
def test_non_array_results_fails(value: Any, clause: str) -> None:
    result = only({"results_max": 10}, {"results": value})
    assert result.outcome is Outcome.FAILED
    assert result.message == f"Expected at most 10 results, but {clause}"
    assert result.actual == value


def test_non_object_response_fails() -> None:
    result = only({"results_min": 1}, [{"file": "a"}])
    assert (
        result.message == "Expected at least 1 result, but the response is an array, not an object"
    )


def test_text_without_json_fails() -> None:
    assert only({"results_min": 1}, "Found nothing.").message == "response is not JSON"


def test_counts_only_top_level_results() -> None:
    result = only({"results_min": 1}, {"data": {"results": [1]}})
    assert result.message == "Expected at least 1 result, but the response has no 'results' field"


@pytest.mark.parametrize("key", ["results_min", "results_max", "results_count"])
@pytest.mark.parametrize("bad", [-1, 1.5, 2.0, True, "3", None])
def test_bound_must_be_a_whole_number(key: str, bad: Any) -> None:
    with pytest.raises(ConfigError) as caught:
        assertly.compile({key: bad})
    [problem] = caught.value.problems
    assert problem.location == f"expect.{key}"
    assert problem.message == f"expected a whole number >= 0, got {bad!r}"


def test_describe_reads_positively() -> None:
    assert assertly.compile({"results_min": 1}).describe() == ["the response has at least 1 result"]
    assert assertly.compile({"results_count": 2}).describe() == [
        "the response has exactly 2 results"
    ]
