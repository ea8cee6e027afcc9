"""``results_schema`` (engine/expect/schema.py): a JSON type and optional bounds for fields
required in every result.
"""

from __future__ import annotations

from typing import Any

import pytest

import assertly
from assertly import AssertionResult, ConfigError, Outcome

SCHEMA = {
    "results_schema": {
        "file": "string",
        "relevance": {"type": "number", "min": 0, "max": 1},
        "tags": {"type": "array", "max": 2},
        "metadata.count": "integer",
    }
}


def only(expect: dict[str, Any], response: Any) -> AssertionResult:
    result = assertly.compile(expect).check(response)
    assert len(result.results) == 1
    return result.results[0]


def result_with(**changes: Any) -> dict[str, Any]:
    item: dict[str, Any] = {
        "file": "journal/a.md",
        "relevance": 0.5,
        "tags": ["work"],
        "metadata": {"count": 3},
    }
    for key, value in changes.items():
        if value is ...:
            del item[key]
        else:
            item[key] = value
    return item


def problems(expect: Any) -> list[tuple[str, str]]:
    with pytest.raises(ConfigError) as caught:
        assertly.compile(expect)
    return [(p.location, p.message) for p in caught.value.problems]


def test_every_result_matching_passes() -> None:
    assert only(SCHEMA, {"results": [result_with(), result_with(relevance=1, tags=[])]}).passed


def test_a_missing_field_fails() -> None:
    result = only(SCHEMA, {"results": [result_with(), result_with(file=...)]})
    assert result.outcome is Outcome.FAILED
    assert result.message == "Result 1: missing field 'file'"
    assert result.path == "results[1].file"
    assert result.expected == "string"


def test_a_missing_nested_field_fails() -> None:
    result = only(SCHEMA, {"results": [result_with(metadata={})]})
    assert result.message == "Result 0: missing field 'metadata.count'"
    assert result.path == "results[0].metadata.count"


def test_a_null_field_exists_but_is_not_a_string() -> None:
    result = only(SCHEMA, {"results": [result_with(file=None)]})
    assert result.message == "Result 0: field 'file' expected string, got null"
    assert only({"results_schema": {"parent": "null"}}, {"results": [{"parent": None}]}).passed


@pytest.mark.parametrize(
    ("type_name", "good", "bad", "bad_type"),
    [
        ("string", "a", 1, "integer 1"),
        ("number", 1.5, "1.5", "string '1.5'"),
        ("number", 2, True, "boolean true"),
        ("integer", 2, 2.5, "number 2.5"),
        ("integer", -7, False, "boolean false"),
        ("boolean", False, 0, "integer 0"),
        ("object", {"a": 1}, [1], "array [1]"),
        ("array", [], {}, "object {}"),
        ("null", None, "null", "string 'null'"),
    ],
)
def test_json_types(type_name: str, good: Any, bad: Any, bad_type: str) -> None:
    expect = {"results_schema": {"v": type_name}}
    assert only(expect, {"results": [{"v": good}]}).passed
    result = only(expect, {"results": [{"v": good}, {"v": bad}]})
    assert result.outcome is Outcome.FAILED
    assert result.message == f"Result 1: field 'v' expected {type_name}, got {bad_type}"
    assert result.actual == bad


def test_integer_accepts_a_whole_float_as_json_schema_does() -> None:
    assert only({"results_schema": {"v": "integer"}}, {"results": [{"v": 3.0}]}).passed


def test_number_bounds_are_inclusive() -> None:
    assert only(SCHEMA, {"results": [result_with(relevance=0), result_with(relevance=1.0)]}).passed
    result = only(SCHEMA, {"results": [result_with(relevance=1.5)]})
    assert result.message == "Result 0: field 'relevance' 1.5 is above max 1"
    result = only(SCHEMA, {"results": [result_with(relevance=-0.5)]})
    assert result.message == "Result 0: field 'relevance' -0.5 is below min 0"


def test_bounds_on_strings_and_arrays_are_lengths() -> None:
    result = only(SCHEMA, {"results": [result_with(tags=["a", "b", "c"])]})
    assert result.message == "Result 0: field 'tags' length 3 is above max 2"
    expect = {"results_schema": {"title": {"type": "string", "min": 2, "max": 5}}}
    assert only(expect, {"results": [{"title": "ab"}, {"title": "abcde"}]}).passed
    assert only(expect, {"results": [{"title": "a"}]}).message == (
        "Result 0: field 'title' length 1 is below min 2"
    )


def test_a_non_object_result_fails() -> None:
    result = only(SCHEMA, {"results": [result_with(), "journal/b.md"]})
    assert result.message == "Result 1 is a string ('journal/b.md'), not an object"
    assert result.path == "results[1]"


def test_results_array_rules() -> None:
    vacuous = only(SCHEMA, {"results": []})
    assert vacuous.outcome is Outcome.PASSED
    assert vacuous.details == {"vacuous": True}
    assert only(SCHEMA, {}).message == (
        "Expected a 'results' array, but the response has no 'results' field"
    )
    assert only(SCHEMA, {"results": {"file": "a"}}).message == (
        "Expected a 'results' array, but 'results' is an object, not an array"
    )
    assert only(SCHEMA, "no json").message == "response is not JSON"


def test_the_first_problem_is_reported() -> None:
    response = {"results": [result_with(), result_with(file=1, relevance=7)]}
    assert only(SCHEMA, response).message == "Result 1: field 'file' expected string, got integer 1"


# --- parameters -----------------------------------------------------------------------------


def test_every_schema_problem_is_collected() -> None:
    assert problems(
        {
            "results_schema": {
                "a": {"type": "stringy", "mn": 2},
                "b": 5,
                "c": {"type": "number", "min": "0"},
                "d": {"type": "number", "min": 5, "max": 1},
                "e..f": "string",
                "g": {"type": "boolean", "max": 1},
            }
        }
    ) == [
        ("expect.results_schema.a", "unknown keys ['mn'] (allowed: type, min, max, format)"),
        (
            "expect.results_schema.a.type",
            "unknown type 'stringy' (expected one of: string, number, integer, boolean, "
            "object, array, null)",
        ),
        ("expect.results_schema.b", "expected a type name or {type, min, max}, got 5"),
        ("expect.results_schema.c.min", "expected a number, got '0'"),
        ("expect.results_schema.d", "min 5 is greater than max 1"),
        ("expect.results_schema.e..f", "invalid path 'e..f': empty segment at column 3"),
        (
            "expect.results_schema.g",
            "min/max apply to number, integer, string (length) and array (length), not boolean",
        ),
    ]


@pytest.mark.parametrize("bad", [{}, [], "string", None])
def test_schema_must_be_a_non_empty_mapping(bad: Any) -> None:
    assert problems({"results_schema": bad}) == [
        ("expect.results_schema", f"expected a mapping such as {{score: number}}, got {bad!r}")
    ]


@pytest.mark.parametrize("bad", [True, "1", float("nan")])
def test_bounds_must_be_numbers(bad: Any) -> None:
    assert problems({"results_schema": {"v": {"type": "number", "max": bad}}}) == [
        ("expect.results_schema.v.max", f"expected a number, got {bad!r}")
    ]
