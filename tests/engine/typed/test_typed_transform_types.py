"""``json_path:`` keeps JSON types: ``equals 7`` is not ``"7"``; text assertions see the text."""

from __future__ import annotations

import os
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import assertly
from assertly import Outcome
from assertly._json import dumps, loads
from assertly.engine._values import json_equal

EXAMPLES = int(os.environ.get("ASSERTLY_PROPERTY_EXAMPLES", "150"))
PROPERTY = settings(
    max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def outcome(kind: str, value: Any, document: Any, path: str = "$.n") -> Outcome:
    expectation = assertly.compile(
        [{"type": kind, "value": value, "transform": f"json_path:{path}"}]
    )
    return expectation.check(document).outcome


@pytest.mark.parametrize(
    ("value", "document", "expected"),
    [
        (7, {"n": "7"}, Outcome.FAILED),
        (7, {"n": 7}, Outcome.PASSED),
        (7, {"n": 7.0}, Outcome.PASSED),  # 1 equals 1.0 (the spec)
        (True, {"n": "true"}, Outcome.FAILED),
        (True, {"n": True}, Outcome.PASSED),
        (True, {"n": 1}, Outcome.FAILED),  # true is not 1
        (None, {"n": "null"}, Outcome.FAILED),
        (None, {"n": None}, Outcome.PASSED),
        ({"a": 1}, {"n": '{"a": 1}'}, Outcome.FAILED),  # an object, not its text
        ({"a": 1}, {"n": {"a": 1}}, Outcome.PASSED),
        ([1, 2], {"n": "[1, 2]"}, Outcome.FAILED),
        # A string value matches a string as written ...
        ("7", {"n": "7"}, Outcome.PASSED),
        ("yes", {"n": "yes"}, Outcome.PASSED),
        ('"7"', {"n": "7"}, Outcome.PASSED),  # ... or JSON-quoted
        # ... and, read as JSON (the seed's rule for equals), a non-string value.
        ("7", {"n": 7}, Outcome.PASSED),
        ("true", {"n": True}, Outcome.PASSED),
        ("seven", {"n": 7}, Outcome.FAILED),
    ],
)
def test_equals_on_a_selected_value_keeps_its_type(
    value: Any, document: Any, expected: Outcome
) -> None:
    assert outcome("equals", value, document) is expected
    # not- inverts a real verdict
    inverted = Outcome.FAILED if expected is Outcome.PASSED else Outcome.PASSED
    assert outcome("not-equals", value, document) is inverted


def test_the_message_names_both_types() -> None:
    result = assertly.compile([{"type": "equals", "value": 7, "transform": "json_path:$.n"}]).check(
        {"n": "7"}
    )
    assert result.results[0].message == 'Expected integer 7, got string "7"'
    result = assertly.compile(
        [{"type": "equals", "value": True, "transform": "json_path:$.ok"}]
    ).check({"ok": "true"})
    assert result.results[0].message == 'Expected boolean true, got string "true"'
    result = assertly.compile(
        [{"type": "equals", "value": "abc", "transform": "json_path:$.n"}]
    ).check({"n": "abd"})
    assert result.results[0].message == "Expected output 'abc', got 'abd'"


@pytest.mark.parametrize(
    ("kind", "value", "document", "expected"),
    [
        ("contains", "7", {"n": 7}, Outcome.PASSED),
        ("contains", "7", {"n": "7"}, Outcome.PASSED),
        ("regex", "^7$", {"n": 7}, Outcome.PASSED),
        ("regex", "^7$", {"n": "7"}, Outcome.PASSED),
        ("starts-with", "tr", {"n": True}, Outcome.PASSED),
        ("icontains", "TRUE", {"n": "true"}, Outcome.PASSED),
        ("contains", '"a"', {"n": {"a": 1}}, Outcome.PASSED),  # compact JSON text
        ("word-count", 1, {"n": 12345}, Outcome.PASSED),
    ],
)
def test_text_assertions_see_the_text_of_a_scalar(
    kind: str, value: Any, document: Any, expected: Outcome
) -> None:
    assert outcome(kind, value, document) is expected


def test_is_json_reads_the_text_of_a_selected_string() -> None:
    # Tool-call arguments arrive as a JSON document inside a string.
    spec = {"type": "is-json", "transform": "json_path:$.arguments"}
    expectation = assertly.compile([spec])
    assert expectation.check({"arguments": '{"city": "Paris"}'}).passed
    assert not expectation.check({"arguments": "city=Paris"}).passed
    assert expectation.check({"arguments": {"city": "Paris"}}).passed


_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**6), max_value=10**6)
    | st.floats(allow_nan=False, allow_infinity=False, width=32)
    | st.text(max_size=8)
    | st.sampled_from(["7", "true", "null", "1.0", '"x"', "[1]", "{}", " 7", "7 "])
)
_values = (
    _scalars
    | st.lists(_scalars, max_size=3)
    | st.dictionaries(st.text(max_size=3), _scalars, max_size=3)
)


@PROPERTY
@given(selected=_values, value=_values)
def test_a_non_string_value_passes_exactly_when_json_equal(selected: Any, value: Any) -> None:
    document = {"n": selected, "other": 1}
    got = outcome("equals", value, document)
    if isinstance(value, str) and isinstance(selected, str):
        # A string matches a string as written, or JSON-quoted.
        try:
            as_json = loads(value)
        except ValueError:
            as_json = None
        assert (got is Outcome.PASSED) == (selected in (value, as_json)), (selected, value)
        return
    if isinstance(value, str):
        return  # the seed's rule: a string value is read as JSON when the output is not a string
    assert got in (Outcome.PASSED, Outcome.FAILED)
    assert (got is Outcome.PASSED) == json_equal(selected, value), (selected, value)


@PROPERTY
@given(selected=_values, needle=st.text(min_size=1, max_size=4))
def test_contains_sees_the_text_of_any_selected_value(selected: Any, needle: str) -> None:
    text = selected if isinstance(selected, str) else dumps(selected)
    got = outcome("contains", needle, {"n": selected})
    assert (got is Outcome.PASSED) == (needle in text)
