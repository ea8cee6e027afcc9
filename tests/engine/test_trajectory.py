"""Reading the tool-call trace out of a response or the call's metadata (trajectory/_read)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from assertly import CheckContext
from assertly.engine import Response
from assertly.engine.trajectory import _read as trajectory
from assertly.engine.trajectory._read import NO_TRACE, trace_of
from assertly.engine.trajectory._text import render_calls
from assertly.engine.trajectory._trace import Trace
from trajectory_support import FORMATS, NO_TRACE_RESPONSES, TRAJECTORY


def trace(output: Any, context: Any = None) -> Trace | str:
    return trace_of(Response(output), CheckContext.build(context))


def calls(found: Trace | str) -> list[tuple[str, Any]]:
    assert isinstance(found, Trace), found
    return [(call.name, call.arguments) for call in found.calls]


@pytest.mark.parametrize("format", FORMATS)
def test_every_format_gives_the_same_calls(format: str) -> None:
    output, context = FORMATS[format](TRAJECTORY)
    found = trace(output, context)
    assert calls(found) == TRAJECTORY
    assert isinstance(found, Trace) and found.format == format


@pytest.mark.parametrize("format", FORMATS)
def test_a_recognised_reply_without_calls_has_zero_calls(format: str) -> None:
    output, context = FORMATS[format]([])
    found = trace(output, context)
    assert isinstance(found, Trace) and found.format == format
    assert found.calls == ()


@pytest.mark.parametrize("output", NO_TRACE_RESPONSES)
def test_a_response_in_no_format_has_no_trace(output: Any) -> None:
    assert trace(output) == NO_TRACE


def test_openai_chat_transcript_and_single_message() -> None:
    transcript = [
        {"role": "system", "content": "You are helpful."},
        {"role": "user", "content": "Weather in Paris?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "search", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "a", "content": "sunny"},
        {"role": "assistant", "content": None, "function_call": {"name": "answer"}},
    ]
    found = trace(transcript)
    assert calls(found) == [("search", {}), ("answer", {})]
    assert isinstance(found, Trace) and found.format == "openai-chat"
    assert calls(trace({"messages": transcript})) == [("search", {}), ("answer", {})]
    assert calls(trace(transcript[2])) == [("search", {})]


def test_anthropic_transcript_and_content_blocks() -> None:
    transcript = [
        {"role": "user", "content": "Weather in Paris?"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Looking."},
                {"type": "tool_use", "id": "t1", "name": "search", "input": {"q": "paris"}},
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "sunny"}],
        },
        {
            "role": "assistant",
            "content": [{"type": "server_tool_use", "id": "s", "name": "web_search", "input": {}}],
        },
    ]
    found = trace(json.dumps(transcript))
    assert calls(found) == [("search", {"q": "paris"}), ("web_search", {})]
    assert isinstance(found, Trace) and found.format == "anthropic"
    blocks = transcript[1]["content"]
    assert calls(trace(blocks)) == [("search", {"q": "paris"})]


def test_openai_responses_items_list_and_custom_tools() -> None:
    items = [
        {"role": "user", "content": "Run it"},
        {"type": "function_call", "call_id": "c", "name": "run", "arguments": '{"n": 1}'},
        {"type": "function_call_output", "call_id": "c", "output": "ok"},
        {"type": "custom_tool_call", "call_id": "d", "name": "sql", "input": "SELECT 1"},
    ]
    found = trace(items)
    assert calls(found) == [("run", {"n": 1}), ("sql", {"input": "SELECT 1"})]
    assert isinstance(found, Trace) and found.format == "openai-responses"


def test_a_message_list_without_calls_is_zero_calls() -> None:
    found = trace([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}])
    assert isinstance(found, Trace) and found.calls == () and found.format == "messages"


def test_a_listed_message_with_calls_but_no_role_is_read() -> None:
    """LangChain serialises a message as {"type": "ai", "tool_calls": [{name, args}]}: alone it
    was read, in a transcript it was skipped, and not-tool-called passed on its calls."""
    import assertly

    transcript = [
        {"type": "human", "content": "Weather in SF?"},
        {
            "type": "ai",
            "content": "",
            "tool_calls": [{"name": "get_weather", "args": {"city": "SF"}, "id": "1"}],
        },
        {"type": "tool", "content": "80 and sunny", "tool_call_id": "1"},
        {"type": "ai", "content": "It is 80 and sunny.", "tool_calls": []},
    ]
    for output in (transcript, {"messages": transcript}):
        found = trace(json.dumps(output))
        assert calls(found) == [("get_weather", {"city": "SF"})]
        assert isinstance(found, Trace) and found.format == "messages"
        for spec, outcome in (
            ({"type": "not-tool-called", "value": "get_weather"}, "failed"),
            ({"type": "tool-call-count", "value": {"max": 0}}, "failed"),
            (
                {"type": "tool-called", "value": {"name": "get_weather", "args": {"city": "SF"}}},
                "passed",
            ),
        ):
            result = assertly.compile([spec]).check(json.dumps(output))
            assert result.outcome == outcome, spec
    # Calls it cannot read make the trace an error, as they do in a message with a role.
    broken = [{"type": "human", "content": "hi"}, {"type": "ai", "tool_calls": {"a": 1}}]
    found = trace(broken)
    assert isinstance(found, str) and "[1].tool_calls is an object, not a list" in found
    # Items without calls are still skipped: a transcript of them has zero calls.
    assert calls(trace([{"type": "human", "content": "hi"}, {"type": "ai", "content": "yo"}])) == []
    # LangChain's other serialisations: `messages_to_dict` ("data") and `dumpd` ("kwargs").
    call = {"name": "delete_db", "args": {}, "id": "1", "type": "tool_call"}
    for wrapped in (
        [
            {"type": "human", "data": {"content": "hi"}},
            {"type": "ai", "data": {"tool_calls": [call]}},
        ],
        [{"lc": 1, "type": "constructor", "id": ["AIMessage"], "kwargs": {"tool_calls": [call]}}],
    ):
        assert calls(trace(wrapped)) == [("delete_db", {})]
        result = assertly.compile([{"type": "not-tool-called", "value": "delete_db"}]).check(
            wrapped
        )
        assert result.outcome == "failed"


def test_empty_choices_and_empty_output_are_zero_calls() -> None:
    assert calls(trace({"object": "chat.completion", "choices": []})) == []
    assert calls(trace({"object": "response", "output": []})) == []
    assert calls(trace({"type": "message", "role": "assistant", "content": []})) == []
    assert calls(trace({"tool_calls": []})) == []
    assert calls(trace({"tool_calls": None})) == []


@pytest.mark.parametrize(
    ("output", "reason"),
    [
        ({"choices": [{"text": "legacy completion"}]}, "choices[0] has no message object"),
        ({"tool_calls": "search"}, "tool_calls is a string, not a list"),
        ({"tool_calls": [{"arguments": {}}]}, "tool_calls[0] is a tool call with no name"),
        ({"tool_calls": [{"name": 7}]}, "tool_calls[0] is a tool call with a name that is an"),
        ({"tool_calls": ["search"]}, "tool_calls[0] is a string, not a tool call object"),
        (
            {"type": "message", "role": "assistant", "content": [{"type": "tool_use"}]},
            "content[0] is a tool call with no name",
        ),
        (
            {"choices": [{"message": {"role": "assistant", "tool_calls": {"a": 1}}}]},
            "choices[0].message.tool_calls is an object, not a list",
        ),
    ],
)
def test_a_malformed_trace_says_where(output: Any, reason: str) -> None:
    found = trace(output)
    assert isinstance(found, str) and reason in found
    assert found.startswith("the tool-call trace cannot be read: ")


@pytest.mark.parametrize(
    ("arguments", "expected", "problem"),
    [
        ('{"q": "x"}', {"q": "x"}, None),
        ("", {}, None),
        ("  ", {}, None),
        (None, {}, None),
        ({"q": "x"}, {"q": "x"}, None),
        ('{"q": ', None, "the arguments are not valid JSON: '{\"q\": '"),
        ("[1, 2]", None, "the arguments are an array, not an object"),
        ('"text"', None, "the arguments are a string, not an object"),
        (5, None, "the arguments are an integer, not an object"),
        ("[" * 20_000 + "]" * 20_000, None, "the arguments are JSON nested too deeply to read"),
    ],
)
def test_arguments_json_text_or_object_or_unreadable(
    arguments: Any, expected: Any, problem: str | None
) -> None:
    found = trace({"tool_calls": [{"name": "search", "arguments": arguments}]})
    assert isinstance(found, Trace)
    (call,) = found.calls
    assert call.name == "search"
    assert call.arguments == expected
    assert call.problem == problem


def test_metadata_wins_over_the_response() -> None:
    output, _ = FORMATS["openai-chat"]([("search", {})])
    found = trace(output, {"tool_calls": [{"name": "fetch", "args": {"id": 1}}]})
    assert calls(found) == [("fetch", {"id": 1})]
    assert isinstance(found, Trace) and found.format == "metadata"


@pytest.mark.parametrize(
    ("reported", "reason"),
    [
        ("search", "tool_calls is a string, not a list of tool calls"),
        ({"name": "search"}, "tool_calls is an object, not a list of tool calls"),
        ([{"args": {}}], "tool_calls[0] is a tool call with no name"),
    ],
)
def test_unreadable_metadata_is_no_trace_even_when_the_response_has_one(
    reported: Any, reason: str
) -> None:
    output, _ = FORMATS["anthropic"]([("search", {})])
    found = trace(output, {"tool_calls": reported})
    assert isinstance(found, str) and reason in found


def test_the_trace_is_read_once_per_response(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[Any] = []
    from assertly.engine import _compile

    original, quick = trajectory._from_object, trajectory.quick_trace

    def counting(data: Any, found: Any) -> Any:
        seen.append(data)
        return original(data, found)

    def counting_quick(data: Any) -> Any:  # a plain reply is read by `quick_trace`
        read = quick(data)
        if read is not None:
            seen.append(data)
        return read

    monkeypatch.setattr(trajectory, "_from_object", counting)
    monkeypatch.setattr(trajectory, "quick_trace", counting_quick)
    monkeypatch.setattr(_compile, "quick_trace", counting_quick)  # (`check` calls it too)
    import assertly

    expectation = assertly.compile(
        [
            {"type": "tool-called", "value": "search"},
            {"type": "not-tool-called", "value": "delete"},
            {"type": "tool-sequence", "value": ["search", "answer"]},
            {"type": "tool-call-count", "value": {"max": 5}},
        ]
    )
    output, _ = FORMATS["openai-chat"](TRAJECTORY)
    assert expectation.check(output).passed
    assert len(seen) == 1


def test_metadata_is_read_once_per_context() -> None:
    context = CheckContext(tool_calls=[{"name": "a"}])
    first = trace_of(Response("x"), context)
    assert trace_of(Response("y"), context) is first


def test_render_calls_marks_the_divergence_and_clips_long_traces() -> None:
    output, _ = FORMATS["tool_calls"]([("step", {"n": index}) for index in range(30)])
    found = trace(output)
    assert isinstance(found, Trace)
    text = render_calls(found, mark=25)
    assert text.startswith('30 calls (top-level tool_calls): 1. step({"n":0}) → 2. step({"n":1})')
    assert '20. step({"n":19}) → … → 26. step({"n":25}) << → … (4 more)' in text
    long = trace({"tool_calls": [{"name": "write", "arguments": {"text": "x" * 500}}]})
    assert isinstance(long, Trace)
    assert '1. write({"text":"xxxxxxxx' in render_calls(long)
    assert len(render_calls(long)) < 160


def test_a_call_that_fits_is_shown_whole_and_a_longer_one_keeps_every_key() -> None:
    """Arguments as compact JSON: whole when the call fits in 120 characters; else each value
    clipped at 40 (every key still shows), then the call at 120."""
    from assertly.engine.trajectory._call_text import call_text

    value = "y" * 60  # longer than a clipped value, but the call fits
    assert call_text("search", {"q": value, "n": 5}) == f'search({{"q":"{value}","n":5}})'
    long = call_text("write", {"text": "x" * 500, "path": "a.txt", "mode": 2})
    assert long == 'write({"text":"' + "x" * 38 + '…,"path":"a.txt","mode":2})'
    many = call_text("f", {f"key{index}": index for index in range(40)})
    assert len(many) == 120 and many.endswith("…") and many.startswith('f({"key0":0,"key1":1,')
    assert call_text("f", {}) == "f({})"
    assert call_text("f", None) == "f(<unreadable arguments>)"
    # What orjson cannot write is written entry by entry, exactly (assertly's `dumps`).
    big = 123456789012345678901234567890
    assert call_text("f", {"n": big, "s": "\ud800"}) == f'f({{"n":{big},"s":"\ud800"}})'
    assert call_text("f", {1: "a", None: True}) == 'f({"1":"a","null":true})'


def test_a_check_context_with_tool_calls_survives_pickling() -> None:
    import pickle

    context = CheckContext(tool_calls=[{"name": "a"}], cost_usd=0.1)
    copy = pickle.loads(pickle.dumps(context))
    assert copy.tool_calls == [{"name": "a"}]
    assert calls(trace_of(Response("x"), copy)) == [("a", {})]


def test_a_reply_with_a_lone_surrogate_escape_is_read() -> None:
    """JavaScript's JSON.stringify writes a string cut inside an emoji as a lone surrogate
    escape; orjson refuses it, `loads` reads it with the stdlib (docs/decisions.md)."""
    import assertly

    reply = (
        '{"choices":[{"message":{"role":"assistant","content":"\\ud83d","tool_calls":[{"id":'
        '"1","type":"function","function":{"name":"search","arguments":"{\\"q\\":\\"\\\\ud800\\"}"'
        "}}]}}]}"
    )
    for spec, outcome in (
        ({"type": "tool-called", "value": {"name": "search", "args": {"q": "\ud800"}}}, "passed"),
        ({"type": "tool-call-count", "value": {"max": 0}}, "failed"),
        ({"type": "not-tool-called", "value": "search"}, "failed"),
        ({"type": "is-json"}, "passed"),
    ):
        assert assertly.compile([spec]).check(reply).results[0].outcome == outcome, spec
