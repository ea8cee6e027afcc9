"""Trajectory conformance: the cases of three peers' test suites, judged by assertly.

Each row ports the facts of one peer test case (the calls an agent made, what was expected,
the peer's verdict) into assertly's vocabulary, written in this project's own words and code,
and records assertly's verdict. Where the two differ, ``why`` says which kind of difference it
is: ``(b)`` a deliberate difference (``decision`` names the docs/decisions.md entry), or ``(c)``
a peer quirk or a case outside assertly's vocabulary. Rows marked ``(source)`` come from
reading the peer's matcher code rather than a test of it.

Peers, and how their vocabulary maps:

- **agentevals** (langchain-ai/agentevals, python/tests/test_trajectory.py and
  js/src/trajectory/tests/trajectory.test.ts): ``trajectory_match_mode`` strict → ``exact``,
  unordered → ``unordered``, subset → ``subset``, superset → ``superset``, the reference's
  calls listed in its order. ``tool_args_match_mode`` exact (its default) → ``args_match:
  exact``, ignore (or an ``ignore`` override) → the name alone, superset (the call holds the
  reference's arguments) → assertly's default subset; its args ``subset`` (the call's
  arguments within the reference's) has no counterpart and is not ported, nor are custom
  matcher functions. A ``["time.start"]`` key override → a subset match on that key alone.
- **promptfoo** (test/assertions/trajectory.test.ts; the cases tests/conformance/vectors.json
  already holds are not repeated): ``trajectory:tool-used`` → ``tool-called`` / the expect
  keys ``tools_called`` and ``tools_not_called`` for a list, ``trajectory:tool-args-match``
  partial / exact → ``tool-called`` with ``args``, ``trajectory:tool-sequence`` →
  ``tool-sequence``, ``trajectory:step-count`` on tool steps → ``tool-call-count``; glob
  patterns, ``ignore``, and step types other than tools are outside assertly's vocabulary.
- **agentv** (EntityProcess/agentv, packages/core/test/evaluation/tool-trajectory-grader.test.ts):
  modes in_order / exact / superset / subset map one to one, ``any_order`` minimums → one
  ``tool-called {min}`` per tool; arguments default to exact there, its ``superset`` → our
  subset, a field list → a subset match on those fields; its verdict is score ≥ 0.8.
  Latency checks are outside assertly's vocabulary.

The peers are not needed to run this file.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import assertly

DECISIONS = (Path(__file__).parents[2] / "docs" / "decisions.md").read_text(encoding="utf-8")

Call = tuple[str, Any]  # a tool's name and its arguments (None: no arguments given)


@dataclass(frozen=True)
class Case:
    """One ported peer case."""

    peer: str
    source: str  # the peer's test (file::name[parameter]), or "(source)" for its code
    response: Any  # a JSON value, sent to assertly as JSON text
    expect: Any  # a typed assertion list or an expect dict
    peer_verdict: str  # passed | failed | error
    assertly: str  # assertly's verdict
    score: float | None = None  # assertly's score, where it is pinned
    why: str = ""  # for a difference: "(b) …" or "(c) …"
    decision: str = ""  # for a (b) difference: the bold lead-in of its decisions.md entry
    context: dict[str, Any] | None = None


# -- responses: the same calls in the formats assertly reads ---------------------------------


def _text(args: Any) -> str:
    return "" if args is None else args if isinstance(args, str) else json.dumps(args)


def transcript(*turns: list[Call]) -> list[dict[str, Any]]:
    """An OpenAI-style message list: a user turn, then per turn an assistant message with
    these calls (in one message: parallel calls) and their tool results, then an answer."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Please help."}]
    for number, turn in enumerate(turns):
        ids = [f"call_{number}_{index}" for index in range(len(turn))]
        messages.append(
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"id": id_, "type": "function", "function": {"name": n, "arguments": _text(a)}}
                    for id_, (n, a) in zip(ids, turn, strict=True)
                ],
            }
        )
        messages += [{"role": "tool", "tool_call_id": id_, "content": "done"} for id_ in ids]
    messages.append({"role": "assistant", "content": "Here is what I found."})
    return messages


