"""Assertions on the call (engine/expect/calls.py): ``agent_used_model`` and ``no_overlap``."""

from __future__ import annotations

from typing import Any

import pytest

import assertly
from assertly import AssertionResult, CheckContext, ConfigError, Outcome


def only(expect: dict[str, Any], response: Any, **kwargs: Any) -> AssertionResult:
    result = assertly.compile(expect).check(response, **kwargs)
    assert len(result.results) == 1
    return result.results[0]


def problems(expect: Any) -> list[tuple[str, str]]:
    with pytest.raises(ConfigError) as caught:
        assertly.compile(expect)
    return [(p.location, p.message) for p in caught.value.problems]


# --- agent_used_model -----------------------------------------------------------------------

MODEL = {"agent_used_model": "claude-sonnet-4"}


def test_model_matches() -> None:
    result = only(MODEL, {"status": "ok"}, context={"model": "claude-sonnet-4"})
    assert result.outcome is Outcome.PASSED
    assert only(MODEL, {}, context=CheckContext(model="claude-sonnet-4")).passed


def test_model_differs() -> None:
    result = only(MODEL, {"status": "ok"}, context={"model": "claude-haiku-4"})
    assert result.outcome is Outcome.FAILED
    assert result.message == "Expected model 'claude-sonnet-4', got 'claude-haiku-4'"
    assert result.expected == "claude-sonnet-4"
    assert result.actual == "claude-haiku-4"


def test_model_comparison_is_exact() -> None:
    assert not only(MODEL, {}, context={"model": "Claude-Sonnet-4"}).passed
    assert not only(MODEL, {}, context={"model": "claude-sonnet-4-20250101"}).passed


@pytest.mark.parametrize("context", [None, {}, {"model": None}, CheckContext()])
def test_no_reported_model_is_an_error(context: Any) -> None:
    result = assertly.compile(MODEL).check({"status": "ok"}, context=context)
    assert result.outcome is Outcome.ERROR
    assert not result.passed
    [error] = result.results
    assert error.outcome is Outcome.ERROR
    assert error.passed is False
    assert error.score == 0.0
    assert error.message == (
        "the target reported no model for this call, so the model cannot be judged"
    )


def test_model_does_not_need_a_json_body() -> None:
    assert only(MODEL, "plain text answer", context={"model": "claude-sonnet-4"}).passed


def test_a_failure_outranks_an_error() -> None:
    result = assertly.compile({**MODEL, "status": "ok"}).check({"status": "bad"})
    assert result.outcome is Outcome.FAILED
    assert [r.outcome for r in result.results] == [Outcome.ERROR, Outcome.FAILED]


@pytest.mark.parametrize("bad", ["", 3, None, ["a"]])
def test_model_parameter(bad: Any) -> None:
    assert problems({"agent_used_model": bad}) == [
        ("expect.agent_used_model", f"expected a model name, got {bad!r}")
    ]


# --- no_overlap -----------------------------------------------------------------------------

NO_OVERLAP = {"no_overlap": {"path": "results[*].file", "with": "first_page"}}


def files(*names: str) -> dict[str, Any]:
    return {"results": [{"file": name} for name in names]}


def steps(**stored: Any) -> dict[str, Any]:
    return {"steps": stored}


def test_no_overlap_passes_when_nothing_is_shared() -> None:
    result = only(
        NO_OVERLAP, files("c.md", "d.md"), context=steps(first_page=files("a.md", "b.md"))
    )
    assert result.outcome is Outcome.PASSED


def test_no_overlap_fails_naming_the_shared_values() -> None:
    context = steps(first_page=files("a.md", "b.md", "c.md"))
    result = only(NO_OVERLAP, files("b.md", "x.md", "c.md"), context=context)
    assert result.outcome is Outcome.FAILED
    assert result.message == "results[*].file overlaps with step 'first_page': 'b.md', 'c.md'"
    assert result.actual == ["b.md", "c.md"]


def test_no_overlap_clips_long_lists() -> None:
    names = [f"{i}.md" for i in range(12)]
    result = only(NO_OVERLAP, files(*names), context=steps(first_page=files(*names)))
    assert result.message.endswith("'9.md' (and 2 more)")


def test_no_overlap_is_strictly_typed() -> None:
    expect = {"no_overlap": {"path": "ids", "with": "p1"}}
    assert only(expect, {"ids": [1, 2]}, context=steps(p1={"ids": ["1", True]})).passed
    assert not only(expect, {"ids": [1]}, context=steps(p1={"ids": [1.0]})).passed


