"""`config`, `value` and `threshold` are validated for every typed assertion: none is ignored."""

from __future__ import annotations

from typing import Any

import jsonschema_rs
import pytest

import assertly
from assertly.engine import REGISTRY


def problems(specs: list[dict[str, Any]]) -> list[str]:
    """The problems compiling ``specs`` reports (it must fail)."""
    with pytest.raises(assertly.ConfigError) as info:
        assertly.compile(specs)
    return [str(problem) for problem in info.value.problems]


# A value each built-in accepts, so that only the field under test can be wrong.
VALID_VALUE: dict[str, Any] = {
    "equals": "x",
    "contains": "x",
    "icontains": "x",
    "contains-all": ["x"],
    "contains-any": ["x"],
    "starts-with": "x",
    "regex": "x",
    "word-count": 3,
    "is-json": None,
    "contains-json": None,
    "levenshtein": "x",
    "bleu": "x y",
    "rouge-n": "x y",
    "tool-called": "search",
    "tool-sequence": ["search"],
    "tool-call-count": {"max": 1},
    "llm-rubric": "The answer is polite.",
    "similar": "x",
    "span-count": {"max": 3},
    "span-duration": {"max_ms": 100},
    "no-error-spans": None,
    "span-attribute": {"name": "x", "key": "k", "value": 1},
}
# (The trajectory assertions take config.source.)
WITHOUT_OPTIONS = sorted(
    set(VALID_VALUE)
    - {"regex", "rouge-n", "tool-called", "tool-sequence", "tool-call-count", "llm-rubric"}
    - {"similar"}
    | {"cost", "latency"}
)
WITHOUT_THRESHOLD = sorted(
    set(VALID_VALUE) - {"levenshtein", "bleu", "rouge-n", "tool-sequence", "llm-rubric", "similar"}
)


def spec(kind: str, **fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"type": kind}
    value = VALID_VALUE.get(kind.removeprefix("not-"))
    if value is not None:
        base["value"] = value
    return {**base, **fields}


def test_every_builtin_is_covered() -> None:
    builtins = {entry.name for entry in REGISTRY.entries("typed") if entry.builtin}
    assert builtins == set(VALID_VALUE) | {"cost", "latency"}


@pytest.mark.parametrize("kind", WITHOUT_OPTIONS)
@pytest.mark.parametrize("negate", ["", "not-"])
def test_options_given_to_a_type_without_options_are_an_error(kind: str, negate: str) -> None:
    found = problems([spec(negate + kind, config={"mode": "yaml"})])
    assert found == [f"assertions[0].config: {kind} takes no config options, got 'mode'"]


def test_equals_with_a_yaml_mode_is_an_error_not_ignored() -> None:
    with pytest.raises(assertly.ConfigError, match="equals takes no config options, got 'mode'"):
        assertly.compile([{"type": "equals", "value": "a: 1", "config": {"mode": "yaml"}}])


def test_unknown_option_has_a_did_you_mean() -> None:
    assert problems([spec("regex", config={"ignore_cas": True})]) == [
        "assertions[0].config.ignore_cas: unknown parameter (allowed: ignore_case) "
        "(did you mean 'ignore_case'?)"
    ]
    assert problems([spec("rouge-n", config={"nn": 2})]) == [
        "assertions[0].config.nn: unknown parameter (allowed: n) (did you mean 'n'?)"
    ]


@pytest.mark.parametrize("bad", ["no", "false", 0, 1, None, [True]])
def test_ignore_case_must_be_a_boolean(bad: Any) -> None:
    # `ignore_case: "no"` used to be truthy, and so meant the opposite of what it says.
    found = problems([spec("regex", config={"ignore_case": bad})])
    assert found == [
        f"assertions[0].config.ignore_case: input should be a valid boolean, got {bad!r}"
    ]


def test_ignore_case_false_and_true_both_work() -> None:
    sensitive = assertly.compile([spec("regex", value="abc", config={"ignore_case": False})])
    insensitive = assertly.compile([spec("regex", value="abc", config={"ignore_case": True})])
    assert sensitive.check("ABC").outcome.value == "failed"
    assert insensitive.check("ABC").outcome.value == "passed"


@pytest.mark.parametrize("n", [0, 5, -1, 1.5, "l", "LSUM", "2", None, False, True])
def test_rouge_n_outside_its_set_is_an_error(n: Any) -> None:
    assert problems([spec("rouge-n", config={"n": n})]) == [
        f"assertions[0].config.n: n must be 1, 2, 3, 4, 'L' or 'Lsum', got {n!r}"
    ]


