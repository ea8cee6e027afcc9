"""tool-called, tool-sequence and tool-call-count on every trace format, and their not- forms."""

from __future__ import annotations

from typing import Any

import pytest

import assertly
from assertly import AssertionResult, ConfigError, Outcome
from assertly.engine.trajectory._read import NO_TRACE
from trajectory_support import FORMATS, LABELS, NO_TRACE_RESPONSES, TRAJECTORY

PASSED, FAILED, ERROR = Outcome.PASSED, Outcome.FAILED, Outcome.ERROR


def judge(spec: dict[str, Any], format: str, calls: Any = None) -> AssertionResult:
    output, context = FORMATS[format](TRAJECTORY if calls is None else calls)
    return assertly.compile([spec]).check(output, context=context).results[0]


def problems(specs: list[dict[str, Any]]) -> list[str]:
    with pytest.raises(ConfigError) as info:
        assertly.compile(specs)
    return [str(problem) for problem in info.value.problems]


# (spec, outcome, score, what the message says after "Expected ...")
CASES: list[tuple[dict[str, Any], Outcome, float, str]] = [
    ({"type": "tool-called", "value": "search"}, PASSED, 1, ""),
    (
        {"type": "tool-called", "value": "delete"},
        FAILED,
        0,
        "Expected delete called at least once, got 0 matching calls; got 4 calls",
    ),
    (
        {"type": "tool-called", "value": {"name": "search", "args": {"query": "paris forecast"}}},
        PASSED,
        1,
        "",
    ),
    (
        {"type": "tool-called", "value": {"name": "search", "args": {"filters": {"lang": "en"}}}},
        PASSED,
        1,
        "",
    ),
    (
        {"type": "tool-called", "value": {"name": "search", "args": {"filters": {"lang": "fr"}}}},
        FAILED,
        0,
        'Expected search(filters={"lang":"fr"}, …) called at least once, got 0 matching calls '
        '(2 other calls to search: call 1: filters.lang is "en", not "fr")',
    ),
    (
        {
            "type": "tool-called",
            "value": {
                "name": "search",
                "args": {"query": "paris forecast", "limit": 5},
                "args_match": "exact",
            },
        },
        PASSED,
        1,
        "",
    ),
    (
        {
            "type": "tool-called",
            "value": {"name": "search", "args": {"query": "weather paris"}, "args_match": "exact"},
        },
        FAILED,
        0,
        "call 1: limit is not expected (got 5)",
    ),
    (
        {"type": "tool-called", "value": {"name": "search", "max": 1}},
        FAILED,
        0,
        "Expected search called exactly once, got 2 matching calls; got 4 calls",
    ),
    ({"type": "tool-called", "value": {"name": "search", "min": 2, "max": 2}}, PASSED, 1, ""),
    ({"type": "tool-called", "value": {"name": "delete", "min": 0, "max": 0}}, PASSED, 1, ""),
    ({"type": "tool-sequence", "value": ["search", "fetch", "answer"]}, PASSED, 1, ""),
    (
        {"type": "tool-sequence", "value": ["fetch", "search"]},
        FAILED,
        0.5,
        "Expected calls in this order: fetch → search; step 2 (search) is not called after "
        "call 3, only earlier (call 1): out of order",
    ),
    (
        {"type": "tool-sequence", "value": ["search", "answer", "fetch"]},
        FAILED,
        2 / 3,
        "step 3 (fetch) is not called after call 4, only earlier (call 3): out of order",
    ),
    (
        {
            "type": "tool-sequence",
            "value": [{"name": "search", "args": {"query": "paris forecast"}}, "fetch"],
        },
        PASSED,
        1,
        "",
    ),
    (
        {
            "type": "tool-sequence",
            "value": ["search", "fetch", "answer"],
            "config": {"mode": "exact"},
        },
        FAILED,
        0.25,
        "Expected exactly these calls: search → fetch → answer; call 2 should be fetch: got search",
    ),
    (
        {
            "type": "tool-sequence",
            "value": ["search", "search", "fetch", "answer"],
            "config": {"mode": "exact"},
        },
        PASSED,
        1,
        "",
    ),
    (
        {
            "type": "tool-sequence",
            "value": ["answer", "fetch", "search", "search"],
            "config": {"mode": "unordered"},
        },
        PASSED,
        1,
        "",
    ),
    (
        {
            "type": "tool-sequence",
            "value": ["answer", "fetch", "search"],
            "config": {"mode": "unordered"},
        },
        FAILED,
        0.75,
        "Expected exactly these calls, in any order: answer, fetch, search; not expected: "
        'call 2 search({"query":"paris forecast","limit":5})',
    ),
    (
        {
            "type": "tool-sequence",
            "value": ["search", "fetch", "answer", "delete"],
            "config": {"mode": "subset"},
        },
        PASSED,
        1,
        "",
    ),
    (
        {"type": "tool-sequence", "value": ["search", "fetch"], "config": {"mode": "subset"}},
        FAILED,
        0.75,
        "Expected only calls among: search, fetch; not among the listed calls: "
        'call 4 answer({"text":"Mild, 18 °C."})',
    ),
    (
        {"type": "tool-sequence", "value": ["fetch", "search"], "config": {"mode": "superset"}},
        PASSED,
        1,
        "",
    ),
    (
        {"type": "tool-sequence", "value": ["fetch", "delete"], "config": {"mode": "superset"}},
        FAILED,
        0.5,
        "Expected all of these calls, in any order: fetch, delete; not called: delete",
    ),
    (
        {
            "type": "tool-sequence",
            "value": ["fetch", "delete"],
            "config": {"mode": "superset"},
            "threshold": 0.5,
        },
        PASSED,
        0.5,
        "",
    ),
    ({"type": "tool-call-count", "value": {"max": 4}}, PASSED, 1, ""),
    (
        {"type": "tool-call-count", "value": {"max": 3}},
        FAILED,
        0,
        "Expected at most 3 tool calls, got 4; got 4 calls",
    ),
    ({"type": "tool-call-count", "value": {"min": 2, "name": "search"}}, PASSED, 1, ""),
    (
        {"type": "tool-call-count", "value": {"min": 3, "name": "search"}},
        FAILED,
        0,
        "Expected at least 3 calls to search, got 2",
    ),
    ({"type": "tool-call-count", "value": {"min": 1, "max": 1, "name": "fetch"}}, PASSED, 1, ""),
]


