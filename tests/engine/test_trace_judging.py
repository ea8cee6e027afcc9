"""The cheap failure path of the trajectory assertions gives exactly what the plain one gave.

Failures are judged on the `Trace` by index and their calls written in one pass
(`trajectory._text.shown_calls`), for speed (#16). tests/trajectory_reference.py keeps the plain
version, on `ToolCall` objects; for drawn traces (arguments as objects, JSON text, broken text,
free text, big integers, lone surrogates, long values, long traces) and every trace checker
of both dialects, both must give the same result, ``to_dict()`` to the byte, explained or not.
"""

from __future__ import annotations

import json
import os
from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import assertly
import trajectory_reference as reference
from assertly.engine._result import traced_pass
from assertly.engine.trajectory._checks import TraceChecker
from assertly.engine.trajectory._text import render_call, render_call_at, render_calls, shown_calls
from assertly.engine.trajectory._trace import Trace
from trajectory_support import can_fail

EXAMPLES = int(os.environ.get("ASSERTLY_PROPERTY_EXAMPLES", "150"))
PROFILE = settings(
    max_examples=EXAMPLES * 2,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

TOOLS = st.sampled_from(["search", "fetch", "answer", "delete"])
BIG = 123456789012345678901234567890
TEXTS = st.sampled_from(["x", "refund policy", "é" * 50, "a\nb", "\ud800", "q" * 45]) | st.text(
    max_size=50
)
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.sampled_from([BIG, BIG + 1, 5.0, 1e300]) | TEXTS,
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(st.sampled_from(["query", "limit", "id", "q"]), children, max_size=3)
    ),
    max_leaves=8,
)
OBJECTS = st.dictionaries(st.sampled_from(["query", "limit", "id", "q", "x"]), VALUES, max_size=4)


def _text_of(value: Any) -> str:
    try:
        return orjson.dumps(value).decode()
    except (TypeError, orjson.JSONEncodeError):
        return json.dumps(value)


RAW = st.one_of(
    OBJECTS,
    OBJECTS.map(_text_of),
    st.sampled_from(['{"q": ', "", "  ", "[1]", "null", "NaN", '"\\ud800"', "7"]),
    VALUES,
)


@st.composite
def traces(draw: st.DrawFn) -> tuple[list[str], list[Any], str, tuple[int, ...]]:
    """A trace's parts: names, raw arguments, format and the free-text calls."""
    long = draw(st.integers(0, 9)) == 0  # past the 20 calls shown and the 50 kept
    size = draw(st.integers(21, 60)) if long else draw(st.integers(0, 6))
    names = [draw(TOOLS) for _ in range(size)]
    raw = [draw(RAW) for _ in range(size)]
    free = tuple(index for index in range(size) if draw(st.integers(0, 7)) == 0)
    form = draw(st.sampled_from(["openai-chat", "anthropic", "metadata", "tool_calls"]))
    return names, raw, form, free


def _trace(parts: tuple[list[str], list[Any], str, tuple[int, ...]]) -> Trace:
    names, raw, form, free = parts
    return Trace(list(names), list(raw), form, free)  # each side reads its own copy


ARGS = st.one_of(
    st.dictionaries(st.sampled_from(["query", "q"]), st.sampled_from(["x", "refund policy"])),
    OBJECTS,
)
CALL = st.one_of(
    TOOLS,
    st.fixed_dictionaries(
        {"name": TOOLS, "args": ARGS},
        optional={"args_match": st.sampled_from(["subset", "exact"])},
    ),
)
TYPED = st.one_of(
    st.fixed_dictionaries({"type": st.just("tool-called"), "value": CALL}),
    st.fixed_dictionaries(
        {
            "type": st.just("tool-called"),
            "value": st.fixed_dictionaries(
                {"name": TOOLS},
                optional={"args": ARGS, "min": st.integers(0, 2), "max": st.integers(2, 3)},
            ).map(can_fail),
        }
    ),
    st.fixed_dictionaries(
        {
            "type": st.just("tool-sequence"),
            "value": st.lists(CALL, min_size=1, max_size=4),
            "config": st.fixed_dictionaries(
                {"mode": st.sampled_from(["in_order", "exact", "unordered", "subset", "superset"])}
            ),
        },
        optional={"threshold": st.sampled_from([0.25, 0.5, 1.0])},
    ),
    st.fixed_dictionaries(
        {
            "type": st.just("tool-call-count"),
            "value": st.sampled_from(
                [{"max": 2}, {"min": 1}, {"min": 1, "max": 3, "name": "search"}, {"max": 0}]
            ),
        }
    ),
)
EXPECT = st.one_of(
    st.fixed_dictionaries({"tools_called": st.lists(TOOLS, min_size=1, max_size=3)}),
    st.fixed_dictionaries({"tools_not_called": st.lists(TOOLS, min_size=1, max_size=3)}),
    st.fixed_dictionaries({"tool_sequence": st.lists(TOOLS, min_size=1, max_size=3)}),
    st.fixed_dictionaries({"max_tool_calls": st.integers(0, 4)}),
)


def _checker(spec: Any) -> TraceChecker:
    typed = "type" in spec
    checker = assertly.compile([spec] if typed else spec)._checkers[0]
    assert isinstance(checker, TraceChecker)
    return checker


@PROFILE
@given(TYPED | EXPECT, traces(), st.booleans())
def test_judging_on_the_trace_gives_what_judging_the_calls_gave(
    spec: Any, parts: Any, explain: bool
) -> None:
    checker = _checker(spec)
    got = checker.check_trace(_trace(parts), explain)
    want = reference.judge(checker, _trace(parts), explain)
    assert got.to_dict() == want.to_dict()
    assert got.outcome is want.outcome and type(got.score) is type(want.score)
    full_pass = traced_pass(checker.key, parts[2])
    assert checker.passes(_trace(parts)) is (
        reference.judge(checker, _trace(parts), False) is full_pass
    )


@PROFILE
@given(traces(), st.none() | st.integers(-1, 70))
def test_shown_calls_are_render_calls_and_to_json(parts: Any, mark: int | None) -> None:
    line, actual = shown_calls(_trace(parts), mark, reference.KEPT_CALLS)
    plain = _trace(parts)
    assert line == reference.render_calls(plain, mark)
    assert line == render_calls(_trace(parts), mark)
    assert actual == [call.to_json() for call in plain.calls[: reference.KEPT_CALLS]]
    trace = _trace(parts)
    for index in range(len(trace.names)):
        assert render_call_at(trace, index) == render_call(_trace(parts).call(index))


def test_a_marked_call_past_the_shown_ones_is_shown_after_a_gap() -> None:
    trace = Trace(["search"] * 30, [{"q": index} for index in range(30)], "metadata")
    line, actual = shown_calls(trace, 25, 50)
    assert '20. search({"q":19}) → … → 26. search({"q":25}) << → … (4 more)' in line
    assert line == reference.render_calls(trace, 25)
    assert len(actual) == 30
    line, _ = shown_calls(trace, 20, 50)
    assert '20. search({"q":19}) → 21. search({"q":20}) << → … (9 more)' in line
