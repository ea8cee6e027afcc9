"""JSON text is read exactly: integers beyond 64 bits keep every digit."""

from __future__ import annotations

import json
import os
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import assertly
from assertly._json import loads


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


# The cheap pre-test samples every 9th character; a big integer must be found wherever it
# starts, in long texts (where the sample is used) and short ones.
@pytest.mark.parametrize("padding", [*range(0, 20), 200, 201, 205])
@pytest.mark.parametrize(
    "number", ["-9223372036854775809", "18446744073709551616", "123456789012345678901234567891"]
)
def test_big_integers_are_exact_wherever_they_start(padding: int, number: str) -> None:
    text = f'{{"pad": "{"x" * padding}", "n": {number}, "after": "{"y" * 200}"}}'
    value = loads(text)
    assert type(value["n"]) is int and str(value["n"]) == number
    assert loads(text.encode()) == value
    assert loads(f"[{number}]") == [int(number)]


def test_numbers_orjson_reads_exactly_stay_as_they_are() -> None:
    prose = "word " * 60
    text = (
        f'{{"a": 18446744073709551615, "b": -9223372036854775808, "c": 1.5e300, "d": 2E-5, '
        f'"e": 0.1234567890123456789, "f": "{prose}", "g": "2026-01-05T10:00:00Z 12345"}}'
    )
    value = loads(text)
    assert value["a"] == 18446744073709551615 and type(value["a"]) is int
    assert value["b"] == -9223372036854775808
    assert value["c"] == 1.5e300 and value["d"] == 2e-5
    assert value["e"] == 0.1234567890123456789
    assert value == json.loads(text)


@pytest.mark.parametrize("where", [0, 1, 7, 8, 9, 10, 17, 18, 170, 171, 400])
def test_a_run_of_nineteen_digits_is_seen_at_every_offset(where: int) -> None:
    from assertly._json import has_long_digit_run

    for length, expected in ((18, False), (19, True), (25, True)):
        text = "a" * where + "7" * length + "b" * 300
        assert has_long_digit_run(text) is expected, (where, length)
        assert has_long_digit_run(text.encode()) is expected, (where, length)
        wide = "é" * where + "7" * length + "€" * 300  # non-ASCII around it
        assert has_long_digit_run(wide) is expected, (where, length)


def test_digits_spread_out_are_not_a_run() -> None:
    from assertly._json import has_long_digit_run

    # Every 9th character a digit, and dates: the cheap test defers to the full one, which
    # finds no run.
    spaced = "".join("1" if index % 9 == 0 else "x" for index in range(900))
    assert not has_long_digit_run(spaced)
    assert not has_long_digit_run("2026-01-05T10:00:00Z, " * 40)
    assert not has_long_digit_run("1" * 18 + "x" + "1" * 18 + "x" * 300)


def test_text_with_a_lone_surrogate_is_still_checked_for_big_integers() -> None:
    number = "123456789012345678901234567891"
    for padding in (0, 300):  # the short test and the sampled one
        text = f'["\ud800{"x" * padding}", {number}]'
        assert loads(text)[1] == int(number)


def test_a_str_subclass_with_a_big_integer_is_read_exactly() -> None:
    """A response that is a str subclass (``numpy.str_`` from a py: target) reads like a str."""
    from assertly._json import loads as exact_loads

    class Text(str):
        __slots__ = ()

    big = 12345678901234567890123
    for pad in (0, 200):  # under and over the sampled test's length
        text = Text(json.dumps({"id": big, "pad": "x" * pad}))
        assert exact_loads(text) == {"id": big, "pad": "x" * pad}


# The windows: when the sample has adjacent digits, only the text around them is tested. A
# property against the plain definition, on texts made of runs of digits of every length and
# of other characters (ASCII, non-ASCII, lone surrogates), short and long.
RUNS = st.lists(
    st.one_of(
        st.integers(1, 40).map(lambda n: "7" * n),
        st.text(alphabet="0123456789", min_size=1, max_size=25),
        st.text(alphabet="ab:-é€\ud800\U0001f600", min_size=1, max_size=12),
        st.text(max_size=10),
    ),
    max_size=60,
)


@settings(max_examples=int(os.environ.get("ASSERTLY_PROPERTY_EXAMPLES", "150")) * 4)
@given(RUNS, st.integers(0, 200))
def test_the_windowed_digit_test_is_the_plain_one(parts: list[str], padding: int) -> None:
    from assertly._json import has_long_digit_run

    for text in ("".join(parts), "x" * padding + "".join(parts)):
        expected = re.search(r"[0-9]{19}", text) is not None
        assert has_long_digit_run(text) is expected
        as_bytes = text.encode("utf-8", "surrogatepass")
        assert has_long_digit_run(as_bytes) is expected


@pytest.mark.parametrize("gap", [0, 1, 5, 9, 17, 18, 19, 40])
def test_many_sample_hits_before_the_run_still_find_it(gap: int) -> None:
    from assertly._json import has_long_digit_run

    # Numbers of 18 digits (each a sample hit, none a run) ahead of the one run of 19.
    numbers = ", ".join(["123456789012345678"] * 12)
    run = "1234567890123456789"
    text = f"[{numbers}, {'x' * gap}{run}]" + " " * 200
    assert has_long_digit_run(text)
    assert not has_long_digit_run(text.replace(run, run[:-1]))
    assert loads(text.replace("x", " "))[-1] == int(run)


