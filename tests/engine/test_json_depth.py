"""Deep but valid JSON is judged the same way by every assertion, up to a documented depth;
beyond it, every assertion that needs the JSON is an ``error`` with one message."""

from __future__ import annotations

import threading
from typing import Any

import pytest

import assertly
from assertly import Outcome
from assertly._json import MAX_JSON_DEPTH, TOO_DEEP_MESSAGE, dumps, loads_deep, to_json_bytes
from assertly.engine._values import json_equal


def array(depth: int, inner: str = "1") -> str:
    return "[" * depth + inner + "]" * depth


def obj(depth: int) -> str:
    return '{"a":' * depth + '"leaf"' + "}" * depth


def outcome(spec: Any, output: Any) -> tuple[Outcome, str]:
    result = assertly.compile(spec).check(output)
    return result.outcome, result.results[0].message


def test_the_documented_limit() -> None:
    assert MAX_JSON_DEPTH == 10_000
    assert TOO_DEEP_MESSAGE == (
        "the output's JSON is nested more than 10,000 levels deep; assertly judges JSON "
        "nested up to 10,000 levels"
    )


@pytest.mark.parametrize("text", [array(5000), obj(5000), array(MAX_JSON_DEPTH)])
def test_is_json_and_contains_json_agree_on_deep_valid_json(text: str) -> None:
    assert outcome([{"type": "is-json"}], text)[0] is Outcome.PASSED
    assert outcome([{"type": "contains-json"}], text)[0] is Outcome.PASSED
    assert outcome([{"type": "contains-json"}], f"Here it is: {text} done")[0] is Outcome.PASSED
    assert outcome([{"type": "not-is-json"}], text)[0] is Outcome.FAILED
    schema = {"type": "array"} if text.startswith("[") else {"type": "object"}
    assert outcome([{"type": "is-json", "value": schema}], text)[0] is Outcome.PASSED


@pytest.mark.parametrize("text", [array(MAX_JSON_DEPTH + 1), obj(MAX_JSON_DEPTH + 1)])
def test_beyond_the_limit_both_are_errors_with_one_message(text: str) -> None:
    for spec in (
        [{"type": "is-json"}],
        [{"type": "contains-json"}],
        [{"type": "not-is-json"}],
        [{"type": "not-contains-json"}],
        [{"type": "equals", "value": [1]}],
        [{"type": "contains", "value": "leaf", "transform": "json_path:$.a"}],
        {"status": "success"},
        {"if_results": {"results_min": 1}},
    ):
        assert outcome(spec, text) == (Outcome.ERROR, TOO_DEEP_MESSAGE), spec


def test_a_deep_value_embedded_in_prose_is_an_error_not_an_inner_match() -> None:
    text = f"Result: {array(20_000)} and that is all"
    assert outcome([{"type": "contains-json"}], text) == (Outcome.ERROR, TOO_DEEP_MESSAGE)
    fenced = f"```json\n{obj(20_000)}\n```"
    assert outcome({"status": "ok"}, fenced) == (Outcome.ERROR, TOO_DEEP_MESSAGE)
    # A value found before the deep one is still found.
    assert outcome([{"type": "contains-json"}], f'{{"ok": 1}} then {array(20_000)}')[0] is (
        Outcome.PASSED
    )


def test_the_expect_dict_judges_deep_objects() -> None:
    text = '{"status": "success", "tree": ' + obj(5000) + "}"
    assert outcome({"status": "success"}, text)[0] is Outcome.PASSED
    assert outcome({"has_fields": ["tree.a.a.a"]}, text)[0] is Outcome.PASSED
    assert outcome({"status": "error"}, text) == (
        Outcome.FAILED,
        "Expected status 'error', got 'success'",
    )


def test_equals_compares_deep_values_without_recursion() -> None:
    deep = loads_deep(array(5000))
    assert json_equal(deep, loads_deep(array(5000)))
    assert not json_equal(deep, loads_deep(array(5000, "2")))
    assert outcome([{"type": "equals", "value": deep}], array(5000))[0] is Outcome.PASSED
    failed = outcome([{"type": "equals", "value": deep}], array(5000, "2"))
    assert failed[0] is Outcome.FAILED
    assert failed[1].endswith("[0]: expected 1, got 2")


def test_deep_values_serialise_for_messages_and_reports() -> None:
    deep = loads_deep(obj(5000))
    assert dumps(deep) == obj(5000)
    assert json_equal(loads_deep(to_json_bytes(deep).decode()), deep)
    result = assertly.compile([{"type": "equals", "value": {"other": 1}}]).check(obj(5000))
    assert loads_deep(to_json_bytes(result.to_dict()).decode())["passed"] is False


def test_deep_json_is_judged_in_a_worker_thread() -> None:
    seen: list[Outcome] = []

    def judge() -> None:
        seen.append(outcome([{"type": "is-json"}], array(MAX_JSON_DEPTH))[0])
        seen.append(outcome([{"type": "contains-json"}], "x " + obj(MAX_JSON_DEPTH))[0])
        seen.append(outcome([{"type": "is-json"}], array(MAX_JSON_DEPTH + 1))[0])

    thread = threading.Thread(target=judge)
    thread.start()
    thread.join()
    assert seen == [Outcome.PASSED, Outcome.PASSED, Outcome.ERROR]