def langchain(*turns: list[Call]) -> list[dict[str, Any]]:
    """The same as LangChain serialises its messages: ``type`` instead of ``role``."""
    messages: list[dict[str, Any]] = [{"type": "human", "content": "Please help."}]
    for number, turn in enumerate(turns):
        calls = [
            {"name": n, "args": a or {}, "id": f"lc_{number}_{i}", "type": "tool_call"}
            for i, (n, a) in enumerate(turn)
        ]
        messages.append({"type": "ai", "content": "", "tool_calls": calls})
        messages += [{"type": "tool", "tool_call_id": c["id"], "content": "done"} for c in calls]
    messages.append({"type": "ai", "content": "Here is what I found.", "tool_calls": []})
    return messages


def responses(*calls: Call) -> dict[str, Any]:
    """An OpenAI Responses reply: ``function_call`` items with JSON-text arguments."""
    items = [
        {"type": "function_call", "call_id": f"fc_{i}", "name": n, "arguments": _text(a)}
        for i, (n, a) in enumerate(calls)
    ]
    return {"object": "response", "output": items}


def anthropic(*calls: Call) -> dict[str, Any]:
    """An Anthropic Messages reply: ``tool_use`` blocks (no ``input`` key for None)."""
    blocks: list[dict[str, Any]] = [{"type": "text", "text": "Working on it."}]
    for index, (name, args) in enumerate(calls):
        block = {"type": "tool_use", "id": f"tu_{index}", "name": name}
        blocks.append(block if args is None else {**block, "input": args})
    return {"type": "message", "role": "assistant", "content": blocks}


# -- expectations ---------------------------------------------------------------------------


def seq(mode: str, *items: Any) -> list[dict[str, Any]]:
    return [{"type": "tool-sequence", "value": list(items), "config": {"mode": mode}}]


def ex(name: str, args: dict[str, Any]) -> dict[str, Any]:
    """A call with exactly these arguments."""
    return {"name": name, "args": args, "args_match": "exact"}


def sub(name: str, args: dict[str, Any]) -> dict[str, Any]:
    """A call holding at least these arguments (assertly's default)."""
    return {"name": name, "args": args}


def called(value: Any, negated: bool = False) -> list[dict[str, Any]]:
    return [{"type": ("not-" if negated else "") + "tool-called", "value": value}]


# fmt: off
# (The rows below are laid out by hand, one peer case per call.)
MODES = {"strict": "exact", "unordered": "unordered", "subset": "subset", "superset": "superset"}
B_EXACT = ("(b) exact is the order of the calls; agentevals' strict takes the calls of one "
           "message in any order")
B_SUBSET = ("(b) subset: a listed call covers any number of calls; agentevals pairs each call "
            "with a distinct one")
EXACT_DECISION = "exact follows the calls, not the messages"
SUBSET_DECISION = "subset lists the allowed calls"

# -- agentevals -----------------------------------------------------------------------------

AE = "agentevals python/tests/test_trajectory.py::"
SF, LONDON, BOTH = ({"city": "SF"}, {"city": "London"}, {"city": "SF and London"})
GW = "get_weather"
SAN_FRANCISCO = {"city": "San Francisco"}


