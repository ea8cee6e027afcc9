"""Properties of the trajectory assertions over any response, near-miss shapes included.

For responses drawn to look like the formats assertly reads (and break them in every way: a
missing name, a name that is a number, arguments of every JSON type or broken JSON text,
``tool_calls`` that is not a list …), JSON values, text, bytes and any metadata:

* no trajectory assertion raises (`Expectation.check` would turn an exception into an error
  saying "could not judge"; none may appear);
* every outcome is passed / failed / error with a score in [0, 1], and serialises;
* a ``not-`` form is the exact inverse of its assertion, and an error stays an error;
* every assertion agrees on whether there is a trace: all error, or none does.
"""

from __future__ import annotations

import json
import math
import os
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import assertly
from assertly import Outcome
from assertly._json import to_json_bytes
from trajectory_support import FORMATS

EXAMPLES = int(os.environ.get("ASSERTLY_PROPERTY_EXAMPLES", "150"))
FAST = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

NAMES = st.sampled_from(["search", "fetch", "answer", "", "sëarch"]) | st.text(max_size=6)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(st.sampled_from(["q", "n", "name", "limit", "x"]), children, max_size=3)
    ),
    max_leaves=10,
)
ARGUMENTS = (
    JSON_VALUES
    | JSON_VALUES.map(json.dumps)
    | st.sampled_from(['{"q": ', "", "  ", "{}", '{"q": "x"}', "[1]", "null", "NaN"])
)
ANY_NAME = NAMES | st.none() | st.integers() | JSON_VALUES


@st.composite
def call_items(draw: st.DrawFn) -> Any:
    """A tool call in any of the item shapes, often slightly wrong."""
    shape = draw(st.sampled_from(["generic", "function", "responses", "anthropic", "junk"]))
    if shape == "junk":
        return draw(JSON_VALUES)
    name = draw(ANY_NAME) if draw(st.integers(0, 9)) == 0 else draw(NAMES)
    item: dict[str, Any] = {}
    if draw(st.integers(0, 9)):
        item["name"] = name
    if shape == "function":
        return {"type": "function", "function": {**item, "arguments": draw(ARGUMENTS)}}
    if shape == "responses":
        item["type"] = draw(st.sampled_from(["function_call", "custom_tool_call", "mcp_call"]))
        item["arguments" if item["type"] != "custom_tool_call" else "input"] = draw(ARGUMENTS)
        return item
    if shape == "anthropic":
        item["type"] = draw(st.sampled_from(["tool_use", "server_tool_use", "text"]))
        item["input"] = draw(ARGUMENTS)
        return item
    key = draw(st.sampled_from(["arguments", "args", "input", "parameters"]))
    item[key] = draw(ARGUMENTS)
    return item


CALL_LISTS = st.lists(call_items(), max_size=5) | JSON_VALUES


@st.composite
def messages(draw: st.DrawFn) -> Any:
    message: dict[str, Any] = {"role": draw(st.sampled_from(["assistant", "user", "tool"]))}
    content = draw(st.one_of(st.text(max_size=5), st.none(), st.lists(call_items(), max_size=3)))
    message["content"] = content
    if draw(st.booleans()):
        message["tool_calls"] = draw(CALL_LISTS)
    if draw(st.integers(0, 5)) == 0:
        message["function_call"] = draw(call_items())
    return message


@st.composite
def responses(draw: st.DrawFn) -> Any:
    kind = draw(
        st.sampled_from(["chat", "responses", "anthropic", "generic", "messages", "list", "any"])
    )
    if kind == "chat":
        choices = draw(
            st.lists(st.fixed_dictionaries({}, optional={"message": messages()}), max_size=2)
            | JSON_VALUES
        )
        value: Any = {"object": "chat.completion", "choices": choices}
    elif kind == "responses":
        value = {"object": draw(st.sampled_from(["response", "x"])), "output": draw(CALL_LISTS)}
    elif kind == "anthropic":
        value = {
            "type": draw(st.sampled_from(["message", "x"])),
            "role": "assistant",
            "content": draw(CALL_LISTS),
        }
    elif kind == "generic":
        value = {"answer": "x", "tool_calls": draw(CALL_LISTS)}
    elif kind == "messages":
        value = {"messages": draw(st.lists(messages(), max_size=4))}
    elif kind == "list":
        value = draw(st.lists(messages() | call_items(), max_size=4))
    else:
        value = draw(JSON_VALUES)
    form = draw(st.sampled_from(["value", "json", "text", "bytes"]))
    if form == "json":
        return json.dumps(value)
    if form == "text":
        return draw(st.text(max_size=30))
    if form == "bytes":
        return draw(st.binary(max_size=30))
    return value


CONTEXTS = st.none() | st.fixed_dictionaries({"tool_calls": CALL_LISTS | st.none()})

