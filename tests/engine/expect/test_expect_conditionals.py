"""Conditional assertions (engine/expect/conditionals.py): ``one_of`` and the ``if_*`` family.

``one_of`` passes when any alternative passes entirely; otherwise it fails, or errors when every
alternative errored. An ``if_*`` whose condition does not hold (including a response that is
not JSON) is ``skipped``, which counts as passing.
"""

from __future__ import annotations

from typing import Any

import pytest

import assertly
from assertly import AssertionResult, CheckResult, ConfigError, Outcome

# The seed's sensitive prefixes: the engine has none by default, a project's config sets them.
SEED_PREFIXES = ["people/", "documents/"]


def check(expect: dict[str, Any], response: Any, **kwargs: Any) -> CheckResult:
    sensitive = kwargs.pop("sensitive_prefixes", SEED_PREFIXES)
    return assertly.compile(expect, sensitive_prefixes=sensitive).check(response, **kwargs)


def only(expect: dict[str, Any], response: Any, **kwargs: Any) -> AssertionResult:
    result = check(expect, response, **kwargs)
    assert len(result.results) == 1
    return result.results[0]


def problems(expect: Any) -> list[tuple[str, str]]:
    with pytest.raises(ConfigError) as caught:
        assertly.compile(expect, sensitive_prefixes=SEED_PREFIXES)
    return [(p.location, p.message) for p in caught.value.problems]


ERROR_OR_FILTER = {"one_of": [{"status": "error"}, {"contains": "filter"}]}

# --- one_of ---------------------------------------------------------------------------------


def test_one_of_first_alternative_passes() -> None:
    result = only(ERROR_OR_FILTER, {"status": "error", "message": "bad input"})
    assert result.outcome is Outcome.PASSED
    assert result.score == 1.0
    assert result.message == ""
    assert [c.assertion for c in result.children] == ["one_of[0]"]


def test_one_of_later_alternative_passes_and_keeps_the_earlier_failures() -> None:
    result = only(ERROR_OR_FILTER, {"status": "success", "message": "Please provide a filter"})
    assert result.outcome is Outcome.PASSED
    first, second = result.children
    assert (first.assertion, first.outcome) == ("one_of[0]", Outcome.FAILED)
    assert first.message == "Expected status 'error', got 'success'"
    assert (second.assertion, second.outcome) == ("one_of[1]", Outcome.PASSED)


def test_one_of_two_alternatives_fail_message() -> None:
    result = only(ERROR_OR_FILTER, {"status": "success", "message": "Done"})
    assert result.outcome is Outcome.FAILED
    assert result.message == "Neither status is 'error' nor response contains 'filter'"
    assert [c.outcome for c in result.children] == [Outcome.FAILED, Outcome.FAILED]
    assert [c.message for c in result.children] == [
        "Expected status 'error', got 'success'",
        "Response does not contain 'filter'",
    ]


def test_one_of_three_alternatives_lists_them_all() -> None:
    expect = {
        "one_of": [
            {"status": "error"},
            {"contains": "filter"},
            {"error_code": "NO_FILTERS"},
        ]
    }
    result = only(expect, {"status": "success", "message": "Done"})
    assert result.outcome is Outcome.FAILED
    assert result.message == (
        "None of: status is 'error'; response contains 'filter'; error_code is 'NO_FILTERS'"
    )
    assert len(result.children) == 3
    assert only(expect, {"status": "success", "error_code": "NO_FILTERS"}).passed


def test_one_of_alternative_must_pass_entirely() -> None:
    expect = {"one_of": [{"status": "error", "contains": "filter"}, {"results_min": 1}]}
    assert only(expect, {"status": "error", "message": "filter needed"}).passed
    result = only(expect, {"status": "error", "message": "bad"})
    assert result.outcome is Outcome.FAILED
    assert result.message == (
        "Neither (status is 'error' and response contains 'filter') "
        "nor the response has at least 1 result"
    )
    assert result.children[0].message == "Response does not contain 'filter'"
    assert [c.outcome for c in result.children[0].children] == [Outcome.PASSED, Outcome.FAILED]


def test_one_of_every_alternative_errored_is_an_error() -> None:
    expect = {
        "one_of": [{"agent_used_model": "gpt-4o"}, {"no_overlap": {"path": "ids", "with": "p1"}}]
    }
    result = check(expect, {"ids": [1]})
    assert result.outcome is Outcome.ERROR
    assert not result.passed
    one_of = result.results[0]
    assert one_of.outcome is Outcome.ERROR
    assert one_of.passed is False
    assert (
        one_of.message
        == "Neither the agent used model 'gpt-4o' nor ids shares nothing with step 'p1'"
    )
    assert [c.outcome for c in one_of.children] == [Outcome.ERROR, Outcome.ERROR]