def _agentevals() -> list[Case]:
    rows: list[Case] = []

    def per_mode(test: str, response: Any, listed: list[Any], verdicts: dict[str, str]) -> None:
        for peer_mode, verdict in verdicts.items():
            mode = MODES[peer_mode]
            mine, why, decision = verdict, "", ""
            if test == "test_trajectory_with_different_tool_message_order" and mode == "exact":
                mine, why, decision = "failed", B_EXACT, EXACT_DECISION
            if test == "test_trajectory_with_extra_tool_calls_and_override" and mode == "subset":
                mine, why, decision = "passed", B_SUBSET, SUBSET_DECISION
            rows.append(
                Case("agentevals", f"{AE}{test}[{peer_mode}]", response, seq(mode, *listed),
                     verdict, mine, why=why, decision=decision)
            )

    every = dict.fromkeys(MODES, "passed")
    none = dict.fromkeys(MODES, "failed")
    per_mode("test_trajectory_match", transcript([(GW, SAN_FRANCISCO)]),
             [ex(GW, SAN_FRANCISCO)], every)
    per_mode("test_trajectory_with_different_tool_message_order",
             transcript([(GW, SF), (GW, LONDON)]), [ex(GW, LONDON), ex(GW, SF)], every)
    per_mode("test_trajectory_with_different_message_count",
             transcript([(GW, SF)], [(GW, LONDON)]), [ex(GW, LONDON), ex(GW, SF)],
             {**every, "strict": "failed"})
    per_mode("test_trajectory_subset_tool_call", transcript([(GW, SF)]),
             [ex(GW, LONDON), ex(GW, SF)], {**none, "subset": "passed"})
    per_mode("test_exact_matcher_with_different_called_tools", transcript([(GW, SF)]),
             [ex("accuweather_forecast", SAN_FRANCISCO)], none)
    # tool_args_match_overrides={"get_weather": "ignore"}: the name alone.
    per_mode("test_trajectory_with_extra_tool_calls_and_override",
             transcript([(GW, SAN_FRANCISCO), (GW, LONDON)]), [GW],
             {**none, "superset": "passed"})
    per_mode("test_trajectory_with_subset_tool_calls_and_override", transcript([(GW, BOTH)]),
             [GW, GW], {**none, "subset": "passed"})
    # LangChain messages (AIMessage with {name, args} calls), serialised with `type`.
    per_mode("test_trajectory_match_with_langchain_messages_failure", langchain([(GW, SF)]),
             [ex("accuweather_forecast", SAN_FRANCISCO)], none)

    # The flight agent: without overrides every mode fails on the arguments.
    flight = "fetch_user_flight_information"
    made = transcript(
        [(flight, {})],
        [("search_flights", {"start_time": "2025-03-22T18:34:40Z", "departure_airport": "CDG"})],
        [
            ("lookup_policy", {"query": "flight upgrades"}),
            ("lookup_policy", {"query": "first class"}),
        ],
    )
    reference = [
        ex(flight, {}),
        ex("lookup_policy", {"query": "upgrade to first class"}),
        ex("lookup_policy", {"query": "foo"}),
    ]
    per_mode("test_trajectory_match_with_overrides[no overrides]", made, reference, none)
    window = {"start": "2025-03-22T18:34:40Z", "end": "2025-03-22T20:34:40Z"}
    nested = transcript(
        [(flight, {"user_id": "123"})],
        [
            ("lookup_policy", {"query": "flight upgrades", "time": window}),
            ("lookup_policy", {"query": "first class", "time": window}),
        ],
    )
    other_end = {**window, "end": "baz"}
    per_mode("test_trajectory_match_with_nested_field_overrides[no overrides]", nested,
             [ex(flight, {"user_id": "123"}),
              ex("lookup_policy", {"query": "foo", "time": other_end}),
              ex("lookup_policy", {"query": "bar", "time": other_end})], none)
    only_start = sub("lookup_policy", {"time": {"start": window["start"]}})
    per_mode("test_trajectory_match_with_nested_field_overrides[time.start]", nested,
             [ex(flight, {"user_id": "123"}), only_start, only_start], every)

    # tool_args_match_mode under strict: exact → args_match exact, ignore → the name,
    # superset (the call holds the reference's arguments) → subset.
    def args_modes(test: str, made: dict[str, Any], ref: dict[str, Any], verdicts: str) -> None:
        response = transcript([("get_flight_info", made)])
        forms = {
            "exact": ex("get_flight_info", ref),
            "ignore": "get_flight_info",
            "superset": sub("get_flight_info", ref),
        }
        for (mode, item), verdict in zip(forms.items(), verdicts.split(), strict=True):
            rows.append(
                Case("agentevals", f"{AE}{test}[{mode}]", response, seq("exact", item), verdict,
                     verdict)
            )

    flight_no = {"flight_no": "LX0112"}
    args_modes("test_tool_args_match_mode_superset", {"is_cool": True, **flight_no}, flight_no,
               "failed passed passed")
    args_modes("test_tool_args_match_mode_subset", flight_no, {**flight_no, "foo": "bar"},
               "failed passed failed")
    args_modes("test_tool_args_match_mode_exact", flight_no, flight_no, "passed passed passed")
    js = "agentevals js/src/trajectory/tests/trajectory.test.ts::trajectory match strict params"
    made_sf = langchain([(GW, SF)])
    rows += [
        Case("agentevals", f"{js}[exact]", made_sf, seq("exact", ex(GW, SAN_FRANCISCO)),
             "failed", "failed"),
        Case("agentevals", f"{js}[ignore]", made_sf, seq("exact", GW), "passed", "passed"),
    ]

    # From the matchers' code (trajectory/utils.py): arguments compared key by key with
    # Python's ==, and each reference call taking the first free call that matches.
    src = "agentevals python/agentevals/trajectory/utils.py (source): "
    rows += [
        Case("agentevals", src + "1 == 1.0", transcript([("s", {"n": 1})]),
             seq("exact", ex("s", {"n": 1.0})), "passed", "passed"),
        Case("agentevals", src + "True == 1", transcript([("s", {"n": True})]),
             seq("superset", sub("s", {"n": 1})), "passed", "failed",
             why="(b) arguments compare as JSON: true is not 1",
             decision="Arguments compare as JSON at every depth"),
        Case("agentevals", src + "nested values compared whole",
             transcript([("s", {"filter": {"q": "t", "limit": 5}})]),
             seq("superset", sub("s", {"filter": {"q": "t"}})), "failed", "passed",
             why="(b) a subset match recurses into nested objects; agentevals compares a "
             "top-level value whole", decision="Arguments compare as JSON at every depth"),
        Case("agentevals", src + "greedy pairing",
             transcript([("s", {"a": 1, "b": 2}), ("s", {"a": 1})]),
             seq("superset", sub("s", {"a": 1}), sub("s", {"a": 1, "b": 2})), "failed", "passed",
             why="(c) peer quirk: the first listed call takes the call the second needs; "
             "assertly pairs them by a maximum matching"),
    ]
    return rows


