"""Every example of the expect-dict reference (seed 000), reproduced verdict and message.

Each "Test expects / Response has -> PASS/FAIL" block of the seed is one test here. Where the
seed quotes a failure message, the message is checked word for word. Two seed messages are
settled by the spec (section A: "Wildcard failures name the index"): the ``all_match_pattern``
example therefore reads ``File 'work/document.md' at results[1] doesn't match pattern ...``.
"""

from __future__ import annotations

from typing import Any

import pytest

import assertly
from assertly import AssertionResult, CheckResult, Outcome

# The seed's sensitive prefixes (a project's config sets them; the engine has none).
SEED_PREFIXES = ["people/", "documents/"]


def check(expect: dict[str, Any], response: Any, **kwargs: Any) -> CheckResult:
    return assertly.compile(expect, sensitive_prefixes=SEED_PREFIXES).check(response, **kwargs)


def only(expect: dict[str, Any], response: Any, **kwargs: Any) -> AssertionResult:
    result = check(expect, response, **kwargs)
    assert len(result.results) == 1
    return result.results[0]


def assert_pass(expect: dict[str, Any], response: Any) -> None:
    result = check(expect, response)
    assert result.passed, [r.message for r in result.results]
    assert result.outcome is Outcome.PASSED
    assert result.score == 1.0
    assert all(r.message == "" for r in result.results if r.outcome is Outcome.PASSED)


def assert_fail(expect: dict[str, Any], response: Any, message: str) -> AssertionResult:
    result = check(expect, response)
    assert not result.passed
    assert result.outcome is Outcome.FAILED
    assert len(result.results) == 1
    assert result.results[0].outcome is Outcome.FAILED
    assert result.results[0].passed is False
    assert result.results[0].message == message
    return result.results[0]


# --- status ---------------------------------------------------------------------------------


def test_status_pass() -> None:
    assert_pass({"status": "success"}, {"status": "success"})


def test_status_fail() -> None:
    failure = assert_fail(
        {"status": "success"}, {"status": "error"}, "Expected status 'success', got 'error'"
    )
    assert failure.expected == "success"
    assert failure.actual == "error"
    assert failure.path == "status"


# --- contains -------------------------------------------------------------------------------


def test_contains_pass() -> None:
    assert_pass({"contains": "security"}, {"summary": "Found 3 security incidents"})


# --- results_min ----------------------------------------------------------------------------


def test_results_min_pass() -> None:
    assert_pass({"results_min": 1}, {"results": [{"file": "a.md"}, {"file": "b.md"}]})


def test_results_min_fail() -> None:
    failure = assert_fail({"results_min": 1}, {"results": []}, "Expected at least 1 result, got 0")
    assert failure.expected == 1
    assert failure.actual == 0


# --- has_fields -----------------------------------------------------------------------------


def test_has_fields_pass() -> None:
    assert_pass(
        {"has_fields": ["results", "pagination.total"]},
        {"results": [{"file": "a.md"}], "pagination": {"total": 10, "offset": 0}},
    )


def test_has_fields_fail() -> None:
    assert_fail(
        {"has_fields": ["results", "pagination.total"]},
        {"results": [{"file": "a.md"}], "pagination": {"offset": 0}},
        "Missing field: pagination.total",
    )


# --- field_equals ---------------------------------------------------------------------------


def test_field_equals_pass() -> None:
    assert_pass(
        {"field_equals": {"pagination.offset": 0, "status": "success"}},
        {"pagination": {"offset": 0}, "status": "success"},
    )


def test_field_equals_fail() -> None:
    failure = assert_fail(
        {"field_equals": {"pagination.offset": 0, "status": "success"}},
        {"pagination": {"offset": 5}, "status": "success"},
        "pagination.offset: expected 0, got 5",
    )
    assert failure.expected == 0
    assert failure.actual == 5


# --- all_match ------------------------------------------------------------------------------


def test_all_match_pass() -> None:
    assert_pass(
        {"all_match": {"path": "results[*].type", "value": "note"}},
        {"results": [{"type": "note"}, {"type": "note"}]},
    )


def test_all_match_fail() -> None:
    failure = assert_fail(
        {"all_match": {"path": "results[*].type", "value": "note"}},
        {"results": [{"type": "note"}, {"type": "incident-log"}]},
        "Found non-matching item: 'incident-log' at results[1].type",
    )
    assert failure.path == "results[1].type"
    assert failure.actual == "incident-log"


# --- all_match_pattern ----------------------------------------------------------------------


def test_all_match_pattern_pass() -> None:
    assert_pass(
        {"all_match_pattern": {"path": "results[*].file", "regex": "^journal/"}},
        {"results": [{"file": "journal/2026/01/note.md"}, {"file": "journal/2026/02/entry.md"}]},
    )


