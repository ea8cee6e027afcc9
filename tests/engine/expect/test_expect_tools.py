"""Expect-dict trajectory keys: tools_called, tools_not_called, tool_sequence, max_tool_calls."""

from __future__ import annotations

from typing import Any

import pytest

import assertly
from assertly import AssertionResult, ConfigError, Outcome
from assertly.engine.trajectory._read import NO_TRACE
from trajectory_support import FORMATS, LABELS, NO_TRACE_RESPONSES, TRAJECTORY


def judge(expect: dict[str, Any], format: str, calls: Any = None) -> AssertionResult:
    output, context = FORMATS[format](TRAJECTORY if calls is None else calls)
    return assertly.compile(expect).check(output, context=context).results[0]


CASES: list[tuple[dict[str, Any], bool, str]] = [
    ({"tools_called": ["search", "fetch"]}, True, ""),
    ({"tools_called": "answer"}, True, ""),
    (
        {"tools_called": ["search", "delete", "email"]},
        False,
        "Expected search, delete, email to be called; not called: delete, email",
    ),
    ({"tools_not_called": ["delete", "email"]}, True, ""),
    (
        {"tools_not_called": ["delete", "fetch", "search"]},
        False,
        "Expected delete, fetch, search never to be called; called: search (call 1), "
        "fetch (call 3)",
    ),
    ({"tool_sequence": ["search", "fetch", "answer"]}, True, ""),
    ({"tool_sequence": ["search", "answer"]}, True, ""),  # others may come between
    (
        {"tool_sequence": ["fetch", "search", "answer"]},
        False,
        "Expected calls in this order: fetch → search → answer; step 2 (search) is not called "
        "after call 3, only earlier (call 1): out of order",
    ),
    ({"max_tool_calls": 4}, True, ""),
    ({"max_tool_calls": 3}, False, "Expected at most 3 tool calls, got 4"),
]


@pytest.mark.parametrize("format", FORMATS)
@pytest.mark.parametrize(("expect", "passes", "message"), CASES)
def test_keys_on_every_format(
    format: str, expect: dict[str, Any], passes: bool, message: str
) -> None:
    result = judge(expect, format)
    assert result.passed is passes, result.message
    assert result.details is not None and result.details["trace_format"] == format
    if not passes:
        assert result.outcome is Outcome.FAILED
        assert result.message.startswith(message)
        assert f"; got 4 calls ({LABELS[format]}): 1. search(" in result.message


def test_the_seed_dialect_combines_trajectory_keys_with_the_others() -> None:
    expect = {
        "tools_called": ["search"],
        "tools_not_called": ["delete"],
        "tool_sequence": ["search", "answer"],
        "max_tool_calls": 6,
        "contains": "tool_calls",
    }
    output, _ = FORMATS["tool_calls"](TRAJECTORY)
    result = assertly.compile(expect).check(output)
    assert result.passed, [r.message for r in result.results]


def test_the_divergence_is_flagged() -> None:
    result = judge({"max_tool_calls": 2}, "anthropic")
    assert '3. fetch({"url":"https://example.com/paris"}) <<' in result.message
    result = judge({"tools_not_called": ["fetch"]}, "anthropic")
    assert '3. fetch({"url":"https://example.com/paris"}) <<' in result.message


@pytest.mark.parametrize("output", NO_TRACE_RESPONSES)
def test_no_trace_is_an_error(output: Any) -> None:
    expect = {
        "tools_called": ["a"],
        "tools_not_called": ["a"],
        "tool_sequence": ["a"],
        "max_tool_calls": 3,
    }
    result = assertly.compile(expect).check(output)
    assert result.outcome is Outcome.ERROR
    assert [r.message for r in result.results] == [NO_TRACE] * 4


@pytest.mark.parametrize("format", FORMATS)
def test_zero_calls(format: str) -> None:
    assert judge({"tools_not_called": ["a"]}, format, []).passed
    assert judge({"max_tool_calls": 0}, format, []).passed
    assert not judge({"tools_called": ["a"]}, format, []).passed


@pytest.mark.parametrize(
    ("expect", "expected"),
    [
        (
            {"tools_called": []},
            "expect.tools_called: expected a non-empty list of tool names, got [] "
            "(e.g. [search, fetch])",
        ),
        (
            {"tools_not_called": ["a", 1]},
            "expect.tools_not_called: expected a non-empty list of tool names, got ['a', 1] "
            "(e.g. [search, fetch])",
        ),
        (
            {"tool_sequence": {"a": 1}},
            "expect.tool_sequence: expected a non-empty list of tool names or {name: search, "
            "args: {query: 'x'}} mappings, got {'a': 1} (e.g. [search, fetch, answer])",
        ),
        ({"max_tool_calls": -1}, "expect.max_tool_calls: expected a whole number >= 0, got -1"),
        ({"max_tool_calls": 2.5}, "expect.max_tool_calls: expected a whole number >= 0, got 2.5"),
        (
            {"tool_called": ["a"]},
            "expect.tool_called: unknown assertion 'tool_called' (did you mean 'tools_called'?)",
        ),
        (
            {"max_tools_calls": 3},
            "expect.max_tools_calls: unknown assertion 'max_tools_calls' (did you mean "
            "'max_tool_calls'?)",
        ),
    ],
)
def test_configuration_errors(expect: dict[str, Any], expected: str) -> None:
    with pytest.raises(ConfigError) as info:
        assertly.compile(expect)
    assert [str(problem) for problem in info.value.problems] == [expected]