# -- promptfoo ------------------------------------------------------------------------------

PF = "promptfoo test/assertions/trajectory.test.ts::"
ORDERS = {"order_id": "123", "include_history": False}
REPLY = {"tone": "friendly", "citations": ["doc_1", "doc_2"]}
# The mock trace's tool steps (its span, command and reasoning steps are no tool calls).
MOCK = responses(
    ("search_orders", ORDERS),
    ("search_inventory", {"query": "quantum computing", "limit": 3}),
    ("compose_reply", REPLY),
)
CONFIG_ERROR = "(b) assertly refuses this expectation when it is compiled"


def _promptfoo() -> list[Case]:
    def case(test: str, expect: Any, peer: str, mine: str = "", response: Any = MOCK,
             why: str = "", decision: str = "") -> Case:
        return Case("promptfoo", PF + test, response, expect, peer, mine or peer, why=why,
                    decision=decision)

    def orders(arguments: str) -> dict[str, Any]:
        return responses(("orders", arguments))

    exact_q = called(ex("orders", {"status": "Q"}))
    return [
        case("tool-used: fails when required tools are missing",
             {"tools_called": ["search_orders", "missing_tool"]}, "failed"),
        case("tool-used: fails inverse list assertions when any forbidden tool is present",
             {"tools_not_called": ["missing_tool", "compose_reply"]}, "failed"),
        case("tool-used: passes inverse list assertions when forbidden tools are absent",
             {"tools_not_called": ["missing_tool"]}, "passed"),
        case("tool-used: passes inverse count assertions when the forbidden count is not "
             "satisfied", called({"name": "missing_tool", "min": 1}, negated=True), "passed"),
        case("tool-used: rejects invalid matcher values", called(123), "error"),
        case("tool-used: rejects count objects without a name or pattern", called({"min": 1}),
             "error"),
        case("tool-sequence: passes exact mode when the sequence exactly matches",
             seq("exact", "search_orders", "compose_reply"), "passed",
             response=responses(("search_orders", None), ("compose_reply", None))),
        case("tool-sequence: rejects object steps without a name or pattern",
             seq("in_order", {"args": {}}, "compose_reply"), "error"),
        case("tool-sequence: rejects invalid sequence values",
             [{"type": "tool-sequence", "value": "search_orders"}], "error", "passed",
             why="(b) one tool name stands for a list of one",
             decision="A single tool name stands for a list of one"),
        case("tool-args-match: supports partial array matching for argument subsets",
             called(sub("compose_reply", {"citations": ["doc_1", "doc_2"]})), "passed"),
        case("tool-args-match: matches Vercel AI SDK spans end-to-end against expected args",
             called(sub("lookup_customer", {"customer_id": "cust_1234"})), "passed",
             response=responses(("lookup_customer",
                                 '{"customer_id":"cust_1234","include_history":true}'))),
        case("tool-args-match: fails when no tool call matches the requested tool",
             called(sub("missing_tool", {"order_id": "123"})), "failed"),
        case("tool-args-match: supports inverse assertions",
             called(sub("search_orders", {"order_id": "123"}), negated=True), "failed"),
        case("tool-args-match: passes inverse assertions when no tool call matches the "
             "requested tool", called(sub("missing_tool", {"order_id": "123"}), negated=True),
             "passed"),
        case("tool-args-match: rejects invalid mode values",
             called({**sub("search_orders", {"order_id": "123"}), "args_match": "excat"}),
             "error"),
        case("defaults: treats empty defaults the same as no defaults",
             called(ex("search_orders", {"order_id": "123"})), "failed"),
        case("defaults: fails in exact mode when actual contains a hallucinated key",
             exact_q, "failed", response=orders('{"status":"Q","page":1,"delete_database":true}')),
        case("defaults: does not let a hallucinated __proto__ argument escape exact matching",
             exact_q, "failed", response=orders('{"status":"Q","__proto__":{"polluted":true}}')),
        case("defaults: does not recurse into nested objects when stripping defaults",
             exact_q, "failed", response=orders('{"status":"Q","pagination":{"page":1}}')),
        case("defaults: fails in partial mode when a key in both args and defaults is stripped",
             called(sub("orders", {"status": "Q", "page": 1})), "failed", "passed",
             response=orders('{"status":"Q","page":1}'),
             why="(c) outside assertly's vocabulary: promptfoo's defaults drop page before the "
             "match (its test calls it a footgun); without them page=1 matches"),
        case("defaults: treats defaults as a no-op when the actual payload is a top-level array",
             [{"type": "tool-called", "value": {"name": "orders", "args": [1, 2, 3],
                                                 "args_match": "exact"}}],
             "passed", "error", response=orders("[1,2,3]"),
             why=CONFIG_ERROR + ": arguments are an object", decision="Arguments."),
        case("step-count: supports max-only count assertions",
             [{"type": "tool-call-count", "value": {"max": 3}}], "passed"),
        case("step-count: supports inverse count assertions",
             [{"type": "not-tool-call-count", "value": {"min": 4}}], "passed"),
        # From the partial matcher's code (own keys, deep strict equality).
        case("(source) a null argument is not a missing one",
             called(sub("orders", {"cursor": None})), "failed", response=orders('{"status":"Q"}')),
        case("(source) a null argument matches null",
             called(sub("orders", {"cursor": None})), "passed",
             response=orders('{"status":"Q","cursor":null}')),
        case("(source) an in-order step needs a later call of its own",
             seq("in_order", "search_orders", "search_orders"), "failed"),
    ]


