"""Load-time validation of expect dicts: unknown keys, bad parameters, every problem at once.

Spec A: any unknown key is never ignored and never a pass: compiling raises a configuration
error (``unknown assertion 'x' (did you mean 'y'?)``); all problems are reported together.
"""

from __future__ import annotations

from typing import Any

import pytest

import assertly
from assertly import ConfigError, Problem
from assertly.engine import REGISTRY


def problems(expect: Any, **kwargs: Any) -> list[tuple[str, str]]:
    with pytest.raises(ConfigError) as caught:
        assertly.compile(expect, **kwargs)
    return [(p.location, p.message) for p in caught.value.problems]


@pytest.mark.parametrize(
    ("key", "suggestion"),
    [
        ("stauts", "status"),
        ("Status", "status"),
        ("contians", "contains"),
        ("results_minimum", "results_min"),
        ("results-min", "results_min"),
        ("all_have_tag", "all_have_tags"),
        ("if_result", "if_results"),
        ("sorted_descending", "sorted_desc"),
        ("has_feilds", "has_fields"),
    ],
)
def test_unknown_key_with_did_you_mean(key: str, suggestion: str) -> None:
    assert problems({key: 1}) == [
        (f"expect.{key}", f"unknown assertion '{key}' (did you mean '{suggestion}'?)")
    ]


def test_unknown_key_without_a_close_name() -> None:
    assert problems({"zzqqxx": 1}) == [("expect.zzqqxx", "unknown assertion 'zzqqxx'")]


def test_unknown_key_is_never_ignored_next_to_valid_ones() -> None:
    assert problems({"status": "success", "stauts": "success"}) == [
        ("expect.stauts", "unknown assertion 'stauts' (did you mean 'status'?)")
    ]


def test_every_problem_of_a_dict_is_collected() -> None:
    found = problems(
        {
            "stauts": "ok",
            "status": "success",
            "results_min": -1,
            "all_match_pattern": {"path": "results[*", "regex": "("},
            "all_in_range": {"path": "results[*].relevance", "min": 1, "max": 0},
            "range_check": {"path": "x", "min": "0"},
            "has_fields": ["ok", "a..b"],
            "one_of": [{"contians": "x"}, {"status": "error"}],
            "if_results": {"all_have_tags": "work"},
            "dates_within_days": {"path": "results[*].d", "days": "7"},
        }
    )
    assert found == [
        ("expect.stauts", "unknown assertion 'stauts' (did you mean 'status'?)"),
        ("expect.results_min", "expected a whole number >= 0, got -1"),
        ("expect.all_match_pattern.path", "invalid path 'results[*': unexpected '[' at column 8"),
        (
            "expect.all_match_pattern.regex",
            "invalid regular expression '(': missing ), unterminated subpattern at position 0",
        ),
        ("expect.all_in_range", "min 1 is greater than max 0"),
        (
            "expect.range_check.min",
            "input should be a number, got '0' "
            '(e.g. {path: "results[*].relevance", min: 0.0, max: 1.0})',
        ),
        ("expect.has_fields[1]", "invalid path 'a..b': empty segment at column 3"),
        ("expect.one_of[0].contians", "unknown assertion 'contians' (did you mean 'contains'?)"),
        (
            "expect.if_results.all_have_tags",
            "expected a non-empty list of tag strings such as ['work'], got 'work'",
        ),
        (
            "expect.dates_within_days.days",
            "input should be a number, got '7' (e.g. {path: \"results[*].created\", days: 7})",
        ),
    ]


def test_config_error_message_lists_every_problem() -> None:
    with pytest.raises(ConfigError) as caught:
        assertly.compile({"stauts": 1, "results_min": -1})
    assert str(caught.value) == (
        "invalid expectation: 2 problems\n"
        "  - expect.stauts: unknown assertion 'stauts' (did you mean 'status'?)\n"
        "  - expect.results_min: expected a whole number >= 0, got -1"
    )
    assert caught.value.problems[0] == Problem(
        "expect.stauts", "unknown assertion 'stauts' (did you mean 'status'?)"
    )


def test_single_problem_message() -> None:
    with pytest.raises(ConfigError) as caught:
        assertly.compile({"contains": ""})
    assert str(caught.value) == (
        "invalid expectation: expect.contains: expected a non-empty string to look for, got ''"
    )


def test_location_prefix_from_the_loader() -> None:
    assert problems({"stauts": 1}, location="tests/search.yaml:12 [t1] expect") == [
        (
            "tests/search.yaml:12 [t1] expect.stauts",
            "unknown assertion 'stauts' (did you mean 'status'?)",
        )
    ]


def test_check_raises_config_error_too() -> None:
    with pytest.raises(ConfigError):
        assertly.check({"stauts": "ok"}, {"status": "ok"})


def test_empty_expect_dict_is_an_error() -> None:
    assert problems({}) == [("expect", "the expect dict has no assertions")]


def test_a_typed_assertion_mapping_is_pointed_at_the_list_form() -> None:
    assert problems({"type": "contains", "value": "x"}) == [
        (
            "expect",
            "this looks like one typed assertion ({type: ...}); "
            "write a list of them: [{type: ..., value: ...}]",
        )
    ]


def test_non_string_key() -> None:
    assert problems({1: "x"}) == [("expect.1", "unknown assertion '1'")]


def test_every_key_of_the_seed_and_spec_is_registered() -> None:
    names = set(REGISTRY.names("expect"))
    assert {
        "status",
        "error_code",
        "contains",
        "message_contains",
        "summary_contains",
        "results_min",
        "results_max",
        "results_count",
        "has_fields",
        "has_field",
        "field_equals",
        "field_contains",
        "all_match",
        "all_match_one_of",
        "all_match_pattern",
        "none_match_pattern",
        "all_have_tags",
        "none_have_tags",
        "each_has_any_tag",
        "all_dates_between",
        "dates_within_days",
        "all_dates_in_year",
        "all_in_range",
        "range_check",
        "sorted_desc",
        "sorted_asc",
        "array_contains",
        "results_schema",
        "one_of",
        "if_results",
        "if_has_history",
        "if_sensitive_results",
        "no_overlap",
        "agent_used_model",
    } <= names


def test_a_valid_expectation_compiles_once_and_checks_many() -> None:
    expectation = assertly.compile({"status": "success", "results_min": 1})
    assert repr(expectation) == "Expectation(expect, 2 assertions)"
    good = {"status": "success", "results": [{}]}
    bad = {"status": "success", "results": []}
    assert [expectation.check(r).passed for r in (good, bad, good)] == [True, False, True]
