"""Properties of `Expectation.check` that hold for every response, not just the examples.

For a set of valid expectations of both dialects (covering most assertion kinds, wildcards,
conditionals, transforms, schemas and dates with a fixed "now"), any JSON value, any text, text
with JSON embedded in prose, and any bytes:

* ``check`` never raises;
* every outcome is passed / failed / error / skipped, every score is a finite number in [0, 1];
* ``CheckResult.to_dict()`` serialises with orjson and has the pinned shape of runner.md;
* the overall verdict agrees with the per-assertion verdicts (an error is never a pass);
* negation never turns an error into a pass.
"""

from __future__ import annotations

import json
import math
import os
import re
import string
from collections.abc import Iterator
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import assertly
from assertly import AssertionResult, CheckResult, Expectation, Outcome
from assertly._json import to_json_bytes

NOW = "2026-01-20T00:00:00Z"
# 150 examples per property keeps the file under 30 s on an idle machine; raise it for a
# thorough run (ASSERTLY_PROPERTY_EXAMPLES=2000) or lower it on a loaded one.
EXAMPLES = int(os.environ.get("ASSERTLY_PROPERTY_EXAMPLES", "150"))
FAST = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
PINNED_TOP_KEYS = ("passed", "score", "results")
PINNED_RESULT_KEYS = ("assertion", "outcome", "passed", "score", "message", "path", "expected")
OUTCOME_VALUES = {"passed", "failed", "error", "skipped"}

# --- expectations ---------------------------------------------------------------------------------

EXPECT_DICTS: dict[str, dict[str, Any]] = {
    "fields_and_counts": {
        "status": "success",
        "error_code": "NO_FILTERS",
        "contains": "security",
        "message_contains": "error",
        "summary_contains": "no results",
        "results_min": 1,
        "results_max": 10,
        "results_count": 2,
        "has_fields": ["results", "pagination.total", "results[0].metadata"],
        "has_field": "summary",
        "field_equals": {"pagination.offset": 0, "status": "success"},
        "field_contains": {"path": "summary", "text": "security"},
        "range_check": {"path": "performance.search_duration_ms", "min": 0, "max": 5000},
    },
    "field_forms_and_paths": {
        "field_equals": {"path": "results[-1].metadata", "value": {"type": "note", "tags": []}},
        "has_fields": ["$.results[*].file", 'meta["key.with.dots"]', "results[1].metadata.tags[0]"],
        "contains": "é",
        "agent_used_model": "gpt-x",
    },
    "arrays": {
        "all_match": {"path": "results[*].metadata.type", "value": "note"},
        "all_match_one_of": {"path": "results[*].type", "values": ["note", "incident-log", None]},
        "all_match_pattern": {"path": "results[*].file", "regex": "^journal/"},
        "none_match_pattern": {"path": "results[*].file", "regex": "^(people/|documents/)"},
        "all_in_range": {"path": "results[*].relevance", "min": 0.0, "max": 1.0},
        "sorted_desc": {"path": "results[*].relevance"},
        "sorted_asc": {"path": "results[*].metadata.created"},
        "array_contains": {"path": "sensitive_dirs_skipped", "values": ["people/", "documents/"]},
        "results_schema": {
            "file": "string",
            "relevance": {"type": "number", "min": 0, "max": 1},
            "metadata": "object",
        },
    },
    "nested_wildcards": {
        "all_match_pattern": {"path": "results[*].metadata.tags[*]", "regex": "^[a-z]+$"},
        "array_contains": {"path": "results[*].metadata.tags[*]", "pattern": "^sec"},
        "all_match": {"path": "history_results[*].operation", "value": "delete"},
        "sorted_desc": {"path": "history_results[*].when"},
    },
    "tags": {
        "all_have_tags": ["work", "security"],
        "none_have_tags": ["draft"],
        "each_has_any_tag": ["work", "personal"],
    },
    "dates": {
        "all_dates_between": {
            "path": "results[*].metadata.created",
            "start": "2026-01-01T00:00:00Z",
            "end": "2026-01-31",
        },
        "dates_within_days": {"path": "results[*].metadata.created", "days": 7},
        "all_dates_in_year": {"path": "results[*].metadata.created", "year": 2026},
    },
    "conditionals": {
        "one_of": [{"status": "error"}, {"contains": "filter"}],
        "if_results": {"all_have_tags": ["work"], "results_min": 1},
        "if_has_history": {
            "all_match": {"path": "history_results[*].operation", "value": "delete"}
        },
        "if_sensitive_results": {"has_field": "sensitive", "value": True},
    },
    "nested_conditionals": {
        "one_of": [
            {"status": "error", "error_code": "NO_FILTERS"},
            {"if_results": {"all_match_pattern": {"path": "results[*].file", "regex": "^j"}}},
            {"results_count": 0, "summary_contains": "no results"},
        ],
        "if_sensitive_results": {
            "all_match": {"path": "results[*].sensitive", "value": True},
            "one_of": [{"results_max": 1}, {"has_field": "warning"}],
        },
        "no_overlap": {"path": "results[*].file", "with": "first_page"},
    },
}

