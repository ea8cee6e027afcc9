"""Structure assertions of the typed dialect: is-json and contains-json, with and without a
JSON Schema (seed 003, spec section B).
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

import assertly
from assertly import AssertionResult, ConfigError, Outcome

SEED_IS_JSON = """
# Just check valid JSON
- type: is-json
# With schema validation
- type: is-json
  value:
    type: object
    required: ["title", "body"]
    properties:
      title:
        type: string
      body:
        type: string
"""

SEED_CONTAINS_JSON = """
- type: contains-json
  value:
    type: object
    required: ["status"]
"""


def judge(spec: dict[str, Any], output: Any) -> AssertionResult:
    """Compile one typed assertion and check one output; return its result."""
    result = assertly.compile([spec]).check(output)
    assert result.passed is result.results[0].passed
    return result.results[0]


def problems(specs: list[dict[str, Any]]) -> list[str]:
    """The problems compiling ``specs`` reports (it must fail)."""
    with pytest.raises(ConfigError) as info:
        assertly.compile(specs)
    return [str(problem) for problem in info.value.problems]


# --- is-json -------------------------------------------------------------------------------


def test_seed_is_json_without_schema() -> None:
    plain, _with_schema = yaml.safe_load(SEED_IS_JSON)
    assert plain == {"type": "is-json"}
    assert judge(plain, '{"title": "x"}').passed
    result = judge(plain, "Here is the JSON: {")
    assert result.outcome is Outcome.FAILED
    assert result.message == "Output is not valid JSON"


def test_seed_is_json_with_schema() -> None:
    _plain, with_schema = yaml.safe_load(SEED_IS_JSON)
    assert judge(with_schema, '{"title": "T", "body": "B"}').passed
    missing = judge(with_schema, '{"title": "T"}')
    assert missing.outcome is Outcome.FAILED
    assert missing.message == (
        'Output JSON does not match the schema: (root): "body" is a required property'
    )
    wrong_type = judge(with_schema, '{"title": 3, "body": "B"}')
    assert wrong_type.message == (
        'Output JSON does not match the schema: title: 3 is not of type "string"'
    )


@pytest.mark.parametrize("output", ["42", '"hello"', "true", "null", "[1, 2]", " {} "])
def test_is_json_scalars_and_containers_count(output: str) -> None:
    assert judge({"type": "is-json"}, output).passed


@pytest.mark.parametrize(
    "output", ["", "hello", "{'a': 1}", '{"a": 1} trailing', "```json\n{}\n```", "NaN"]
)
def test_is_json_rejects_non_json_and_prose_around_json(output: str) -> None:
    result = judge({"type": "is-json"}, output)
    assert result.outcome is Outcome.FAILED
    assert result.message == "Output is not valid JSON"


@pytest.mark.parametrize("value", [None, ""])
def test_is_json_null_or_empty_value_means_no_schema(value: Any) -> None:
    spec = {"type": "is-json", "value": value}
    assert judge(spec, '"just a string"').passed
    assert not judge(spec, "not json").passed


@pytest.mark.parametrize("kind", ["is-json", "contains-json"])
def test_invalid_schema_is_a_config_error(kind: str) -> None:
    found = problems([{"type": kind, "value": {"type": "no-such-type"}}])
    assert len(found) == 1
    assert found[0].startswith("assertions[0].value: invalid JSON Schema")


@pytest.mark.parametrize("kind", ["is-json", "contains-json"])
@pytest.mark.parametrize("value", ["object", 3, ["type"]])
def test_non_mapping_schema_is_a_config_error(kind: str, value: Any) -> None:
    assert problems([{"type": kind, "value": value}]) == [
        f"assertions[0].value: expected a JSON Schema object, got {value!r}"
    ]


def test_is_json_schema_validates_scalars() -> None:
    spec = {"type": "is-json", "value": {"type": "integer", "minimum": 10}}
    assert judge(spec, "12").passed
    assert judge(spec, "9").message == (
        "Output JSON does not match the schema: (root): 9 is less than the minimum of 10"
    )


# --- contains-json -------------------------------------------------------------------------


def test_seed_contains_json_example() -> None:
    spec = yaml.safe_load(SEED_CONTAINS_JSON)[0]
    assert judge(spec, 'Result: {"status": "ok", "n": 1} done').passed
    result = judge(spec, 'Result: {"state": "ok"} done')
    assert result.outcome is Outcome.FAILED
    assert result.message == (
        "Output contains 1 JSON value, none matching the schema; first: "
        '(root): "status" is a required property'
    )
    assert result.actual == {"state": "ok"}
    assert result.details == {"found": 1}


def test_contains_json_without_schema_finds_objects_and_arrays() -> None:
    spec = {"type": "contains-json"}
    assert judge(spec, 'Sure! {"a": 1} hope that helps').passed
    assert judge(spec, 'The list is ["a", "b"].').passed
    assert judge(spec, '```json\n{"a": 1}\n```').passed


def test_contains_json_does_not_take_a_citation_in_prose_for_json() -> None:
    spec = {"type": "contains-json"}
    result = assertly.compile([spec]).check("As shown in [1] and [2, 3], it works.")
    assert result.results[0].message == "Output contains no JSON object or array"
    assert not judge(spec, "The list is [1, 2, 3].").passed
    # A numeric array is JSON when it is the whole output or in a json (or unmarked) fence.
    assert judge(spec, "[1, 2, 3]").passed
    assert judge(spec, "Here:\n```json\n[1, 2, 3]\n```\n").passed
    assert judge(spec, "Here:\n```\n[1.5]\n```\n").passed
    assert judge(spec, "See [1]. The data: [true, 1]").passed  # not only numbers


@pytest.mark.parametrize(
    "output", ["", "no json here", "the answer is 42", 'say "hi"', "{not json}"]
)
def test_contains_json_needs_an_object_or_array(output: str) -> None:
    result = judge({"type": "contains-json"}, output)
    assert result.outcome is Outcome.FAILED
    assert result.message == "Output contains no JSON object or array"


def test_contains_json_with_schema_passes_if_any_found_value_validates() -> None:
    spec = {"type": "contains-json", "value": {"type": "object", "required": ["status"]}}
    output = 'first {"x": 1}, then [1, 2], finally {"status": "done"}'
    assert judge(spec, output).passed


def test_contains_json_reports_how_many_values_were_rejected() -> None:
    spec = {"type": "contains-json", "value": {"type": "object", "required": ["status"]}}
    result = judge(spec, 'a {"x": 1} b {"y": 2} c')
    assert result.outcome is Outcome.FAILED
    assert result.message == (
        "Output contains 2 JSON values, none matching the schema; first: "
        '(root): "status" is a required property'
    )
    assert result.actual == {"x": 1}
    assert result.details == {"found": 2}


def test_contains_json_judges_outermost_values_only() -> None:
    # After a value parses, scanning resumes after it: the object inside the array is not a
    # candidate of its own.
    spec = {"type": "contains-json", "value": {"type": "object", "required": ["status"]}}
    result = judge(spec, '[{"status": "ok"}]')
    assert result.outcome is Outcome.FAILED
    assert result.details == {"found": 1}
    assert result.actual == [{"status": "ok"}]


def test_contains_json_skips_broken_candidates_left_to_right() -> None:
    spec = {"type": "contains-json", "value": {"type": "object", "required": ["ok"]}}
    assert judge(spec, 'broken { "a": , then {"ok": true}').passed


def test_contains_json_on_adversarial_braces_gives_a_verdict() -> None:
    result = judge({"type": "contains-json"}, "{" * 3000)
    assert result.outcome is Outcome.FAILED
    assert result.message == "Output contains no JSON object or array"
    brackets = judge({"type": "contains-json"}, "[" * 3000)
    assert brackets.outcome is Outcome.FAILED
    assert brackets.message == "Output contains no JSON object or array"


def test_contains_json_finds_a_value_after_an_over_deep_run() -> None:
    # The outer arrays nest deeper than the parser goes; the inner one is still found.
    assert judge({"type": "contains-json"}, "[ " * 3000 + '["x"]').passed
    assert judge({"type": "contains-json"}, "[[[ {" * 1000 + '{"a": 1}').passed


def test_contains_json_null_value_means_no_schema() -> None:
    assert judge({"type": "contains-json", "value": None}, 'x ["a"] y').passed
    assert judge({"type": "contains-json", "value": ""}, 'x ["a"] y').passed


def test_a_byte_order_mark_does_not_hide_json() -> None:
    assert judge({"type": "is-json"}, '\ufeff{"a": 1}').passed
    assert assertly.check({"status": "ok"}, '\ufeff{"status": "ok"}').passed
