"""Load-time validation of typed lists: unknown types and keys, bad shapes, every problem
collected into one ConfigError.
"""

from __future__ import annotations

from typing import Any

import pytest

import assertly
from assertly import ConfigError


def problems(specs: Any, **kwargs: Any) -> list[str]:
    """The problems compiling ``specs`` reports (it must fail)."""
    with pytest.raises(ConfigError) as info:
        assertly.compile(specs, **kwargs)
    return [str(problem) for problem in info.value.problems]


@pytest.mark.parametrize(
    ("written", "suggestion"),
    [
        ("contians", "contains"),
        ("not-contians", "not-contains"),
        ("icontain", "icontains"),
        ("is_json", "is-json"),
        ("not-is_json", "not-is-json"),
        ("word_count", "word-count"),
        ("levenstein", "levenshtein"),
        ("startswith", "starts-with"),
    ],
)
def test_unknown_type_has_did_you_mean(written: str, suggestion: str) -> None:
    assert problems([{"type": written, "value": "x"}]) == [
        f"assertions[0].type: unknown assertion '{written}' (did you mean '{suggestion}'?)"
    ]


def test_unknown_type_without_a_close_name() -> None:
    assert problems([{"type": "zzzzqqq"}]) == ["assertions[0].type: unknown assertion 'zzzzqqq'"]


def test_unknown_key_in_an_assertion_is_a_config_error_with_did_you_mean() -> None:
    found = problems([{"type": "contains", "value": "x", "vaule": "y"}])
    assert len(found) == 1
    assert found[0].startswith(
        "assertions[0].vaule: unknown parameter (allowed: type, value, threshold, weight, "
        "metric, transform, config) (did you mean 'value'?)"
    )
    found = problems([{"type": "contains", "value": "x", "treshold": 1}])
    assert "(did you mean 'threshold'?)" in found[0]


def test_expect_dict_keys_are_not_typed_fields() -> None:
    found = problems([{"type": "contains", "value": "x", "case_sensitive": False}])
    assert [f.split(":")[0] for f in found] == ["assertions[0].case_sensitive"]


def test_missing_type_is_a_config_error() -> None:
    found = problems([{"value": "x"}])
    assert len(found) == 1
    assert found[0].startswith("assertions[0].type: required parameter is missing")


@pytest.mark.parametrize("item", ["contains", 3, None, ["contains", "x"]])
def test_non_mapping_item_is_a_config_error(item: Any) -> None:
    found = problems([item])
    assert len(found) == 1
    assert found[0].startswith("assertions[0]: expected a mapping with type, value")


def test_type_must_be_a_string() -> None:
    found = problems([{"type": 3}])
    assert len(found) == 1
    assert found[0].startswith("assertions[0].type: input should be a valid string, got 3")


@pytest.mark.parametrize(
    ("field", "value"),
    [("threshold", "high"), ("metric", 3), ("config", "n=2"), ("weight", [1])],
)
def test_field_types_are_checked(field: str, value: Any) -> None:
    found = problems([{"type": "contains", "value": "x", field: value}])
    assert [f.split(":")[0] for f in found] == [f"assertions[0].{field}"]


def test_empty_list_is_a_config_error() -> None:
    assert problems([]) == ["assertions: the assertion list is empty"]


def test_a_single_typed_mapping_is_pointed_at_the_list_form() -> None:
    found = problems({"type": "contains", "value": "x"})
    assert len(found) == 1
    assert "write a list of them" in found[0]


def test_every_problem_in_a_list_is_collected() -> None:
    specs = [
        {"type": "contians", "value": "x"},  # 0: unknown type
        {"type": "contains", "value": "ok"},  # 1: fine
        {"type": "regex", "value": "(unclosed"},  # 2: bad regex
        {"type": "contains-all", "value": "abc"},  # 3: bare string
        {"type": "word-count", "value": {"min": 9, "max": 1}},  # 4: min > max
        {"type": "contains", "value": "x", "transform": "xpath:/a"},  # 5: unknown transform
        {"type": "is-json", "value": {"type": "nope"}},  # 6: bad schema
        {"type": "contains", "value": "x", "weight": -2},  # 7: negative weight
        {"type": "contains", "value": "x", "extra": 1},  # 8: unknown key
    ]
    found = problems(specs)
    locations = [f.split(":")[0] for f in found]
    assert locations == [
        "assertions[0].type",
        "assertions[2].value",
        "assertions[3].value",
        "assertions[4].value",
        "assertions[5].transform",
        "assertions[6].value",
        "assertions[7].weight",
        "assertions[8].extra",
    ]


def test_several_problems_in_one_assertion_are_all_reported() -> None:
    # Field errors are all reported; type-specific checks need valid fields first.
    found = problems([{"type": "bleu", "value": 3, "weight": -1, "metric": 3, "extra": 1}])
    assert [f.split(":")[0] for f in found] == [
        "assertions[0].weight",
        "assertions[0].metric",
        "assertions[0].extra",
    ]
    found = problems([{"type": "rouge-n", "value": 3, "threshold": 2.0, "config": {"n": 9}}])
    assert [f.split(":")[0] for f in found] == [
        "assertions[0].value",
        "assertions[0].threshold",
        "assertions[0].config.n",
    ]


def test_config_error_message_lists_every_problem() -> None:
    with pytest.raises(ConfigError) as info:
        assertly.compile([{"type": "contians"}, {"type": "regex", "value": "("}])
    text = str(info.value)
    assert text.startswith("invalid expectation: 2 problems")
    assert "assertions[0].type: unknown assertion 'contians'" in text
    assert "assertions[1].value: invalid regular expression '('" in text


def test_location_prefix_is_used() -> None:
    found = problems([{"type": "contians"}], location="tests/a.yaml:3 [case1]")
    assert found[0].startswith("tests/a.yaml:3 [case1][0].type: unknown assertion")


def test_compiled_expectation_is_reusable_and_describes_itself() -> None:
    expectation = assertly.compile(
        [
            {"type": "contains", "value": "x"},
            {"type": "not-is-json"},
            {"type": "word-count", "value": 1},
        ]
    )
    assert expectation.dialect == "typed"
    assert len(expectation) == 3
    assert expectation.describe() == [
        "output contains 'x'",
        "not (output is JSON)",
        "output has exactly 1 word",
    ]
    assert expectation.check("x").passed
    assert not expectation.check("y").passed
    assert expectation.check("x").passed
