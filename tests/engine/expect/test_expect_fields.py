"""Status, content and field assertions of the expect dialect (engine/expect/fields.py).

``status``, ``error_code``, ``contains``, ``message_contains``, ``summary_contains``,
``has_fields``, ``has_field``, ``field_equals`` and ``field_contains``.
"""

from __future__ import annotations

from typing import Any

import pytest

import assertly
from assertly import AssertionResult, ConfigError, Outcome


def only(expect: dict[str, Any], response: Any) -> AssertionResult:
    result = assertly.compile(expect).check(response)
    assert len(result.results) == 1
    return result.results[0]


def passes(expect: dict[str, Any], response: Any) -> bool:
    outcome = only(expect, response).outcome
    assert outcome in (Outcome.PASSED, Outcome.FAILED)
    return outcome is Outcome.PASSED


def failure(expect: dict[str, Any], response: Any) -> AssertionResult:
    result = only(expect, response)
    assert result.outcome is Outcome.FAILED, result
    assert not result.passed
    return result


def problems(expect: Any) -> list[tuple[str, str]]:
    with pytest.raises(ConfigError) as caught:
        assertly.compile(expect)
    return [(p.location, p.message) for p in caught.value.problems]


# --- status / error_code --------------------------------------------------------------------


def test_status_equal_passes_with_no_message() -> None:
    result = only({"status": "success"}, {"status": "success", "results": []})
    assert result.outcome is Outcome.PASSED
    assert result.message == ""


def test_status_missing_field_fails() -> None:
    result = failure({"status": "success"}, {"results": []})
    assert result.message == "Expected status 'success', got no 'status' field"
    assert result.actual is None


def test_status_is_top_level_only() -> None:
    result = failure({"status": "success"}, {"data": {"status": "success"}})
    assert result.message == "Expected status 'success', got no 'status' field"


def test_status_on_an_array_response_fails() -> None:
    result = failure({"status": "success"}, [{"status": "success"}])
    assert result.message == "Expected status 'success', got no 'status' field"


def test_status_is_strictly_typed() -> None:
    assert failure({"status": 1}, {"status": True}).message == "Expected status 1, got true"
    assert failure({"status": 0}, {"status": "0"}).message == "Expected status 0, got '0'"
    assert passes({"status": 1}, {"status": 1.0})


def test_status_null_value_is_compared() -> None:
    assert passes({"status": None}, {"status": None})
    assert failure({"status": None}, {"status": "ok"}).message == "Expected status null, got 'ok'"


def test_status_is_case_sensitive() -> None:
    result = failure({"status": "success"}, {"status": "Success"})
    assert result.message == "Expected status 'success', got 'Success'"


def test_error_code_pass_and_fail() -> None:
    assert passes({"error_code": "NO_FILTERS"}, {"status": "error", "error_code": "NO_FILTERS"})
    result = failure({"error_code": "NO_FILTERS"}, {"status": "error", "error_code": "BAD_DATE"})
    assert result.message == "Expected error_code 'NO_FILTERS', got 'BAD_DATE'"
    assert result.path == "error_code"
    assert failure({"error_code": "NO_FILTERS"}, {"status": "error"}).message == (
        "Expected error_code 'NO_FILTERS', got no 'error_code' field"
    )


@pytest.mark.parametrize("key", ["status", "error_code"])
def test_status_rejects_a_mapping_or_list(key: str) -> None:
    assert problems({key: {"a": 1}}) == [
        (f"expect.{key}", "expected a single value such as 'success', got {\"a\":1}")
    ]
    assert problems({key: ["a"]}) == [
        (f"expect.{key}", "expected a single value such as 'success', got [\"a\"]")
    ]


# --- contains -------------------------------------------------------------------------------


def test_contains_finds_text_in_a_string_value() -> None:
    assert passes({"contains": "security"}, {"summary": "Found 3 security incidents"})


def test_contains_finds_text_in_a_key() -> None:
    assert passes({"contains": "filter_hint"}, {"filter_hint": None})


