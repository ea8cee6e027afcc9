"""The generated fast path agrees with the detailed path, verdict for verdict, word for word.

`Expectation.check` first runs the expectation's generated function (engine/_fast.py) and
only falls back to the checkers' detailed results when it cannot say "all passed".
`Expectation._check_detailed` is the detailed path alone. For generated expectations of both
dialects (over a small vocabulary, so assertions often share paths and loops) and responses
built to pass or nearly pass them (so the fast path is exercised, not just its fallbacks), the
two must give the same outcome, score and ``to_dict()`` — including strict JSON equality
(``true`` is not ``1``; ``1`` equals ``1.0``), patterns on the time-limited regex engine, and
dates judged against a drawn "now".
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import assertly
from assertly import Expectation, Outcome
from assertly.engine._compile import _UNBUILT

EXAMPLES = int(os.environ.get("ASSERTLY_PROPERTY_EXAMPLES", "150"))
PROFILE = settings(
    max_examples=EXAMPLES * 2,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# How often each path decided, over the whole module: the property must exercise both.
SEEN: Counter[str] = Counter()

# --- expect dicts ---------------------------------------------------------------------------


def _tag_key(vocabulary: list[str]) -> st.SearchStrategy[Any]:
    """A tag key's value: the tags, or the tags at the key's own path (issue 28, item 7)."""
    tags = st.lists(st.sampled_from(vocabulary), min_size=1)
    own = st.fixed_dictionaries(
        {"tags": tags, "path": st.sampled_from(["results[*].tags", "results[*].metadata.tags"])}
    )
    return st.one_of(tags, own)


SCALARS = st.sampled_from(["note", "success", "1", "", 0, 1, 1.0, -2, 0.5, True, False, None])
EXPECT_CHOICES: dict[str, st.SearchStrategy[Any]] = {
    "status": st.sampled_from(["success", "error", 1, True, None]),
    "error_code": st.sampled_from(["NO_FILTERS", 0]),
    "contains": st.sampled_from(["journal", "security", "note"]),
    "summary_contains": st.sampled_from(["Found", "security", "é"]),
    "message_contains": st.just("ok"),
    "results_min": st.integers(0, 3),
    "results_max": st.integers(0, 3),
    "results_count": st.integers(0, 3),
    "has_fields": st.lists(
        st.sampled_from(
            ["results", "summary", "pagination.total", "results[*].file", "results[0].file"]
        ),
        min_size=1,
        max_size=3,
    ),
    "has_field": st.sampled_from(["summary", "results[*].metadata.tags"]),
    "field_equals": st.dictionaries(
        st.sampled_from(["pagination.offset", "status", "results[*].type", "pagination"]),
        st.one_of(SCALARS, st.just({"total": 1, "offset": 0})),
        min_size=1,
        max_size=2,
    ),
    "all_match": st.fixed_dictionaries(
        {
            "path": st.sampled_from(["results[*].metadata.type", "results[*].type", "status"]),
            "value": SCALARS,
        }
    ),
    "all_match_one_of": st.fixed_dictionaries(
        {
            "path": st.sampled_from(["results[*].metadata.type", "results[*].relevance"]),
            "values": st.lists(SCALARS, min_size=1, max_size=3),
        }
    ),
    "all_match_pattern": st.fixed_dictionaries(
        {
            "path": st.sampled_from(["results[*].file", "summary"]),
            # The last one runs on the time-limited `regex` engine (a back-reference inside
            # a nested repetition).
            "regex": st.sampled_from(["^journal/", r"\.md$", "(o+)+\\1"]),
        }
    ),
    "none_match_pattern": st.fixed_dictionaries(
        {"path": st.just("results[*].file"), "regex": st.sampled_from(["^work/", "secret"])}
    ),
    "all_have_tags": _tag_key(["work", "security", "q1"]),
    "none_have_tags": _tag_key(["personal", "work"]),
    "each_has_any_tag": _tag_key(["work", "vpn", "x"]),
    "all_dates_between": st.fixed_dictionaries(
        {
            "path": st.just("results[*].metadata.created"),
            "start": st.sampled_from(["2026-01-01", "2026-01-10T00:00:00Z"]),
            "end": st.sampled_from(["2026-01-31", "2026-01-20T12:00:00+02:00"]),
        }
    ),
    "dates_within_days": st.fixed_dictionaries(
        {"path": st.just("results[*].metadata.created"), "days": st.sampled_from([1, 7, 30.5])}
    ),
    "all_dates_in_year": st.fixed_dictionaries(
        {"path": st.just("results[*].metadata.created"), "year": st.sampled_from([2025, 2026])}
    ),
    "all_in_range": st.fixed_dictionaries(
        {
            "path": st.sampled_from(["results[*].relevance", "pagination.total"]),
            "min": st.sampled_from([0, 0.0, 0.5]),
            "max": st.sampled_from([1, 1.0]),
        }
    ),
    "sorted_desc": st.fixed_dictionaries(
        {"path": st.sampled_from(["results[*].relevance", "results[*].file"])}
    ),
    "sorted_asc": st.fixed_dictionaries({"path": st.just("results[*].metadata.created")}),
    "array_contains": st.fixed_dictionaries(
        {"path": st.just("results[*].type"), "values": st.just(["note"])}
    ),
    "field_contains": st.fixed_dictionaries(
        {
            "path": st.sampled_from(["summary", "results[0].file", "status", "pagination"]),
            "text": st.sampled_from(["security", "journal", "é", "e\u0301"]),
        }
    ),
    "range_check": st.fixed_dictionaries(
        {
            "path": st.sampled_from(["pagination.total", "results[0].relevance", "status"]),
            "min": st.sampled_from([0, 0.5, 1]),
            "max": st.sampled_from([1, 1.0, 3]),
        }
    ),
    # Checkers without generated code are called inside the fast function.
    "one_of": st.just([{"status": "success"}, {"results_max": 0}]),
    "tools_not_called": st.just(["delete"]),
    "max_tool_calls": st.integers(0, 2),
}


@st.composite
def expect_dicts(draw: st.DrawFn) -> dict[str, Any]:
    keys = draw(st.lists(st.sampled_from(sorted(EXPECT_CHOICES)), min_size=1, max_size=7))
    return {key: draw(EXPECT_CHOICES[key]) for key in dict.fromkeys(keys)}


def _result(index: int, day: int, relevance: float) -> dict[str, Any]:
    return {
        "file": f"journal/2026/01/entry-{index}.md",
        "type": "note",
        "relevance": relevance,
        "metadata": {
            "type": "note",
            "tags": ["work", "security", "vpn"],
            "created": f"2026-01-{day:02d}T10:00:00Z",
        },
    }


# Small edits that make a response fail, pass vacuously or test strict equality.
MUTATIONS = [
    lambda d: d.update(status=True),
    lambda d: d.update(status=1),
    lambda d: d.update(status="error"),
    lambda d: d["pagination"].update(offset=0.0),
    lambda d: d["pagination"].update(offset=False),
    lambda d: d["pagination"].update(offset="0"),
    lambda d: d.pop("pagination"),
    lambda d: d.update(results=[]),
    lambda d: d.update(results={"0": 1}),
    lambda d: d["results"].append("not an object"),
    lambda d: d["results"][0].pop("metadata"),
    lambda d: d["results"][0]["metadata"].update(tags="work"),
    lambda d: d["results"][0]["metadata"].update(tags=["work", ["security"]]),
    lambda d: d["results"][0]["metadata"].pop("tags"),
    # issue 28, probe 7: tags kept at results[*].tags, moved (none left where the key reads
    # by default: an error) or copied.
    lambda d: [r.update(tags=r["metadata"].pop("tags")) for r in d["results"]],
    lambda d: [r.update(tags=r["metadata"]["tags"]) for r in d["results"]],
    lambda d: [r["metadata"].update(tags=None) for r in d["results"]],
    lambda d: d["results"][0]["metadata"].update(type=1),
    lambda d: d["results"][0]["metadata"].update(created="2026-02-05T10:00:00Z"),
    lambda d: d["results"][0]["metadata"].update(created="2026-01-15"),
    lambda d: d["results"][0]["metadata"].update(created="not a date"),
    lambda d: d["results"][0].update(relevance=True),
    lambda d: d["results"][0].update(relevance=1),
    lambda d: d["results"][0].update(relevance=1.5),
    lambda d: d["results"][0].update(relevance="0.9"),
    lambda d: d["results"][0].update(file="work/secret.md"),
    lambda d: d["results"][0].update(file=7),
    lambda d: d["results"][0].update(file="journal/fooo/o.md"),
    lambda d: d["results"].reverse(),
    lambda d: d.update(summary="Found 2 s\u0065\u0301curity incidents"),
    lambda d: d.update(message="ok"),
    lambda d: d.update(error_code="NO_FILTERS"),
    lambda d: d.update(tool_calls=[{"name": "search", "arguments": "{}"}]),
]


@st.composite
def responses(draw: st.DrawFn) -> Any:
    count = draw(st.integers(0, 3))
    days = sorted(draw(st.lists(st.integers(1, 31), min_size=count, max_size=count)))
    relevances = sorted(
        draw(st.lists(st.sampled_from([0.2, 0.5, 0.9, 1.0]), min_size=count, max_size=count)),
        reverse=True,
    )
    data: dict[str, Any] = {
        "status": "success",
        "summary": "Found 2 security incidents in January (é)",
        "results": [_result(i, days[i], relevances[i]) for i in range(count)],
        "pagination": {"total": count, "offset": 0},
    }
    for index in draw(st.lists(st.integers(0, len(MUTATIONS) - 1), max_size=2)):
        # An edit that does not apply to this response is skipped.
        with contextlib.suppress(KeyError, IndexError, AttributeError, TypeError):
            MUTATIONS[index](data)
    form = draw(st.sampled_from(["value", "compact", "indented", "fenced", "embedded", "prose"]))
    if form == "value":
        return data
    if form == "compact":
        return json.dumps(data, ensure_ascii=False)
    if form == "indented":
        return json.dumps(data, indent=2)
    if form == "fenced":
        return f"Here it is:\n```json\n{json.dumps(data, indent=2)}\n```\nDone."
    if form == "embedded":
        return f"Result: {json.dumps(data)} (security, journal)"
    return "No JSON here, only security notes from the journal."


def _same(expectation: Expectation, response: Any, now: str) -> None:
    fast = expectation.check(copy.deepcopy(response), now=now)
    detailed = expectation._check_detailed(copy.deepcopy(response), now=now)
    assert fast.outcome is detailed.outcome
    assert fast.score == detailed.score
    assert [r.outcome for r in fast.results] == [r.outcome for r in detailed.results]
    assert fast.to_dict() == detailed.to_dict()
    assert fast.as_record() == detailed.to_dict()
    prebuilt = any(fast is result for result in expectation._all_pass.values())
    SEEN["fast pass" if prebuilt else "passed" if fast.passed else "detailed"] += 1


NOWS = st.sampled_from(["2026-01-20T00:00:00Z", "2026-01-31T12:00:00+05:00", "2027-03-01"])


# Shapes: none, `results` moved, the tags moved (issue 28, item 7), both.
SHAPES = st.sampled_from(
    [
        None,
        {"results": "$.data.hits"},
        {"tags": "$.results[*].tags"},
        {"results": "$.data.hits", "tags": "$.results[*].tags"},
    ]
)


@PROFILE
@given(expect_dicts(), responses(), NOWS, SHAPES)
def test_expect_dict_fast_path_agrees(
    spec: dict[str, Any], response: Any, now: str, shape: dict[str, str] | None
) -> None:
    expectation = assertly.compile(spec, shape=shape)
    if shape and "results" in shape and isinstance(response, dict):
        # The same fields under a shape: paths are rewritten, `results` lives elsewhere.
        response = {"data": {"hits": response.get("results")}, **response}
    _same(expectation, response, now)


# --- typed lists ------------------------------------------------------------------------------

TYPED_CHOICES: list[st.SearchStrategy[dict[str, Any]]] = [
    st.fixed_dictionaries(
        {
            "type": st.sampled_from(["contains", "icontains", "not-contains", "not-icontains"]),
            "value": st.sampled_from(["security", "INCIDENT", "Traceback", "é", "e\u0301"]),
        }
    ),
    st.fixed_dictionaries(
        {
            "type": st.sampled_from(["regex", "not-regex"]),
            "value": st.sampled_from([r"\b20\d\d-\d\d-\d\d", "^Found", "(o+)+\\1"]),
        }
    ),
    st.fixed_dictionaries({"type": st.sampled_from(["is-json", "not-is-json"])}),
    st.fixed_dictionaries(
        {"type": st.just("is-json"), "value": st.just({"type": "object", "required": ["status"]})}
    ),
    st.fixed_dictionaries(
        {
            "type": st.just("word-count"),
            "value": st.sampled_from([{"min": 2}, {"max": 12}, {"min": 1, "max": 50}, 3]),
        }
    ),
    st.fixed_dictionaries(
        {"type": st.just("starts-with"), "value": st.sampled_from(["{", "Found", "  {"])}
    ),
    st.fixed_dictionaries(
        {
            "type": st.just("equals"),
            "value": st.sampled_from(["success", "7", 7, '"7"', True]),
            "transform": st.sampled_from(
                ["json_path:$.status", "json_path:$.code", "json_path:$.items[0]"]
            ),
        }
    ),
    st.fixed_dictionaries(
        {
            "type": st.just("levenshtein"),
            "value": st.just("success"),
            "threshold": st.just(2.0),
            "transform": st.just("json_path:$.status"),
        }
    ),
    st.fixed_dictionaries({"type": st.just("contains-json")}),
    st.fixed_dictionaries(
        {"type": st.just("contains-all"), "value": st.just(["Found", "security"])}
    ),
    st.fixed_dictionaries(
        {
            "type": st.sampled_from(["tool-call-count", "not-tool-call-count"]),
            "value": st.just({"max": 1}),
        }
    ),
]
WEIGHTS = st.sampled_from([None, 1.0, 2.0, 0.0])
METRICS = st.sampled_from([None, "quality"])


@st.composite
def typed_lists(draw: st.DrawFn) -> list[dict[str, Any]]:
    items = []
    for choice in draw(st.lists(st.sampled_from(TYPED_CHOICES), min_size=1, max_size=6)):
        item = dict(draw(choice))
        weight, metric = draw(WEIGHTS), draw(METRICS)
        if weight is not None:
            item["weight"] = weight
        if metric is not None:
            item["metric"] = metric
        items.append(item)
    if not any(item.get("weight", 1.0) for item in items):
        items[0]["weight"] = 1.0
    return items


TEXTS = st.sampled_from(
    [
        '{"status": "success", "code": "7", "items": [7], "summary": "security incident"}',
        '{"status": "success", "code": 7, "items": ["x"], "note": "2026-01-05 Traceback"}',
        '{"status": true, "code": "\\"7\\""}',
        "Found 2 security incidents on 2026-01-05; caf\u00e9 and cafe\u0301.",
        '  {"status": "sucess"}',
        'Found INCIDENT foooo\u00e9 ```json\n{"status": "success"}\n```',
        "",
        "[1, 2, 3]",
        '{"tool_calls": [{"name": "search", "arguments": "{}"}], "status": "success"}',
    ]
)


@PROFILE
@given(typed_lists(), TEXTS, st.sampled_from([None, 0.5, 1.0]))
def test_typed_list_fast_path_agrees(
    items: list[dict[str, Any]], text: str, threshold: float | None
) -> None:
    _same(assertly.compile(items, threshold=threshold), text, "2026-01-20")


# --- what the fast path must and must not do ---------------------------------------------------

PASSING = {
    "status": "success",
    "summary": "Found 1 security incident",
    "results": [_result(0, 5, 0.9)],
    "pagination": {"total": 1, "offset": 0},
}
BENCH_LIKE = {
    "status": "success",
    "results_min": 1,
    "has_fields": ["results", "summary", "pagination.total"],
    "field_equals": {"pagination.offset": 0},
    "all_match": {"path": "results[*].metadata.type", "value": "note"},
    "all_match_pattern": {"path": "results[*].file", "regex": "^journal/"},
    "all_have_tags": ["work", "security"],
    "all_dates_between": {
        "path": "results[*].metadata.created",
        "start": "2026-01-01",
        "end": "2026-01-31",
    },
    "all_in_range": {"path": "results[*].relevance", "min": 0.0, "max": 1.0},
    "sorted_desc": {"path": "results[*].relevance"},
}


def test_a_passing_response_is_judged_by_the_generated_function_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    expectation = assertly.compile(BENCH_LIKE)
    first = expectation.check(json.dumps(PASSING))
    assert first.passed

    def detailed(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the detailed path ran for a passing response")

    monkeypatch.setattr(Expectation, "_check_all", detailed)
    again = expectation.check(PASSING)
    assert again.passed
    # One prebuilt result per expectation (and way the JSON was found), serialised once.
    assert expectation.check(copy.deepcopy(PASSING)) is again
    assert again.as_record() is again.as_record()


def test_the_generated_source_binds_user_values_as_constants() -> None:
    expectation = assertly.compile(
        {"status": "x'); import os; ('", "all_match_pattern": BENCH_LIKE["all_match_pattern"]}
    )
    source = expectation.source
    assert source.startswith("def _fast(data, ctx):")  # it reads only the JSON
    assert "import os" not in source and "journal" not in source
    assert "_c0" in source
    vacuous = expectation.check({"status": "x'); import os; ('", "results": []})
    assert vacuous.passed and vacuous.results[1].details == {"vacuous": True}
    assert not expectation.check({"status": "x", "results": []}).passed


def test_failures_vacuous_passes_and_errors_take_the_detailed_path() -> None:
    expectation = assertly.compile(BENCH_LIKE)
    empty = {**PASSING, "results": [], "pagination": {"total": 0, "offset": 0}}
    vacuous = expectation.check(empty)
    assert not vacuous.passed  # results_min fails; all_match passes vacuously, marked so
    assert vacuous.results[4].details == {"vacuous": True}
    wrong = copy.deepcopy(PASSING)
    wrong["results"][0]["file"] = "work/x.md"
    failed = expectation.check(wrong)
    assert failed.outcome is Outcome.FAILED
    assert "work/x.md" in failed.results[5].message
    # The detailed path called only the checker whose generated test failed.
    assert [r.outcome for r in failed.results].count(Outcome.FAILED) == 1


def test_custom_assertions_keep_the_expectation_on_the_detailed_path() -> None:
    calls: list[str] = []

    def counted(output: str, context: dict[str, Any]) -> bool:
        calls.append(output)
        return False

    registry = assertly.Registry(builtins=True)
    assertly.assertion("counted", dialect="expect", registry=registry)(counted)
    expectation = assertly.compile({"status": "success", "counted": None}, registry=registry)
    assert expectation.source == ""
    result = expectation.check(PASSING)
    assert result.outcome is Outcome.FAILED
    assert len(calls) == 1  # a user's function runs once per response, never twice


def test_the_fast_function_is_built_on_the_first_check() -> None:
    expectation = assertly.compile({"status": "success"})
    assert expectation._fast is _UNBUILT
    expectation.check(PASSING)
    assert expectation._fast is not _UNBUILT


def test_both_paths_were_exercised() -> None:
    # Runs after the properties above (file order): most drawn responses nearly pass, and the
    # fast path must have decided a share of them, or the properties proved little.
    if SEEN["detailed"] + SEEN["fast pass"] < 50:
        pytest.skip("run with the property tests")
    assert SEEN["fast pass"] >= 10, SEEN
    assert SEEN["detailed"] >= 10, SEEN


def test_a_regex_out_of_time_is_an_error_on_either_path() -> None:
    from assertly.engine._regex import RegexTimeout

    expectation = assertly.compile(
        {"status": "success", "all_match_pattern": {"path": "results[*].file", "regex": "(o+)+\\1"}}
    )
    checker = expectation._checkers[1]
    assert checker.pattern.engine == "regex-timeout"  # type: ignore[attr-defined]

    def out_of_time(text: str) -> Any:
        raise RegexTimeout("(o+)+\\1")

    checker.pattern.search = out_of_time  # type: ignore[attr-defined]
    fast = expectation.check(PASSING)
    assert fast.outcome is Outcome.ERROR
    assert fast.results[1].details == {"regex_engine": "regex-timeout"}
    assert fast.to_dict() == expectation._check_detailed(PASSING).to_dict()
