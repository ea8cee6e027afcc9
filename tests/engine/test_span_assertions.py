"""Span assertions and ``source: trace`` judged on hand-built spans (issue 33)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import assertly
from assertly._spans import Span, SpanEvent, SpanSet
from assertly.engine._context import CheckContext
from assertly.engine.spans._checks import NO_TRACE

TRACE = "ab" * 16
PARENT = "0" * 16


def _span(
    number: int,
    name: str,
    *,
    parent: str | None = PARENT,
    start_ms: float = 0,
    ms: float = 1,
    status: str = "unset",
    events: tuple[SpanEvent, ...] = (),
    **attributes: Any,
) -> Span:
    start = int(1e15 + start_ms * 1e6)
    return Span(
        TRACE,
        f"{number:016x}",
        parent,
        name,
        1,
        start,
        start + int(ms * 1e6),
        status,  # type: ignore[arg-type]
        "",
        {key.replace("__", "."): value for key, value in attributes.items()},
        events,
    )


def _tool(number: int, tool: str, arguments: str, start_ms: float) -> Span:
    return _span(
        number,
        f"execute_tool {tool}",
        start_ms=start_ms,
        gen_ai__operation__name="execute_tool",
        gen_ai__tool__name=tool,
        gen_ai__tool__call__arguments=arguments,
    )


SPANS = SpanSet(
    [
        _span(1, "invoke_agent", start_ms=0, ms=900),
        _span(
            2,
            "chat gpt-4o",
            start_ms=10,
            ms=300,
            gen_ai__operation__name="chat",
            gen_ai__request__model="gpt-4o",
        ),
        _tool(4, "fetch", '{"url": "https://x"}', start_ms=600),
        _tool(3, "search", '{"query": "refunds"}', start_ms=400),
    ],
    TRACE,
)
FAILING = SpanSet(
    [
        *SPANS.spans,
        _span(
            5,
            "execute_tool pay",
            start_ms=700,
            status="error",
            events=(
                SpanEvent(
                    "exception",
                    0,
                    {"exception.type": "TimeoutError", "exception.message": "bank down"},
                ),
            ),
        ),
    ],
    TRACE,
)
REPLY = "All done: your refund is on its way."  # names no tool call


def _check(assertions: list[dict[str, Any]], spans: Any = SPANS) -> assertly.CheckResult:
    return assertly.check(assertions, REPLY, context=CheckContext(spans=spans))


def _one(assertion: dict[str, Any], spans: Any = SPANS) -> tuple[str, str]:
    result = _check([assertion], spans)
    return result.outcome.value, result.results[0].message


@pytest.mark.parametrize(
    ("assertion", "outcome"),
    [
        (
            {"type": "span-count", "value": {"operation": "execute_tool", "min": 2, "max": 2}},
            "passed",
        ),
        ({"type": "span-count", "value": {"operation": "chat", "max": 0}}, "failed"),
        ({"type": "span-count", "value": {"name": "chat gpt-4o", "min": 1}}, "passed"),
        (
            {
                "type": "span-count",
                "value": {"attributes": {"gen_ai.tool.name": "search"}, "min": 1},
            },
            "passed",
        ),
        ({"type": "not-span-count", "value": {"operation": "chat", "min": 1}}, "failed"),
        ({"type": "span-duration", "value": {"max_ms": 1000}}, "passed"),
        ({"type": "span-duration", "value": {"max_ms": 500}}, "failed"),
        ({"type": "span-duration", "value": {"name": "chat gpt-4o", "max_ms": 299}}, "failed"),
        ({"type": "span-duration", "value": {"name": "nowhere", "max_ms": 299}}, "failed"),
        ({"type": "no-error-spans"}, "passed"),
        (
            {
                "type": "span-attribute",
                "value": {"name": "chat gpt-4o", "key": "gen_ai.request.model", "value": "gpt-4o"},
            },
            "passed",
        ),
        (
            {
                "type": "span-attribute",
                "value": {"name": "chat gpt-4o", "key": "gen_ai.request.model", "regex": "^gpt-4"},
            },
            "passed",
        ),
        (
            {
                "type": "span-attribute",
                "value": {"name": "chat gpt-4o", "key": "gen_ai.request.model", "value": "gpt-5"},
            },
            "failed",
        ),
        (
            {
                "type": "not-span-attribute",
                "value": {"name": "chat gpt-4o", "key": "gen_ai.request.model", "value": "gpt-5"},
            },
            "passed",
        ),
    ],
)
def test_span_assertions_pass_and_fail(assertion: dict[str, Any], outcome: str) -> None:
    assert _one(assertion)[0] == outcome


def test_failures_name_the_spans() -> None:
    outcome, message = _one({"type": "no-error-spans"}, FAILING)
    assert outcome == "failed"
    assert message == "1 span(s) failed: 'execute_tool pay' (TimeoutError: bank down)"
    _, message = _one({"type": "span-count", "value": {"operation": "execute_tool", "max": 1}})
    assert message == (
        "Expected at most 1 spans with gen_ai.operation.name 'execute_tool', found 2: "
        "'execute_tool search', 'execute_tool fetch'"
    )
    _, message = _one({"type": "span-duration", "value": {"name": "chat gpt-4o", "max_ms": 10}})
    assert message == "1 span(s) named 'chat gpt-4o' lasted over 10 ms: 300.0 ms"
    _, message = _one(
        {
            "type": "span-attribute",
            "value": {"name": "chat gpt-4o", "key": "gen_ai.request.model", "value": "gpt-5"},
        }
    )
    assert (
        message == "No span named 'chat gpt-4o' has gen_ai.request.model = 'gpt-5'; found 'gpt-4o'"
    )


FROM_TRACE = {"source": "trace"}
TRAJECTORY = [
    {
        "type": "tool-sequence",
        "value": ["search", "fetch"],
        "config": {**FROM_TRACE, "mode": "exact"},
    },
    {
        "type": "tool-called",
        "value": {"name": "search", "args": {"query": "refunds"}},
        "config": FROM_TRACE,
    },
    {"type": "tool-call-count", "value": {"max": 2}, "config": {"source": "trace"}},
]


def test_a_reply_without_calls_passes_trajectory_checks_from_its_spans() -> None:
    assert _check(TRAJECTORY).outcome.value == "passed"
    # The same checks on the reply (no source) cannot read any call from it.
    plain = [{k: v for k, v in a.items() if k != "config"} for a in TRAJECTORY]
    assert assertly.check(plain, REPLY).outcome.value == "error"
    wrong = [
        {
            "type": "tool-sequence",
            "value": ["fetch", "search"],
            "config": {"mode": "exact", "source": "trace"},
        }
    ]
    assert _check(wrong).outcome.value == "failed"


@pytest.mark.parametrize("spans", [None, "no spans arrived for this call within 2,000 ms"])
@pytest.mark.parametrize(
    "assertion",
    [
        *TRAJECTORY,
        {"type": "not-tool-called", "value": "delete", "config": {"source": "trace"}},
        {"type": "span-count", "value": {"max": 5}},
        {"type": "not-span-count", "value": {"min": 50}},
        {"type": "no-error-spans"},
        {"type": "not-no-error-spans"},
        {"type": "span-duration", "value": {"max_ms": 10}},
        {"type": "span-attribute", "value": {"name": "x", "key": "y", "value": 1}},
    ],
)
def test_no_spans_is_an_error_and_not_keeps_it_one(spans: Any, assertion: dict[str, Any]) -> None:
    outcome, message = _one(assertion, spans)
    assert outcome == "error"
    assert message == (spans or NO_TRACE)


def test_spans_over_the_limit_decide_only_what_they_can() -> None:
    cut = SpanSet(list(FAILING.spans), TRACE, dropped=10)
    assert _one({"type": "no-error-spans"}, cut)[0] == "failed"  # a failing span was kept
    assert _one({"type": "span-count", "value": {"max": 2}}, cut)[0] == "failed"
    assert _one({"type": "span-count", "value": {"max": 50}}, cut)[0] == "error"
    assert _one({"type": "span-duration", "value": {"max_ms": 5000}}, cut)[0] == "error"
    attribute = {"name": "chat gpt-4o", "key": "gen_ai.request.model", "value": "gpt-4o"}
    assert _one({"type": "span-attribute", "value": attribute}, cut)[0] == "passed"
    assert _one(TRAJECTORY[2], cut)[0] == "error"


@pytest.mark.parametrize(
    ("assertion", "problem"),
    [
        ({"type": "span-count", "value": {"name": "x"}}, "give min, max or both"),
        ({"type": "span-count", "value": {"min": 3, "max": 1}}, "min (3) is greater than max (1)"),
        ({"type": "span-count", "value": {"nmae": "x", "min": 1}}, "nmae"),
        ({"type": "span-duration", "value": {"name": "x"}}, "max_ms"),
        (
            {"type": "span-attribute", "value": {"name": "x", "key": "k"}},
            "exactly one of value and regex",
        ),
        ({"type": "span-attribute", "value": {"name": "x", "key": "k", "regex": "("}}, "regex"),
        ({"type": "no-error-spans", "value": 3}, "does not read value"),
        ({"type": "tool-called", "value": "x", "config": {"source": "spans"}}, "source"),
        ({"type": "span-count", "value": 3}, "needs a mapping"),
    ],
)
def test_bad_values_are_load_problems(assertion: dict[str, Any], problem: str) -> None:
    with pytest.raises(assertly.ConfigError, match=re.escape(problem)):
        assertly.compile([assertion])


def test_the_expectation_says_it_needs_spans() -> None:
    assert assertly.compile([{"type": "no-error-spans"}]).needs_spans
    assert assertly.compile([TRAJECTORY[0]]).needs_spans
    assert not assertly.compile([{"type": "tool-called", "value": "x"}]).needs_spans


NAMES = st.sampled_from(["invoke_agent", "chat gpt-4o", "execute_tool search", "other"])


@given(
    spans=st.one_of(st.none(), st.just("no spans arrived"), st.builds(lambda: SPANS)),
    name=NAMES,
    low=st.integers(0, 3),
    extra=st.integers(1, 3),
)
def test_not_never_turns_an_error_into_a_pass(spans: Any, name: str, low: int, extra: int) -> None:
    for assertion in (
        {"type": "span-count", "value": {"name": name, "min": low, "max": low + extra}},
        {"type": "span-duration", "value": {"name": name, "max_ms": low * 100}},
        {"type": "span-attribute", "value": {"name": name, "key": "k", "value": "gpt-4o"}},
        {"type": "tool-call-count", "value": {"max": low}, "config": {"source": "trace"}},
    ):
        plain = _one(assertion, spans)[0]
        negated = _one({**assertion, "type": "not-" + assertion["type"]}, spans)[0]
        if plain == "error":
            assert negated == "error"
        elif negated == "error":
            # Only "X was slow" of an X that never ran (red team): no pass, no fail.
            assert assertion["type"] == "span-duration" and plain == "failed"
        else:
            assert {plain, negated} == {"passed", "failed"}