SPECS: list[dict[str, Any]] = [
    {"type": "tool-called", "value": "search"},
    {"type": "tool-called", "value": {"name": "search", "args": {"q": "x"}}},
    {"type": "tool-called", "value": {"name": "fetch", "args": {}, "args_match": "exact"}},
    {"type": "tool-called", "value": {"name": "search", "min": 0, "max": 1}},
    *(
        {"type": "tool-sequence", "value": ["search", {"name": "fetch"}], "config": {"mode": m}}
        for m in ("in_order", "exact", "unordered", "subset", "superset")
    ),
    {
        "type": "tool-sequence",
        "value": ["search", {"name": "search", "args": {"q": "x"}}],
        "config": {"mode": "superset"},
        "threshold": 0.5,
    },
    {"type": "tool-call-count", "value": {"max": 2}},
    {"type": "tool-call-count", "value": {"min": 1, "name": "search"}},
]
POSITIVE = assertly.compile(SPECS)
NEGATIVE = assertly.compile([{**spec, "type": "not-" + spec["type"]} for spec in SPECS])
EXPECT = assertly.compile(
    {
        "tools_called": ["search", "fetch"],
        "tools_not_called": ["delete"],
        "tool_sequence": ["search", "answer"],
        "max_tool_calls": 3,
    }
)


@FAST
@given(response=responses(), context=CONTEXTS)
def test_no_response_makes_a_trajectory_assertion_raise(response: Any, context: Any) -> None:
    positive = POSITIVE.check(response, context=context)
    negative = NEGATIVE.check(response, context=context)
    expect = EXPECT.check(response, context=context)
    for result in (positive, negative, expect):
        json.loads(to_json_bytes(result.to_dict()))
        assert math.isfinite(result.score) and 0 <= result.score <= 1
        for item in result.results:
            assert not item.message.startswith("could not judge"), item.message
            assert item.outcome in (Outcome.PASSED, Outcome.FAILED, Outcome.ERROR)
            assert 0.0 <= item.score <= 1.0
    # All see the same trace, or all see none.
    errors = {item.outcome is Outcome.ERROR for r in (positive, expect) for item in r.results}
    assert len(errors) == 1
    for plain, negated in zip(positive.results, negative.results, strict=True):
        if plain.outcome is Outcome.ERROR:
            assert negated.outcome is Outcome.ERROR
        else:
            assert negated.passed is not plain.passed
            assert math.isclose(negated.score, 1 - plain.score)


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a JSON value (keys and indexes from the root)."""
    found = [path]
    if isinstance(value, dict):
        for key, child in value.items():
            found += _paths(child, (*path, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found += _paths(child, (*path, index))
    return found


_KEYS_READ = {"choices", "message", "tool_calls", "function", "name", "output", "type", "content"}


@st.composite
def near_plain_replies(draw: st.DrawFn) -> Any:
    """An API reply in its plain shape, often changed in one or two places.

    The places the readers look at (the keys they read, the objects holding calls) are drawn
    more often than the rest.
    """
    form = draw(st.sampled_from(["openai-chat", "openai-responses", "anthropic"]))
    made = draw(st.lists(st.tuples(NAMES, st.dictionaries(st.just("q"), NAMES)), max_size=3))
    data = json.loads(FORMATS[form](made)[0])
    for _ in range(draw(st.integers(0, 2))):
        paths = [path for path in _paths(data) if path]
        read = [path for path in paths if path[-1] in _KEYS_READ or isinstance(path[-1], int)]
        path = draw(st.sampled_from(read * 3 + paths))
        parent = data
        for step in path[:-1]:
            parent = parent[step]
        change = draw(st.sampled_from(["replace", "delete", "add"]))
        if change == "add":
            target = parent[path[-1]]
            if isinstance(target, dict):
                key = draw(
                    st.sampled_from(["function_call", "tool_calls", "role", "type", "object"])
                )
                target[key] = draw(
                    JSON_VALUES | st.fixed_dictionaries({"name": NAMES}) | st.just("response")
                )
            continue
        if change == "replace":
            parent[path[-1]] = draw(
                JSON_VALUES
                | st.sampled_from(["custom_tool_call", "tool_use", "mcp_call", "message"])
            )
        else:
            del parent[path[-1]]
    return data


QUICK_READ: Counter[str] = Counter()


def _trace_of_quick(found: Any) -> Any:
    """`quick_trace`'s trace: as is, or wrapped (`_Inexact`: arguments orjson may have misread)."""
    return getattr(found, "trace", found)