TYPED_LISTS: dict[str, list[dict[str, Any]]] = {
    "strings": [
        {"type": "equals", "value": "ok"},
        {"type": "contains", "value": "machine learning"},
        {"type": "icontains", "value": "MACHINE Learning"},
        {"type": "contains-all", "value": ["intro", "conclusion"]},
        {"type": "contains-any", "value": ["approved", "accepted", "passed"]},
        {"type": "starts-with", "value": "Summary:"},
        {"type": "regex", "value": r"\d{4}-\d{2}-\d{2}"},
        {"type": "word-count", "value": 5},
        {"type": "word-count", "value": {"min": 2, "max": 50}},
        {"type": "not-contains", "value": "error"},
        {"type": "not-regex", "value": "(?i)traceback"},
        {"type": "not-icontains", "value": "SORRY"},
    ],
    "structure": [
        {"type": "is-json"},
        {
            "type": "is-json",
            "value": {
                "type": "object",
                "required": ["status"],
                "properties": {"status": {"type": "string"}},
            },
        },
        {
            "type": "contains-json",
            "value": {"type": "object", "required": ["status"]},
        },
        {"type": "contains-json"},
        {"type": "not-is-json"},
        {"type": "not-contains-json", "value": {"type": "array", "minItems": 2}},
        {"type": "equals", "value": {"status": "success", "results": []}},
        {"type": "equals", "value": "[1, 2.0, true]"},
    ],
    "transforms": [
        {"type": "equals", "value": "success", "transform": "json_path:$.status"},
        {"type": "contains", "value": "journal/", "transform": "json_path:$.results[0].file"},
        {"type": "not-contains", "value": "draft", "transform": "json_path:$..tags"},
        {"type": "is-json", "transform": "json_path:$.results", "weight": 2},
        {"type": "regex", "value": "^[0-9.]+$", "transform": "json_path:$.results[*].relevance"},
        {"type": "not-equals", "value": "error", "transform": "json_path:$.status"},
        {"type": "word-count", "value": {"min": 1}, "transform": "json_path:$", "metric": "wc"},
    ],
    "metrics": [
        {"type": "levenshtein", "value": "expected text", "threshold": 10},
        {"type": "levenshtein", "value": "ok"},
        {"type": "bleu", "value": "The quick brown fox jumps over the lazy dog", "metric": "sim"},
        {"type": "rouge-n", "value": "The reference summary text.", "metric": "sim"},
        {"type": "rouge-n", "value": "機械学習 is fun", "config": {"n": 2}, "threshold": 0.1},
        {"type": "rouge-n", "value": "a b c d", "config": {"n": "L"}, "weight": 0.5},
        {"type": "not-levenshtein", "value": "forbidden answer", "threshold": 3},
        {"type": "not-bleu", "value": "I cannot help with that", "threshold": 0.3, "weight": 0},
    ],
    "performance": [
        {"type": "cost", "threshold": 0.5},
        {"type": "latency", "threshold": 2000},
        {"type": "not-cost", "threshold": 0.01},
        {"type": "not-latency", "threshold": 10},
        {"type": "contains", "value": "done"},
    ],
}

THRESHOLDS: dict[str, float] = {"metrics": 0.5, "performance": 0.6}


# The seed's sensitive prefixes, which the engine does not assume (a project's config sets them).
SEED_PREFIXES = ("people/", "documents/")