@pytest.mark.parametrize("format", FORMATS)
@pytest.mark.parametrize(("spec", "outcome", "score", "message"), CASES)
def test_verdicts_scores_and_messages_on_every_format(
    format: str, spec: dict[str, Any], outcome: Outcome, score: float, message: str
) -> None:
    result = judge(spec, format)
    assert result.outcome is outcome, result.message
    assert result.score == pytest.approx(score)
    assert result.details is not None and result.details["trace_format"] == format
    if outcome is FAILED:
        assert message in result.message
        # The calls made are shown next to what was expected, with the format they came in.
        assert f"got 4 calls ({LABELS[format]}): 1. search(" in result.message
        assert result.actual[0]["name"] == "search"
        assert result.expected is not None


@pytest.mark.parametrize("format", FORMATS)
@pytest.mark.parametrize(("spec", "outcome", "score", "message"), CASES)
def test_the_not_form_inverts_every_verdict(
    format: str, spec: dict[str, Any], outcome: Outcome, score: float, message: str
) -> None:
    negated = {**spec, "type": "not-" + spec["type"]}
    result = judge(negated, format)
    assert result.outcome is (FAILED if outcome is PASSED else PASSED)
    assert result.score == pytest.approx(1 - score)
    if result.outcome is FAILED:
        # What held, and the calls that made it hold.
        assert f"which {negated['type']} forbids" in result.message
        assert f"got 4 calls ({LABELS[format]})" in result.message


def test_the_divergence_is_flagged_in_the_calls_shown() -> None:
    result = judge(
        {"type": "tool-sequence", "value": ["search", "fetch"], "config": {"mode": "exact"}},
        "openai-chat",
    )
    assert result.message == (
        "Expected exactly these calls: search → fetch; call 2 should be fetch: got search; "
        "got 4 calls (OpenAI Chat Completions): "
        '1. search({"query":"weather paris","limit":5,"filters":{"lang":"en","safe":true}}) → '
        '2. search({"query":"paris forecast","limit":5}) << → '
        '3. fetch({"url":"https://example.com/paris"}) → 4. answer({"text":"Mild, 18 °C."})'
    )


def test_a_too_short_exact_sequence_says_what_is_missing() -> None:
    result = judge(
        {"type": "tool-sequence", "value": ["search", "fetch"], "config": {"mode": "exact"}},
        "anthropic",
        [("search", {})],
    )
    assert "only 1 call made; call 2 should be fetch" in result.message
    assert result.score == 0.5