@pytest.mark.parametrize("kind", WITHOUT_THRESHOLD)
def test_a_threshold_on_a_pass_fail_type_is_an_error(kind: str) -> None:
    found = problems([spec(kind, threshold=0.5)])
    assert found == [
        f"assertions[0].threshold: {kind} has no threshold: it passes or fails (a pass mark "
        "for a whole check goes next to the assertion list, not on one assertion)"
    ]


@pytest.mark.parametrize(
    ("kind", "unit"), [("cost", "USD"), ("latency", "milliseconds"), ("not-cost", "USD")]
)
def test_a_value_on_cost_or_latency_is_an_error(kind: str, unit: str) -> None:
    # `{type: cost, value: 0.5}` would otherwise judge against the default limit, 0. The hint
    # repeats the value given, in the limit's unit.
    name = kind.removeprefix("not-")
    assert problems([{"type": kind, "value": 0.5}]) == [
        f"assertions[0].value: {name} does not read value; its limit is threshold "
        f"(e.g. threshold: 0.5, in {unit})"
    ]


@pytest.mark.parametrize(("kind", "example"), [("latency", "5000"), ("cost", "0.05")])
def test_the_hint_for_a_limit_is_in_its_unit(kind: str, example: str) -> None:
    # issue 29, first contact: the `latency` hint suggested `threshold: 0.5` (half a ms)
    (found,) = problems([{"type": kind, "value": "fast"}])
    assert f"(e.g. threshold: {example}, in " in found


def test_every_problem_of_one_assertion_is_reported_together() -> None:
    found = problems([{"type": "contains", "value": "", "threshold": 1, "config": {"x": 1}}])
    assert [item.split(":")[0] for item in found] == [
        "assertions[0].threshold",
        "assertions[0].value",
        "assertions[0].config",
    ]


def test_a_custom_assertion_receives_its_config_as_written() -> None:
    registry = assertly.Registry()
    seen: list[Any] = []

    @assertly.assertion("takes-config", registry=registry)
    def takes_config(output: str, context: dict[str, Any]) -> bool:
        seen.append((context["config"], context["threshold"]))
        return True

    expectation = assertly.compile(
        [{"type": "takes-config", "config": {"anything": [1]}, "threshold": 0.3}],
        registry=registry,
    )
    assert expectation.check("x").outcome.value == "passed"
    assert seen == [({"anything": [1]}, 0.3)]


@pytest.fixture(scope="module")
def typed_schema() -> Any:
    from assertly.loading import json_schemas

    schema = json_schemas()["test"]
    assertion = {"$defs": schema["$defs"], "$ref": "#/$defs/typedAssertion"}
    return jsonschema_rs.validator_for(assertion)


@pytest.mark.parametrize(
    "item",
    [
        {"type": "equals", "value": "a", "config": {"mode": "yaml"}},
        {"type": "regex", "value": "a", "config": {"ignore_case": "no"}},
        {"type": "regex", "value": "a", "config": {"ignore_cas": True}},
        {"type": "not-rouge-n", "value": "a", "config": {"n": 5}},
        {"type": "contains", "value": "a", "threshold": 0.5},
        {"type": "cost", "value": 0.5},
        {"type": "tool-sequence", "value": ["a"], "config": {"mode": "inorder"}},
        {"type": "tool-called", "value": "a", "threshold": 0.5},
    ],
)
def test_the_json_schema_flags_what_compile_refuses(typed_schema: Any, item: Any) -> None:
    assert not typed_schema.is_valid(item)
    with pytest.raises(assertly.ConfigError):
        assertly.compile([item])


@pytest.mark.parametrize(
    "item",
    [
        {"type": "regex", "value": "a", "config": {"ignore_case": True}},
        {"type": "rouge-n", "value": "a", "config": {"n": "L"}, "threshold": 0.5},
        {"type": "not-cost", "threshold": 0.5},
        {"type": "tool-sequence", "value": ["a"], "config": {"mode": "superset"}, "threshold": 1},
        {"type": "custom-thing", "config": {"anything": 1}},
    ],
)
def test_the_json_schema_accepts_valid_options(typed_schema: Any, item: Any) -> None:
    if item["type"] == "custom-thing":
        item = {**item, "type": "equals", "value": "a", "config": {}}
    assert typed_schema.is_valid(item)