def _compile_all() -> dict[str, Expectation]:
    compiled: dict[str, Expectation] = {}
    for name, spec in EXPECT_DICTS.items():
        compiled[f"expect:{name}"] = assertly.compile(spec, sensitive_prefixes=SEED_PREFIXES)
    for name, items in TYPED_LISTS.items():
        compiled[f"typed:{name}"] = assertly.compile(items, threshold=THRESHOLDS.get(name))
    return compiled


EXPECTATIONS = _compile_all()
NAMES = sorted(EXPECTATIONS)

# --- responses ------------------------------------------------------------------------------------

# orjson (and the JSON output of the CLI) handles signed/unsigned 64-bit integers; larger ones
# are covered by a dedicated test below.
json_leaves = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
json_values = st.recursive(
    json_leaves,
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=10), children, max_size=5)
    ),
    max_leaves=12,
)

FILES = ["journal/2026/01/a.md", "work/doc.md", "people/bob.md", "documents/x.pdf", ""]
TAGS = ["work", "security", "draft", "personal", "Security", ""]
DATES = [
    "2026-01-15T10:00:00Z",
    "2026-02-05T10:00:00Z",
    "2026-01-31",
    "2026-01-31T23:59:59+02:00",
    "2025-12-31T23:00:00-05:00",
    "2026-01-15T10:00:00",
    "2026-01-15T10:00:00.123456Z",
    "0001-01-01",
    "0001-01-01T00:00:00+14:00",
    "9999-12-31",
    "9999-12-31T23:59:59-12:00",
    "2026-13-45",
    "not a date",
    "",
]