def test_one_of_an_error_and_a_failure_is_a_failure() -> None:
    expect = {"one_of": [{"agent_used_model": "gpt-4o"}, {"status": "ok"}]}
    result = only(expect, {"status": "no"})
    assert result.outcome is Outcome.FAILED
    assert [c.outcome for c in result.children] == [Outcome.ERROR, Outcome.FAILED]


def test_one_of_an_error_then_a_pass_is_a_pass() -> None:
    expect = {"one_of": [{"agent_used_model": "gpt-4o"}, {"status": "ok"}]}
    assert only(expect, {"status": "ok"}).outcome is Outcome.PASSED


def test_one_of_on_text_without_json() -> None:
    expect = {"one_of": [{"status": "error"}, {"contains": "sorry"}]}
    assert only(expect, "I am sorry, I found nothing.").passed
    result = only(expect, "Nothing found.")
    assert result.children[0].message == "response is not JSON"


def test_one_of_parameters() -> None:
    assert problems({"one_of": [{"status": "a"}]}) == [
        ("expect.one_of", 'expected a list of at least two expect dicts, got [{"status":"a"}]')
    ]
    assert problems({"one_of": {"status": "a"}}) == [
        ("expect.one_of", 'expected a list of at least two expect dicts, got {"status":"a"}')
    ]
    assert problems({"one_of": [{"status": "a"}, {}]}) == [
        ("expect.one_of[1]", "an alternative needs at least one assertion")
    ]
    assert problems({"one_of": [{"status": "a"}, "contains"]}) == [
        ("expect.one_of[1]", 'expected a mapping of assertions, got "contains"')
    ]


def test_one_of_nested_problems_are_located_and_all_collected() -> None:
    assert problems({"one_of": [{"stauts": "error"}, {"contains": 1, "results_min": -1}]}) == [
        ("expect.one_of[0].stauts", "unknown assertion 'stauts' (did you mean 'status'?)"),
        ("expect.one_of[1].contains", "expected a non-empty string to look for, got 1"),
        ("expect.one_of[1].results_min", "expected a whole number >= 0, got -1"),
    ]


# --- if_results -----------------------------------------------------------------------------

IF_WORK = {"if_results": {"all_have_tags": ["work"]}}


@pytest.mark.parametrize(
    ("response", "message"),
    [
        ({"results": []}, "skipped: the response has no results"),
        ({"status": "success"}, "skipped: the response has no results"),
        ({"results": None}, "skipped: the response has no results"),
        ({"results": {"a": 1}}, "skipped: the response has no results"),
        ([{"metadata": {"tags": ["x"]}}], "skipped: the response has no results"),
        ("I found nothing at all.", "skipped: the response is not JSON"),
    ],
)
def test_if_results_skips_without_results(response: Any, message: str) -> None:
    result = check(IF_WORK, response)
    assert result.passed
    assert result.outcome is Outcome.PASSED
    assert result.score == 1.0
    skipped = result.results[0]
    assert skipped.outcome is Outcome.SKIPPED
    assert skipped.passed is True
    assert skipped.score == 1.0
    assert skipped.message == message
    assert skipped.children == ()


def test_if_results_checks_non_empty_results() -> None:
    result = only(IF_WORK, {"results": [{"metadata": {"tags": ["work"]}}]})
    assert result.outcome is Outcome.PASSED
    assert [c.assertion for c in result.children] == ["all_have_tags"]


def test_if_results_failure_carries_the_nested_messages() -> None:
    expect = {"if_results": {"all_have_tags": ["work"], "results_max": 1, "status": "success"}}
    response = {"status": "success", "results": [{"metadata": {"tags": ["work"]}}, {}]}
    result = only(expect, response)
    assert result.outcome is Outcome.FAILED
    assert result.score == 0.0
    assert result.message == (
        "Result 1 missing required tag: 'work'; Expected at most 1 result, got 2"
    )
    assert [c.outcome for c in result.children] == [
        Outcome.FAILED,
        Outcome.FAILED,
        Outcome.PASSED,
    ]


def test_if_results_nested_error_is_an_error() -> None:
    result = check({"if_results": {"agent_used_model": "gpt-4o"}}, {"results": [1]})
    assert result.outcome is Outcome.ERROR
    assert result.results[0].outcome is Outcome.ERROR