TRAJECTORY_SPECS = [
    {"type": "tool-called", "value": "search"},
    {"type": "tool-called", "value": {"name": "search", "min": 0, "max": 0}},
    {"type": "tool-sequence", "value": ["search"]},
    *(
        {"type": "tool-sequence", "value": ["search"], "config": {"mode": mode}}
        for mode in ("exact", "unordered", "subset", "superset")
    ),
    {"type": "tool-call-count", "value": {"max": 0}},
    {"type": "tool-call-count", "value": {"min": 0, "max": 9}},
]


@pytest.mark.parametrize("output", NO_TRACE_RESPONSES)
@pytest.mark.parametrize("negate", ["", "not-"])
def test_no_trace_is_an_error_for_every_assertion_and_its_not_form(
    output: Any, negate: str
) -> None:
    specs = [{**spec, "type": negate + spec["type"]} for spec in TRAJECTORY_SPECS]
    result = assertly.compile(specs).check(output)
    assert result.outcome is ERROR
    for item in result.results:
        assert item.outcome is ERROR
        assert item.message == NO_TRACE
        assert item.score == 0.0


@pytest.mark.parametrize("format", FORMATS)
def test_zero_calls(format: str) -> None:
    nothing: list[tuple[str, dict[str, Any]]] = []
    assert judge({"type": "tool-call-count", "value": {"max": 0}}, format, nothing).passed
    assert judge({"type": "not-tool-called", "value": "search"}, format, nothing).passed
    assert judge(
        {"type": "tool-sequence", "value": ["a"], "config": {"mode": "subset"}}, format, nothing
    ).passed
    missed = judge({"type": "tool-called", "value": "search"}, format, nothing)
    assert missed.outcome is FAILED
    assert missed.message.endswith(f"got no calls ({LABELS[format]})")


def test_unreadable_arguments_fail_an_argument_match_but_not_a_name_match() -> None:
    output = {"tool_calls": [{"name": "search", "arguments": '{"query": "par'}]}
    by_name = assertly.compile([{"type": "tool-called", "value": "search"}]).check(output)
    assert by_name.passed
    by_args = assertly.compile(
        [{"type": "tool-called", "value": {"name": "search", "args": {"query": "paris"}}}]
    ).check(output)
    assert by_args.outcome is FAILED
    assert (
        "(1 other call to search: call 1: the arguments are not valid JSON: "
        '\'{"query": "par\')' in by_args.results[0].message
    )
    assert "1. search(<unreadable arguments>)" in by_args.results[0].message
    assert by_args.results[0].actual == [
        {
            "name": "search",
            "arguments_error": 'the arguments are not valid JSON: \'{"query": "par\'',
        }
    ]


def test_subset_matching_recurses_into_arrays_of_objects() -> None:
    output = {
        "tool_calls": [
            {"name": "filter", "arguments": {"rules": [{"field": "a", "op": "eq"}, {"field": "b"}]}}
        ]
    }
    matches = [
        {
            "type": "tool-called",
            "value": {"name": "filter", "args": {"rules": [{"field": "a"}, {}]}},
        }
    ]
    assert assertly.compile(matches).check(output).passed
    shorter = [
        {"type": "tool-called", "value": {"name": "filter", "args": {"rules": [{"field": "a"}]}}}
    ]
    result = assertly.compile(shorter).check(output).results[0]
    assert "rules has 2 items, not 1" in result.message
    strict_types = [{"type": "tool-called", "value": {"name": "filter", "args": {"rules": True}}}]
    assert not assertly.compile(strict_types).check(output).passed


def test_args_subset_compares_json_strictly() -> None:
    output = {"tool_calls": [{"name": "page", "arguments": {"n": 1, "flag": True}}]}
    assert (
        assertly.compile([{"type": "tool-called", "value": {"name": "page", "args": {"n": 1.0}}}])
        .check(output)
        .passed
    )
    result = assertly.compile(
        [{"type": "tool-called", "value": {"name": "page", "args": {"flag": 1}}}]
    ).check(output)
    assert "flag is true, not 1" in result.results[0].message


def test_unordered_and_superset_find_a_matching_when_greedy_would_not() -> None:
    # The first listed pattern could take either call; only one assignment covers both.
    output = {
        "tool_calls": [
            {"name": "search", "arguments": {"q": "x"}},
            {"name": "search", "arguments": {"q": "y"}},
        ]
    }
    for mode in ("unordered", "superset"):
        spec = {
            "type": "tool-sequence",
            "value": ["search", {"name": "search", "args": {"q": "x"}}],
            "config": {"mode": mode},
        }
        assert assertly.compile([spec]).check(output).passed, mode