@FAST
@given(data=near_plain_replies())
def test_the_quick_reader_reads_what_the_full_readers_read(data: Any) -> None:
    """Plain API replies are read with C-level lookups (`quick_trace`), anything else in full."""
    from assertly.engine.trajectory._quick import quick_trace
    from assertly.engine.trajectory._read import _read_value

    full: Any = _read_value(data)
    quick = _trace_of_quick(quick_trace(data)) if type(data) is dict else None
    if quick is None:
        QUICK_READ["full"] += 1
        return
    QUICK_READ[quick.format] += 1
    assert not isinstance(full, str), full
    assert (quick.names, quick.raw, quick.format, quick.free) == (
        full.names,
        full.raw,
        full.format,
        full.free,
    )


def test_the_quick_reader_was_exercised() -> None:
    if sum(QUICK_READ.values()) < 50:
        pytest.skip("run with the property tests")
    assert set(QUICK_READ) == {"openai-chat", "openai-responses", "anthropic", "full"}, QUICK_READ
    assert QUICK_READ["full"] >= 10, QUICK_READ


def _set(path: tuple[Any, ...], value: Any) -> Any:
    def change(data: Any) -> None:
        for step in path[:-1]:
            data = data[step]
        data[path[-1]] = value

    return change


def _delete(path: tuple[Any, ...]) -> Any:
    def change(data: Any) -> None:
        for step in path[:-1]:
            data = data[step]
        del data[path[-1]]

    return change


def _both(first: Any, second: Any) -> Any:
    def change(data: Any) -> None:
        first(data)
        second(data)

    return change


MESSAGE = ("choices", 0, "message")
CALL = (*MESSAGE, "tool_calls", 0)
# The places where a plain reply stops being plain, each form of the break.
NEAR_PLAIN: list[tuple[str, Any]] = [
    ("openai-chat", _set((*MESSAGE, "function_call"), {"name": "legacy", "arguments": "{}"})),
    ("openai-chat", _set((*MESSAGE, "function_call"), 5)),
    ("openai-chat", _set((*MESSAGE, "function_call"), None)),
    ("openai-chat", _set((*MESSAGE, "tool_calls"), None)),
    ("openai-chat", _set((*MESSAGE, "tool_calls"), "x")),
    ("openai-chat", _delete((*MESSAGE, "tool_calls"))),
    ("openai-chat", _set(CALL, 5)),
    ("openai-chat", _set(CALL, {"name": "direct", "arguments": "{}"})),
    ("openai-chat", _set((*CALL, "function"), None)),
    ("openai-chat", _set((*CALL, "function"), ["x"])),
    ("openai-chat", _set((*CALL, "function", "name"), 5)),
    ("openai-chat", _delete((*CALL, "function", "name"))),
    ("openai-chat", _delete((*CALL, "function", "arguments"))),
    ("openai-chat", _set(("choices",), [])),
    ("openai-chat", _set(("choices", 0), 5)),
    ("openai-chat", _set(MESSAGE, "x")),
    ("openai-chat", _delete(MESSAGE)),
    ("openai-responses", _set(("object",), "x")),
    ("openai-responses", _both(_set(("object",), "x"), _set(("output", 0, "type"), 5))),
    ("openai-responses", _delete(("object",))),
    ("openai-responses", _set(("output", 1, "type"), "custom_tool_call")),
    ("openai-responses", _set(("output", 1, "type"), "mcp_call")),
    ("openai-responses", _set(("output", 1, "type"), 5)),
    ("openai-responses", _set(("output", 1, "type"), [])),
    ("openai-responses", _delete(("output", 1, "type"))),
    ("openai-responses", _set(("output", 1), 5)),
    ("openai-responses", _set(("output", 1, "name"), 5)),
    ("openai-responses", _delete(("output", 1, "name"))),
    ("openai-responses", _set(("output", 0), "x")),
    ("anthropic", _set(("content", 1, "type"), [])),
    ("anthropic", _set(("content", 1, "type"), "server_tool_use")),
    ("anthropic", _set(("content", 1, "name"), 5)),
    ("anthropic", _delete(("content", 1, "name"))),
    ("anthropic", _set(("content", 0), "x")),
    ("anthropic", _delete(("content", 0, "type"))),
    ("anthropic", _set(("tool_calls",), [])),
    ("anthropic", _set(("function_call",), None)),
    ("anthropic", _set(("type",), "x")),
    ("anthropic", _delete(("role",))),
    ("anthropic", _delete(("type",))),
]


@pytest.mark.parametrize(("form", "change"), NEAR_PLAIN)
def test_each_break_of_a_plain_reply_is_read_as_the_full_readers_read_it(
    form: str, change: Any
) -> None:
    from assertly.engine.trajectory._quick import quick_trace
    from assertly.engine.trajectory._read import _read_value

    data = json.loads(FORMATS[form]([("search", {"q": "x"}), ("fetch", {"url": "u"})])[0])
    plain = _trace_of_quick(quick_trace(data))
    assert plain is not None and plain.names == ["search", "fetch"]
    change(data)
    full: Any = _read_value(data)
    quick = _trace_of_quick(quick_trace(data))
    if quick is not None:
        assert isinstance(full, type(quick)), full
        assert (quick.names, quick.raw, quick.format, quick.free) == (
            full.names,
            full.raw,
            full.format,
            full.free,
        )