def test_contains_finds_text_in_the_compact_serialisation() -> None:
    # Numbers and literals only exist in the serialisation.
    assert passes({"contains": '"count":42'}, {"count": 42})
    assert passes({"contains": "true"}, {"ok": True})


def test_contains_pretty_printed_text_matches_compact_form() -> None:
    text = '{\n  "status": "success",\n  "count": 3\n}'
    assert passes({"contains": '"status":"success"'}, text)


def test_contains_finds_escaped_characters_in_values() -> None:
    assert passes({"contains": 'say "hi"'}, {"message": 'say "hi"'})
    assert passes({"contains": "line1\nline2"}, {"message": "line1\nline2"})
    assert passes({"contains": "line1\nline2"}, '{"message": "line1\\nline2"}')


def test_contains_keeps_non_ascii() -> None:
    assert passes({"contains": "sécurité"}, {"summary": "Rapport de sécurité"})
    assert passes({"contains": "機械学習"}, {"summary": "機械学習の記事"})


def test_contains_finds_non_ascii_behind_json_escapes() -> None:
    assert passes({"contains": "sécurité"}, '{"summary": "Rapport de s\\u00e9curit\\u00e9"}')


def test_contains_works_on_raw_text_and_bytes() -> None:
    assert passes({"contains": "no filter"}, "Sorry, no filter was given.")
    assert passes({"contains": "café"}, "un café".encode())


def test_contains_is_case_sensitive() -> None:
    result = failure({"contains": "security"}, {"summary": "Security incidents"})
    assert result.message == "Response does not contain 'security'"
    assert result.expected == "security"


def test_contains_fails_on_absent_text() -> None:
    assert failure({"contains": "filter"}, "Done.").message == "Response does not contain 'filter'"


@pytest.mark.parametrize("bad", ["", 3, None, ["a"]])
def test_contains_needs_a_non_empty_string(bad: Any) -> None:
    assert problems({"contains": bad}) == [
        ("expect.contains", f"expected a non-empty string to look for, got {bad!r}")
    ]


# --- message_contains / summary_contains ----------------------------------------------------


def test_message_contains_pass() -> None:
    assert passes({"message_contains": "error"}, {"message": "An error occurred"})


def test_message_contains_fail() -> None:
    result = failure({"message_contains": "filter"}, {"message": "Done"})
    assert result.message == "message: expected to contain 'filter', got 'Done'"
    assert result.path == "message"
    assert result.actual == "Done"


def test_message_contains_notes_a_case_insensitive_match() -> None:
    result = failure({"message_contains": "error"}, {"message": "An ERROR occurred"})
    assert result.message == (
        "message: expected to contain 'error', got 'An ERROR occurred' "
        "(a case-insensitive match exists; this check is case-sensitive)"
    )


def test_message_contains_missing_field() -> None:
    assert failure({"message_contains": "x"}, {"status": "ok"}).message == "Missing field: message"


@pytest.mark.parametrize(
    ("key", "field"), [("message_contains", "message"), ("summary_contains", "summary")]
)
def test_a_missing_field_expects_the_text_sought_not_the_field_name(key: str, field: str) -> None:
    # issue 29, first contact: "Missing field: message" then "expected: 'message'"
    result = failure({key: "security"}, {"status": "ok"})
    assert result.message == f"Missing field: {field}"
    assert result.expected == "security"
    assert result.path == field
    nested = failure({"field_contains": {"path": "a.b", "text": "x"}}, {"a": {}})
    assert nested.expected == "x"


def test_message_contains_non_string_field() -> None:
    result = failure({"message_contains": "1"}, {"message": 1})
    assert result.message == "message: expected a string containing '1', got 1"
    result = failure({"message_contains": "a"}, {"message": ["a"]})
    assert result.message == "message: expected a string containing 'a', got [\"a\"]"


def test_message_contains_looks_only_at_message() -> None:
    result = failure({"message_contains": "filter"}, {"message": "Done", "summary": "filter"})
    assert result.message == "message: expected to contain 'filter', got 'Done'"


def test_message_contains_clips_long_values() -> None:
    long = "x" * 500
    message = failure({"message_contains": "y"}, {"message": long}).message
    assert message == f"message: expected to contain 'y', got '{'x' * 199}…'"