# -- agentv ---------------------------------------------------------------------------------

AV = "agentv packages/core/test/evaluation/tool-trajectory-grader.test.ts::"
B_IN_ORDER_SCORE = "(b) in_order scores the listed calls matched before the first missing one"
SEQUENCE_DECISION = "tool-sequence modes and scores."
IN_ORDER_DECISION = "An in_order step is the first matching call after the previous one"
B_EMPTY = CONFIG_ERROR + ": an empty list of calls"


def _agentv() -> list[Case]:
    def case(test: str, calls: list[Call] | None, expect: Any, peer: str, mine: str = "",
             score: float | None = None, why: str = "", decision: str = "") -> Case:
        response = "No tools were needed." if calls is None else anthropic(*calls)
        return Case("agentv", AV + test, response, expect, peer, mine or peer, score, why,
                    decision)

    def names(*tools: str) -> list[Call]:
        return [(tool, {}) for tool in tools]

    query = {"query": "test", "limit": 10}
    return [
        case("no trace available: returns score 0 when no trace is provided", None,
             called({"name": "search", "min": 1}), "failed", "error",
             why="(b) no trace is an error, never a verdict on the calls",
             decision="No trace is an `error`, for every trajectory assertion and its `not-` form"),
        case("any_order: passes when all minimums are met", names("search", "search", "search",
             "analyze"), called({"name": "search", "min": 3}) + called("analyze"), "passed"),
        case("any_order: fails when minimums are not met", names("search", "analyze"),
             called({"name": "search", "min": 3}) + called("analyze"), "failed", score=0.5),
        case("in_order: passes", names("init", "search", "analyze", "report"),
             seq("in_order", "search", "analyze", "report"), "passed", score=1.0),
        case("in_order: fails", names("search"), seq("in_order", "search", "analyze"), "failed",
             score=0.5),
        case("exact: passes", names("search", "analyze"), seq("exact", "search", "analyze"),
             "passed", score=1.0),
        case("exact: fails", names("search", "wrong"), seq("exact", "search", "analyze"),
             "failed", score=0.5),
        case("superset: passes", names("init", "search", "analyze"),
             seq("superset", "search", "analyze"), "passed", score=1.0),
        case("superset: fails", names("search", "cleanup"), seq("superset", "search", "analyze"),
             "failed", score=0.5),
        case("subset: passes", names("read", "search"),
             seq("subset", "read", "search", "analyze"), "passed", score=1.0),
        case("subset: fails", names("read", "delete"), seq("subset", "read", "search"), "failed",
             score=0.5),
        case("in_order: fails when expected tool is missing (scan-forward)",
             names("search", "report"), seq("in_order", "search", "analyze", "report"),
             "failed", score=1 / 3),
        case("in_order: fails when tools appear in wrong order", names("report", "search"),
             seq("in_order", "search", "report"), "failed", score=0.5),
        case("exact: fails when trace has extra tools", names("search", "analyze", "extra"),
             seq("exact", "search", "analyze"), "passed", "failed", 2 / 3,
             why="(c) peer quirk: its exact mode notes the extra call but scores 1, and a "
             "score of at least 0.8 passes"),
        case("args exact: passes when args match exactly",
             [("search", query), ("analyze", {"format": "json"})],
             seq("exact", ex("search", query), ex("analyze", {"format": "json"})), "passed"),
        case("args exact: fails when actual has extra keys", [("search", {**query, "extra": True})],
             seq("exact", ex("search", query)), "failed", score=0.0),
        case("args exact: fails when args do not match", [("search", {**query, "query": "wrong"})],
             seq("exact", ex("search", query)), "failed", score=0.0),
        case("args exact: skips arg validation with args: any",
             [("search", {"query": "anything", "limit": 999})], seq("exact", "search"), "passed"),
        case("args superset: passes when actual has extra keys",
             [("search", {**query, "extra": True})], seq("exact", sub("search", query)), "passed"),
        case("args superset: fails when expected key is missing from actual",
             [("search", {"query": "test"})], seq("exact", sub("search", query)), "failed"),
        case("args ignore: passes with any args",
             [("search", {"completely": "different", "args": True})], seq("exact", "search"),
             "passed"),
        case("field list: checks only specified fields",
             [("search", {"query": "test", "limit": 99, "format": "xml"})],
             seq("exact", sub("search", {"query": "test"})), "passed"),
        case("field list: fails when specified field does not match",
             [("search", {"query": "wrong", "limit": 10})],
             seq("exact", sub("search", {"query": "test"})), "failed"),
        case("field list: supports dot-notation for nested fields",
             [("search", {"config": {"query": "test", "format": "xml"}, "extra": "ignored"})],
             seq("exact", sub("search", {"config": {"query": "test"}})), "passed"),
        case("field list: skips fields not specified in expected",
             [("search", {"query": "test", "limit": 99})],
             seq("exact", sub("search", {"query": "test"})), "passed"),
        case("evaluator argsMatch: applies argsMatch to all items",
             [("search", {"query": "test", "extra1": True}),
              ("analyze", {"format": "json", "extra2": True})],
             seq("exact", sub("search", {"query": "test"}), sub("analyze", {"format": "json"})),
             "passed"),
        case("evaluator argsMatch: per-item argsMatch overrides evaluator-level argsMatch",
             [("search", {"query": "test", "extra": True}),
              ("analyze", {"format": "json", "extra": True})],
             seq("exact", sub("search", {"query": "test"}), ex("analyze", {"format": "json"})),
             "failed", score=0.5),
        case("evaluator argsMatch: argsMatch with field list",
             [("search", {"query": "test", "limit": 999}),
              ("analyze", {"format": "xml", "depth": 5})],
             seq("exact", sub("search", {"query": "test"}), sub("analyze", {"format": "xml"})),
             "passed"),
        case("in_order with args: fails when tool found but args mismatch",
             [("search", {"query": "wrong"}), ("analyze", {"format": "json"})],
             seq("in_order", sub("search", {"query": "test"}), sub("analyze", {"format": "json"})),
             "failed", score=0.0, why=B_IN_ORDER_SCORE + " (agentv scores 0.5)",
             decision=IN_ORDER_DECISION),
        case("arrays: matches arrays with deep equality", [("search", {"tags": ["a", "b", "c"]})],
             seq("exact", ex("search", {"tags": ["a", "b", "c"]})), "passed"),
        case("arrays: fails on array order mismatch", [("search", {"tags": ["c", "b", "a"]})],
             seq("exact", ex("search", {"tags": ["a", "b", "c"]})), "failed"),
        case("edge cases: handles empty args objects", [("search", {})],
             seq("exact", ex("search", {})), "passed"),
        case("edge cases: handles undefined actual args with expected args", [("search", None)],
             seq("exact", ex("search", {"query": "test"})), "failed"),
        case("edge cases: handles nested objects in args",
             [("search", {"config": {"query": "test", "options": {"limit": 10}}})],
             seq("exact", ex("search", {"config": {"query": "test", "options": {"limit": 10}}})),
             "passed"),
        case("superset: consumes matched calls (greedy, no reuse)", names("search"),
             seq("superset", "search", "search"), "failed", score=0.5),
        case("superset: handles empty expected list", names("search"), seq("superset"),
             "passed", "error", why=B_EMPTY, decision=SEQUENCE_DECISION),
        case("superset: matches with args using evaluator-level argsMatch",
             [("search", {**query, "extra": True})],
             seq("superset", sub("search", {"query": "test"})),
             "passed"),
        case("subset: expected items are reusable (not consumed)", names("read", "read", "read"),
             seq("subset", "read"), "passed"),
        case("subset: passes with empty actual calls", [],
             seq("subset", "read", "search"), "passed", score=1.0),
        case("subset: fails with actual calls when expected is empty", names("read"),
             seq("subset"), "failed", "error", why=B_EMPTY, decision=SEQUENCE_DECISION),
        case("subset: matches with args using per-item argsMatch",
             [("search", {"query": "test", "extra": True})],
             seq("subset", sub("search", {"query": "test"})), "passed"),
        case("subset: fails when args do not match", [("search", {"query": "wrong"})],
             seq("subset", ex("search", {"query": "test"})), "failed", score=0.0),
        # From the grader's code: an in_order step stops at the first call of its tool.
        case("(source) in_order: a near miss before the matching call",
             [("search", {"query": "wrong"}), ("search", {"query": "test"})],
             seq("in_order", ex("search", {"query": "test"})), "failed", "passed",
             why="(b) an in_order step is the first matching call after the previous one; "
             "agentv stops at the first call of the tool", decision=IN_ORDER_DECISION),
    ]


