"""The ``assertly_target`` and ``assertly_check`` fixtures, in Python tests of a sample project."""

from __future__ import annotations

import pytest
from plugin_support import make_project, run, write

PYTHON_TESTS = """\
import asyncio

import pytest

import assertly


def test_call_and_check(assertly_target, assertly_check):
    response = assertly_target("bot", {"q": "incident"})
    assert response.latency_ms is not None and response.latency_ms > 0
    result = assertly_check(response, {"status": "success", "results_min": 1})
    assert result.passed


def test_metadata_becomes_the_context(assertly_target, assertly_check):
    response = assertly_target("bot", {"mode": "meta"})
    assert (response.model, response.cost_usd) == ("gpt-test", 0.25)
    assertly_check(response, [{"type": "cost", "threshold": 0.5}])
    with pytest.raises(AssertionError, match="cost_usd 0.25 USD exceeds 0.1 USD"):
        assertly_check(response, [{"type": "cost", "threshold": 0.1}])


def test_async_safe(assertly_target):
    async def main():
        first = await assertly_target.acall("bot", {"q": "a"})
        # The plain call works inside a running event loop too.
        second = assertly_target("bot", {"q": "b"})
        both = await asyncio.gather(
            assertly_target.acall("bot", {"q": "c"}), assertly_target.acall("bot", {"q": "d"})
        )
        return [first, second, *both]

    for response in asyncio.run(main()):
        assertly.assert_response(response, {"status": "success"})


def test_unknown_agent(assertly_target):
    with pytest.raises(assertly.TargetError, match="no target for agent 'ghost'"):
        assertly_target("ghost", {})


def test_crashing_agent(assertly_target):
    with pytest.raises(assertly.TargetError, match="boom: the agent fell over"):
        assertly_target("bot", {"mode": "crash"})


def test_check_fails(assertly_target, assertly_check):
    assertly_check(assertly_target("bot", {"status": "error"}), {"status": "success"})
"""


def test_fixtures_call_configured_targets_and_check(pytester: pytest.Pytester) -> None:
    make_project(pytester)
    write(pytester.path, "test_agent.py", PYTHON_TESTS)
    result = run(pytester, "-v")
    result.assert_outcomes(passed=5, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*_ test_check_fails _*",
            "*assertly_check(assertly_target(*",
            "E       AssertionError: FAIL  0 of 1 assertions passed  (score 0)",
            "E         ✗ status  Expected status 'success', got 'error'",
            "E             path:     status",
            "E             expected: 'success'",
            "E             actual:   'error'",
        ]
    )
    # The helper's own frame is hidden: the failure points at the test's line.
    assert "_assert.py" not in result.stdout.str()


def test_target_option_applies_to_the_fixture(pytester: pytest.Pytester) -> None:
    make_project(pytester, config="")
    write(
        pytester.path,
        "test_override.py",
        """\
        def test_override(assertly_target, assertly_check):
            response = assertly_target("anyone", "hello")
            assertly_check(response, [{"type": "contains", "value": "hello"}])
        """,
    )
    echo = "cmd:cat"
    run(pytester, f"--assertly-target={echo}").assert_outcomes(passed=1)
    run(pytester).assert_outcomes(failed=1)