def test_summary_contains_pass_and_fail() -> None:
    assert passes({"summary_contains": "no results"}, {"summary": "There were no results"})
    result = failure({"summary_contains": "no results"}, {"summary": "3 results"})
    assert result.message == "summary: expected to contain 'no results', got '3 results'"
    result = failure({"summary_contains": "no results"}, {"summary": "No Results"})
    assert result.message.endswith(
        "(a case-insensitive match exists; this check is case-sensitive)"
    )
    assert failure({"summary_contains": "x"}, {}).message == "Missing field: summary"


@pytest.mark.parametrize("key", ["message_contains", "summary_contains"])
@pytest.mark.parametrize("bad", ["", 5, None])
def test_field_text_needs_a_non_empty_string(key: str, bad: Any) -> None:
    assert problems({key: bad}) == [(f"expect.{key}", f"expected a non-empty string, got {bad!r}")]


# --- has_fields / has_field -----------------------------------------------------------------


def test_has_fields_pass_nested_and_indexed() -> None:
    response = {"results": [{"metadata": {"created": "2026-01-01"}}], "pagination": {"total": 1}}
    assert passes(
        {"has_fields": ["results", "pagination.total", "results[0].metadata.created"]}, response
    )


def test_has_fields_null_value_exists() -> None:
    assert passes(
        {"has_fields": ["summary", "pagination.total"]},
        {
            "summary": None,
            "pagination": {"total": None},
        },
    )


def test_has_fields_names_the_first_missing_segment() -> None:
    result = failure({"has_fields": ["metadata.created.by"]}, {"metadata": {}})
    assert result.message == "Missing field: metadata.created.by (metadata.created is missing)"
    assert result.path == "metadata.created"
    result = failure({"has_fields": ["metadata.created.by"]}, {})
    assert result.message == "Missing field: metadata.created.by (metadata is missing)"
    assert result.path == "metadata"


def test_has_fields_says_what_blocked_the_path() -> None:
    result = failure({"has_fields": ["pagination.total"]}, {"pagination": None})
    assert result.message == "Missing field: pagination.total (pagination is a null, not an object)"
    result = failure({"has_fields": ["results[3]"]}, {"results": [1, 2]})
    assert result.message == "Missing field: results[3] (the array has 2 items)"
    result = failure({"has_fields": ["results[3].file"]}, {"results": [1, 2]})
    assert result.message == (
        "Missing field: results[3].file (results[3] is missing, the array has 2 items)"
    )
    assert result.path == "results[3]"


def test_has_fields_reports_every_missing_field() -> None:
    result = failure({"has_fields": ["results", "summary", "pagination.total"]}, {"results": []})
    assert result.message == (
        "Missing field: summary; Missing field: pagination.total (pagination is missing)"
    )
    assert result.path == "summary"
    assert result.expected == ["results", "summary", "pagination.total"]


def test_has_fields_wildcard_requires_every_item() -> None:
    response = {"results": [{"file": "a"}, {"file": "b"}, {"name": "c"}]}
    result = failure({"has_fields": ["results[*].file"]}, response)
    assert result.message == "Missing field: results[*].file (results[2].file is missing)"
    assert result.path == "results[2].file"


def test_has_field_single_string_form() -> None:
    assert passes({"has_field": "pagination.total"}, {"pagination": {"total": 0}})
    result = failure({"has_field": "pagination.total"}, {"pagination": {}})
    assert result.assertion == "has_field"
    assert result.message == "Missing field: pagination.total"


@pytest.mark.parametrize("bad", ["results", [], None, {"a": 1}])
def test_has_fields_needs_a_non_empty_list(bad: Any) -> None:
    assert problems({"has_fields": bad}) == [
        (
            "expect.has_fields",
            f"expected a non-empty list of paths such as ['results'], got {bad!r}",
        )
    ]


def test_has_fields_bad_paths_are_reported_with_their_index() -> None:
    assert problems({"has_fields": ["ok", "a..b", 3]}) == [
        ("expect.has_fields[1]", "invalid path 'a..b': empty segment at column 3"),
        ("expect.has_fields[2]", "expected a path string such as 'results[*].file', got 3"),
    ]


