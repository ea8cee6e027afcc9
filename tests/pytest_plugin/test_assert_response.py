"""``assertly.assert_response``: a check as an ``assert``, with the text of ``assertly check``."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner

import assertly
from assertly.cli import main
from assertly.targets import TargetResponse

EXPECT = {
    "status": "success",
    "results_max": 5,
    "all_match_pattern": {"path": "results[*].file", "regex": "^journal/"},
}
MIXED = {
    "status": "success",
    "results": [
        {"file": "journal/2026/01/incident.md"},
        {"file": "work/security-doc.md"},
    ],
}


def _cli_text(expect: Any, response: Any, *extra: str) -> str:
    """What ``assertly check`` prints for the same expectation and response."""
    result = CliRunner().invoke(
        main,
        ["check", "--expect", json.dumps(expect), "--response", "-", *extra],
        input=json.dumps(response),
    )
    assert result.exit_code == 1, result.output
    return result.output.rstrip("\n")


def test_a_passing_response_returns_the_result() -> None:
    result = assertly.assert_response({"status": "success", "results": []}, EXPECT)
    assert isinstance(result, assertly.CheckResult)
    assert result.passed and result.score == 1.0


def test_a_failing_response_raises_with_the_check_text() -> None:
    with pytest.raises(AssertionError) as caught:
        assertly.assert_response(MIXED, EXPECT)
    message = str(caught.value)
    assert message == _cli_text(EXPECT, MIXED)
    assert message.splitlines() == [
        "FAIL  2 of 3 assertions passed  (score 0.6667)",
        "  ✓ status",
        "  ✓ results_max",
        "  ✗ all_match_pattern  File 'work/security-doc.md' at results[1] doesn't match "
        "pattern '^journal/'",
        "      path:     results[1].file",
        "      expected: '^journal/'",
        "      actual:   'work/security-doc.md'",
    ]


def test_an_error_outcome_raises_too() -> None:
    with pytest.raises(AssertionError) as caught:
        assertly.assert_response("any output", [{"type": "cost", "threshold": 0.5}])
    message = str(caught.value)
    assert message.startswith("ERROR  0 of 1 assertions passed")
    assert "cost_usd was not measured for this output, so cost cannot be judged" in message
    assert message == _cli_text([{"type": "cost", "threshold": 0.5}], "any output")


def test_context_now_and_threshold_are_passed_on() -> None:
    typed = [{"type": "cost", "threshold": 0.5}, {"type": "contains", "value": "widget"}]
    assertly.assert_response("a widget", typed, context={"cost_usd": 0.1})
    with pytest.raises(AssertionError, match=r"score 0\.5, threshold 0\.9"):
        assertly.assert_response("a widget", typed, context={"cost_usd": 0.9}, threshold=0.9)
    assertly.assert_response("a widget", typed, context={"cost_usd": 0.9}, threshold=0.5)
    recent = {"dates_within_days": {"path": "created", "days": 7}}
    assertly.assert_response({"created": "2026-01-28"}, recent, now="2026-01-31T12:00:00Z")
    with pytest.raises(AssertionError, match="more than 7 days"):
        assertly.assert_response({"created": "2026-01-28"}, recent, now="2026-03-31")


def test_a_target_response_brings_its_own_context() -> None:
    response = TargetResponse(output="done", model="gpt-test", cost_usd=0.2, latency_ms=30.0)
    assertly.assert_response(response, [{"type": "cost", "threshold": 0.5}])
    with pytest.raises(AssertionError, match="latency_ms 30 ms exceeds 10 ms"):
        assertly.assert_response(response, [{"type": "latency", "threshold": 10}])
    # An explicit context wins.
    with pytest.raises(AssertionError, match=r"cost_usd 0\.9 USD exceeds 0\.5 USD"):
        assertly.assert_response(
            response, [{"type": "cost", "threshold": 0.5}], context={"cost_usd": 0.9}
        )


def test_a_target_response_brings_its_tool_calls() -> None:
    response = TargetResponse(output="done", tool_calls=[{"name": "search", "arguments": "{}"}])
    assertly.assert_response(response, {"tools_called": ["search"]})
    with pytest.raises(AssertionError, match=r"got 1 call \(metadata tool_calls\)"):
        assertly.assert_response(response, [{"type": "tool-called", "value": "fetch"}])


def test_compiled_expectations_and_wrapped_test_cases() -> None:
    compiled = assertly.compile(EXPECT)
    assertly.assert_response({"status": "success", "results": []}, compiled)
    with pytest.raises(AssertionError, match="all_match_pattern"):
        assertly.assert_response(MIXED, compiled)
    with pytest.raises(TypeError, match="threshold is fixed when an expectation is compiled"):
        assertly.assert_response(MIXED, compiled, threshold=0.5)
    # A test case holding the expectation, as `assertly check --expect` accepts.
    case = {"assertions": [{"type": "contains", "value": "a"}, {"type": "contains", "value": "z"}]}
    with pytest.raises(AssertionError):
        assertly.assert_response("abc", case)
    assertly.assert_response("abc", {**case, "threshold": 0.5})
    assertly.assert_response({"status": "success"}, {"expect": {"status": "success"}})


def test_an_invalid_expectation_is_a_config_error_not_a_failure() -> None:
    with pytest.raises(assertly.ConfigError, match="unknown assertion 'stauts'"):
        assertly.assert_response({"status": "success"}, {"stauts": "success"})
    with pytest.raises(assertly.ConfigError, match="not both"):
        assertly.assert_response("x", {"expect": {}, "assertions": []})
