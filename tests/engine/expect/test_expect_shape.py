"""``shape:`` points the expect dict at any response: every key that reads status, results,
summary, message or model follows it, and messages name the shape's path."""

from __future__ import annotations

from typing import Any

import pytest

import assertly
from assertly import Outcome

DATA_SHAPE = {"results": "$.data.items", "summary": "$.answer", "status": "$.meta.state"}
DATA = {
    "meta": {"state": "ok"},
    "answer": "Two notes about security.",
    "data": {
        "items": [
            {"file": "journal/a.md", "metadata": {"tags": ["work", "security"]}, "score": 0.9},
            {"file": "journal/b.md", "metadata": {"tags": ["work"]}, "score": 0.4},
        ]
    },
}


def judge(expect: dict[str, Any], response: Any, shape: dict[str, str]) -> assertly.CheckResult:
    return assertly.compile(expect, shape=shape, sensitive_prefixes=["people/"]).check(response)


@pytest.mark.parametrize(
    ("expect", "message", "path"),
    [
        ({"status": "ok"}, None, None),
        ({"status": "error"}, "Expected status 'error', got 'ok'", "meta.state"),
        ({"results_min": 2}, None, None),
        ({"results_count": 3}, "Expected exactly 3 results, got 2", "data.items"),
        ({"summary_contains": "security"}, None, None),
        (
            {"summary_contains": "privacy"},
            "answer: expected to contain 'privacy', got 'Two notes about security.'",
            "answer",
        ),
        ({"all_match_pattern": {"path": "results[*].file", "regex": "^journal/"}}, None, None),
        (
            {"all_have_tags": ["security"]},
            "Result 1 missing required tag: 'security'",
            "data.items[1].metadata.tags",
        ),
        ({"sorted_desc": {"path": "results[*].score"}}, None, None),
        ({"results_schema": {"file": "string", "score": "number"}}, None, None),
        (
            {"results_schema": {"score": {"type": "number", "min": 0.5}}},
            "Result 1: field 'score' 0.4 is below min 0.5",
            "data.items[1].score",
        ),
        ({"has_fields": ["summary", "results[0].metadata"]}, None, None),
        ({"if_results": {"results_min": 1}}, None, None),
        ({"field_equals": {"results[0].file": "journal/a.md"}}, None, None),
    ],
)
def test_every_key_follows_the_shape(
    expect: dict[str, Any], message: str | None, path: str | None
) -> None:
    result = judge(expect, DATA, DATA_SHAPE)
    if message is None:
        assert result.outcome is Outcome.PASSED, [r.message for r in result.results]
        return
    assert result.outcome is Outcome.FAILED
    assert (result.results[0].message, result.results[0].path) == (message, path)


def test_a_missing_field_is_reported_with_the_shapes_path() -> None:
    result = judge({"results_min": 1, "status": "ok"}, {"answer": "none"}, DATA_SHAPE)
    messages = [r.message for r in result.results]
    assert messages == [
        "Expected at least 1 result, but data is missing",
        "Expected status 'ok', got no 'meta.state' field",
    ]
    assert judge({"if_results": {"results_min": 9}}, {"answer": "x"}, DATA_SHAPE).results[
        0
    ].message == ("skipped: the response has no data.items")


OPENAI = {
    "id": "chatcmpl-1",
    "model": "gpt-4o-mini",
    "choices": [
        {"index": 0, "message": {"role": "assistant", "content": "Paris."}, "finish_reason": "stop"}
    ],
}
OPENAI_SHAPE = {
    "results": "$.choices",
    "summary": "$.choices[0].message.content",
    "status": "$.choices[0].finish_reason",
    "model": "$.model",
}


def test_openai_chat_completions() -> None:
    expect = {
        "status": "stop",
        "results_count": 1,
        "summary_contains": "Paris",
        "agent_used_model": "gpt-4o-mini",
    }
    assert judge(expect, OPENAI, OPENAI_SHAPE).passed
    other = {**OPENAI, "model": "gpt-4o"}
    failed = judge({"agent_used_model": "gpt-4o-mini"}, other, OPENAI_SHAPE)
    assert failed.results[0].message == "Expected model 'gpt-4o-mini', got 'gpt-4o'"
    assert failed.results[0].path == "model"


def test_an_answer_shaped_reply() -> None:
    shape = {"summary": "$.answer", "message": "$.error"}
    assert judge({"summary_contains": "42"}, {"answer": "It is 42."}, shape).passed
    result = judge({"message_contains": "quota"}, {"answer": "", "error": "rate limited"}, shape)
    assert result.results[0].message == "error: expected to contain 'quota', got 'rate limited'"


def test_relative_paths_are_not_rewritten() -> None:
    # results_schema fields and has_field name fields of each result, not of the response.
    shape = {"results": "$.hits", "status": "$.state"}
    response = {"hits": [{"status": "draft", "file": "people/a.md", "sensitive": True}]}
    assert judge({"results_schema": {"status": "string"}}, response, shape).passed
    assert judge(
        {"if_sensitive_results": {"has_field": "sensitive", "value": True}}, response, shape
    ).passed


@pytest.mark.parametrize(
    ("shape", "problem"),
    [
        (
            {"resluts": "$.a"},
            "shape.resluts: unknown shape field 'resluts' (did you mean 'results'?)",
        ),
        ({"results": "data.hits"}, "shape.results: expected a JSONPath to one value"),
        ({"results": "$..hits"}, "shape.results: expected a JSONPath to one value"),
        ({"results": 3}, "shape.results: expected a JSONPath to one value"),
    ],
)
def test_a_bad_shape_is_a_configuration_error(shape: dict[str, Any], problem: str) -> None:
    with pytest.raises(assertly.ConfigError) as info:
        assertly.compile({"status": "ok"}, shape=shape)
    assert str(info.value.problems[0]).startswith(problem)


def test_without_a_shape_nothing_changes() -> None:
    result = assertly.compile({"results_min": 1}).check({"data": {"items": [1]}})
    assert (
        result.results[0].message
        == "Expected at least 1 result, but the response has no 'results' field"
    )
