"""The generated fast path agrees with the detailed path on trajectory assertions.

Trajectory checkers write their test into the fast function (`TraceChecker.emit`, and
`emit_negated` for ``not-tool-called`` / ``not-tool-call-count``), and a response whose every
assertion passes gets the result prebuilt for its trace format. For expectations of both
dialects mixing trajectory assertions (names, arguments as subsets or exactly, counts, every
sequence mode, thresholds, negations) with a text assertion, and tool calls drawn to pass or
nearly pass them in every format assertly reads (arguments as objects, as JSON text, as
broken text, big integers), with and without context, the two paths must give the same
outcome, score and ``to_dict()``.
"""

from __future__ import annotations

import copy
import json
import os
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import assertly
from assertly import Expectation
from assertly.engine._context import CheckContext
from trajectory_support import FORMATS, can_fail

EXAMPLES = int(os.environ.get("ASSERTLY_PROPERTY_EXAMPLES", "150"))
PROFILE = settings(
    max_examples=EXAMPLES * 2,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
SEEN: Counter[str] = Counter()

TOOLS = st.sampled_from(["search", "fetch", "answer", "delete"])
BIG = 123456789012345678901234567890
ARG_VALUES = st.sampled_from(["x", "refund policy", 5, 5.0, True, None, BIG, BIG + 1, [1, 2]])
KEYS = st.sampled_from(["query", "limit", "id"])
# Strings only (matched without `_subset`), or any values; calls draw from the same vocabulary.
ARGS = st.one_of(
    st.dictionaries(KEYS, st.sampled_from(["x", "refund policy"]), min_size=1, max_size=2),
    st.dictionaries(KEYS, ARG_VALUES, max_size=2),
)
CALL = st.one_of(
    TOOLS,
    st.fixed_dictionaries(
        {"name": TOOLS, "args": ARGS},
        optional={"args_match": st.sampled_from(["subset", "exact"])},
    ),
)


TYPED_CHOICES: list[st.SearchStrategy[dict[str, Any]]] = [
    st.fixed_dictionaries(
        {"type": st.sampled_from(["tool-called", "not-tool-called"]), "value": TOOLS}
    ),
    st.fixed_dictionaries(
        {
            "type": st.sampled_from(["tool-called", "not-tool-called"]),
            "value": st.fixed_dictionaries(
                {"name": TOOLS},
                optional={
                    "args": ARGS,
                    "min": st.integers(0, 2),
                    "max": st.integers(2, 3),
                },
            ).map(can_fail),
        }
    ),
    st.fixed_dictionaries(
        {
            "type": st.just("tool-sequence"),
            "value": st.lists(CALL, min_size=1, max_size=3),
            "config": st.fixed_dictionaries(
                {"mode": st.sampled_from(["in_order", "exact", "unordered", "subset", "superset"])}
            ),
        },
        optional={"threshold": st.sampled_from([0.5, 1.0])},
    ),
    st.fixed_dictionaries(
        {
            "type": st.sampled_from(["tool-call-count", "not-tool-call-count"]),
            "value": st.sampled_from(
                [{"max": 2}, {"min": 1}, {"min": 1, "max": 3, "name": "search"}, {"max": 0}]
            ),
        }
    ),
    st.fixed_dictionaries({"type": st.just("contains"), "value": st.sampled_from(["e", "zz"])}),
]


@st.composite
def typed_lists(draw: st.DrawFn) -> list[dict[str, Any]]:
    chosen = draw(st.lists(st.sampled_from(TYPED_CHOICES), min_size=1, max_size=4))
    items = [dict(draw(choice)) for choice in chosen]
    for item in items:
        if draw(st.booleans()) and item["type"] == "tool-sequence" and "threshold" in item:
            item["weight"] = 2.0
    return items


EXPECT_CHOICES: dict[str, st.SearchStrategy[Any]] = {
    "tools_called": st.lists(TOOLS, min_size=1, max_size=2),
    "tools_not_called": st.lists(TOOLS, min_size=1, max_size=2),
    "tool_sequence": st.lists(TOOLS, min_size=1, max_size=3),
    "max_tool_calls": st.integers(0, 4),
    "contains": st.sampled_from(["e", "zz"]),
}


@st.composite
def expect_dicts(draw: st.DrawFn) -> dict[str, Any]:
    keys = draw(st.lists(st.sampled_from(sorted(EXPECT_CHOICES)), min_size=1, max_size=4))
    return {key: draw(EXPECT_CHOICES[key]) for key in dict.fromkeys(keys)}


@st.composite
def calls(draw: st.DrawFn) -> list[tuple[str, dict[str, Any]]]:
    # Mostly a plausible run (search first, answer last), so that assertions often pass.
    made = [("search", draw(ARGS))]
    made += draw(st.lists(st.tuples(TOOLS, ARGS), max_size=3))
    if draw(st.booleans()):
        made.append(("answer", draw(ARGS)))
    if draw(st.integers(0, 9)) == 0:
        made = []
    return made


@st.composite
def responses(draw: st.DrawFn) -> tuple[Any, Any]:
    made = draw(calls())
    output, context = FORMATS[draw(st.sampled_from(sorted(FORMATS)))](made)
    if draw(st.integers(0, 14)) == 0 and isinstance(output, str) and output.startswith("{"):
        # Arguments that are not an object: broken JSON text inside a Chat Completions call.
        output = output.replace('"arguments": "{', '"arguments": "{oops', 1)
    if draw(st.integers(0, 19)) == 0:
        output = "no tool calls here"  # no trace: an error, on either path
    return output, context


def _same(expectation: Expectation, output: Any, context: Any) -> None:
    fast = expectation.check(copy.deepcopy(output), context=copy.deepcopy(context))
    detailed = expectation._check_detailed(copy.deepcopy(output), context=copy.deepcopy(context))
    assert fast.outcome is detailed.outcome
    assert fast.score == detailed.score
    assert fast.to_dict() == detailed.to_dict()
    assert fast.as_record() == detailed.to_dict()
    prebuilt = any(fast is result for result in expectation._all_pass.values())
    SEEN["fast pass" if prebuilt else "passed" if fast.passed else "detailed"] += 1


@PROFILE
@given(typed_lists(), responses(), st.sampled_from([None, 0.5]))
def test_typed_trajectory_fast_path_agrees(
    items: list[dict[str, Any]], response: tuple[Any, Any], threshold: float | None
) -> None:
    output, context = response
    _same(assertly.compile(items, threshold=threshold), output, context)


@PROFILE
@given(expect_dicts(), responses())
def test_expect_trajectory_fast_path_agrees(
    spec: dict[str, Any], response: tuple[Any, Any]
) -> None:
    output, context = response
    _same(assertly.compile(spec), output, context)


def test_both_paths_were_exercised() -> None:
    if SEEN["detailed"] + SEEN["fast pass"] < 50:
        pytest.skip("run with the property tests")
    assert SEEN["fast pass"] >= 10, SEEN
    assert SEEN["detailed"] >= 10, SEEN


def test_a_passing_trace_gets_the_result_prebuilt_for_its_format(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    expectation = assertly.compile(
        [
            {"type": "tool-called", "value": {"name": "search", "args": {"q": "x"}}},
            {"type": "not-tool-called", "value": "delete"},
            {"type": "tool-sequence", "value": ["search", "answer"]},
            {"type": "tool-call-count", "value": {"max": 3}},
        ]
    )
    made = [("search", {"q": "x", "n": 1}), ("answer", {})]
    chat, _ = FORMATS["openai-chat"](made)
    first = expectation.check(chat)
    assert first.passed

    def detailed(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the detailed path ran for a passing response")

    monkeypatch.setattr(Expectation, "_check_all", detailed)
    assert expectation.check(chat) is first  # one result per trace format
    assert [r.details for r in first.results] == [{"trace_format": "openai-chat"}] * 4
    prose, context = FORMATS["metadata"](made)
    reported = expectation.check(prose, context=context)
    assert reported is not first
    assert reported.results[0].details == {"trace_format": "metadata"}
    assert "tr.format" in expectation.source


def test_arguments_are_read_only_for_calls_of_the_named_tool() -> None:
    from assertly.engine._response import Response
    from assertly.engine.trajectory._read import read_trace

    made = [("search", {"q": "x"}), ("fetch", {"url": "u", "n": 1})]
    output, _ = FORMATS["openai-chat"](made)
    trace = read_trace(Response(output))
    assert not isinstance(trace, str)
    expectation = assertly.compile(
        [{"type": "tool-called", "value": {"name": "fetch", "args": {"n": 1}}}]
    )
    checker = expectation._checkers[0]
    assert checker.passes(trace)  # type: ignore[attr-defined]
    assert trace._read is not None and list(trace._read) == [1]  # fetch's arguments only
    assert trace._made is None  # no ToolCall objects on the way
    assert trace.calls[1].arguments == {"url": "u", "n": 1}
    assert trace.call(0).arguments == {"q": "x"}
    # A pattern of strings only reads the text with orjson alone, and keeps nothing.
    trace = read_trace(Response(output))
    assert not isinstance(trace, str)
    strings = assertly.compile(
        [{"type": "tool-called", "value": {"name": "fetch", "args": {"url": "u"}}}]
    )
    assert strings._checkers[0].passes(trace)  # type: ignore[attr-defined]
    assert trace._read is None


def test_big_integer_arguments_are_exact_in_json_text() -> None:
    expectation = assertly.compile(
        [{"type": "tool-called", "value": {"name": "search", "args": {"id": BIG}}}]
    )
    exact, _ = FORMATS["openai-chat"]([("search", {"id": BIG})])
    off_by_one, _ = FORMATS["openai-chat"]([("search", {"id": BIG + 1})])
    assert expectation.check(exact).passed
    assert not expectation.check(off_by_one).passed
    assert json.loads(exact)  # the reply itself is valid JSON


@pytest.mark.parametrize("form", ["openai-chat", "openai-responses", "anthropic"])
def test_a_reply_read_for_its_calls_is_still_judged_exactly_as_json(form: str) -> None:
    """The trace may be read before the big-integer test; the reply's JSON stays exact."""
    output, _ = FORMATS[form]([("search", {"id": BIG}), ("answer", {})])
    data = json.loads(output)
    data["usage_id"] = BIG  # a big integer outside the calls, read as JSON
    text = json.dumps(data) + " " * 200
    for spec in (
        {"tools_called": ["search"], "field_equals": {"usage_id": BIG}},
        {"field_equals": {"usage_id": BIG}, "tools_called": ["search"]},
    ):
        _same(assertly.compile(spec), text, None)
        assert assertly.compile(spec).check(text).passed
        off = {**spec, "field_equals": {"usage_id": BIG + 1}}
        assert not assertly.compile(off).check(text).passed


# Drawn cases reach some corners rarely; these are checked in every format, every time.
CORNER_PATTERNS: list[Any] = [
    {"name": "search", "args": {"query": "x"}},  # strings only: matched without `_subset`
    {"name": "search", "args": {"query": "x", "limit": 5}},
    {"name": "search", "args": {"query": "x"}, "args_match": "exact"},
    {"name": "search", "args": {}},
    {"name": "search", "args": {"id": BIG}},
    {"name": "search", "args": {"query": "x"}, "max": 1},
]
CORNER_CALLS: list[list[tuple[str, dict[str, Any]]]] = [
    [("search", {"query": "x"})],
    [("search", {"query": "y"})],
    [("search", {"limit": 5})],
    [("search", {"query": 5})],
    [("search", {"query": ["x"]})],
    [("search", {"query": "x", "limit": 5.0})],
    [("search", {"query": "x"}), ("search", {"query": "x", "id": BIG})],
    [("search", {"id": BIG + 1}), ("fetch", {"query": "x"})],
    [("fetch", {"query": "x"})],
]


@pytest.mark.parametrize("form", sorted(FORMATS))
@pytest.mark.parametrize("negate", [False, True])
def test_argument_corners_agree(form: str, negate: bool) -> None:
    for pattern in CORNER_PATTERNS:
        kind = "not-tool-called" if negate else "tool-called"
        expectation = assertly.compile([{"type": kind, "value": pattern}])
        for made in CORNER_CALLS:
            output, context = FORMATS[form](made)
            _same(expectation, output, context)


@pytest.mark.parametrize("form", sorted(FORMATS))
def test_a_trace_only_expectation_judges_a_passing_output_without_a_response(
    form: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every assertion reads the trace alone: a passing output needs no `Response`."""
    from assertly.engine._response import Response

    spec = [
        {"type": "tool-called", "value": {"name": "search", "args": {"q": "x"}}},
        {"type": "not-tool-called", "value": "delete"},
        {"type": "tool-sequence", "value": ["search", "answer"]},
        {"type": "tool-call-count", "value": {"max": 3}},
    ]
    expectation = assertly.compile(spec)
    mixed = assertly.compile([*spec, {"type": "contains", "value": "x"}])
    assert mixed._build_fast().trace_function is None  # (contains reads the text)
    passing, context = FORMATS[form]([("search", {"q": "x"}), ("answer", {})])
    failing, failing_context = FORMATS[form]([("search", {"q": "y"}), ("delete", {})])
    first = expectation.check(passing, context=context)  # (builds the prebuilt result)
    assert expectation._fast.trace_function is not None
    built: list[Any] = []
    original = Response.__init__

    def counting(self: Response, value: Any) -> None:
        built.append(value)
        original(self, value)

    monkeypatch.setattr(Response, "__init__", counting)
    assert expectation.check(passing, context=context) is first
    assert built == []
    # Only trace checkers fail: they judge the trace read already, still without a `Response`.
    judged, judged_context = FORMATS[form]([("search", {"q": "y"})])
    result = expectation.check(judged, context=judged_context)
    assert built == []
    # `not-tool-called` fails too: the ``not-`` form judges a `Response`.
    negated = expectation.check(failing, context=failing_context)
    assert len(built) == 1
    monkeypatch.setattr(Response, "__init__", original)
    assert result.to_dict() == expectation._check_detailed(judged, context=judged_context).to_dict()
    detailed = expectation._check_detailed(failing, context=failing_context)
    assert negated.to_dict() == detailed.to_dict()


class _Context(dict[str, Any]):
    """A mapping that is not exactly a dict: its context is built the usual way."""


@pytest.mark.parametrize("passing", [True, False])
def test_a_trace_only_expectation_reads_every_kind_of_context_alike(passing: bool) -> None:
    """A plain dict's calls are read without a `CheckContext`; any other context is built."""
    expectation = assertly.compile(
        [
            {"type": "tool-sequence", "value": ["search", "answer"]},
            {"type": "not-tool-called", "value": "delete"},
        ]
    )
    made = [("search", {"q": "x"})] + ([("answer", {})] if passing else [("delete", {})])
    output, context = FORMATS["metadata"](made)
    assert context is not None
    contexts: list[Any] = [
        context,
        {**context, "now": "2026-01-01T00:00:00Z"},
        {**context, "model": "m", "cost_usd": 0.1},
        _Context(context),
        CheckContext.build(context),
    ]
    for reported in contexts:
        for now in (None, "2026-01-01"):
            _same(expectation, output, reported)
            fast = expectation.check(output, context=reported, now=now)
            detailed = expectation._check_detailed(output, context=reported, now=now)
            assert fast.to_dict() == detailed.to_dict()
            assert fast.passed is passing
    # An invalid "now" is refused as before, whether the calls pass or not.
    for path in (expectation.check, expectation._check_detailed):
        with pytest.raises(ValueError):
            path(output, context={**context, "now": "not a date"})


def test_a_string_argument_must_be_a_str_not_a_subclass() -> None:
    """As `_subset` compares: a str subclass (from a py: agent) is not a JSON string."""

    class Text(str):
        __slots__ = ()

    expectation = assertly.compile(
        [{"type": "tool-called", "value": {"name": "search", "args": {"q": "x"}}}]
    )
    output = {"tool_calls": [{"name": "search", "arguments": {"q": Text("x")}}]}
    _same(expectation, output, None)
    assert not expectation.check(output).passed
    assert expectation.check({"tool_calls": [{"name": "search", "arguments": {"q": "x"}}]}).passed


@pytest.mark.parametrize("form", sorted(FORMATS))
@pytest.mark.parametrize(
    "bounds", [{}, {"min": 2}, {"max": 1}, {"min": 2, "max": 2}, {"max": 0}, {"min": 0, "max": 1}]
)
def test_tool_called_with_strings_finds_each_call_of_the_tool(
    form: str, bounds: dict[str, Any]
) -> None:
    """The generated test jumps from one call of the tool to the next (found in C)."""
    spec = [{"type": "tool-called", "value": {"name": "search", "args": {"q": "x"}, **bounds}}]
    expectation = assertly.compile(spec)
    runs = [
        [("fetch", {}), ("search", {"q": "y"}), ("fetch", {}), ("search", {"q": "x"})],
        [("search", {"q": "x"}), ("search", {"q": "x"}), ("search", {"q": "x"})],
        [("search", {"q": "y"}), ("answer", {}), ("search", {"q": "x"}), ("search", {"q": "x"})],
        [("fetch", {"q": "x"}), ("answer", {"q": "x"})],
        [("search", {"q": 1}), ("search", {}), ("search", {"q": ["x"]})],
        [],
    ]
    for made in runs:
        output, context = FORMATS[form](made)
        _same(expectation, output, context)


@pytest.mark.parametrize("listed", [1, 2, 3, 6, 7, 9])
def test_tool_sequence_by_names_in_order_agrees_unrolled_or_looped(listed: int) -> None:
    """Up to six names the generated test is written out one by one, past that a loop."""
    tools = ["a", "b", "a", "c", "d", "b", "e", "a", "f"][:listed]
    expectation = assertly.compile([{"type": "tool-sequence", "value": tools}])
    runs = [
        tools,
        ["x", *tools, "y"],
        [name for tool in tools for name in (tool, "z")],
        tools[::-1],
        tools[:-1],
        tools[1:],
        [*tools[1:], tools[0]],
        [],
    ]
    for names in runs:
        output, context = FORMATS["tool_calls"]([(name, {}) for name in names])
        _same(expectation, output, context)
    assert expectation.check(FORMATS["tool_calls"]([(n, {}) for n in tools])[0]).passed


def test_json_text_the_trace_only_way_cannot_read_at_once_goes_the_usual_way() -> None:
    """A byte order mark, a transcript (a list), prose, a big integer: the same results."""
    expectation = assertly.compile(
        [
            {"type": "tool-sequence", "value": ["search", "answer"]},
            {"type": "tool-called", "value": {"name": "search", "args": {"q": "x"}}},
        ]
    )
    chat, _ = FORMATS["openai-chat"]([("search", {"q": "x"}), ("answer", {})])
    big = json.loads(chat)
    big["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] = {"q": "x", "n": BIG}
    outputs = [
        "\ufeff" + chat,
        json.dumps(
            [
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [
                        {
                            "id": "1",
                            "type": "function",
                            "function": {"name": "search", "arguments": '{"q":"x"}'},
                        },
                        {
                            "id": "2",
                            "type": "function",
                            "function": {"name": "answer", "arguments": "{}"},
                        },
                    ],
                }
            ]
        ),
        "no calls here",
        json.dumps(big),
        "[]",
        "\ufeffnot json",
    ]
    for output in outputs:
        _same(expectation, output, None)
    assert expectation.check("\ufeff" + chat).passed
    assert expectation.check(outputs[1]).passed
    assert expectation.check("no calls here").outcome.value == "error"