def test_has_field_bad_path() -> None:
    assert problems({"has_field": "results["}) == [
        ("expect.has_field", "invalid path 'results[': unexpected '[' at column 8")
    ]


# --- field_equals ---------------------------------------------------------------------------


def test_field_equals_map_form_checks_every_pair() -> None:
    response = {"pagination": {"offset": 0, "limit": 5}, "status": "success"}
    assert passes({"field_equals": {"pagination.offset": 0, "pagination.limit": 5}}, response)


def test_field_equals_path_value_form() -> None:
    assert passes(
        {"field_equals": {"path": "pagination.offset", "value": 0}}, {"pagination": {"offset": 0}}
    )
    result = failure(
        {"field_equals": {"path": "pagination.offset", "value": 0}}, {"pagination": {"offset": 10}}
    )
    assert result.message == "pagination.offset: expected 0, got 10"


def test_field_equals_fields_literally_named_path_and_value() -> None:
    # Quoting one key keeps the map form (docs/decisions.md).
    expect = {"field_equals": {'["path"]': "/tmp", "value": 1}}
    assert passes(expect, {"path": "/tmp", "value": 1})
    assert failure(expect, {"path": "/tmp", "value": 2}).message == "value: expected 1, got 2"


def test_field_equals_map_form_with_a_field_named_path() -> None:
    # Only exactly {path, value} is the two-key form; anything else is a map of paths.
    assert passes(
        {"field_equals": {"path": "/tmp", "status": "ok"}},
        {
            "path": "/tmp",
            "status": "ok",
        },
    )


@pytest.mark.parametrize(
    ("expected", "actual", "message"),
    [
        (1, True, "a: expected 1, got true"),
        (True, 1, "a: expected true, got 1"),
        (0, "0", "a: expected 0, got '0'"),
        ("0", 0, "a: expected '0', got 0"),
        (0, False, "a: expected 0, got false"),
        (None, 0, "a: expected null, got 0"),
        ([1, 2], [2, 1], "a: expected [1,2], got [2,1]"),
    ],
)
def test_field_equals_is_strictly_typed(expected: Any, actual: Any, message: str) -> None:
    assert failure({"field_equals": {"a": expected}}, {"a": actual}).message == message


def test_field_equals_int_equals_float() -> None:
    assert passes({"field_equals": {"a": 1}}, {"a": 1.0})
    assert passes({"field_equals": {"a": 1.0}}, {"a": 1})


def test_field_equals_objects_ignore_key_order() -> None:
    assert passes(
        {"field_equals": {"a": {"x": 1, "y": [1, {"z": True}]}}},
        {"a": {"y": [1, {"z": True}], "x": 1.0}},
    )
    assert not passes({"field_equals": {"a": {"x": 1}}}, {"a": {"x": 1, "y": 2}})


def test_field_equals_null_value_exists_and_compares() -> None:
    assert passes({"field_equals": {"next": None}}, {"next": None})


def test_field_equals_missing_path_names_the_segment() -> None:
    result = failure({"field_equals": {"pagination.offset": 0}}, {"pagination": {}})
    assert result.message == "pagination.offset: expected 0, but pagination.offset is missing"
    assert result.path == "pagination.offset"
    result = failure({"field_equals": {"pagination.offset": 0}}, {"status": "ok"})
    assert result.message == "pagination.offset: expected 0, but pagination is missing"
    assert result.path == "pagination"


def test_field_equals_reports_every_mismatch() -> None:
    result = failure({"field_equals": {"a": 1, "b": 2, "c": 3}}, {"a": 1, "b": 3, "c": 4})
    assert result.message == "b: expected 2, got 3; c: expected 3, got 4"
    assert result.path == "b"


def test_field_equals_through_a_wildcard_checks_each_item() -> None:
    expect = {"field_equals": {"results[*].type": "note"}}
    assert passes(expect, {"results": [{"type": "note"}, {"type": "note"}]})
    result = failure(expect, {"results": [{"type": "note"}, {"type": "log"}]})
    assert result.message == "results[1].type: expected 'note', got 'log'"


