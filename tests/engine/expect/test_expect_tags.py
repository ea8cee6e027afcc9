"""Tag assertions over ``results[*].metadata.tags`` (engine/expect/tags.py).

``all_have_tags``, ``none_have_tags``, ``each_has_any_tag``. A result without tags has none.
Among several results a failure names the result's index (``Result 0 missing ...``); with a
single result the seed's wording leaves it out (``Result missing ...``).
"""

from __future__ import annotations

import json
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
    # Some results without the field: they have no tags (the spec's rule), so none_have_tags
    # holds for them and all_have_tags fails on them.
    some_without = {"results": [{"metadata": {"type": "note"}}, {"metadata": {"tags": []}}]}
    assert failure({"all_have_tags": ["work"]}, some_without).message == (
        "Result 0 missing required tag: 'work' (and 1 more)"
    )
    assert passes(NONE, some_without)
    # null tags are no tags, and the field is there.
    assert passes(NONE, {"results": [{"metadata": {"tags": None}}]})


@pytest.mark.parametrize("expect", KEYS, ids=key_of)
def test_results_none_of_which_has_tags_are_an_error(expect: dict[str, Any]) -> None:
    # issue 28, probe 7: the tags were read only at results[*].metadata.tags, so results
    # tagged at results[*].tags passed none_have_tags and failed all_have_tags with [].
    for response in (
        {"results": [{"tags": ["security"]}, {"tags": ["security"]}]},
        {"results": [{"metadata": {"type": "note"}}, {"metadata": None}, "not an object"]},
    ):
        result = only(expect, response)
        assert result.outcome is Outcome.ERROR, result
        assert result.message.startswith("no result has tags at results[*].metadata.tags")
    # One through a shape that moves the results too: the message names the shape's path.
    shaped = assertly.compile(expect, shape={"results": "$.data.hits"})
    result = shaped.check({"data": {"hits": [{"tags": ["security"]}]}}).results[0]
    assert result.outcome is Outcome.ERROR
    assert "no result has tags at data.hits[*].metadata.tags" in result.message
    # one_of keeps it an error, never a pass.
    nested = assertly.compile({"one_of": [expect, {"status": "nope"}]})
    assert not nested.check({"results": [{"tags": ["x"]}]}).passed


@pytest.mark.parametrize(
    ("shape", "expect", "response", "outcome", "path"),
    [
        # issue 28, probe 7: shape could not move the tags.
        (
            {"tags": "$.results[*].tags"},
            {"none_have_tags": ["security"]},
            {"results": [{"tags": ["security"]}, {"tags": ["security"]}]},
            "failed",
            "results[0].tags",
        ),
        (
            {"tags": "$.results[*].tags"},
            {"all_have_tags": ["security"]},
            {"results": [{"tags": ["security"]}, {"tags": ["security", "x"]}]},
            "passed",
            None,
        ),
        (
            {"results": "$.data.hits", "tags": "$.results[*].meta.labels"},
            {"each_has_any_tag": ["a", "b"]},
            {"data": {"hits": [{"meta": {"labels": ["b"]}}, {"meta": {"labels": ["c"]}}]}},
            "failed",
            "data.hits[1].meta.labels",
        ),
        (
            {"results": "$.data.hits", "tags": "$.data.hits[*]['my tags']"},
            {"all_have_tags": ["a"]},
            {"data": {"hits": [{"my tags": ["b"]}]}},
            "failed",
            'data.hits[0]["my tags"]',
        ),
        # The key's own path, which follows the shape like every path from the root.
        (
            None,
            {"none_have_tags": {"tags": ["security"], "path": "results[*].tags"}},
            {"results": [{"tags": ["security"]}]},
            "failed",
            "results[0].tags",
        ),
        (
            {"results": "$.data.hits"},
            {"all_have_tags": {"tags": ["a"], "path": "results[*].labels"}},
            {"data": {"hits": [{"labels": ["a"]}, {"labels": ["b"]}]}},
            "failed",
            "data.hits[1].labels",
        ),
        (
            None,
            {"all_have_tags": {"tags": ["a"], "path": "results[*].labels"}},
            {"results": [{"tags": ["a"]}]},
            "error",
            "results[*].labels",
        ),
    ],
)
def test_tags_follow_the_shape_and_the_keys_path(
    shape: dict[str, str] | None,
    expect: dict[str, Any],
    response: Any,
    outcome: str,
    path: str | None,
) -> None:
    expectation = assertly.compile(expect, shape=shape)
    result = expectation.check(response).results[0]
    assert (result.outcome, result.path) == (outcome, path), result
    # The detailed path alone agrees with the generated one.
    assert expectation._check_detailed(response).to_dict() == (
        expectation.check(response).to_dict()
    )


@pytest.mark.parametrize(
    ("shape", "expect", "problem"),
    [
        ({"tags": "$.results.tags"}, ALL, "expected a JSONPath to the tags of every result"),
        ({"tags": "$.other[*].tags"}, ALL, "such as '$.results[*].tags'"),
        ({"tags": "$.results[*]"}, ALL, "shape.tags"),
        ({"tags": 3}, ALL, "shape.tags"),
        (None, {"all_have_tags": {"tags": ["a"]}}, "exactly those two keys"),
        (None, {"all_have_tags": {"tags": ["a"], "path": "x", "y": 1}}, "exactly those two keys"),
        (None, {"all_have_tags": {"tags": ["a"], "path": "results.tags"}}, "with one [*]"),
        (None, {"all_have_tags": {"tags": ["a"], "path": "r[*].t[*].u"}}, "with one [*]"),
        (None, {"all_have_tags": {"tags": [], "path": "r[*].t"}}, "all_have_tags.tags"),
    ],
)
def test_a_bad_tags_location_is_a_configuration_error(
    shape: dict[str, Any] | None, expect: dict[str, Any], problem: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        assertly.compile(expect, shape=shape)
    assert problem in str(caught.value)


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
@pytest.mark.parametrize("bad", ["work", [], ["work", 3], None])
def test_tags_must_be_a_non_empty_list_of_strings(key: str, bad: Any) -> None:
    with pytest.raises(ConfigError) as caught:
        assertly.compile({key: bad})
    [problem] = caught.value.problems
    assert problem.location == f"expect.{key}"
    assert problem.message == (
        f"expected a non-empty list of tag strings such as ['work'], got {bad!r}"
    )


@pytest.mark.parametrize(
    ("tags", "kind"), [([{"name": "draft"}], "an object"), (["work", ["draft"]], "an array")]
)
def test_none_have_tags_over_tags_that_are_objects_is_an_error(tags: list[Any], kind: str) -> None:
    # Issue 28 red team, probe T1: tags that are objects or arrays hide their text, and
    # none_have_tags: [draft] PASSED over results that all carried {"name": "draft"}.
    response = json.dumps({"results": [{"metadata": {"tags": tags}}] * 2})
    expectation = assertly.compile({"none_have_tags": ["draft"]})
    for result in (expectation.check(response), expectation._check_detailed(response)):
        (item,) = result.results
        assert item.outcome == "error", item
        assert f"Result 0 has a tag that is {kind}" in item.message
        assert item.path == "results[0].metadata.tags"
    # Scalars that are not strings are still no tags (and strings still decide).
    assert passes({"none_have_tags": ["draft"]}, {"results": [{"metadata": {"tags": [1, None]}}]})
