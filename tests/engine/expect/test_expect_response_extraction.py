"""Finding the JSON in what an agent sent (engine/_response.py), as the expect dialect sees it.

Spec A: the whole text, else a fenced ```json block, else the first balanced JSON object; the
result records that it was extracted. A text response with no JSON fails field assertions with
``response is not JSON`` while ``contains`` still works on the text.
"""

from __future__ import annotations

from typing import Any

import pytest

import assertly
from assertly import CheckResult, Outcome, Response
from assertly.engine._response import NOT_JSON

STATUS_OK = {"status": "ok"}


def check(response: Any, expect: dict[str, Any] | None = None) -> CheckResult:
    return assertly.compile(expect or STATUS_OK).check(response)


# --- through the public API: verdicts and CheckResult.extracted -----------------------------


@pytest.mark.parametrize(
    "response",
    [
        {"status": "ok"},
        '{"status":"ok"}',
        '  \n{"status": "ok"}\n  ',
        b'{"status":"ok"}',
        bytearray(b'{"status":"ok"}'),
    ],
)
def test_whole_json_is_not_marked_extracted(response: Any) -> None:
    result = check(response)
    assert result.passed
    assert result.extracted is None
    assert "extracted" not in result.to_dict()


@pytest.mark.parametrize(
    "text",
    [
        '```json\n{"status":"ok"}\n```',
        'Sure, here it is:\n\n```json\n{\n  "status": "ok"\n}\n```\nAnything else?',
        'Plain fence:\n```\n{"status":"ok"}\n```',
        'Upper case tag:\n```JSON\n{"status":"ok"}\n```',
        'Windows newlines:\r\n```json\r\n{"status":"ok"}\r\n```\r\n',
    ],
)
def test_fenced_json_block(text: str) -> None:
    result = check(text)
    assert result.passed, result.results[0].message
    assert result.extracted == "fenced"
    assert result.to_dict()["extracted"] == "fenced"


@pytest.mark.parametrize(
    "text",
    [
        'The answer is {"status": "ok", "results": [{"file": "a.md"}]} as requested.',
        'Result: {"status": "ok", "n": {"a": [1, 2]}} and later {"status": "no"}',
        'Sets like {a, b} are not JSON, but {"status": "ok"} is.',
        'An array [1, 2] comes first, then {"status": "ok"}.',
        'Not JSON: {"status": NaN}; JSON: {"status": "ok"}',
    ],
)
def test_first_balanced_embedded_object(text: str) -> None:
    result = check(text)
    assert result.passed, result.results[0].message
    assert result.extracted == "embedded"


def test_fenced_block_wins_over_an_earlier_embedded_object() -> None:
    text = 'Draft: {"status": "draft"}\nFinal:\n```json\n{"status": "ok"}\n```'
    result = check(text)
    assert result.passed
    assert result.extracted == "fenced"


def test_invalid_fenced_block_falls_back_to_an_embedded_object() -> None:
    text = '```json\n{"status": "ok",\n```\nso instead: {"status": "ok"}'
    result = check(text)
    assert result.passed
    assert result.extracted == "embedded"


def test_a_later_valid_fence_is_used_when_the_first_is_broken() -> None:
    text = '```json\n{broken\n```\nthen\n```json\n{"status": "ok"}\n```'
    result = check(text)
    assert result.passed
    assert result.extracted == "fenced"


def test_a_fenced_array_is_the_response() -> None:
    text = '```json\n[{"status": "ok"}]\n```'
    result = check(text, {"has_field": "[0].status"})
    assert result.passed
    assert result.extracted == "fenced"


