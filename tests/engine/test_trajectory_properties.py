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
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import assertly
from assertly import Outcome
from assertly.engine._values import to_json_bytes

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
