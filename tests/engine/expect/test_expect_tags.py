"""Tag assertions over ``results[*].metadata.tags`` (engine/expect/tags.py).

``all_have_tags``, ``none_have_tags``, ``each_has_any_tag``. A result without tags has none.
Among several results a failure names the result's index (``Result 0 missing ...``); with a
single result the seed's wording leaves it out (``Result missing ...``).
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


def tagged(*tag_lists: list[str] | None) -> dict[str, Any]:
    results = []
    for tags in tag_lists:
        results.append({"file": "a.md"} if tags is None else {"metadata": {"tags": tags}})
    return {"results": results}


ALL = {"all_have_tags": ["work", "security"]}
NONE = {"none_have_tags": ["draft", "archived"]}
ANY = {"each_has_any_tag": ["work", "personal"]}
KEYS = [ALL, NONE, ANY]


def key_of(expect: dict[str, Any]) -> str:
    return next(iter(expect))


# --- all_have_tags --------------------------------------------------------------------------


def test_all_have_tags_pass_with_extra_tags() -> None:
    assert passes(ALL, tagged(["incident", "security", "work"], ["work", "security"]))


def test_all_have_tags_names_result_and_tag() -> None:
    result = failure(ALL, tagged(["work", "security"], ["security"]))
    assert result.message == "Result 1 missing required tag: 'work'"
    assert result.path == "results[1].metadata.tags"
    assert result.expected == ["work", "security"]
    assert result.actual == ["security"]


def test_all_have_tags_lists_every_missing_tag() -> None:
    result = failure(ALL, tagged(["work", "security"], ["other"]))
    assert result.message == "Result 1 missing required tags: 'work', 'security'"


def test_all_have_tags_counts_further_failing_results() -> None:
    result = failure(ALL, tagged(["work"], ["work", "security"], ["security"], []))
    assert result.message == "Result 0 missing required tag: 'security' (and 2 more)"
    assert result.path == "results[0].metadata.tags"


def test_single_result_reads_without_index() -> None:
    result = failure({"all_have_tags": ["work"]}, tagged(["personal"]))
    assert result.message == "Result missing required tag: 'work'"
    assert result.path == "results[0].metadata.tags"


def test_result_without_tags_has_none() -> None:
    assert failure(ALL, tagged(["work", "security"], None)).message == (
        "Result 1 missing required tags: 'work', 'security'"
    )
    no_metadata_tags = {"results": [{"metadata": {"type": "note"}}, {"metadata": None}]}
    assert failure({"all_have_tags": ["work"]}, no_metadata_tags).message == (
        "Result 0 missing required tag: 'work' (and 1 more)"
    )
    assert passes(NONE, no_metadata_tags)


def test_tags_are_case_sensitive_and_strings_only() -> None:
    assert failure({"all_have_tags": ["work"]}, tagged(["Work"], ["work"])).message == (
        "Result 0 missing required tag: 'work'"
    )
    response = {"results": [{"metadata": {"tags": [1, None, "work"]}}]}
    assert passes({"all_have_tags": ["work"]}, response)


def test_tags_not_an_array_fail() -> None:
    response = {
        "results": [{"metadata": {"tags": ["work", "security"]}}, {"metadata": {"tags": "work"}}]
    }
    for expect in KEYS:
        result = failure(expect, response)
        assert result.message == "Result 1 has tags that are a string ('work'), not an array"
        assert result.path == "results[1].metadata.tags"
        assert result.actual is None


# --- none_have_tags -------------------------------------------------------------------------


def test_none_have_tags_pass() -> None:
    assert passes(NONE, tagged(["work"], [], None))


def test_none_have_tags_fail() -> None:
    result = failure(NONE, tagged(["work"], ["draft", "work"]))
    assert result.message == "Result 1 has excluded tag: 'draft'"
    assert result.path == "results[1].metadata.tags"
    result = failure(NONE, tagged(["archived", "draft"], ["draft"]))
    assert result.message == "Result 0 has excluded tags: 'draft', 'archived' (and 1 more)"
    assert failure(NONE, tagged(["draft"])).message == "Result has excluded tag: 'draft'"


# --- each_has_any_tag -----------------------------------------------------------------------


def test_each_has_any_tag_pass() -> None:
    assert passes(ANY, tagged(["work"], ["personal", "x"], ["work", "personal"]))


def test_each_has_any_tag_fail() -> None:
    result = failure(ANY, tagged(["work"], ["other"], None))
    assert result.message == "Result 1 has none of the tags: 'work', 'personal' (and 1 more)"
    assert result.path == "results[1].metadata.tags"
    assert failure(ANY, tagged([])).message == "Result has none of the tags: 'work', 'personal'"


# --- the results array itself ---------------------------------------------------------------


@pytest.mark.parametrize("expect", KEYS, ids=key_of)
def test_empty_results_pass_vacuously(expect: dict[str, Any]) -> None:
    result = only(expect, {"results": []})
    assert result.outcome is Outcome.PASSED
    assert result.details == {"vacuous": True}


@pytest.mark.parametrize("expect", KEYS, ids=key_of)
@pytest.mark.parametrize(
    ("response", "clause"),
    [
        ({"status": "ok"}, "the response has no 'results' field"),
        ({"results": None}, "'results' is a null, not an array"),
        ({"results": {"a": 1}}, "'results' is an object, not an array"),
        ([1, 2], "the response is an array, not an object"),
    ],
)
def test_missing_or_non_array_results_fail(
    expect: dict[str, Any], response: Any, clause: str
) -> None:
    result = failure(expect, response)
    assert result.message == f"Expected a 'results' array, but {clause}"
    assert result.path == "results"


@pytest.mark.parametrize("expect", KEYS, ids=key_of)
def test_text_without_json_fails(expect: dict[str, Any]) -> None:
    assert failure(expect, "nothing found").message == "response is not JSON"


# --- parameters -----------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["all_have_tags", "none_have_tags", "each_has_any_tag"])
@pytest.mark.parametrize("bad", ["work", [], ["work", 3], None, {"tags": ["a"]}])
def test_tags_must_be_a_non_empty_list_of_strings(key: str, bad: Any) -> None:
    with pytest.raises(ConfigError) as caught:
        assertly.compile({key: bad})
    [problem] = caught.value.problems
    assert problem.location == f"expect.{key}"
    assert problem.message == (
        f"expected a non-empty list of tag strings such as ['work'], got {bad!r}"
    )