def test_no_overlap_path_to_an_array_compares_its_elements() -> None:
    expect = {"no_overlap": {"path": "sensitive_dirs_skipped", "with": "p1"}}
    stored = steps(p1={"sensitive_dirs_skipped": ["people/", "hr/"]})
    assert only(expect, {"sensitive_dirs_skipped": ["documents/"]}, context=stored).passed
    result = only(expect, {"sensitive_dirs_skipped": ["documents/", "hr/"]}, context=stored)
    assert result.outcome is Outcome.FAILED
    assert result.message == "sensitive_dirs_skipped overlaps with step 'p1': 'hr/'"


def test_no_overlap_compares_objects_by_value() -> None:
    expect = {"no_overlap": {"path": "results[*]", "with": "p1"}}
    stored = {"results": [{"file": "a.md", "n": 1}]}
    assert not only(
        expect, {"results": [{"file": "a.md", "n": 1}]}, context=steps(p1=stored)
    ).passed
    assert only(expect, {"results": [{"file": "a.md", "n": 2}]}, context=steps(p1=stored)).passed
    reordered = {"results": [{"n": 1.0, "file": "a.md"}]}
    assert not only(expect, reordered, context=steps(p1=stored)).passed


def test_no_overlap_accepts_the_stored_step_as_text() -> None:
    stored = 'Page one:\n```json\n{"results": [{"file": "a.md"}]}\n```'
    assert not only(NO_OVERLAP, files("a.md"), context=steps(first_page=stored)).passed
    assert only(NO_OVERLAP, files("b.md"), context=steps(first_page=stored)).passed


def test_no_overlap_context_object() -> None:
    context = CheckContext(steps={"first_page": files("a.md")})
    assert not only(NO_OVERLAP, files("a.md"), context=context).passed


@pytest.mark.parametrize("context", [None, {}, {"steps": {}}, {"steps": {"other": {}}}])
def test_no_overlap_missing_step_is_an_error(context: Any) -> None:
    result = assertly.compile(NO_OVERLAP).check(files("a.md"), context=context)
    assert result.outcome is Outcome.ERROR
    [error] = result.results
    assert error.outcome is Outcome.ERROR
    stored = ", ".join(sorted((context or {}).get("steps") or {})) or "none"
    assert error.message == (
        f"no stored step named 'first_page' (stored: {stored}); "
        "an earlier step needs `store: first_page`"
    )


def test_no_overlap_stored_step_without_json_is_an_error() -> None:
    result = only(NO_OVERLAP, files("a.md"), context=steps(first_page="no json here"))
    assert result.outcome is Outcome.ERROR
    assert result.message == "the response stored as 'first_page' is not JSON"


def test_no_overlap_stored_step_missing_the_path_is_an_error() -> None:
    result = only(NO_OVERLAP, files("a.md"), context=steps(first_page={"status": "ok"}))
    assert result.outcome is Outcome.ERROR
    assert result.message == "in step 'first_page': results is missing"


def test_no_overlap_current_response_missing_the_path_fails() -> None:
    result = only(NO_OVERLAP, {"status": "ok"}, context=steps(first_page=files("a.md")))
    assert result.outcome is Outcome.FAILED
    assert result.message == "Missing field: results[*].file (results is missing)"
    result = only(NO_OVERLAP, "text", context=steps(first_page=files("a.md")))
    assert result.message == "response is not JSON"


def test_no_overlap_parameters() -> None:
    [(location, message)] = problems({"no_overlap": {"path": "results[*].file"}})
    assert location == "expect.no_overlap.with"
    assert message.startswith("required parameter is missing")
    [(location, message)] = problems({"no_overlap": {"path": "a[", "with": "p"}})
    assert (location, message) == (
        "expect.no_overlap.path",
        "invalid path 'a[': unexpected '[' at column 2",
    )
    [(location, message)] = problems({"no_overlap": {"path": "a", "with": 1}})
    assert location == "expect.no_overlap.with"
    assert message.startswith("input should be a valid string, got 1")


def test_a_context_crosses_to_another_process_intact() -> None:
    """The runner's judge process receives contexts by pickle: nothing may change on the way."""
    import pickle

    given = CheckContext(
        cost_usd=0.5, latency_ms=12.0, model="m-1", steps={"one": '{"a": 1}'},
        now="2026-02-01T00:00:00Z", extra={"trace": "t-1"},
    )  # fmt: skip
    copy = pickle.loads(pickle.dumps(given))
    for name in ("cost_usd", "latency_ms", "model", "now"):
        assert getattr(copy, name) == getattr(given, name)
    assert dict(copy.steps) == {"one": '{"a": 1}'} and dict(copy.extra) == {"trace": "t-1"}
    unset = pickle.loads(pickle.dumps(CheckContext()))
    assert unset._now is None  # "now" left unset stays the clock of whoever judges