def test_weights_and_the_list_threshold_apply() -> None:
    output, _ = FORMATS["openai-chat"](TRAJECTORY)
    expectation = assertly.compile(
        [
            {"type": "tool-called", "value": "fetch", "weight": 3},
            {"type": "tool-called", "value": "delete", "weight": 1},
        ],
        threshold=0.7,
    )
    result = expectation.check(output)
    assert result.score == pytest.approx(0.75)
    assert result.passed


def test_metadata_tool_calls_from_a_check_context_object() -> None:
    context = assertly.CheckContext(tool_calls=[{"name": "lookup", "input": {"id": 3}}])
    expectation = assertly.compile(
        [{"type": "tool-called", "value": {"name": "lookup", "args": {"id": 3}}}]
    )
    result = expectation.check("prose answer", context=context)
    assert result.passed
    assert result.results[0].details == {"trace_format": "metadata"}


def test_tool_calls_reach_a_custom_assertion() -> None:
    registry = assertly.Registry()
    seen: list[Any] = []

    @assertly.assertion("sees-calls", registry=registry)
    def sees_calls(output: str, context: dict[str, Any]) -> bool:
        seen.append(context["tool_calls"])
        return True

    expectation = assertly.compile([{"type": "sees-calls"}], registry=registry)
    expectation.check("x", context={"tool_calls": [{"name": "a"}]})
    assert seen == [[{"name": "a"}]]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (
            {"type": "tool-sequence", "value": ["a"], "config": {"mode": "inorder"}},
            "assertions[0].config.mode: unknown value (allowed: in_order, exact, unordered, "
            "subset, superset) (did you mean 'in_order'?), got 'inorder'",
        ),
        (
            {"type": "not-tool-sequence", "value": ["a"], "config": {"mode": "superst"}},
            "assertions[0].config.mode: unknown value (allowed: in_order, exact, unordered, "
            "subset, superset) (did you mean 'superset'?), got 'superst'",
        ),
        (
            {"type": "tool-sequence", "value": ["a"], "config": {"mod": "exact"}},
            "assertions[0].config.mod: unknown parameter (allowed: source, mode) "
            "(did you mean 'mode'?)",
        ),
        (
            {"type": "tool-called", "value": {"name": "a", "arg": {}}},
            "assertions[0].value.arg: unknown parameter (allowed: name, args, args_match, min, "
            "max) (did you mean 'args'?) (e.g. {name: search, args: {query: 'x'}, max: 2})",
        ),
        (
            {"type": "tool-called", "value": {"name": "a", "args": {}, "args_match": "exactly"}},
            "assertions[0].value.args_match: unknown value (allowed: subset, exact) (did you "
            "mean 'exact'?), got 'exactly' (e.g. {name: search, args: {query: 'x'}, max: 2})",
        ),
        (
            {"type": "tool-called", "value": {"name": "a", "min": 3, "max": 1}},
            "assertions[0].value: min (3) is greater than max (1)",
        ),
        (
            {"type": "tool-called", "value": {"name": "a", "args_match": "exact"}},
            "assertions[0].value.args_match: args_match applies to args, and no args are given "
            "(e.g. {name: search, args: {query: 'x'}, args_match: exact}; for a call without "
            "arguments write args: {} with args_match: exact)",
        ),
        (
            {"type": "tool-called", "value": ["a"]},
            "assertions[0].value: tool-called needs a tool name or a mapping such as "
            "{name: search, args: {query: 'x'}, min: 1, max: 2}, got ['a']",
        ),
        (
            {"type": "tool-called"},
            "assertions[0].value: tool-called needs a tool name or a mapping such as "
            "{name: search, args: {query: 'x'}, min: 1, max: 2}, got ''",
        ),
        (
            {"type": "tool-sequence", "value": []},
            "assertions[0].value: expected a non-empty list of tool names or {name: search, "
            "args: {query: 'x'}} mappings, got [] (e.g. [search, fetch, answer])",
        ),
        (
            {"type": "tool-sequence", "value": ["a", 3]},
            "assertions[0].value[1]: expected a tool name or a mapping such as {name: search, "
            "args: {query: 'x'}}, got 3",
        ),
        (
            {"type": "tool-sequence", "value": ["a"], "threshold": 2},
            "assertions[0].threshold: threshold must be a number in [0, 1], got 2.0",
        ),
        (
            {"type": "tool-call-count", "value": {}},
            "assertions[0].value: give min, max or both (e.g. {max: 5} or {min: 1, max: 2, "
            "name: search}); without them any count passes",
        ),
        (  # cannot fail (any count is at least 0): refused, as an empty `contains` is
            {"type": "tool-call-count", "value": {"min": 0, "name": "a"}},
            "assertions[0].value: min 0 without a max can never fail (any count passes); "
            "give min: 1 or a max",
        ),
        (
            {"type": "not-tool-called", "value": {"name": "a", "min": 0}},
            "assertions[0].value: min 0 without a max can never fail (any count passes); "
            "give min: 1 or a max",
        ),
        (
            {"type": "tool-call-count", "value": {"max": -1}},
            "assertions[0].value.max: input should be greater than or equal to 0, got -1 "
            "(e.g. {max: 5} or {min: 1, max: 2, name: search})",
        ),
        (
            {"type": "tool-call-count", "value": 3},
            "assertions[0].value: tool-call-count needs a mapping such as {max: 5} or "
            "{min: 1, max: 2, name: search}, got 3",
        ),
        (
            {"type": "tool-called", "value": "a", "threshold": 0.5},
            "assertions[0].threshold: tool-called has no threshold: it passes or fails (a pass "
            "mark for a whole check goes next to the assertion list, not on one assertion)",
        ),
        (
            {"type": "tool-caled", "value": "a"},
            "assertions[0].type: unknown assertion 'tool-caled' (did you mean 'tool-called'?)",
        ),
    ],
)
def test_configuration_errors_say_what_would_be_right(spec: dict[str, Any], expected: str) -> None:
    assert problems([spec]) == [expected]