def test_field_equals_on_text_without_json() -> None:
    assert failure({"field_equals": {"a": 1}}, "no json here").message == "response is not JSON"


@pytest.mark.parametrize("bad", [{}, [], "a", None])
def test_field_equals_needs_a_mapping(bad: Any) -> None:
    assert problems({"field_equals": bad}) == [
        (
            "expect.field_equals",
            f"expected a mapping such as {{'pagination.offset': 0}}, got {bad!r}",
        )
    ]


def test_field_equals_bad_path_is_located() -> None:
    assert problems({"field_equals": {"ok": 1, "a[": 2}}) == [
        ("expect.field_equals.a[", "invalid path 'a[': unexpected '[' at column 2")
    ]
    assert problems({"field_equals": {"path": "a..b", "value": 1}}) == [
        ("expect.field_equals.path", "invalid path 'a..b': empty segment at column 3")
    ]


# --- field_contains -------------------------------------------------------------------------


def test_field_contains_pass_nested() -> None:
    expect = {"field_contains": {"path": "report.summary", "text": "security"}}
    assert passes(expect, {"report": {"summary": "3 security incidents"}})


def test_field_contains_fail_messages() -> None:
    expect = {"field_contains": {"path": "summary", "text": "security"}}
    assert failure(expect, {"summary": "3 incidents"}).message == (
        "summary: expected to contain 'security', got '3 incidents'"
    )
    assert failure(expect, {"summary": "Security"}).message == (
        "summary: expected to contain 'security', got 'Security' "
        "(a case-insensitive match exists; this check is case-sensitive)"
    )
    assert failure(expect, {"summary": None}).message == (
        "summary: expected a string containing 'security', got null"
    )
    assert failure(expect, {}).message == "Missing field: summary"


def test_field_contains_parameters() -> None:
    assert problems({"field_contains": {"path": "summary"}}) == [
        (
            "expect.field_contains.text",
            'required parameter is missing (e.g. {path: "summary", text: "security"})',
        )
    ]
    assert problems({"field_contains": {"path": "s", "text": "t", "regex": "x"}}) == [
        (
            "expect.field_contains.regex",
            'unknown parameter (allowed: path, text) (e.g. {path: "summary", text: "security"})',
        )
    ]
    assert problems({"field_contains": {"path": "results[*].summary", "text": "t"}}) == [
        (
            "expect.field_contains.path",
            "field_contains takes one field; use all_match_pattern for [*]",
        )
    ]
    [(location, message)] = problems({"field_contains": {"path": "s", "text": 3}})
    assert location == "expect.field_contains.text"
    assert message.startswith("input should be a valid string, got 3")


# --- responses without JSON -----------------------------------------------------------------


@pytest.mark.parametrize(
    "expect",
    [
        {"status": "success"},
        {"error_code": "X"},
        {"message_contains": "x"},
        {"summary_contains": "x"},
        {"has_fields": ["results"]},
        {"has_field": "results"},
        {"field_equals": {"status": "ok"}},
        {"field_contains": {"path": "summary", "text": "x"}},
    ],
    ids=lambda e: next(iter(e)),
)
def test_field_assertions_fail_on_text_without_json(expect: dict[str, Any]) -> None:
    result = failure(expect, "I could not find anything about that, sorry.")
    assert result.message == "response is not JSON"


def test_text_without_json_fails_fields_while_contains_works() -> None:
    result = assertly.compile({"status": "success", "contains": "sorry"}).check(
        "I could not find anything, sorry."
    )
    assert result.outcome is Outcome.FAILED
    status, contains = result.results
    assert status.message == "response is not JSON"
    assert contains.outcome is Outcome.PASSED


def test_response_is_not_json_shows_the_start_of_the_response() -> None:
    result = assertly.compile({"status": "ok"}).check("Sorry, " + "no. " * 100)
    failure = result.results[0]
    assert failure.message == "response is not JSON"
    assert failure.actual.startswith("Sorry, no. no.")
    assert len(failure.actual) == 120 and failure.actual.endswith("…")