@settings(max_examples=int(os.environ.get("ASSERTLY_PROPERTY_EXAMPLES", "150")) * 4)
@given(
    st.integers(171, 400),
    st.lists(st.integers(0, 399), max_size=12),
    st.lists(st.tuples(st.integers(0, 399), st.integers(15, 22)), max_size=3),
)
def test_runs_next_to_stray_digits_are_found(
    size: int, strays: list[int], runs: list[tuple[int, int]]
) -> None:
    """Stray digits on the sampled positions make sample hits that are not the run."""
    from assertly._json import has_long_digit_run

    chars = ["x"] * size
    for position in strays:
        chars[(position // 9 * 9) % size] = "5"  # on a sampled position
    for start, length in runs:
        chars[start % size : start % size + length] = "7" * length
    text = "".join(chars)
    expected = re.search(r"[0-9]{19}", text) is not None
    assert has_long_digit_run(text) is expected
    assert has_long_digit_run(text.encode()) is expected


# Whether a text is JSON must not depend on which parser `loads` picks: the stdlib's (taken
# when a 19-digit run may be a big integer) accepts exactly what the orjson path does.
_BIG = "1234567890123456789012"
_NOT_JSON_VALUES = ["1e400", "[-1E+999]", "NaN", "[Infinity]"]  # infinity is not a JSON number
_NOT_JSON_SPACE = ["\u00a0", "\u2028", "\x0b", "\x1c", "\u3000"]  # not JSON's whitespace
# A lone surrogate: JSON's grammar allows the escape (JavaScript writes it), orjson refuses
# it, the stdlib reads it; `loads` reads it on either path, the character too.
_LONE_SURROGATES = ['"\\ud800"', '{"k\\udfff": 1}', '["\\ud800\\u0041"]', '["a\ud800"]']


@pytest.mark.parametrize("text", _NOT_JSON_VALUES)
def test_a_value_orjson_refuses_the_big_integer_path_refuses(text: str) -> None:
    with pytest.raises(ValueError):
        loads(text)
    with pytest.raises(ValueError):
        loads(f"[{_BIG}, {text}]")  # the stdlib's path


@pytest.mark.parametrize("space", _NOT_JSON_SPACE)
def test_whitespace_orjson_refuses_the_big_integer_path_refuses(space: str) -> None:
    for text in ("[1]", f"[{_BIG}]"):
        for spaced in (space + text, text + space):
            with pytest.raises(ValueError):
                loads(spaced)
    assert loads(f" \t\r\n[{_BIG}]\n ") == [int(_BIG)]


@pytest.mark.parametrize("text", _LONE_SURROGATES)
def test_a_lone_surrogate_is_json_on_both_paths(text: str) -> None:
    value = json.loads(text)
    assert loads(text) == value
    assert loads(text.encode("utf-8", "surrogatepass").decode("utf-8", "surrogatepass")) == value
    assert loads(f"[{_BIG}, {text}]") == [int(_BIG), value]
    if text.isascii():
        assert loads(text.encode()) == value


def test_json_found_in_text_follows_the_same_rules() -> None:
    from assertly.engine._response import iter_json_values

    text = 'see {"a": "\\ud800"} and {"d": 1e400} and ["\\ud83d\\ude00", 1e300]'
    found = [value for _, _, value in iter_json_values(text)]
    assert found == [{"a": "\ud800"}, ["😀", 1e300]]


_JSON_TEXT = st.recursive(
    st.none()
    | st.booleans()
    | st.floats(allow_nan=False)
    | st.integers(-(2**63), 2**63 - 1)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4)
    ),
    max_leaves=12,
).map(lambda value: json.dumps(value, ensure_ascii=False, allow_nan=True))


@settings(max_examples=400, deadline=None)
@given(
    st.one_of(
        _JSON_TEXT,
        st.text(alphabet='[]{}",:\\ud0123456789.eE+-tfnaul\u00a0\u2028 \t\r\n', max_size=30),
        _JSON_TEXT.flatmap(lambda t: st.integers(0, len(t)).map(lambda i: t[:i] + t[i + 1 :])),
    )
)
def test_the_stdlib_path_agrees_with_orjson(text: str) -> None:
    """The same text, parsed alone and beside a big integer: the same verdict and value."""
    if re.search(r"\d{19}", text):
        return  # a big integer: orjson's path is not taken for it at all
    try:
        want: object = ("json", loads(text))
    except ValueError:
        want = "not json"
    try:
        got: object = ("json", loads(f"[{_BIG},{text}]")[1])
    except ValueError:
        got = "not json"
    if want == "not json" or got == "not json":
        # `[big,` + text + `]` may be JSON when text alone is not (e.g. text = `1,2`).
        if "," not in text and "]" not in text:
            assert got == want, text
    else:
        assert got == want or (text.strip(" \t\n\r").startswith("-0") and str(got) == str(want))


def test_a_lone_surrogate_deeper_than_orjson_reads_is_json_to_the_engine() -> None:
    deep = "[" * 1500 + '"\\ud800"' + "]" * 1500
    compiled = assertly.compile([{"type": "is-json"}])
    assert compiled.check(deep).passed
    assert compiled.check('{"a": "\\udc00"}').passed  # the engine's own failure handler
    assert not compiled.check('{"a": "\\udc00"').passed