def _maybe(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Mostly the plausible value, sometimes any JSON value (wrong types, nulls, nesting)."""
    return st.one_of(strategy, strategy, json_leaves, json_values)


metadata = st.fixed_dictionaries(
    {},
    optional={
        "tags": _maybe(st.lists(st.sampled_from(TAGS), max_size=4)),
        "created": _maybe(st.sampled_from(DATES) | st.datetimes().map(lambda d: d.isoformat())),
        "type": _maybe(st.sampled_from(["note", "incident-log", "draft"])),
    },
)
result_items = st.fixed_dictionaries(
    {},
    optional={
        "file": _maybe(st.sampled_from(FILES)),
        "type": _maybe(st.sampled_from(["note", "incident-log"])),
        "relevance": _maybe(
            st.floats(min_value=-0.5, max_value=1.5) | st.sampled_from([0, 1, True, 1e308])
        ),
        "metadata": _maybe(metadata),
        "sensitive": _maybe(st.booleans()),
    },
)
messy_agent_values = st.fixed_dictionaries(
    {},
    optional={
        "status": _maybe(st.sampled_from(["success", "error"])),
        "error_code": _maybe(st.just("NO_FILTERS")),
        "message": _maybe(st.sampled_from(["an error occurred", "Error!", "done"])),
        "summary": _maybe(st.sampled_from(["no results", "Found 3 security incidents"])),
        "results": _maybe(st.lists(result_items, max_size=5)),
        "history_results": _maybe(
            st.lists(
                st.fixed_dictionaries(
                    {},
                    optional={
                        "operation": _maybe(st.sampled_from(["delete", "update"])),
                        "when": _maybe(st.integers(0, 5)),
                    },
                ),
                max_size=3,
            )
        ),
        "pagination": _maybe(
            st.fixed_dictionaries({}, optional={"total": json_leaves, "offset": json_leaves})
        ),
        "performance": _maybe(st.fixed_dictionaries({"search_duration_ms": json_leaves})),
        "sensitive_dirs_skipped": _maybe(st.lists(st.sampled_from(["people/", "documents/"]))),
        "meta": _maybe(st.fixed_dictionaries({"key.with.dots": json_leaves})),
        "warning": json_leaves,
    },
)

# Plausible agent responses, so that assertions pass as well as fail.
JANUARY = [d for d in DATES if d.startswith(("2026-01", "2025-12-31T23"))]
clean_items = st.fixed_dictionaries(
    {
        "file": st.sampled_from(FILES[:-1]),
        "type": st.sampled_from(["note", "incident-log"]),
        "relevance": st.floats(min_value=0, max_value=1),
        "metadata": st.fixed_dictionaries(
            {
                "tags": st.lists(st.sampled_from(TAGS[:4]), min_size=1, max_size=3, unique=True),
                "created": st.sampled_from(JANUARY),
                "type": st.just("note"),
            }
        ),
    },
    optional={"sensitive": st.booleans()},
)


def _sorted_by_relevance(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(items, key=lambda item: -item["relevance"])


clean_agent_values = st.fixed_dictionaries(
    {
        "status": st.sampled_from(["success", "error"]),
        "results": st.lists(clean_items, max_size=4).map(_sorted_by_relevance)
        | st.lists(clean_items, max_size=4),
    },
    optional={
        "summary": st.sampled_from(["no results", "Found 3 security incidents"]),
        "message": st.sampled_from(["an error occurred", "Please provide a filter"]),
        "error_code": st.just("NO_FILTERS"),
        "pagination": st.fixed_dictionaries(
            {"total": st.integers(0, 9), "offset": st.sampled_from([0, 5])}
        ),
        "history_results": st.lists(
            st.fixed_dictionaries({"operation": st.sampled_from(["delete", "update"])}), max_size=2
        ),
        "sensitive_dirs_skipped": st.just(["people/", "documents/"]),
        "performance": st.fixed_dictionaries({"search_duration_ms": st.integers(0, 6000)}),
        "meta": st.fixed_dictionaries({"key.with.dots": st.integers(0, 3)}),
    },
)
agent_values = clean_agent_values | messy_agent_values
any_json = agent_values | json_values

PROSE = string.ascii_letters + string.digits + " \n\t.,:;!?-'é機"
prose = st.text(alphabet=PROSE, max_size=80)


@st.composite
def prose_with_json(draw: st.DrawFn) -> str:
    """Text an agent might send: JSON fenced, inline, broken or repeated inside prose."""
    before, after = draw(prose), draw(prose)
    value = draw(any_json)
    body = json.dumps(
        value, ensure_ascii=draw(st.booleans()), indent=draw(st.sampled_from([None, 2]))
    )
    style = draw(st.sampled_from(["fenced", "fenced-plain", "inline", "broken", "twice", "nested"]))
    if style == "fenced":
        middle = f"```json\n{body}\n```"
    elif style == "fenced-plain":
        middle = f"```\n{body}\n```"
    elif style == "inline":
        middle = body
    elif style == "broken":
        cut = draw(st.integers(0, len(body)))
        middle = "```json\n" + body[:cut]
    elif style == "twice":
        middle = f"{body} and also {body}"
    else:
        middle = "{" * draw(st.integers(0, 50)) + body + "]" * draw(st.integers(0, 5))
    return f"{before}\n{middle}\n{after}"


_VOCAB_WORDS = (
    "intro conclusion approved accepted error sorry done ok the quick brown fox 2026-01-31 "
    "機械学習 is fun filter security Traceback a b c d expected success Machine Learning"
)
VOCAB = [
    *_VOCAB_WORDS.split(" "),
    "machine learning",
    "MACHINE LEARNING",
    "The reference summary text.",
]
OPENINGS = [
    "",
    "Summary: ",
    "ok",
    "expected text",
    "forbidden answer",
    "The quick brown fox jumps over the lazy dog",
]
vocabulary_text = st.tuples(
    st.sampled_from(OPENINGS),
    st.lists(st.sampled_from(VOCAB), max_size=14).map(" ".join),
).map(lambda parts: " ".join(part for part in parts if part))

json_soup = st.text(alphabet='{}[]":,0123456789 abcnulltrfse\\`\n-.', max_size=300)

responses = st.one_of(
    agent_values,
    vocabulary_text,
    json_values,
    agent_values.map(lambda v: orjson.dumps(v).decode()),
    json_values.map(json.dumps),
    st.text(),
    prose_with_json(),
    json_soup,
    st.binary(max_size=200),
    agent_values.map(orjson.dumps),  # JSON as bytes
)

contexts = st.one_of(
    st.none(),
    st.fixed_dictionaries(
        {},
        optional={
            "cost_usd": st.none() | st.floats(min_value=0, max_value=10),
            "latency_ms": st.none() | st.integers(0, 100_000) | st.floats(0, 1e6),
            "model": st.none() | st.sampled_from(["gpt-x", "other"]),
            "steps": st.fixed_dictionaries({"first_page": any_json | st.text(max_size=30)}),
        },
    ),
)

# --- invariants -----------------------------------------------------------------------------------


def _walk(results: list[AssertionResult]) -> Iterator[AssertionResult]:
    for result in results:
        yield result
        yield from _walk(list(result.children))


def _check_result_dict(item: Any) -> None:
    assert isinstance(item, dict)
    for key in (*PINNED_RESULT_KEYS, "actual"):
        assert key in item, f"missing pinned key {key!r} in {item}"
    assert isinstance(item["assertion"], str) and item["assertion"]
    assert item["outcome"] in OUTCOME_VALUES
    assert isinstance(item["passed"], bool)
    assert item["passed"] == (item["outcome"] in ("passed", "skipped"))
    assert isinstance(item["score"], float | int) and not isinstance(item["score"], bool)
    assert 0.0 <= item["score"] <= 1.0
    assert isinstance(item["message"], str)
    assert item["path"] is None or isinstance(item["path"], str)
    for child in item.get("children", ()):
        _check_result_dict(child)


def assert_invariants(
    result: CheckResult, expectation: Expectation, *, plain_orjson: bool = True
) -> None:
    """Everything that must hold for any verdict of any response.

    With ``plain_orjson`` (any JSON value within orjson's domain: 64-bit integers, no lone
    surrogates), ``to_dict()`` must encode with plain ``orjson.dumps``; beyond it, with the
    report serialiser the CLI uses.
    """
    assert isinstance(result, CheckResult)
    assert result.outcome in (Outcome.PASSED, Outcome.FAILED, Outcome.ERROR)
    assert math.isfinite(result.score) and 0.0 <= result.score <= 1.0
    assert len(result.results) == len(expectation)
    for item in _walk(result.results):
        assert isinstance(item.outcome, Outcome)
        assert isinstance(item.score, float | int) and not isinstance(item.score, bool)
        assert math.isfinite(item.score) and 0.0 <= item.score <= 1.0, item
        assert item.passed == (item.outcome in (Outcome.PASSED, Outcome.SKIPPED))
        if item.outcome in (Outcome.FAILED, Outcome.ERROR):
            assert item.message, f"{item.assertion} {item.outcome.value} without a message"
    top = result.results
    has_error = any(r.outcome is Outcome.ERROR for r in top)
    has_failure = any(r.outcome is Outcome.FAILED for r in top)
    if result.passed:
        # An error is never a pass, whatever the threshold.
        assert not has_error
    if expectation.threshold is None:
        assert result.passed == all(r.passed for r in top)
        if has_failure:
            assert result.outcome is Outcome.FAILED
        elif has_error:
            assert result.outcome is Outcome.ERROR
    else:
        assert result.passed == (result.score + 1e-9 >= expectation.threshold and not has_error)

    data = result.to_dict()
    if plain_orjson:
        encoded = orjson.dumps(data)  # must not raise
    else:
        from assertly._json import to_json_bytes

        encoded = to_json_bytes(data)  # must not raise
    decoded = json.loads(encoded)
    for key in PINNED_TOP_KEYS:
        assert key in decoded
    assert decoded["passed"] is result.passed
    assert isinstance(decoded["score"], float | int) and 0.0 <= decoded["score"] <= 1.0
    assert isinstance(decoded["results"], list)
    assert len(decoded["results"]) == len(top)
    for item in decoded["results"]:
        _check_result_dict(item)


# --- properties -----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
@FAST
@given(response=responses, context=contexts)
def test_check_never_raises_and_results_are_well_formed(
    name: str, response: Any, context: dict[str, Any] | None
) -> None:
    expectation = EXPECTATIONS[name]
    result = expectation.check(response, context=context, now=NOW)
    # Text holding 19+ digits in a row may parse, exactly, into an integer beyond 64 bits:
    # outside orjson's domain (found by `make fuzz`: the text "20000000000000000000").
    text = response.decode("utf-8", "replace") if isinstance(response, bytes) else response
    plain = not (isinstance(text, str) and re.search("[0-9]{19}", text))
    assert_invariants(result, expectation, plain_orjson=plain)
    # Deterministic: compiled checkers keep no per-response state between checks.
    again = expectation.check(response, context=context, now=NOW)
    assert to_json_bytes(again.to_dict()) == to_json_bytes(result.to_dict())


# `contains` may legitimately differ between a value and its (non-compact) JSON text.
CONTAINS_FREE = [
    name for name in EXPECT_DICTS if '"contains"' not in json.dumps(EXPECT_DICTS[name])
]


@pytest.mark.parametrize("name", CONTAINS_FREE)
@settings(FAST, max_examples=max(1, EXAMPLES * 2 // 3))
@given(value=agent_values, indent=st.sampled_from([None, 2]))
def test_expect_dialect_judges_a_value_and_its_json_text_alike(
    name: str, value: dict[str, Any], indent: int | None
) -> None:
    expectation = EXPECTATIONS[f"expect:{name}"]
    context = {"steps": {"first_page": value}, "model": "gpt-x"}
    as_value = expectation.check(value, context=context, now=NOW)
    as_text = expectation.check(json.dumps(value, indent=indent), context=context, now=NOW)
    assert [r.outcome for r in as_value.results] == [r.outcome for r in as_text.results]
    assert [r.message for r in as_value.results] == [r.message for r in as_text.results]


@FAST
@given(response=responses)
def test_the_one_shot_check_function_agrees_with_compile(response: Any) -> None:
    spec = EXPECT_DICTS["arrays"]
    one_shot = assertly.check(spec, response, now=NOW)
    compiled = EXPECTATIONS["expect:arrays"].check(response, now=NOW)
    assert orjson.dumps(one_shot.to_dict()) == orjson.dumps(compiled.to_dict())


# --- negation -------------------------------------------------------------------------------------

NEGATABLE: list[dict[str, Any]] = [
    spec for items in TYPED_LISTS.values() for spec in items if not spec["type"].startswith("not-")
] + [{"type": "cost", "threshold": 0.0}, {"type": "latency", "threshold": 1e9}]

# Error-only contexts: the metric was not measured.
unmeasured = st.one_of(
    st.none(),
    st.fixed_dictionaries(
        {}, optional={"cost_usd": st.none(), "latency_ms": st.none(), "model": st.text()}
    ),
)


@pytest.mark.parametrize("kind", ["cost", "latency"])
@FAST
@given(
    response=responses,
    context=unmeasured,
    threshold=st.floats(min_value=0, max_value=1e6),
    weight=st.sampled_from([1.0, 0.5, 3.0]),
)
def test_negating_an_unmeasured_metric_is_still_an_error(
    kind: str, response: Any, context: dict[str, Any] | None, threshold: float, weight: float
) -> None:
    plain = assertly.compile([{"type": kind, "threshold": threshold, "weight": weight}])
    negated = assertly.compile([{"type": f"not-{kind}", "threshold": threshold, "weight": weight}])
    for expectation in (plain, negated):
        result = expectation.check(response, context=context)
        assert result.outcome is Outcome.ERROR
        assert not result.passed
        assert result.results[0].outcome is Outcome.ERROR
        assert not result.results[0].passed
        assert_invariants(result, expectation)


ONE_NEGATED_ERROR = [{"type": "not-contains", "value": "\x00never\x00"}] * 9 + [
    {"type": "not-cost", "threshold": 0.1}
]
UNDER_THRESHOLDS = [
    assertly.compile(ONE_NEGATED_ERROR, threshold=threshold) for threshold in (None, 0.0, 0.5)
]


@FAST
@given(response=responses, context=unmeasured)
def test_an_error_is_never_a_pass_even_under_a_threshold(
    response: Any, context: dict[str, Any] | None
) -> None:
    # Nine passing assertions and one negated error: the score reaches the threshold,
    # but the verdict must not be a pass.
    for expectation in UNDER_THRESHOLDS:
        result = expectation.check(response, context=context)
        assert not result.passed
        assert result.outcome is Outcome.ERROR
        assert result.results[-1].outcome is Outcome.ERROR
        assert_invariants(result, expectation)


NEGATION_PAIRS = [
    (assertly.compile([spec]), assertly.compile([{**spec, "type": "not-" + spec["type"]}]))
    for spec in NEGATABLE
]


@FAST
@given(response=responses, context=contexts)
def test_negation_inverts_pass_and_fail_but_never_error(
    response: Any, context: dict[str, Any] | None
) -> None:
    # Every pair on each generated response: data generation is the cost, checks are cheap.
    for spec, (plain_expectation, negated_expectation) in zip(
        NEGATABLE, NEGATION_PAIRS, strict=True
    ):
        plain = plain_expectation.check(response, context=context, now=NOW).results[0]
        negated = negated_expectation.check(response, context=context, now=NOW).results[0]
        where = f"{spec} -> plain {plain!r}, negated {negated!r}"
        assert negated.assertion == "not-" + spec["type"], where
        if plain.outcome is Outcome.ERROR:
            assert negated.outcome is Outcome.ERROR, where
        elif plain.message.startswith("transform json_path:"):
            # A failed transform is not inverted.
            assert negated.outcome is Outcome.FAILED, where
            assert negated.message == plain.message, where
        elif plain.outcome is Outcome.PASSED:
            assert negated.outcome is Outcome.FAILED, where
            assert negated.score == pytest.approx(1.0 - plain.score), where
        else:
            assert plain.outcome is Outcome.FAILED, where
            assert negated.outcome is Outcome.PASSED, where
            assert negated.score == pytest.approx(1.0 - plain.score), where


def _custom_registry() -> assertly.Registry:
    registry = assertly.Registry()

    @assertly.assertion("fragile", registry=registry)
    def fragile(output: str, context: dict[str, Any]) -> bool:
        """Raises on some outputs, as user code does."""
        if len(output) % 3 == 0:
            raise RuntimeError("boom")
        if len(output) % 3 == 1:
            return {"pass": True, "score": 0.8, "reason": "fine"}  # type: ignore[return-value]
        return False

    return registry


CUSTOM_REGISTRY = _custom_registry()


@FAST
@given(response=responses)
def test_a_raising_custom_assertion_is_an_error_plain_or_negated(response: Any) -> None:
    plain = assertly.compile([{"type": "fragile"}], registry=CUSTOM_REGISTRY)
    negated = assertly.compile([{"type": "not-fragile"}], registry=CUSTOM_REGISTRY)
    expect = assertly.compile({"fragile": None}, registry=CUSTOM_REGISTRY)
    for expectation in (plain, negated, expect):
        result = expectation.check(response)
        assert_invariants(result, expectation)
    first = plain.check(response).results[0]
    second = negated.check(response).results[0]
    if first.outcome is Outcome.ERROR:
        assert second.outcome is Outcome.ERROR
        assert "boom" in first.message


# --- values beyond orjson: integers over 64 bits, lone surrogates, deep nesting -------------------


@FAST
@given(big=st.integers(min_value=2**64).map(lambda n: n if n % 2 else -n))
def test_integers_beyond_64_bits(big: int) -> None:
    value = {"n": big, "status": "success"}
    expectation = assertly.compile({"field_equals": {"n": 1}, "contains": f'"n":{big}'})
    result = expectation.check(value)
    assert result.results[1].passed, result.results[1].message  # compact JSON text has it
    from assertly._json import to_json_bytes

    assert str(big).encode() in to_json_bytes(result.to_dict())


# Lone surrogates arrive through valid JSON escapes (``"\ud800"``): orjson rejects the text,
# the stdlib fallback extractor accepts it, and the surrogate ends up in ``actual``.
surrogate_strings = st.text(
    alphabet=st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), min_size=1, max_size=3
)


@FAST
@given(text=surrogate_strings)
def test_lone_surrogates_from_json_escapes_keep_results_serialisable(text: str) -> None:
    response = json.dumps({"status": text})  # ASCII-only text with \udXXX escapes
    expectation = EXPECTATIONS["expect:fields_and_counts"]
    result = expectation.check(response, now=NOW)
    assert_invariants(result, expectation, plain_orjson=False)


def _nested(kind: str, depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = [value] if kind == "list" else {"a": value}
    return value


@pytest.mark.parametrize("kind", ["list", "dict"])
@pytest.mark.parametrize("name", ["typed:strings", "expect:fields_and_counts"])
def test_deeply_nested_values_never_raise(kind: str, name: str) -> None:
    expectation = EXPECTATIONS[name]
    result = expectation.check(_nested(kind, 3000), now=NOW)
    assert_invariants(result, expectation, plain_orjson=False)
