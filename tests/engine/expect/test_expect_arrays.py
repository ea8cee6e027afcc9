"""Assertions over every value a path reaches (engine/expect/arrays.py).

``all_match``, ``all_match_one_of``, ``all_match_pattern``, ``none_match_pattern``,
``sorted_desc``, ``sorted_asc`` and ``array_contains``, plus the wildcard rules of spec A:
a missing or non-array array fails, an empty one passes vacuously (marked), and an item that
lacks the field fails, naming it.
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
    return result


def problems(expect: Any) -> list[tuple[str, str]]:
    with pytest.raises(ConfigError) as caught:
        assertly.compile(expect)
    return [(p.location, p.message) for p in caught.value.problems]


def items(field: str, *values: Any) -> dict[str, Any]:
    return {"results": [{field: value} for value in values]}


TYPE_IS_NOTE = {"all_match": {"path": "results[*].metadata.type", "value": "note"}}

WILDCARD_EXPECTS: list[dict[str, Any]] = [
    TYPE_IS_NOTE,
    {"all_match_one_of": {"path": "results[*].metadata.type", "values": ["note", "log"]}},
    {"all_match_pattern": {"path": "results[*].metadata.type", "regex": "^n"}},
    {"none_match_pattern": {"path": "results[*].metadata.type", "regex": "^x"}},
    {"sorted_desc": {"path": "results[*].metadata.type"}},
    {"sorted_asc": {"path": "results[*].metadata.type"}},
]


def key_of(expect: dict[str, Any]) -> str:
    return next(iter(expect))


# --- the wildcard rules, for every assertion of the family ----------------------------------


@pytest.mark.parametrize("expect", WILDCARD_EXPECTS, ids=key_of)
def test_empty_array_passes_vacuously(expect: dict[str, Any]) -> None:
    result = only(expect, {"results": []})
    assert result.outcome is Outcome.PASSED
    assert result.details == {"vacuous": True}


@pytest.mark.parametrize("expect", WILDCARD_EXPECTS, ids=key_of)
def test_non_empty_pass_is_not_vacuous(expect: dict[str, Any]) -> None:
    result = only(expect, {"results": [{"metadata": {"type": "note"}}]})
    assert result.outcome is Outcome.PASSED
    assert not (result.details or {}).get("vacuous")


@pytest.mark.parametrize("expect", WILDCARD_EXPECTS, ids=key_of)
def test_missing_array_fails(expect: dict[str, Any]) -> None:
    result = failure(expect, {"status": "success"})
    assert result.message == "Missing field: results[*].metadata.type (results is missing)"
    assert result.path == "results"


@pytest.mark.parametrize("expect", WILDCARD_EXPECTS, ids=key_of)
@pytest.mark.parametrize(
    ("value", "what"),
    [({"a": 1}, "an object"), ("note", "a string"), (None, "a null"), (3, "an integer")],
)
def test_non_array_fails(expect: dict[str, Any], value: Any, what: str) -> None:
    result = failure(expect, {"results": value})
    assert (
        result.message
        == f"Missing field: results[*].metadata.type (results is {what}, not an array)"
    )


@pytest.mark.parametrize("expect", WILDCARD_EXPECTS, ids=key_of)
def test_item_lacking_the_field_fails_naming_it(expect: dict[str, Any]) -> None:
    response = {"results": [{"metadata": {"type": "note"}}] * 3 + [{"metadata": {}}]}
    result = failure(expect, response)
    assert result.message == (
        "Missing field: results[*].metadata.type (results[3].metadata.type is missing)"
    )
    assert result.path == "results[3].metadata.type"


@pytest.mark.parametrize("expect", WILDCARD_EXPECTS, ids=key_of)
def test_item_lacking_an_intermediate_object_fails_naming_it(expect: dict[str, Any]) -> None:
    response = {"results": [{"metadata": {"type": "note"}}, {"file": "a.md"}]}
    result = failure(expect, response)
    assert (
        result.message == "Missing field: results[*].metadata.type (results[1].metadata is missing)"
    )
    assert result.path == "results[1].metadata"


@pytest.mark.parametrize("expect", WILDCARD_EXPECTS, ids=key_of)
def test_text_without_json_fails(expect: dict[str, Any]) -> None:
    assert failure(expect, "no JSON at all").message == "response is not JSON"


# --- all_match ------------------------------------------------------------------------------


def test_all_match_pass() -> None:
    assert passes(TYPE_IS_NOTE, {"results": [{"metadata": {"type": "note"}}] * 2})


def test_all_match_names_the_first_mismatch_and_counts_the_rest() -> None:
    result = failure(
        {"all_match": {"path": "results[*].type", "value": "note"}},
        items("type", "a", "note", "b", "c"),
    )
    assert result.message == "Found non-matching item: 'a' at results[0].type (and 2 more)"
    assert result.path == "results[0].type"
    assert result.expected == "note"
    assert result.actual == "a"


def test_all_match_is_strictly_typed() -> None:
    expect = {"all_match": {"path": "results[*].sensitive", "value": True}}
    assert passes(expect, items("sensitive", True, True))
    assert failure(expect, items("sensitive", True, 1)).message == (
        "Found non-matching item: 1 at results[1].sensitive"
    )
    expect = {"all_match": {"path": "results[*].n", "value": 0}}
    assert (
        failure(expect, items("n", "0")).message == "Found non-matching item: '0' at results[0].n"
    )
    assert passes(expect, items("n", 0.0, 0))


def test_all_match_null_value_is_a_value() -> None:
    expect = {"all_match": {"path": "results[*].parent", "value": None}}
    assert passes(expect, items("parent", None, None))
    assert failure(expect, items("parent", None, "x")).message == (
        "Found non-matching item: 'x' at results[1].parent"
    )


def test_all_match_nested_wildcards_name_every_index() -> None:
    expect = {"all_match": {"path": "results[*].links[*].kind", "value": "ref"}}
    response = {
        "results": [
            {"links": [{"kind": "ref"}]},
            {"links": [{"kind": "ref"}, {"kind": "cite"}]},
        ]
    }
    result = failure(expect, response)
    assert result.message == "Found non-matching item: 'cite' at results[1].links[1].kind"
    response["results"][1]["links"][1] = {}
    result = failure(expect, response)
    assert result.message == (
        "Missing field: results[*].links[*].kind (results[1].links[1].kind is missing)"
    )


def test_all_match_needs_path_and_value() -> None:
    assert problems({"all_match": {"path": "results[*].type"}}) == [
        (
            "expect.all_match.value",
            'required parameter is missing (e.g. {path: "results[*].type", value: "note"})',
        )
    ]
    assert problems({"all_match": {"path": "results[*].x", "value": 1, "extra": 2}}) == [
        (
            "expect.all_match.extra",
            "unknown parameter (allowed: path, value) "
            '(e.g. {path: "results[*].type", value: "note"})',
        )
    ]
    assert problems({"all_match": "results"}) == [
        (
            "expect.all_match",
            "expected a mapping with path, value, got 'results' "
            '(e.g. {path: "results[*].type", value: "note"})',
        )
    ]
    assert problems({"all_match": {"path": "results[*", "value": 1}}) == [
        ("expect.all_match.path", "invalid path 'results[*': unexpected '[' at column 8")
    ]


# --- all_match_one_of -----------------------------------------------------------------------


def test_all_match_one_of() -> None:
    expect = {"all_match_one_of": {"path": "results[*].type", "values": ["note", "incident-log"]}}
    assert passes(expect, items("type", "note", "incident-log", "note"))
    result = failure(expect, items("type", "note", "draft", "memo"))
    assert result.message == (
        "Found non-matching item: 'draft' at results[1].type "
        "(allowed: 'note', 'incident-log') (and 1 more)"
    )
    assert result.expected == ["note", "incident-log"]
    assert result.actual == "draft"


def test_all_match_one_of_is_strictly_typed() -> None:
    expect = {"all_match_one_of": {"path": "results[*].v", "values": [1, "two"]}}
    assert passes(expect, items("v", 1.0, "two"))
    assert failure(expect, items("v", True)).message == (
        "Found non-matching item: true at results[0].v (allowed: 1, 'two')"
    )


def test_all_match_one_of_needs_values() -> None:
    assert problems({"all_match_one_of": {"path": "results[*].t", "values": []}}) == [
        ("expect.all_match_one_of.values", "expected at least one allowed value")
    ]
    [(location, message)] = problems({"all_match_one_of": {"path": "results[*].t", "values": "a"}})
    assert location == "expect.all_match_one_of.values"
    assert message.startswith("input should be a valid list, got 'a'")


# --- all_match_pattern / none_match_pattern -------------------------------------------------


def test_all_match_pattern_is_a_search_not_a_full_match() -> None:
    expect = {"all_match_pattern": {"path": "results[*].file", "regex": "security"}}
    assert passes(expect, items("file", "work/security-doc.md", "security.md"))


def test_all_match_pattern_non_string_fails() -> None:
    expect = {"all_match_pattern": {"path": "results[*].file", "regex": "^journal/"}}
    result = failure(expect, items("file", "journal/a.md", 5))
    assert result.message == "File 5 at results[1] is not a string (pattern '^journal/')"
    assert result.path == "results[1].file"
    assert failure(expect, items("file", None)).message == (
        "File null at results[0] is not a string (pattern '^journal/')"
    )


def test_pattern_labels_without_a_final_key() -> None:
    expect = {"all_match_pattern": {"path": "results[*].tags[*]", "regex": "^[a-z]+$"}}
    response = {"results": [{"tags": ["a", "b"]}, {"tags": ["c", "D"]}]}
    assert failure(expect, response).message == (
        "Value 'D' at results[1].tags[1] doesn't match pattern '^[a-z]+$'"
    )


def test_pattern_on_a_single_field() -> None:
    expect = {"all_match_pattern": {"path": "report.file", "regex": "^journal/"}}
    assert passes(expect, {"report": {"file": "journal/x.md"}})
    assert failure(expect, {"report": {"file": "work/x.md"}}).message == (
        "Value 'work/x.md' at report.file doesn't match pattern '^journal/'"
    )


def test_pattern_failure_records_the_regex_engine() -> None:
    expect = {"all_match_pattern": {"path": "results[*].file", "regex": "^journal/"}}
    assert failure(expect, items("file", "work/a.md")).details == {"regex_engine": "re"}


def test_nested_quantifier_runs_in_bounded_time_engine() -> None:
    expect = {"all_match_pattern": {"path": "results[*].s", "regex": "^(a+)+$"}}
    result = failure(expect, items("s", "a" * 40 + "b"))
    assert result.details == {"regex_engine": "re2"}
    assert passes(expect, items("s", "aaaa"))


def test_none_match_pattern() -> None:
    expect = {"none_match_pattern": {"path": "results[*].file", "regex": "^(people/|documents/)"}}
    assert passes(expect, items("file", "journal/a.md", "work/people/b.md"))
    result = failure(expect, items("file", "journal/a.md", "people/bob.md"))
    assert result.message == (
        "File 'people/bob.md' at results[1] matches excluded pattern '^(people/|documents/)'"
    )
    assert result.path == "results[1].file"
    assert result.actual == "people/bob.md"


def test_none_match_pattern_non_string_fails() -> None:
    expect = {"none_match_pattern": {"path": "results[*].file", "regex": "^people/"}}
    assert failure(expect, items("file", "a", ["people/x"])).message == (
        "File [\"people/x\"] at results[1] is not a string (pattern '^people/')"
    )


@pytest.mark.parametrize("key", ["all_match_pattern", "none_match_pattern"])
def test_pattern_parameters(key: str) -> None:
    assert problems({key: {"path": "results[*].file", "regex": "("}}) == [
        (
            f"expect.{key}.regex",
            "invalid regular expression '(': missing ), unterminated subpattern at position 0",
        )
    ]
    [(location, message)] = problems({key: {"path": "results[*].file", "regex": 5}})
    assert location == f"expect.{key}.regex"
    assert message.startswith("input should be a valid string, got 5")
    # A misnamed parameter: the missing one and the unknown one are both reported.
    assert [p[0] for p in problems({key: {"path": "results[*].file", "pattern": "^a"}})] == [
        f"expect.{key}.regex",
        f"expect.{key}.pattern",
    ]
    # Both the bad path and the bad regex are reported.
    assert [p[0] for p in problems({key: {"path": "a..b", "regex": "["}})] == [
        f"expect.{key}.path",
        f"expect.{key}.regex",
    ]


# --- sorted_desc / sorted_asc ---------------------------------------------------------------


def test_sorted_desc_allows_ties() -> None:
    expect = {"sorted_desc": {"path": "results[*].relevance"}}
    assert passes(expect, items("relevance", 1.0, 0.9, 0.9, 0.5, 0))
    assert passes(expect, items("relevance", 0.7))


def test_sorted_desc_names_the_first_out_of_order_index() -> None:
    expect = {"sorted_desc": {"path": "results[*].relevance"}}
    result = failure(expect, items("relevance", 0.9, 0.9, 0.95, 0.1))
    assert result.message == "Values not sorted descending at index 2"
    assert result.path == "results[2].relevance"
    assert result.actual == [0.9, 0.9, 0.95, 0.1]


def test_sorted_asc() -> None:
    expect = {"sorted_asc": {"path": "results[*].created"}}
    assert passes(expect, items("created", "2026-01-01", "2026-01-01", "2026-02-01"))
    assert passes(expect, items("created", 1, 1.5, 2))
    result = failure(expect, items("created", 1, 3, 2))
    assert result.message == "Values not sorted ascending at index 2"
    assert result.path == "results[2].created"
    assert failure({"sorted_desc": {"path": "results[*].n"}}, items("n", 1, 3, 2)).message == (
        "Values not sorted descending at index 1"
    )


@pytest.mark.parametrize(
    "values",
    [(1, "2"), (True, False), (1, None), ({"a": 1}, {"a": 0}), (1, [2])],
)
def test_sorted_needs_all_numbers_or_all_strings(values: tuple[Any, ...]) -> None:
    result = failure({"sorted_desc": {"path": "results[*].v"}}, items("v", *values))
    assert result.message == (
        "Values at results[*].v cannot be ordered: they must be all numbers or all strings"
    )


def test_sorted_path_to_the_array_itself() -> None:
    assert passes({"sorted_desc": {"path": "scores"}}, {"scores": [3, 2, 2, 1]})
    result = failure({"sorted_desc": {"path": "scores"}}, {"scores": [3, 2, 5]})
    assert result.message == "Values not sorted descending at index 2"


def test_sorted_parameters() -> None:
    assert problems({"sorted_desc": "results[*].relevance"}) == [
        (
            "expect.sorted_desc",
            "expected a mapping with path, got 'results[*].relevance' "
            '(e.g. {path: "results[*].relevance"})',
        )
    ]
    assert problems({"sorted_asc": {"path": "x[*]", "order": "asc"}}) == [
        (
            "expect.sorted_asc.order",
            'unknown parameter (allowed: path) (e.g. {path: "results[*].created"})',
        )
    ]


# --- array_contains -------------------------------------------------------------------------

DIRS = {"array_contains": {"path": "sensitive_dirs_skipped", "values": ["people/", "documents/"]}}


def test_array_contains_values_all_present() -> None:
    assert passes(DIRS, {"sensitive_dirs_skipped": ["documents/", "people/", "hr/"]})


def test_array_contains_values_missing_one_or_more() -> None:
    result = failure(DIRS, {"sensitive_dirs_skipped": ["people/"]})
    assert result.message == "sensitive_dirs_skipped: missing value 'documents/'"
    assert result.expected == ["people/", "documents/"]
    assert result.actual == ["people/"]
    result = failure(DIRS, {"sensitive_dirs_skipped": []})
    assert result.message == "sensitive_dirs_skipped: missing values 'people/', 'documents/'"


def test_array_contains_equality_is_strict() -> None:
    expect = {"array_contains": {"path": "ids", "values": [1]}}
    assert passes(expect, {"ids": [True, 1.0]})
    assert failure(expect, {"ids": [True, "1"]}).message == "ids: missing value 1"
    expect = {"array_contains": {"path": "ids", "values": [{"a": 1}]}}
    assert passes(expect, {"ids": [{"a": 1.0}]})


def test_array_contains_pattern_form() -> None:
    expect = {"array_contains": {"path": "tags", "pattern": "^sec"}}
    assert passes(expect, {"tags": ["work", "security"]})
    assert passes(expect, {"tags": [1, None, "insecure", "secret"]})
    result = failure(expect, {"tags": ["work", 5, "insecure"]})
    assert result.message == "tags: no element matches pattern '^sec'"
    assert result.expected == "^sec"
    assert failure(expect, {"tags": []}).message == "tags: no element matches pattern '^sec'"


def test_array_contains_not_an_array_or_missing() -> None:
    assert failure(DIRS, {"sensitive_dirs_skipped": "people/"}).message == (
        "sensitive_dirs_skipped: expected an array, got 'people/'"
    )
    assert failure(DIRS, {}).message == "Missing field: sensitive_dirs_skipped"


def test_array_contains_over_a_wildcard() -> None:
    expect = {"array_contains": {"path": "results[*].file", "values": ["a.md"]}}
    assert passes(expect, items("file", "b.md", "a.md"))
    assert failure(expect, items("file", "b.md")).message == "results[*].file: missing value 'a.md'"


def test_array_contains_parameters() -> None:
    assert problems({"array_contains": {"path": "d", "values": []}}) == [
        ("expect.array_contains.values", "expected at least one value")
    ]
    assert problems({"array_contains": {"path": "d", "values": ["a"], "pattern": "b"}}) == [
        (
            "expect.array_contains",
            "give either values (all present) or pattern (one element matches), not both",
        )
    ]
    assert problems({"array_contains": {"path": "d", "pattern": "(("}}) == [
        (
            "expect.array_contains.pattern",
            "invalid regular expression '((': missing ), unterminated subpattern at position 1",
        )
    ]
    [(location, _)] = problems({"array_contains": {"path": "d"}})
    assert location == "expect.array_contains.values"


def test_path_to_an_array_without_wildcard_judges_its_elements() -> None:
    expect = {"all_in_range": {"path": "scores", "min": 0, "max": 1}}
    assert passes(expect, {"scores": [0.5, 1.0]})
    result = failure(expect, {"scores": [0.5, 1.5]})
    assert result.message == "Value 1.5 is outside range 0-1"
    assert result.path == "scores[1]"
    assert passes({"all_match": {"path": "kinds", "value": "note"}}, {"kinds": ["note", "note"]})
    empty = assertly.check(expect, {"scores": []}).results[0]
    assert empty.passed and empty.details == {"vacuous": True}


def test_order_of_a_single_value_is_a_failure_not_a_pass() -> None:
    expect = {"sorted_asc": {"path": "pagination.offset"}}
    result = failure(expect, {"pagination": {"offset": 5}})
    assert result.message == "pagination.offset: expected an array, got an integer 5"