BIG_NUMBERS = st.sampled_from(
    [123456789012345678901234567890, -99999999999999999999, 18446744073709551616, 2**64 - 1]
)


@st.composite
def replies_with_numbers(draw: st.DrawFn) -> str:
    """A reply as JSON text, big integers (and other hazards) drawn into it anywhere."""
    form = draw(st.sampled_from(["openai-chat", "openai-responses", "anthropic"]))
    args = st.dictionaries(st.sampled_from(["q", "id"]), NAMES | BIG_NUMBERS | st.integers())
    made = draw(st.lists(st.tuples(NAMES, args), max_size=3))
    data = json.loads(FORMATS[form](made)[0])
    paths = [path for path in _paths(data) if path]
    for _ in range(draw(st.integers(0, 3))):
        path = draw(st.sampled_from(paths))
        parent = data
        try:
            for step in path[:-1]:
                parent = parent[step]
            parent[path[-1]] = draw(BIG_NUMBERS | JSON_VALUES | st.just("\ud800"))
        except (KeyError, IndexError, TypeError):
            continue  # an earlier change moved it
    text = json.dumps(data, ensure_ascii=draw(st.booleans()))
    if draw(st.integers(0, 9)) == 0:
        text = "\ufeff" + text
    return text


@FAST
@given(replies_with_numbers())
def test_a_trace_read_before_the_big_integer_test_is_the_exact_one(text: str) -> None:
    """`read_trace` may read a reply from orjson's value (`Response.unchecked_json`)."""
    from assertly._json import loads
    from assertly.engine._response import NOT_JSON, Response
    from assertly.engine.trajectory._read import _read_value, read_trace

    response = Response(text)
    exact = Response(text).whole_json
    expected = _read_value(exact)  # (the full readers, on the exact value)
    trace = read_trace(response)
    if isinstance(expected, str) or isinstance(trace, str):
        assert trace == expected
    else:
        got = (trace.names, trace.raw, trace.format, trace.free)
        assert json.dumps(got) == json.dumps(
            (expected.names, expected.raw, expected.format, expected.free)
        )
    # The response's own JSON stays exact, whichever way it was read.
    if exact is NOT_JSON:
        assert response.whole_json is NOT_JSON
    else:
        assert json.dumps(response.whole_json) == json.dumps(exact)
        body = text[1:] if text.startswith("\ufeff") else text
        assert json.dumps(exact) == json.dumps(loads(body))


@pytest.mark.parametrize("form", ["openai-chat", "openai-responses", "anthropic"])
@pytest.mark.parametrize(
    "arguments",
    [
        123456789012345678901234567890,
        {"id": 123456789012345678901234567890},
        {"filters": {"id": 123456789012345678901234567890}},
        {"ids": [123456789012345678901234567890]},
        [1.5],
    ],
)
def test_arguments_that_are_not_text_are_read_from_the_exact_value(
    form: str, arguments: Any
) -> None:
    from assertly.engine._response import Response
    from assertly.engine.trajectory._read import read_trace

    data = json.loads(FORMATS[form]([("search", {"q": "x"}), ("fetch", {})])[0])
    if form == "openai-chat":
        data["choices"][0]["message"]["tool_calls"][1]["function"]["arguments"] = arguments
    elif form == "openai-responses":
        data["output"][2]["arguments"] = arguments
    else:
        data["content"][2]["input"] = arguments
    trace = read_trace(Response(json.dumps(data) + " " * 200))
    assert not isinstance(trace, str)
    assert trace.raw[1] == arguments and json.dumps(trace.raw[1]) == json.dumps(arguments)


@pytest.mark.parametrize(
    "reply",
    [
        {
            "type": "message",
            "role": "assistant",
            "content": [
                {"type": ["tool_use"], "name": "x"},
                {"type": "tool_use", "name": "search", "input": {}},
            ],
        },
        [
            {"role": "assistant", "type": {"a": 1}, "content": "hi"},
            {"type": "tool_use", "name": "search", "input": {}},
        ],
        [
            {
                "role": "assistant",
                "content": [
                    {"type": ["tool_use"]},
                    {"type": "tool_use", "name": "search", "input": {}},
                ],
            }
        ],
    ],
)
def test_an_item_whose_type_is_not_a_string_is_no_call(reply: Any) -> None:
    """A list or object as an item's ``type`` is not a call's type: the rest is read."""
    for output in (reply, json.dumps(reply)):
        for spec in ([{"type": "tool-called", "value": "search"}], {"tools_called": ["search"]}):
            result = assertly.compile(spec).check(output)
            assert result.outcome == "passed", result.to_dict()