def test_extracted_json_feeds_every_assertion() -> None:
    text = (
        "I searched your notes.\n```json\n"
        '{"status": "success", "results": [{"file": "journal/a.md", "relevance": 0.9},'
        ' {"file": "work/b.md", "relevance": 0.4}]}\n```'
    )
    expect = {
        "status": "success",
        "results_count": 2,
        "sorted_desc": {"path": "results[*].relevance"},
        "all_match_pattern": {"path": "results[*].file", "regex": "^journal/"},
        "contains": "I searched",
    }
    result = check(text, expect)
    assert result.outcome is Outcome.FAILED
    assert result.extracted == "fenced"
    assert [r.outcome for r in result.results] == [
        Outcome.PASSED,
        Outcome.PASSED,
        Outcome.PASSED,
        Outcome.FAILED,
        Outcome.PASSED,
    ]
    assert result.results[3].message == (
        "File 'work/b.md' at results[1] doesn't match pattern '^journal/'"
    )


# --- text with no JSON ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "I could not find anything about that.",
        "",
        "Braces {without} JSON and a lone [bracket",
        '{"status": "ok"',  # unbalanced
        "```json\nnot json\n```",
    ],
)
def test_text_without_json(text: str) -> None:
    result = check(text, {"status": "ok", "results_min": 1, "has_fields": ["summary"]})
    assert result.outcome is Outcome.FAILED
    assert [r.message for r in result.results] == ["response is not JSON"] * 3
    assert result.extracted is None


def test_contains_still_works_on_text_without_json() -> None:
    result = check("I could not find anything, sorry.", {"contains": "sorry"})
    assert result.passed
    result = check("I could not find anything.", {"contains": "sorry", "status": "ok"})
    assert [r.outcome for r in result.results] == [Outcome.FAILED, Outcome.FAILED]
    assert result.results[0].message == "Response does not contain 'sorry'"


def test_contains_sees_the_raw_text_around_extracted_json() -> None:
    text = 'Filter applied.\n```json\n{"status": "ok"}\n```'
    assert check(text, {"contains": "Filter applied", "status": "ok"}).passed


def test_a_json_scalar_text_is_json_but_has_no_fields() -> None:
    result = check('"ok"')
    assert result.results[0].message == "Expected status 'ok', got no 'status' field"
    assert result.extracted is None


def test_invalid_utf8_bytes_are_replaced_not_fatal() -> None:
    result = check(b'\xff\xfe {"status": "ok"}')
    assert result.passed
    assert result.extracted == "embedded"


# --- Response itself ------------------------------------------------------------------------


def test_response_views_of_a_json_value() -> None:
    response = Response({"b": "é", "a": [1, True, None]})
    assert response.is_text is False
    assert response.json == {"b": "é", "a": [1, True, None]}
    assert response.whole_json == response.json
    assert response.text == '{"b":"é","a":[1,true,null]}'
    assert response.extracted is None


def test_response_views_of_prose() -> None:
    response = Response('Here: {"a": 1}')
    assert response.is_text is True
    assert response.text == 'Here: {"a": 1}'
    assert response.whole_json is NOT_JSON
    assert response.json == {"a": 1}
    assert response.extracted == "embedded"


def test_response_json_is_parsed_once_and_cached() -> None:
    response = Response('```json\n{"a": [1]}\n```')
    first = response.json
    assert first == {"a": [1]}
    assert response.json is first
    assert response.extracted == "fenced"


def test_response_bytes_decoding() -> None:
    good = Response('{"a": "ü"}'.encode())
    assert good.decode_errors is False
    assert good.json == {"a": "ü"}
    bad = Response(b'\xff{"a": 1}')
    assert bad.decode_errors is True
    assert bad.text == '\ufffd{"a": 1}'
    assert bad.json == {"a": 1}


def test_response_not_json() -> None:
    response = Response("plain words")
    assert response.json is NOT_JSON
    assert not response.json
    assert response.extracted is None


def test_check_accepts_a_prebuilt_response() -> None:
    response = Response('Done: {"status": "ok"}')
    result = assertly.compile(STATUS_OK).check(response)
    assert result.passed
    assert result.extracted == "embedded"