def test_if_results_with_text_response_holding_json() -> None:
    text = 'Here you go:\n```json\n{"results": [{"metadata": {"tags": ["personal"]}}]}\n```'
    result = only(IF_WORK, text)
    assert result.outcome is Outcome.FAILED
    assert result.message == "Result missing required tag: 'work'"


# --- if_has_history -------------------------------------------------------------------------

IF_HISTORY = {
    "if_has_history": {"all_match": {"path": "history_results[*].operation", "value": "delete"}}
}


def test_if_has_history_skips_without_the_field() -> None:
    result = only(IF_HISTORY, {"results": [{"operation": "update"}]})
    assert result.outcome is Outcome.SKIPPED
    assert result.message == "skipped: the response has no history_results"
    assert only(IF_HISTORY, "plain text").outcome is Outcome.SKIPPED


def test_if_has_history_checks_when_present() -> None:
    ok = {"history_results": [{"operation": "delete"}, {"operation": "delete"}]}
    assert only(IF_HISTORY, ok).outcome is Outcome.PASSED
    result = only(
        IF_HISTORY, {"history_results": [{"operation": "delete"}, {"operation": "update"}]}
    )
    assert result.outcome is Outcome.FAILED
    assert result.message == "Found non-matching item: 'update' at history_results[1].operation"


def test_if_has_history_present_even_when_empty_or_null() -> None:
    # A field whose value is null exists, so the nested assertions run.
    empty = only(IF_HISTORY, {"history_results": []})
    assert empty.outcome is Outcome.PASSED
    assert empty.children[0].details == {"vacuous": True}
    null = only(IF_HISTORY, {"history_results": None})
    assert null.outcome is Outcome.FAILED
    assert null.message == (
        "Missing field: history_results[*].operation (history_results is a null, not an array)"
    )


# --- if_sensitive_results -------------------------------------------------------------------

SENSITIVE_FLAG = {"if_sensitive_results": {"has_field": "sensitive", "value": True}}


def test_if_sensitive_results_skips_without_sensitive_files() -> None:
    response = {"results": [{"file": "journal/a.md"}, {"file": "work/people/b.md"}, {"x": 1}]}
    result = only(SENSITIVE_FLAG, response)
    assert result.outcome is Outcome.SKIPPED
    assert result.message == "skipped: the response has no sensitive results"
    assert only(SENSITIVE_FLAG, {"status": "ok"}).outcome is Outcome.SKIPPED
    assert only(SENSITIVE_FLAG, "no json").outcome is Outcome.SKIPPED


def test_has_field_value_form_checks_every_sensitive_result() -> None:
    response = {
        "results": [
            {"file": "people/alice.md", "sensitive": True},
            {"file": "journal/a.md"},  # not sensitive: needs no flag
            {"file": "documents/contract.pdf", "sensitive": True},
        ]
    }
    result = only(SENSITIVE_FLAG, response)
    assert result.outcome is Outcome.PASSED
    assert [c.assertion for c in result.children] == ["has_field"]


def test_has_field_value_form_missing_field() -> None:
    response = {"results": [{"file": "journal/a.md"}, {"file": "documents/b.md"}]}
    result = only(SENSITIVE_FLAG, response)
    assert result.outcome is Outcome.FAILED
    assert result.message == "Sensitive result 1 ('documents/b.md') has no field 'sensitive'"
    assert result.children[0].path == "results[1].sensitive"


def test_has_field_value_form_wrong_value_is_strict() -> None:
    response = {"results": [{"file": "people/bob.md", "sensitive": 1}]}
    result = only(SENSITIVE_FLAG, response)
    assert result.message == "Sensitive result 0 ('people/bob.md'): sensitive expected true, got 1"
    assert result.children[0].actual == 1


def test_has_field_value_form_with_a_nested_field() -> None:
    expect = {"if_sensitive_results": {"has_field": "metadata.redacted", "value": "yes"}}
    ok = {"results": [{"file": "people/a.md", "metadata": {"redacted": "yes"}}]}
    assert only(expect, ok).passed
    bad = {"results": [{"file": "people/a.md", "metadata": {}}]}
    assert only(expect, bad).message == (
        "Sensitive result 0 ('people/a.md') has no field 'metadata.redacted'"
    )