def test_describe_states_each_assertion() -> None:
    expectation = assertly.compile(
        [
            {"type": "tool-called", "value": {"name": "search", "args": {"q": "x"}, "max": 2}},
            {"type": "not-tool-called", "value": "delete"},
            {"type": "tool-sequence", "value": ["a", "b"], "config": {"mode": "unordered"}},
            {"type": "tool-call-count", "value": {"max": 1}},
        ]
    )
    assert expectation.describe() == [
        'tool search(q="x", …) is called between 1 and 2 times',
        "not (tool delete is called at least once)",
        "the tool calls are exactly a, b, in any order",
        "the agent makes at most 1 tool call",
    ]


def test_in_order_says_when_a_step_is_never_called_or_called_with_other_arguments() -> None:
    never = judge({"type": "tool-sequence", "value": ["search", "delete"]}, "tool_calls")
    assert "step 2 (delete) is not called after call 1;" in never.message
    other = judge(
        {
            "type": "tool-sequence",
            "value": ["fetch", {"name": "answer", "args": {"text": "Cold."}}],
        },
        "tool_calls",
    )
    assert (
        'step 2 (answer(text="Cold.", …)) is not called after call 3; call 4 is answer but '
        'text is "Mild, 18 °C.", not "Cold."' in other.message
    )
    assert '4. answer({"text":"Mild, 18 °C."}) <<' in other.message


def test_max_zero_alone_means_never_called() -> None:
    never = {"type": "tool-called", "value": {"name": "delete", "max": 0}}
    assert judge(never, "openai-chat").passed
    called = judge({**never, "value": {"name": "fetch", "max": 0}}, "openai-chat")
    assert called.message.startswith("Expected fetch never to be called, got 1 matching call;")
    assert problems([{"type": "tool-called", "value": {"name": "a", "min": 1, "max": 0}}]) == [
        "assertions[0].value: min (1) is greater than max (0)"
    ]


def test_the_modes_of_the_options_are_the_modes_judged() -> None:
    from typing import get_args

    from assertly.engine.trajectory._sequence import MODES
    from assertly.engine.trajectory.typed import SequenceOptions

    assert get_args(SequenceOptions.model_fields["mode"].annotation) == MODES


def test_a_trace_nested_in_the_response_is_picked_with_a_transform() -> None:
    response = {"answer": "x", "run": {"tool_calls": [{"name": "search", "arguments": {}}]}}
    nested = [{"type": "tool-called", "value": "search", "transform": "json_path:$.run"}]
    assert assertly.compile(nested).check(response).passed
    missing = assertly.compile(nested).check({"answer": "x"}).results[0]
    assert missing.message == "transform json_path:$.run: path not found in the output"
    # Without the transform the response as a whole is no trace.
    whole = assertly.compile([{"type": "tool-called", "value": "search"}]).check(response)
    assert whole.results[0].message == NO_TRACE