def test_all_match_pattern_fail_names_the_index() -> None:
    # Seed: "File 'work/document.md' doesn't match pattern '^journal/'"; the spec adds the
    # index ("Wildcard failures name the index"), as in the seed's own worked example.
    failure = assert_fail(
        {"all_match_pattern": {"path": "results[*].file", "regex": "^journal/"}},
        {"results": [{"file": "journal/2026/01/note.md"}, {"file": "work/document.md"}]},
        "File 'work/document.md' at results[1] doesn't match pattern '^journal/'",
    )
    assert failure.path == "results[1].file"


# --- all_have_tags --------------------------------------------------------------------------


def test_all_have_tags_pass() -> None:
    assert_pass(
        {"all_have_tags": ["work", "security"]},
        {
            "results": [
                {"metadata": {"tags": ["work", "security", "incident"]}},
                {"metadata": {"tags": ["work", "security"]}},
            ]
        },
    )


def test_all_have_tags_fail() -> None:
    failure = assert_fail(
        {"all_have_tags": ["work", "security"]},
        {
            "results": [
                {"metadata": {"tags": ["work"]}},
                {"metadata": {"tags": ["work", "security"]}},
            ]
        },
        "Result 0 missing required tag: 'security'",
    )
    assert failure.path == "results[0].metadata.tags"


# --- all_dates_between ----------------------------------------------------------------------

JANUARY = {
    "all_dates_between": {
        "path": "results[*].metadata.created",
        "start": "2026-01-01T00:00:00Z",
        "end": "2026-01-31T23:59:59Z",
    }
}


def test_all_dates_between_pass() -> None:
    assert_pass(
        JANUARY,
        {
            "results": [
                {"metadata": {"created": "2026-01-15T10:00:00Z"}},
                {"metadata": {"created": "2026-01-28T14:30:00Z"}},
            ]
        },
    )


def test_all_dates_between_fail() -> None:
    failure = assert_fail(
        JANUARY,
        {"results": [{"metadata": {"created": "2026-02-05T10:00:00Z"}}]},
        "Date 2026-02-05 is outside range 2026-01-01 to 2026-01-31",
    )
    assert failure.path == "results[0].metadata.created"


# --- all_in_range ---------------------------------------------------------------------------

RELEVANCE = {"all_in_range": {"path": "results[*].relevance", "min": 0.0, "max": 1.0}}


def test_all_in_range_pass() -> None:
    assert_pass(
        RELEVANCE, {"results": [{"relevance": 0.95}, {"relevance": 0.87}, {"relevance": 1.0}]}
    )


def test_all_in_range_fail() -> None:
    failure = assert_fail(
        RELEVANCE, {"results": [{"relevance": 1.2}]}, "Value 1.2 is outside range 0.0-1.0"
    )
    assert failure.path == "results[0].relevance"
    assert failure.actual == 1.2


# --- sorted_desc ----------------------------------------------------------------------------


def test_sorted_desc_pass() -> None:
    assert_pass(
        {"sorted_desc": {"path": "results[*].relevance"}},
        {"results": [{"relevance": 1.0}, {"relevance": 0.9}, {"relevance": 0.85}]},
    )


def test_sorted_desc_fail() -> None:
    assert_fail(
        {"sorted_desc": {"path": "results[*].relevance"}},
        {"results": [{"relevance": 0.9}, {"relevance": 1.0}, {"relevance": 0.85}]},
        "Values not sorted descending at index 1",
    )


# --- one_of ---------------------------------------------------------------------------------

ERROR_OR_FILTER = {"one_of": [{"status": "error"}, {"contains": "filter"}]}


def test_one_of_pass_by_second_alternative() -> None:
    result = only(ERROR_OR_FILTER, {"status": "success", "message": "Please provide a filter"})
    assert result.outcome is Outcome.PASSED
    assert [child.outcome for child in result.children] == [Outcome.FAILED, Outcome.PASSED]


def test_one_of_fail() -> None:
    assert_fail(
        ERROR_OR_FILTER,
        {"status": "success", "message": "Done"},
        "Neither status is 'error' nor response contains 'filter'",
    )


# --- if_results -----------------------------------------------------------------------------

IF_WORK = {"if_results": {"all_have_tags": ["work"]}}


def test_if_results_no_results_passes_as_skipped() -> None:
    result = check(IF_WORK, {"results": []})
    assert result.passed
    assert result.results[0].outcome is Outcome.SKIPPED
    assert result.results[0].passed is True


def test_if_results_with_tagged_results_passes() -> None:
    result = check(IF_WORK, {"results": [{"metadata": {"tags": ["work"]}}]})
    assert result.passed
    assert result.results[0].outcome is Outcome.PASSED


