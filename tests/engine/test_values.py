"""JSON text is read exactly: integers beyond 64 bits keep every digit."""

from __future__ import annotations

import pytest

import assertly
from assertly.engine._values import loads


@pytest.mark.parametrize(
    "text",
    ['{"n": 123456789012345678901234567891}', "[-99999999999999999999]", "12345678901234567890"],
)
def test_big_integers_are_exact(text: str) -> None:
    value = loads(text)
    as_int = (
        value["n"] if isinstance(value, dict) else value[0] if isinstance(value, list) else value
    )
    assert isinstance(as_int, int)
    assert str(as_int) in text


def test_a_one_off_big_integer_is_a_failure() -> None:
    expectation = {"field_equals": {"n": 123456789012345678901234567890}}
    result = assertly.check(expectation, '{"n": 123456789012345678901234567891}')
    assert result.outcome is assertly.Outcome.FAILED
    assert assertly.check(expectation, '{"n": 123456789012345678901234567890}').passed


def test_long_digit_runs_inside_strings_still_parse() -> None:
    assert loads('{"id": "00000000000000000000001"}') == {"id": "00000000000000000000001"}


def test_text_that_is_not_json_still_raises() -> None:
    with pytest.raises(ValueError):
        loads("12345678901234567890 trailing")