# fmt: on

CASES = _agentevals() + _promptfoo() + _agentv()
PEERS = ("agentevals", "promptfoo", "agentv")


def verdict(case: Case) -> tuple[str, float | None]:
    """assertly's verdict; an expectation refused at compile time is ``error``."""
    try:
        expectation = assertly.compile(case.expect)
    except assertly.ConfigError:
        return "error", None
    output = case.response if isinstance(case.response, str) else json.dumps(case.response)
    result = expectation.check(output, context=case.context)
    return result.outcome.value, result.score


@pytest.mark.parametrize("case", CASES, ids=[f"{c.peer}:{c.source.split('::')[-1]}" for c in CASES])
def test_peer_case(case: Case) -> None:
    got, score = verdict(case)
    assert got == case.assertly, f"assertly now says {got}"
    if case.score is not None:
        assert score == pytest.approx(case.score, abs=1e-9)
    if case.peer_verdict == case.assertly and not case.why:
        return
    # A difference (of verdict, or a pinned score the peer gives otherwise) says why.
    assert case.why[:4] in ("(b) ", "(c) "), "a difference needs its class and reason"
    if case.why.startswith("(b)"):
        assert f"**{case.decision}**" in DECISIONS, f"no decisions.md entry: {case.decision}"


def test_the_rows_cover_the_three_peers_and_every_mode() -> None:
    assert {case.peer for case in CASES} == set(PEERS)
    counts = {peer: sum(case.peer == peer for case in CASES) for peer in PEERS}
    assert min(counts.values()) >= 20, counts
    modes = {
        item.get("config", {}).get("mode")
        for case in CASES
        if isinstance(case.expect, list)
        for item in case.expect
        if item["type"].endswith("tool-sequence")
    }
    assert set(MODES.values()) | {"in_order"} <= modes
    formats = {type(case.response).__name__ for case in CASES}
    assert formats == {"list", "dict", "str"}
    assert len({case.source for case in CASES}) == len(CASES), "each row is one peer case"
