"""Python values read as the JSON they stand for (`assertly._python_values`), and judged so.

An SDK's reply (a pydantic model), a framework's dataclass, a date or a tuple is judged as its
JSON by `Expectation.check` and `assert_response`; a value with no JSON reading (a set, an
arbitrary object) is a `TypeError`, never judged by its ``repr``.
"""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import enum
import uuid
from typing import Any

import pytest
from pydantic import BaseModel, Field

import assertly
from assertly._python_values import NotJsonValue, as_json_value


class Function(BaseModel):
    name: str
    arguments: str


class ToolCall(BaseModel):
    id: str
    type: str = "function"
    function: Function


class Message(BaseModel):
    role: str = "assistant"
    content: str | None = None
    tool_calls: list[ToolCall] | None = None


class Choice(BaseModel):
    index: int = 0
    message: Message


class ChatCompletion(BaseModel):
    """The shape of the OpenAI SDK's reply object (a pydantic model)."""

    object: str = "chat.completion"
    choices: list[Choice]


def _completion(*calls: tuple[str, str]) -> ChatCompletion:
    tool_calls = [
        ToolCall(id=f"call_{index}", function=Function(name=name, arguments=arguments))
        for index, (name, arguments) in enumerate(calls)
    ]
    return ChatCompletion(choices=[Choice(message=Message(tool_calls=tool_calls))])


class Color(enum.Enum):
    RED = "red"


class Aliased(BaseModel):
    kind: str = Field("message", alias="type")


@dataclasses.dataclass
class Hit:
    path: str
    when: datetime.datetime
    score: float
    lines: tuple[int, ...]


def test_values_are_read_as_their_json() -> None:
    hit = Hit("a.md", datetime.datetime(2026, 1, 2, 3, 4, 5), 0.5, (1, 2))
    value = {
        "hit": hit,
        "color": Color.RED,
        "id": uuid.UUID(int=1),
        "day": datetime.date(2026, 1, 2),
        "model": Aliased(),
        "pair": (1, "a"),
        1: "an integer key",
    }
    assert as_json_value(value) == {
        "hit": {"path": "a.md", "when": "2026-01-02T03:04:05", "score": 0.5, "lines": [1, 2]},
        "color": "red",
        "id": "00000000-0000-0000-0000-000000000001",
        "day": "2026-01-02",
        "model": {"type": "message"},  # the alias: the API's own name
        "pair": [1, "a"],
        "1": "an integer key",
    }


def test_plain_values_are_taken_as_they_are() -> None:
    plain = {"a": [1, 2.5, "x", None, True]}
    assert as_json_value(plain, deep=False) is plain
    assert as_json_value(plain) == plain


@pytest.mark.parametrize(
    ("value", "what"),
    [
        ({"tags": {"a", "b"}}, "a set at tags"),
        ({"price": [decimal.Decimal("1.10")]}, "a decimal.Decimal at price[0]"),
        (Hit("a", datetime.datetime(2026, 1, 1), 1.0, (1, {2})), "a set at lines[1]"),
        (object(), "an object"),
        ({(1, 2): "x"}, "the key (1, 2) (tuple)"),
    ],
)
def test_a_value_with_no_json_reading_is_refused_saying_where(value: Any, what: str) -> None:
    with pytest.raises(NotJsonValue) as caught:
        as_json_value(value)
    assert caught.value.what == what
    assert str(caught.value).startswith(f"{what} is not a JSON value; assertly reads text")


def test_a_value_holding_itself_is_refused() -> None:
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(NotJsonValue, match="nested too deeply"):
        as_json_value(loop)


def test_an_sdk_reply_object_is_judged_as_its_json() -> None:
    # Before: judged as its repr, "no tool-call trace found" for every trajectory assertion.
    reply = _completion(("search", '{"q": "refund"}'))
    expectation = assertly.compile(
        [
            {"type": "tool-called", "value": {"name": "search", "args": {"q": "refund"}}},
            {"type": "not-tool-called", "value": "delete"},
            {"type": "is-json"},
        ]
    )
    assert expectation.check(reply).passed
    failed = assertly.compile([{"type": "tool-sequence", "value": ["search", "answer"]}])
    result = failed.check(reply).results[0]
    assert result.outcome is assertly.Outcome.FAILED
    assert 'got 1 call (OpenAI Chat Completions): 1. search({"q":"refund"})' in result.message
    shape = assertly.compile({"field_equals": {"choices[0].message.role": "assistant"}})
    assert shape.check(reply).passed


def test_sdk_call_objects_in_the_context_are_read() -> None:
    calls = _completion(("search", "{}")).choices[0].message.tool_calls
    expectation = assertly.compile([{"type": "tool-called", "value": "search"}])
    assert expectation.check("Done.", context={"tool_calls": calls}).passed


@pytest.mark.parametrize(
    "spec",
    [
        [{"type": "contains", "value": "x"}],  # a repr of object() holds "0x…": it passed
        [{"type": "tool-called", "value": "x"}],  # the trace-only way
        {"status": "success"},
    ],
)
@pytest.mark.parametrize("value", [object(), {"a", "b"}])
def test_checking_a_value_with_no_json_reading_raises_type_error(spec: Any, value: Any) -> None:
    expectation = assertly.compile(spec)
    with pytest.raises(TypeError, match="is not a JSON value"):
        expectation.check(value)