def test_if_results_missing_tag_fails() -> None:
    # Word for word from the seed. With a single result the index is left out ("Result
    # missing ..."); among several it is named ("Result 0 missing ...", as above).
    failure = assert_fail(
        IF_WORK,
        {"results": [{"metadata": {"tags": ["personal"]}}]},
        "Result missing required tag: 'work'",
    )
    assert failure.children[0].assertion == "all_have_tags"
    assert failure.children[0].path == "results[0].metadata.tags"


# --- the worked example ---------------------------------------------------------------------


def test_worked_example_fails_one_of_three() -> None:
    expect = {
        "status": "success",
        "results_max": 5,
        "all_match_pattern": {"path": "results[*].file", "regex": "^journal/"},
    }
    response = {
        "status": "success",
        "results": [
            {"file": "journal/2026/01/incident.md"},
            {"file": "journal/2026/01/review.md"},
            {"file": "work/security-doc.md"},
        ],
    }
    result = check(expect, response)
    assert result.outcome is Outcome.FAILED
    assert not result.passed
    assert [r.assertion for r in result.results] == ["status", "results_max", "all_match_pattern"]
    assert [r.outcome for r in result.results] == [Outcome.PASSED, Outcome.PASSED, Outcome.FAILED]
    assert len(result.failures) == 1
    failure = result.failures[0]
    assert failure.message == (
        "File 'work/security-doc.md' at results[2] doesn't match pattern '^journal/'"
    )
    assert failure.path == "results[2].file"
    assert failure.expected == "^journal/"
    assert failure.actual == "work/security-doc.md"
    assert result.score == pytest.approx(2 / 3)


def test_worked_example_passes_once_fixed() -> None:
    expect = {
        "status": "success",
        "results_max": 5,
        "all_match_pattern": {"path": "results[*].file", "regex": "^journal/"},
    }
    response = {
        "status": "success",
        "results": [{"file": "journal/2026/01/incident.md"}, {"file": "journal/x.md"}],
    }
    assert check(expect, response).passed


# --- array path notation (the seed's "Array Path Notation" tip) -----------------------------


def test_array_path_notation_extracts_each_items_field() -> None:
    response = {"results": [{"metadata": {"type": "note"}}, {"metadata": {"type": "log"}}]}
    assert check(
        {"all_match_one_of": {"path": "results[*].metadata.type", "values": ["note", "log"]}},
        response,
    ).passed
    assert_fail(
        {"all_match": {"path": "results[*].metadata.type", "value": "note"}},
        response,
        "Found non-matching item: 'log' at results[1].metadata.type",
    )


# --- every "Format:" line of the seed compiles ----------------------------------------------

SEED_FORMATS: list[dict[str, Any]] = [
    {"status": "success"},
    {"error_code": "NO_FILTERS"},
    {"contains": "filter"},
    {"message_contains": "error"},
    {"summary_contains": "no results"},
    {"results_min": 1},
    {"results_max": 10},
    {"results_count": 5},
    {"has_fields": ["results", "summary", "pagination.total"]},
    {"field_equals": {"pagination.offset": 0}},
    {"field_contains": {"path": "summary", "text": "security"}},
    {"all_match": {"path": "results[*].metadata.type", "value": "note"}},
    {"all_match_one_of": {"path": "results[*].type", "values": ["note", "incident-log"]}},
    {"all_match_pattern": {"path": "results[*].file", "regex": "^journal/"}},
    {"none_match_pattern": {"path": "results[*].file", "regex": "^(people/|documents/)"}},
    {"all_have_tags": ["work", "security"]},
    {"none_have_tags": ["draft"]},
    {"each_has_any_tag": ["work", "personal"]},
    JANUARY,
    {"dates_within_days": {"path": "results[*].metadata.created", "days": 7}},
    RELEVANCE,
    {"range_check": {"path": "performance.search_duration_ms", "min": 0, "max": 5000}},
    {"sorted_desc": {"path": "results[*].relevance"}},
    {"array_contains": {"path": "sensitive_dirs_skipped", "values": ["people/", "documents/"]}},
    ERROR_OR_FILTER,
    IF_WORK,
    {"if_has_history": {"all_match": {"path": "history_results[*].operation", "value": "delete"}}},
    {"if_sensitive_results": {"has_field": "sensitive", "value": True}},
]


@pytest.mark.parametrize("expect", SEED_FORMATS, ids=lambda e: next(iter(e)))
def test_every_seed_format_compiles(expect: dict[str, Any]) -> None:
    expectation = assertly.compile(expect, sensitive_prefixes=SEED_PREFIXES)
    assert expectation.dialect == "expect"
    assert len(expectation) == 1
    assert expectation.describe()[0]
