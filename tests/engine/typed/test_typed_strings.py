"""String assertions of the typed dialect: equals, contains, icontains, contains-all,
contains-any, starts-with, regex and word-count (seed 003, spec section B).
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

import assertly
from assertly import AssertionResult, ConfigError


def judge(spec: dict[str, Any], output: Any) -> AssertionResult:
    """Compile one typed assertion and check one output; return its result."""
    result = assertly.compile([spec]).check(output)
    assert len(result.results) == 1
    assert result.passed is result.results[0].passed
    return result.results[0]


def problems(specs: list[dict[str, Any]]) -> list[str]:
    """The problems compiling ``specs`` reports (it must fail)."""
    with pytest.raises(ConfigError) as info:
        assertly.compile(specs)
    return [str(problem) for problem in info.value.problems]


# --- equals --------------------------------------------------------------------------------


def test_seed_equals_example_passes_on_exact_text() -> None:
    spec = yaml.safe_load('- type: equals\n  value: "expected output"\n')[0]
    result = judge(spec, "expected output")
    assert result.outcome is assertly.Outcome.PASSED
    assert result.score == 1.0
    assert result.message == ""


def test_equals_string_mismatch_names_expected_and_actual() -> None:
    result = judge({"type": "equals", "value": "expected output"}, "expected  output")
    assert result.outcome is assertly.Outcome.FAILED
    assert result.score == 0.0
    assert result.message == "Expected output 'expected output', got 'expected  output'"
    assert result.expected == "expected output"
    assert result.actual == "expected  output"


def test_equals_plain_text_is_exact_but_for_its_edges() -> None:
    assert not judge({"type": "equals", "value": "Hello"}, "hello").passed
    assert not judge({"type": "equals", "value": "Hello world"}, "Hello  world").passed
    # A command's final newline, or a byte order mark, is not part of the answer.
    assert judge({"type": "equals", "value": "Hello"}, "Hello\n").passed
    assert judge({"type": "equals", "value": "Hello"}, "\ufeffHello\r\n").passed


def test_equals_json_is_deep_and_key_order_free() -> None:
    value = {"a": 1, "b": [1, {"c": None, "d": "x"}]}
    output = '{"b": [1, {"d": "x", "c": null}], "a": 1}'
    assert judge({"type": "equals", "value": value}, output).passed


def test_equals_json_text_value_compares_as_json() -> None:
    # Both sides parse as JSON, so whitespace and key order do not matter.
    assert judge({"type": "equals", "value": '{"a": 1, "b": 2}'}, '{"b":2,"a":1}').passed


def test_equals_json_value_against_a_python_response_value() -> None:
    assert judge({"type": "equals", "value": {"a": [1, 2]}}, {"a": [1, 2]}).passed


def test_equals_json_array_order_matters() -> None:
    result = judge({"type": "equals", "value": [1, 2]}, "[2, 1]")
    assert not result.passed
    assert result.message == "Output JSON differs from the expected JSON at [0]: expected 1, got 2"


def test_equals_json_mismatch_says_where_expected_and_actual() -> None:
    result = judge({"type": "equals", "value": {"data": {"count": 42}}}, '{"data": {"count": 41}}')
    assert result.outcome is assertly.Outcome.FAILED
    assert result.message == (
        "Output JSON differs from the expected JSON at data.count: expected 42, got 41"
    )
    assert result.path == "data.count"
    assert result.expected == {"data": {"count": 42}}
    assert result.actual == {"data": {"count": 41}}


def test_equals_json_missing_and_extra_keys_are_named() -> None:
    missing = judge({"type": "equals", "value": {"a": 1, "b": 2}}, '{"a": 1}')
    assert missing.message == (
        "Output JSON differs from the expected JSON at b: expected 2, got (absent)"
    )
    extra = judge({"type": "equals", "value": {"a": 1}}, '{"a": 1, "z": 0}')
    assert (
        extra.message == "Output JSON differs from the expected JSON at z: expected (absent), got 0"
    )


@pytest.mark.parametrize(
    ("value", "output"),
    [
        ({"a": 1}, '{"a": true}'),  # true is not 1
        ({"a": True}, '{"a": 1}'),
        ({"a": "0"}, '{"a": 0}'),  # "0" is not 0
        (0, '"0"'),
        (None, '""'),
        ([1], "[true]"),
    ],
)
def test_equals_json_types_are_strict(value: Any, output: str) -> None:
    result = judge({"type": "equals", "value": value}, output)
    assert result.outcome is assertly.Outcome.FAILED
    assert result.message.startswith("Output JSON differs from the expected JSON")


def test_equals_int_equals_float() -> None:
    assert judge({"type": "equals", "value": {"n": 1}}, '{"n": 1.0}').passed
    assert judge({"type": "equals", "value": 1}, "1.0").passed


def test_equals_non_json_output_against_json_value_is_a_string_compare() -> None:
    result = judge({"type": "equals", "value": {"a": 1}}, "a is 1")
    assert not result.passed
    assert result.message == """Expected output '{"a":1}', got 'a is 1'"""


def test_equals_without_value_is_a_config_error() -> None:
    assert problems([{"type": "equals"}]) == [
        "assertions[0].value: equals needs a value to compare with"
    ]


# --- contains / icontains ------------------------------------------------------------------


def test_seed_contains_example() -> None:
    spec = yaml.safe_load('- type: contains\n  value: "machine learning"\n')[0]
    assert judge(spec, "All about machine learning today").passed
    result = judge(spec, "All about Machine Learning today")
    assert result.outcome is assertly.Outcome.FAILED
    assert result.message == "Output does not contain 'machine learning'"
    assert result.expected == "machine learning"


def test_seed_icontains_example() -> None:
    spec = yaml.safe_load('- type: icontains\n  value: "Machine Learning"\n')[0]
    assert judge(spec, "about MACHINE LEARNING").passed
    assert judge(spec, "about machine learning").passed
    result = judge(spec, "about deep nets")
    assert not result.passed
    # The message quotes the value as written, not its folded form.
    assert result.message == "Output does not contain 'Machine Learning' (any case)"


def test_icontains_uses_casefold_not_lower() -> None:
    # 'ß'.lower() is 'ß' but 'ß'.casefold() is 'ss'.
    assert judge({"type": "icontains", "value": "STRASSE"}, "Die straße ist lang").passed
    assert judge({"type": "icontains", "value": "straße"}, "DIE STRASSE").passed
    assert not judge({"type": "contains", "value": "STRASSE"}, "Die straße").passed


@pytest.mark.parametrize("kind", ["contains", "icontains", "starts-with", "regex"])
@pytest.mark.parametrize("value", [None, "", 3, ["a"]])
def test_string_assertions_need_a_non_empty_string(kind: str, value: Any) -> None:
    found = problems([{"type": kind, "value": value}])
    assert len(found) == 1
    assert found[0].startswith(f"assertions[0].value: {kind} needs a non-empty string value")


# --- contains-all / contains-any -----------------------------------------------------------


def test_seed_contains_all_example() -> None:
    spec = yaml.safe_load(
        '- type: contains-all\n  value: ["introduction", "methodology", "conclusion"]\n'
    )[0]
    assert judge(spec, "introduction, methodology and conclusion").passed
    result = judge(spec, "introduction and conclusion")
    assert result.outcome is assertly.Outcome.FAILED
    assert result.message == "Output is missing 'methodology'"
    assert result.expected == ["introduction", "methodology", "conclusion"]


def test_contains_all_lists_every_missing_item() -> None:
    result = judge({"type": "contains-all", "value": ["a1", "b2", "c3"]}, "only b2")
    assert result.message == "Output is missing 'a1', 'c3'"


def test_seed_contains_any_example() -> None:
    spec = yaml.safe_load('- type: contains-any\n  value: ["approved", "accepted", "passed"]\n')[0]
    assert judge(spec, "the request was accepted").passed
    result = judge(spec, "the request was rejected")
    assert result.outcome is assertly.Outcome.FAILED
    assert result.message == "Output contains none of 'approved', 'accepted', 'passed'"


@pytest.mark.parametrize("kind", ["contains-all", "contains-any"])
def test_bare_string_value_is_a_config_error_not_a_character_list(kind: str) -> None:
    assert problems([{"type": kind, "value": "abc"}]) == [
        f"assertions[0].value: {kind} needs a list of strings, got the string 'abc' "
        "(write value: ['abc'])"
    ]


@pytest.mark.parametrize("kind", ["contains-all", "contains-any"])
def test_empty_list_is_a_config_error(kind: str) -> None:
    assert problems([{"type": kind, "value": []}]) == [
        f"assertions[0].value: {kind} needs a non-empty list of strings, got []"
    ]


@pytest.mark.parametrize("kind", ["contains-all", "contains-any"])
def test_non_string_items_are_a_config_error(kind: str) -> None:
    found = problems([{"type": kind, "value": ["ok", 3]}])
    assert found == ["assertions[0].value: every item must be a non-empty string, got ['ok', 3]"]


# --- starts-with ---------------------------------------------------------------------------


def test_seed_starts_with_example() -> None:
    spec = yaml.safe_load('- type: starts-with\n  value: "Summary:"\n')[0]
    assert judge(spec, "Summary: all good").passed
    result = judge(spec, "Overview: all good")
    assert result.outcome is assertly.Outcome.FAILED
    assert (
        result.message
        == "Output does not start with 'Summary:'; it starts with 'Overview: all good'"
    )


def test_starts_with_is_a_prefix_not_a_substring() -> None:
    assert not judge({"type": "starts-with", "value": "Summary:"}, "A Summary: x").passed
    # Leading whitespace and invisible marks (a BOM, an RLM) are not where an answer starts.
    assert judge({"type": "starts-with", "value": "Summary:"}, " \n\ufeffSummary: x").passed
    assert judge({"type": "starts-with", "value": "Summary:"}, "\u200fSummary: x").passed


# --- regex ---------------------------------------------------------------------------------


def test_seed_regex_example_uses_search_semantics() -> None:
    spec = yaml.safe_load('- type: regex\n  value: "\\\\d{4}-\\\\d{2}-\\\\d{2}"\n')[0]
    assert spec["value"] == r"\d{4}-\d{2}-\d{2}"
    # A match anywhere in the text passes (re.search, not fullmatch).
    assert judge(spec, "Released on 2024-05-17, finally.").passed
    result = judge(spec, "Released on 2024-5-17")
    assert result.outcome is assertly.Outcome.FAILED
    assert result.message == r"Output has no match for pattern '\d{4}-\d{2}-\d{2}'"
    assert result.details == {"regex_engine": "re"}


def test_regex_search_is_not_anchored_unless_written() -> None:
    assert judge({"type": "regex", "value": "b+"}, "aaabbbccc").passed
    assert not judge({"type": "regex", "value": "^b+$"}, "aaabbbccc").passed


def test_invalid_regex_is_a_config_error() -> None:
    found = problems([{"type": "regex", "value": "(unclosed"}])
    assert len(found) == 1
    assert found[0].startswith("assertions[0].value: invalid regular expression '(unclosed'")


def test_catastrophic_regex_is_judged_by_re2() -> None:
    result = judge({"type": "regex", "value": "^(a+)+$"}, "a" * 40 + "!")
    assert result.outcome is assertly.Outcome.FAILED
    assert result.details == {"regex_engine": "re2"}
    assert judge({"type": "regex", "value": "^(a+)+$"}, "a" * 40).passed


# --- word-count ----------------------------------------------------------------------------


def test_seed_word_count_exact_example() -> None:
    spec = yaml.safe_load("# Exact count\n- type: word-count\n  value: 100\n")[0]
    assert judge(spec, " ".join(["word"] * 100)).passed
    result = judge(spec, " ".join(["word"] * 99))
    assert result.outcome is assertly.Outcome.FAILED
    assert result.message == "Expected exactly 100 words, got 99"
    assert result.actual == 99


def test_seed_word_count_range_example() -> None:
    spec = yaml.safe_load("# Range\n- type: word-count\n  value:\n    min: 50\n    max: 200\n")[0]
    assert spec["value"] == {"min": 50, "max": 200}
    assert judge(spec, " ".join(["w"] * 50)).passed  # bounds are inclusive
    assert judge(spec, " ".join(["w"] * 200)).passed
    below = judge(spec, " ".join(["w"] * 49))
    assert below.message == "Expected between 50 and 200 words, got 49"
    above = judge(spec, " ".join(["w"] * 201))
    assert above.message == "Expected between 50 and 200 words, got 201"


def test_word_count_splits_on_any_whitespace() -> None:
    assert judge({"type": "word-count", "value": 4}, "  one\ttwo\n\nthree   four  ").passed


def test_word_count_open_ranges() -> None:
    assert judge({"type": "word-count", "value": {"min": 2}}, "a b c").passed
    assert judge({"type": "word-count", "value": {"min": 5}}, "a b").message == (
        "Expected at least 5 words, got 2"
    )
    assert judge({"type": "word-count", "value": {"max": 1}}, "a b").message == (
        "Expected at most 1 word, got 2"
    )


def test_word_count_min_greater_than_max_is_a_config_error() -> None:
    assert problems([{"type": "word-count", "value": {"min": 10, "max": 5}}]) == [
        "assertions[0].value: min 10 is greater than max 5"
    ]


@pytest.mark.parametrize("value", ["3", True, -1, 2.5, {"minimum": 3}, {}])
def test_word_count_bad_values_are_config_errors(value: Any) -> None:
    found = problems([{"type": "word-count", "value": value}])
    assert len(found) == 1
    assert found[0].startswith("assertions[0].value")


def test_word_count_without_value_is_a_config_error() -> None:
    assert problems([{"type": "word-count"}]) == [
        "assertions[0].value: word-count needs a number or {min, max}"
    ]
