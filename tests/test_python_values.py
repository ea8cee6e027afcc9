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
import fractions
import pathlib
import uuid
from typing import Any

import pytest
from pydantic import BaseModel, Field, HttpUrl

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


class Loose(BaseModel):
    status: str = "ok"
    extra: Any = None


class Opaque:
    def __repr__(self) -> str:
        return "Opaque(xyz)"


class Shade(str, enum.Enum):  # noqa: UP042 - the mixin whose str() is "Shade.RED"
    RED = "red"


class Linked(BaseModel):
    url: HttpUrl
    path: pathlib.Path
    wait: datetime.timedelta


def test_a_model_is_read_as_it_writes_itself_but_nan_is_refused() -> None:
    # Its own JSON form: a set field a list, a Decimal a string, a UTC date as the API wrote it.
    assert as_json_value(
        Loose(extra={"when": datetime.datetime(2025, 2, 19, tzinfo=datetime.UTC)})
    )["extra"] == {"when": "2025-02-19T00:00:00Z"}
    assert as_json_value(Loose(extra=decimal.Decimal("1.10")))["extra"] == "1.10"
    # pydantic's JSON mode writes NaN as null, another value: refused, saying where.
    for extra, what in [
        (float("nan"), "nan at extra"),
        ({"k": [float("inf")]}, "inf at extra.k[0]"),
    ]:
        with pytest.raises(NotJsonValue) as caught:
            as_json_value(Loose(extra=extra))
        assert caught.value.what == what
    # What pydantic cannot write is refused too (not an internal error).
    with pytest.raises(NotJsonValue, match="that pydantic cannot write"):
        as_json_value(Loose(extra={"k": Opaque()}))
    # What pydantic writes as JSON for other types, as it writes it.
    linked = Linked(url="https://example.org/a", path=pathlib.Path("/a/b"), wait=3)
    assert as_json_value(linked) == {"url": "https://example.org/a", "path": "/a/b", "wait": "PT3S"}


def test_outside_a_model_a_value_with_no_single_reading_is_refused() -> None:
    for value, what in [
        ({"a": float("nan")}, "nan at a"),
        ({"it": iter([1, 2])}, "a list_iterator at it"),
        ({"third": fractions.Fraction(1, 3)}, "a fractions.Fraction at third"),
        ([b"raw"], "a bytes at [0]"),
    ]:
        with pytest.raises(NotJsonValue) as caught:
            as_json_value(value)
        assert caught.value.what == what


def test_keys_are_written_as_json_writes_them() -> None:
    assert as_json_value({Shade.RED: 1, 7: 2}) == {"red": 1, "7": 2}


def test_a_value_inside_a_plain_response_is_never_judged_by_its_repr() -> None:
    # The engine does not walk a plain dict on its way to a verdict; what reads the part
    # that is not JSON errs (could not judge) instead of searching its repr.
    for inside in (Opaque(), {"xyz"}, object()):
        result = assertly.compile([{"type": "contains", "value": "xyz"}]).check({"a": inside})
        assert result.outcome is assertly.Outcome.ERROR, inside
        assert "is not a JSON value" in result.results[0].message
    # What stands for JSON is read as it.
    day = assertly.compile([{"type": "contains", "value": "2026-01-02"}])
    assert day.check({"when": datetime.date(2026, 1, 2)}).passed
    assert day.check({"model": Loose(status="2026-01-02")}).passed


def test_an_agent_loops_message_list_with_sdk_objects_is_read() -> None:
    # [user dict, the client's message object, tool result dict]: the usual OpenAI loop.
    message = _completion(("delete_db", "{}")).choices[0].message
    transcript = [{"role": "user", "content": "hi"}, message, {"role": "tool", "content": "ok"}]
    result = assertly.compile([{"type": "not-tool-called", "value": "delete_db"}]).check(transcript)
    assert result.outcome is assertly.Outcome.FAILED
    assert "1. delete_db({})" in result.results[0].message


def test_a_trace_only_expectation_treats_its_first_check_as_the_others() -> None:
    expectation = assertly.compile([{"type": "tool-called", "value": "search"}])
    reported = {"tool_calls": [{"name": "search"}]}
    # The calls reported win: the output itself is not read, on the first call as later.
    assert expectation.check(object(), context=reported).passed
    assert expectation.check(object(), context=reported).passed


class TextBlock(BaseModel):
    type: str = "text"
    text: str


class ToolUseBlock(BaseModel):
    """The shape of the Anthropic SDK's tool_use block (a pydantic model)."""

    type: str = "tool_use"
    id: str
    name: str
    input: dict[str, Any]


def test_an_anthropic_loops_content_blocks_are_read() -> None:
    # The loop appends {"role": "assistant", "content": response.content}: SDK blocks inside
    # plain dicts. They were passed over, zero calls: tools_not_called and max 0 passed.
    content = [TextBlock(text="Refunding."), ToolUseBlock(id="t", name="issue_refund", input={})]
    for transcript in (
        [{"role": "user", "content": "refund"}, {"role": "assistant", "content": content}],
        {"role": "assistant", "content": content},
        {"type": "message", "role": "assistant", "content": content},
    ):
        for spec in ({"tools_not_called": ["issue_refund"]}, {"max_tool_calls": 0}):
            result = assertly.compile(spec).check(transcript)
            assert result.outcome is assertly.Outcome.FAILED, (spec, transcript)
        assert (
            assertly.compile([{"type": "tool-called", "value": "issue_refund"}])
            .check(transcript)
            .passed
        )