def test_custom_sensitive_prefixes() -> None:
    hr = {"results": [{"file": "hr/salaries.csv"}]}
    people = {"results": [{"file": "people/alice.md"}]}
    assert only(SENSITIVE_FLAG, hr).outcome is Outcome.SKIPPED
    assert only(SENSITIVE_FLAG, people).outcome is Outcome.FAILED
    custom = {"sensitive_prefixes": ["hr/", "medical/"]}
    result = only(SENSITIVE_FLAG, hr, **custom)
    assert result.outcome is Outcome.FAILED
    assert result.message == "Sensitive result 0 ('hr/salaries.csv') has no field 'sensitive'"
    assert only(SENSITIVE_FLAG, people, **custom).outcome is Outcome.SKIPPED


@pytest.mark.parametrize("prefixes", [None, []], ids=["default", "empty"])
def test_if_sensitive_results_without_prefixes_is_a_configuration_error(
    prefixes: list[str] | None,
) -> None:
    # No prefix would make no result sensitive, and the assertion pass without looking.
    with pytest.raises(ConfigError) as info:
        assertly.compile(SENSITIVE_FLAG, sensitive_prefixes=prefixes)
    (problem,) = info.value.problems
    assert problem.location == "expect.if_sensitive_results"
    assert "no sensitive prefixes are set" in problem.message
    assert "sensitive_prefixes" in problem.message
    nested = {"if_results": {"if_sensitive_results": {"field_equals": {"redacted": True}}}}
    with pytest.raises(ConfigError) as info:
        assertly.compile(nested, sensitive_prefixes=prefixes)
    assert [p.location for p in info.value.problems] == ["expect.if_results.if_sensitive_results"]


def test_the_engine_knows_no_sensitive_prefixes_of_its_own() -> None:
    from assertly.engine._base import Options

    assert Options().sensitive_prefixes == ()


def test_if_sensitive_results_nested_expect_form() -> None:
    expect = {"if_sensitive_results": {"field_equals": {"redacted": True}}}
    response = {"results": [{"file": "documents/a.md"}], "redacted": False}
    result = only(expect, response)
    assert result.outcome is Outcome.FAILED
    assert result.message == "redacted: expected true, got false"
    assert only(expect, {"results": [{"file": "journal/a.md"}]}).outcome is Outcome.SKIPPED


def test_if_sensitive_results_prefixes_reach_nested_conditionals() -> None:
    expect = {"one_of": [{"status": "ok"}, SENSITIVE_FLAG]}
    result = check(expect, {"results": [{"file": "hr/x"}]}, sensitive_prefixes=["hr/"])
    assert result.outcome is Outcome.FAILED


# --- parameters of the if_* family ----------------------------------------------------------


@pytest.mark.parametrize("key", ["if_results", "if_has_history", "if_sensitive_results"])
def test_if_body_must_be_a_non_empty_expect_dict(key: str) -> None:
    assert problems({key: {}}) == [(f"expect.{key}", "expected at least one nested assertion")]
    assert problems({key: "status"}) == [
        (f"expect.{key}", 'expected a mapping of assertions, got "status"')
    ]
    assert problems({key: {"stauts": "ok", "results_min": "1"}}) == [
        (f"expect.{key}.stauts", "unknown assertion 'stauts' (did you mean 'status'?)"),
        (f"expect.{key}.results_min", "expected a whole number >= 0, got '1'"),
    ]


def test_has_field_form_parameters() -> None:
    assert problems({"if_sensitive_results": {"has_field": 3, "value": True}}) == [
        (
            "expect.if_sensitive_results.has_field",
            "expected a path string such as 'results[*].file', got 3",
        )
    ]
    assert problems({"if_sensitive_results": {"has_field": "a[*].b", "value": True}}) == [
        ("expect.if_sensitive_results.has_field", "expected a field of each result, without [*]")
    ]


def test_deeply_nested_problem_location() -> None:
    assert problems({"if_results": {"one_of": [{"status": "a"}, {"stauts": "b"}]}}) == [
        (
            "expect.if_results.one_of[1].stauts",
            "unknown assertion 'stauts' (did you mean 'status'?)",
        )
    ]


def test_describe() -> None:
    expectation = assertly.compile(
        {
            "if_results": {"status": "ok", "results_min": 2},
            "one_of": [{"status": "error"}, {"contains": "filter"}],
            "if_sensitive_results": {"has_field": "sensitive", "value": True},
        },
        sensitive_prefixes=SEED_PREFIXES,
    )
    assert expectation.describe() == [
        "if results: status is 'ok' and the response has at least 2 results",
        "one of: status is 'error'; response contains 'filter'",
        "if sensitive results: every sensitive result has sensitive = true",
    ]
