"""``transform: "json_path:<expr>"``: first match, compact JSON for non-strings, a descriptive
failure (never inverted by ``not-``) when the output is not JSON or the path is not found.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

import assertly
from assertly import AssertionResult, ConfigError, Outcome

SEED_TRANSFORMS = """
- type: contains
  value: "active"
  transform: "json_path:$.status"
- type: equals
  value: "42"
  transform: "json_path:$.data.count"
"""


def judge(spec: dict[str, Any], output: Any) -> AssertionResult:
    """Compile one typed assertion and check one output; return its result."""
    return assertly.compile([spec]).check(output).results[0]


def problems(specs: list[dict[str, Any]]) -> list[str]:
    """The problems compiling ``specs`` reports (it must fail)."""
    with pytest.raises(ConfigError) as info:
        assertly.compile(specs)
    return [str(problem) for problem in info.value.problems]


def test_seed_transform_examples_pass() -> None:
    expectation = assertly.compile(yaml.safe_load(SEED_TRANSFORMS))
    result = expectation.check('{"status": "active", "data": {"count": 42}}')
    assert result.passed
    assert [r.outcome for r in result.results] == [Outcome.PASSED, Outcome.PASSED]


def test_seed_transform_examples_judge_only_the_extracted_value() -> None:
    contains, equals = yaml.safe_load(SEED_TRANSFORMS)
    # "active" appears in the output, but not at $.status.
    result = judge(contains, '{"status": "inactive-ish", "note": "active"}')
    assert result.passed  # "inactive-ish" contains "active"
    result = judge(contains, '{"status": "paused", "note": "active"}')
    assert result.outcome is Outcome.FAILED
    assert result.message == "Output does not contain 'active'"
    assert result.actual == "paused"
    wrong = judge(equals, '{"data": {"count": 41}}')
    assert wrong.outcome is Outcome.FAILED
    assert wrong.message == "Output JSON differs from the expected JSON: expected 42, got 41"


def test_transform_works_on_a_json_value_response() -> None:
    assert judge(
        {"type": "equals", "value": "ok", "transform": "json_path:$.status"}, {"status": "ok"}
    ).passed


def test_transform_takes_the_first_match() -> None:
    spec = {"type": "equals", "value": "first", "transform": "json_path:$.items[*].name"}
    output = '{"items": [{"name": "first"}, {"name": "second"}]}'
    assert judge(spec, output).passed
    assert not judge({**spec, "value": "second"}, output).passed


def test_transform_supports_rfc9535_filters() -> None:
    spec = {
        "type": "equals",
        "value": "b",
        "transform": "json_path:$.items[?@.ok == true].name",
    }
    assert judge(spec, '{"items": [{"name": "a", "ok": false}, {"name": "b", "ok": true}]}').passed


def test_non_string_values_become_compact_json_text() -> None:
    output = '{"flag": true, "obj": {"b": 1}, "list": [1, "x"], "none": null, "n": 2.5}'
    cases = {"$.flag": "true", "$.obj": '{"b":1}', "$.list": '[1,"x"]', "$.none": "null"}
    for path, text in cases.items():
        # starts-with and word-count see the exact text, so reprs or spaced JSON would fail.
        assert judge(
            {"type": "starts-with", "value": text, "transform": f"json_path:{path}"}, output
        ).passed
        assert judge(
            {"type": "word-count", "value": 1, "transform": f"json_path:{path}"}, output
        ).passed
    assert not judge(
        {"type": "contains", "value": "True", "transform": "json_path:$.flag"}, output
    ).passed
    assert judge({"type": "regex", "value": r"^2\.5$", "transform": "json_path:$.n"}, output).passed


def test_string_values_are_passed_without_quotes() -> None:
    spec = {"type": "regex", "value": "^hello world$", "transform": "json_path:$.msg"}
    assert judge(spec, '{"msg": "hello world"}').passed


def test_non_ascii_is_kept_not_escaped() -> None:
    spec = {"type": "starts-with", "value": '{"city":"Zürich"}', "transform": "json_path:$.where"}
    assert judge(spec, '{"where": {"city": "Zürich"}}').passed


def test_output_not_json_fails_with_a_reason() -> None:
    result = judge(
        {"type": "contains", "value": "active", "transform": "json_path:$.status"}, "status: active"
    )
    assert result.outcome is Outcome.FAILED
    assert result.score == 0.0
    assert result.message == "transform json_path:$.status: the output is not JSON"
    assert result.path == "$.status"


def test_path_not_found_fails_with_a_reason() -> None:
    result = judge(
        {"type": "contains", "value": "x", "transform": "json_path:$.missing"}, '{"a": 1}'
    )
    assert result.outcome is Outcome.FAILED
    assert result.message == "transform json_path:$.missing: path not found in the output"


def test_path_into_a_scalar_document_is_not_found() -> None:
    result = judge({"type": "contains", "value": "1", "transform": "json_path:$.a"}, "1")
    assert result.outcome is Outcome.FAILED
    assert result.message == "transform json_path:$.a: path not found in the output"
    assert judge({"type": "equals", "value": "1", "transform": "json_path:$"}, "1").passed


@pytest.mark.parametrize(
    ("output", "reason"),
    [
        ("not json", "the output is not JSON"),
        ('{"other": 1}', "path not found in the output"),
    ],
)
def test_negation_does_not_invert_a_failed_transform(output: str, reason: str) -> None:
    spec = {"type": "not-contains", "value": "error", "transform": "json_path:$.status"}
    result = judge(spec, output)
    assert result.outcome is Outcome.FAILED
    assert result.passed is False
    assert result.score == 0.0
    assert result.assertion == "not-contains"
    assert result.message == f"transform json_path:$.status: {reason}"


def test_negation_applies_to_the_transformed_value() -> None:
    spec = {"type": "not-contains", "value": "error", "transform": "json_path:$.status"}
    assert judge(spec, '{"status": "ok", "log": "error"}').passed
    result = judge(spec, '{"status": "error"}')
    assert result.outcome is Outcome.FAILED
    assert result.message == "Output contains 'error', which not-contains forbids"


@pytest.mark.parametrize("expression", ["$[?", "$..[", "status", "$.a b"])
def test_bad_expression_is_a_config_error(expression: str) -> None:
    found = problems([{"type": "contains", "value": "x", "transform": f"json_path:{expression}"}])
    assert len(found) == 1
    assert found[0].startswith(f"assertions[0].transform: invalid JSONPath {expression!r}")


def test_empty_expression_is_a_config_error() -> None:
    assert problems([{"type": "contains", "value": "x", "transform": "json_path:"}]) == [
        "assertions[0].transform: json_path: needs a JSONPath expression after the colon, "
        "e.g. json_path:$.status"
    ]


@pytest.mark.parametrize("transform", ["xpath:/a", "jq:.status", "json_path", "$.status", "upper"])
def test_unknown_transform_kind_is_a_config_error(transform: str) -> None:
    assert problems([{"type": "contains", "value": "x", "transform": transform}]) == [
        f"assertions[0].transform: unknown transform {transform!r}; the only transform is "
        "json_path:<expression>, e.g. json_path:$.status"
    ]


def test_transform_must_be_a_string() -> None:
    found = problems([{"type": "contains", "value": "x", "transform": {"json_path": "$.a"}}])
    assert len(found) == 1
    assert found[0].startswith("assertions[0].transform: ")


@pytest.mark.parametrize(
    ("expression", "document", "expected"),
    [
        ("$.data.count", '{"data": {"count": 42}}', "42"),
        ("$['a b'][1]", '{"a b": [1, {"c": null}]}', '{"c":null}'),
        ('$["x"].y', '{"x": {"y": "z"}}', "z"),
        ("$.items[*].id", '{"items": [{"id": "first"}, {"id": "second"}]}', "first"),
    ],
)
def test_simple_and_general_paths_select_the_same_first_match(
    expression: str, document: str, expected: str
) -> None:
    result = assertly.check(
        [{"type": "equals", "value": expected, "transform": f"json_path:{expression}"}], document
    )
    assert result.passed, result.results[0].message


@pytest.mark.parametrize(
    "expression", ["$[01]", "$[1234567890123456789012]", "$['a\nb']", "$['a\\'b']", "$.a.b"]
)
def test_singular_fast_path_admits_only_what_rfc9535_admits(expression: str) -> None:
    """The fast path must not accept what the library rejects, nor reject what it accepts."""
    from jsonpath import JSONPathEnvironment, JSONPathError

    from assertly.engine.typed._wrapper import _singular_steps

    try:
        JSONPathEnvironment(strict=True).compile(expression)
        valid = True
    except JSONPathError:
        valid = False
    if _singular_steps(expression) is not None:
        assert valid, f"fast path admits {expression!r}, which RFC 9535 rejects"
    compiled = problems_or_none(expression)
    assert (compiled is None) == valid


def problems_or_none(expression: str) -> list[str] | None:
    """The compile problems of a transform with ``expression``, or None when it compiles."""
    try:
        assertly.compile(
            [{"type": "contains", "value": "x", "transform": f"json_path:{expression}"}]
        )
    except ConfigError as error:
        return [str(problem) for problem in error.problems]
    return None


_names = st.text(alphabet="ab_ 'é0", min_size=0, max_size=3)
_documents = st.recursive(
    st.none() | st.integers(-3, 3) | st.text(alphabet="xy", max_size=2),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_names, inner, max_size=3),
    max_leaves=12,
)


@st.composite
def _singular_paths(draw: st.DrawFn) -> str:
    steps = []
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(["dot", "single", "double", "index"]))
        name = draw(_names)
        if kind == "index":
            steps.append(f"[{draw(st.integers(0, 4))}]")
        elif kind == "dot":
            steps.append("." + (name if name.isidentifier() and name.isascii() else "a"))
        elif kind == "single":
            steps.append("['" + name.replace("'", "") + "']")
        else:
            steps.append('["' + name + '"]')
    return "$" + "".join(steps)


@settings(max_examples=400, deadline=None)
@given(document=_documents, expression=_singular_paths())
def test_singular_fast_path_selects_what_the_library_selects(
    document: Any, expression: str
) -> None:
    from jsonpath import JSONPathEnvironment

    from assertly.engine.typed._wrapper import _NOT_FOUND, _singular_steps, _walk

    steps = _singular_steps(expression)
    assert steps is not None, expression
    match = JSONPathEnvironment(strict=True).compile(expression).match(document)
    found = _walk(document, steps)
    if match is None:
        assert found is _NOT_FOUND
    else:
        assert found is not _NOT_FOUND and found == match.obj


# issue 29, probe "Unbounded" 2: `$[?search(@, '[')]` (an invalid pattern) passed validation
# and silently never matched; a literal pattern is now compiled with the path.
@pytest.mark.parametrize(
    ("expression", "function"),
    [("$[?search(@, '[')]", "search"), ("$.items[?match(@.a, 'a(')].a", "match")],
)
def test_an_invalid_literal_pattern_in_a_filter_is_a_load_error(
    expression: str, function: str
) -> None:
    found = problems([{"type": "contains", "value": "x", "transform": f"json_path:{expression}"}])
    assert len(found) == 1
    assert f"{function}() pattern" in found[0]
    assert "is not a valid regular expression" in found[0]


def test_a_pattern_taken_from_the_document_still_follows_rfc_9535() -> None:
    # Only a pattern written in the path can be refused up front; one read from the output
    # that does not compile is a filter that selects nothing, as the RFC says.
    spec = {"type": "equals", "value": "1", "transform": "json_path:$[?search(@.a, @.p)].a"}
    assert judge(spec, [{"a": "1", "p": "["}]).outcome == Outcome.FAILED
    assert judge(spec, [{"a": "1", "p": "1"}]).outcome == Outcome.PASSED


# issue 29, probe "Unbounded" 2: `json_path:$.items[?search(@.a, '(a+)+$')].a` on a
# 5,000-character value ran for 306 s (no time limit); it now ends `error` naming the pattern.
def test_a_backtracking_filter_pattern_ends_error_naming_it() -> None:
    spec = {
        "type": "contains",
        "value": "a",
        "transform": "json_path:$.items[?search(@.a, '(a+)+$')].a",
    }
    result = judge(spec, {"items": [{"a": "a" * 5000 + "!"}]})
    assert result.outcome == Outcome.ERROR
    assert "'(a+)+$'" in result.message
    assert "backtracked" in result.message
    # Within the limit, the verdicts are the library's.
    assert judge(spec, {"items": [{"a": "aaa"}]}).outcome == Outcome.PASSED
    assert judge(spec, {"items": [{"a": "b"}]}).outcome == Outcome.FAILED


# issue 29 red team (break-bounded), probe "many values each under the limit": the 1 s limit
# was per search, so 20 values of `a`*27 + "!" under `(a|aa)+$` (0.4 s each) ran 7.8 s, 200
# values 78 s, on a 6 KB output. One query's filter searches now share the limit. A fake
# clock makes each search look 0.4 s long (no timing in the test).
def test_a_query_s_filter_searches_share_one_time_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    clock = [0.0]

    def tick() -> float:
        clock[0] += 0.4
        return clock[0]

    spec = {"type": "contains", "value": "a", "transform": "json_path:$.items[?search(@.a, 'b')].a"}
    document = {"items": [{"a": "a"} for _ in range(20)]}
    assert judge(spec, document).outcome == Outcome.FAILED  # no clock games: within the limit
    monkeypatch.setattr(time, "monotonic", tick)
    result = judge(spec, document)
    assert result.outcome == Outcome.ERROR
    assert "'b'" in result.message


# issue 29 (bound2), probe "several queries, each under its limit": each JSONPath query had
# its own 1 s for its filter regexes, so an expectation of N such transforms took N x 1 s on
# one response. The queries of one check now share the check's limit. A fake clock for the
# shared limit makes each search look 0.4 s long (no timing in the test).
def test_the_queries_of_one_check_share_one_time_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    import assertly.engine._regex as regex_module

    clock = [0.0]

    def tick() -> float:
        clock[0] += 0.4
        return clock[0]

    spec = {"type": "contains", "value": "a", "transform": "json_path:$.items[?search(@.a, 'a')].a"}
    compiled = assertly.compile([spec, spec, spec])
    document = {"items": [{"a": "b"}, {"a": "b"}, {"a": "a"}]}  # 3 searches a query
    assert compiled.check(document).outcome == Outcome.PASSED  # the real clock: quick
    monkeypatch.setattr(regex_module, "time", SimpleNamespace(monotonic=tick), raising=False)
    result = compiled.check(document)
    assert result.outcome == Outcome.ERROR
    assert any("'a'" in item.message for item in result.results)
