"""Custom assertions (spec D): the ``assertly.assertion`` decorator, the shapes a function may
return, errors inside a function, and ``load_plugins`` with a promptfoo-style ``get_assert``.
"""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import assertly
from assertly import AssertionResult, ConfigError, Outcome, Registry
from assertly.engine import REGISTRY


def judge(registry: Registry, spec: dict[str, Any], output: Any, **kwargs: Any) -> AssertionResult:
    """Compile one typed assertion against ``registry`` and check one output."""
    return assertly.compile([spec], registry=registry).check(output, **kwargs).results[0]


# --- registration --------------------------------------------------------------------------


def test_decorator_registers_for_both_dialects(registry: Registry) -> None:
    @assertly.assertion("mentions-product", registry=registry)
    def mentions_product(output: str, context: dict[str, Any]) -> bool:
        return str(context["value"]).lower() in output.lower()

    typed = assertly.compile([{"type": "mentions-product", "value": "Widget"}], registry=registry)
    assert typed.check("Buy the WIDGET now").passed
    failed = typed.check("Buy a gadget")
    assert failed.results[0].outcome is Outcome.FAILED
    assert failed.results[0].message == "mentions-product returned False"

    expect = assertly.compile({"mentions-product": "Widget"}, registry=registry)
    assert expect.dialect == "expect"
    assert expect.check("a widget").passed
    assert not expect.check("a gadget").passed


def test_decorator_does_not_touch_the_global_registry(registry: Registry) -> None:
    @assertly.assertion("only-in-private-registry", registry=registry)
    def private(output: str, context: dict[str, Any]) -> bool:
        return True

    assert REGISTRY.get("typed", "only-in-private-registry") is None
    with pytest.raises(ConfigError):
        assertly.compile([{"type": "only-in-private-registry"}])


def test_default_names_follow_each_dialect(registry: Registry) -> None:
    @assertly.assertion(registry=registry)
    def has_citation(output: str, context: dict[str, Any]) -> bool:
        """The output cites a source like [1]."""
        return "[1]" in output

    assert registry.get("typed", "has-citation") is not None
    assert registry.get("expect", "has_citation") is not None
    assert registry.get("typed", "has_citation") is None
    entry = registry.get("typed", "has-citation")
    assert entry is not None
    assert entry.builtin is False
    assert entry.summary == "The output cites a source like [1]."
    assert judge(registry, {"type": "has-citation"}, "as shown [1]").passed
    assert assertly.compile({"has_citation": True}, registry=registry).check("[1]").passed


def test_dialect_can_be_restricted(registry: Registry) -> None:
    @assertly.assertion("typed-only", dialect="typed", registry=registry)
    def typed_only(output: str, context: dict[str, Any]) -> bool:
        return True

    assert registry.get("typed", "typed-only") is not None
    assert registry.get("expect", "typed-only") is None


def test_custom_names_get_did_you_mean(registry: Registry) -> None:
    @assertly.assertion("has-citation", registry=registry)
    def has_citation(output: str, context: dict[str, Any]) -> bool:
        return True

    with pytest.raises(ConfigError) as info:
        assertly.compile([{"type": "has-citaton"}], registry=registry)
    assert str(info.value.problems[0]) == (
        "assertions[0].type: unknown assertion 'has-citaton' (did you mean 'has-citation'?)"
    )


def test_registering_a_name_twice_is_an_error_unless_replace(registry: Registry) -> None:
    @assertly.assertion("dup", registry=registry)
    def first(output: str, context: dict[str, Any]) -> bool:
        return True

    with pytest.raises(ValueError, match="'dup' is already registered"):

        @assertly.assertion("dup", registry=registry)
        def second(output: str, context: dict[str, Any]) -> bool:
            return False

    @assertly.assertion("dup", registry=registry, replace=True)
    def third(output: str, context: dict[str, Any]) -> bool:
        return False

    assert not judge(registry, {"type": "dup"}, "x").passed


def test_a_builtin_name_cannot_be_taken_silently(registry: Registry) -> None:
    with pytest.raises(ValueError, match="'contains' is already registered"):

        @assertly.assertion("contains", registry=registry)
        def contains(output: str, context: dict[str, Any]) -> bool:
            return True


# --- what the function receives ------------------------------------------------------------


def test_function_receives_output_text_and_context(registry: Registry) -> None:
    seen: dict[str, Any] = {}

    @assertly.assertion("spy", registry=registry)
    def spy(output: str, context: dict[str, Any]) -> bool:
        seen["output"] = output
        seen.update(context)
        return True

    spec = {"type": "spy", "value": {"k": 1}, "threshold": 0.3, "config": {"mode": "strict"}}
    check_context = {"cost_usd": 0.02, "latency_ms": 250, "model": "m-1", "trace_id": "t-9"}
    judge(registry, spec, {"answer": "Zürich"}, context=check_context)
    assert seen["output"] == '{"answer":"Zürich"}'
    assert seen["json"] == {"answer": "Zürich"}
    assert seen["value"] == {"k": 1}
    assert seen["threshold"] == 0.3
    assert seen["config"] == {"mode": "strict"}
    assert seen["cost_usd"] == 0.02
    assert seen["latency_ms"] == 250
    assert seen["model"] == "m-1"
    assert seen["trace_id"] == "t-9"


def test_json_is_none_for_prose(registry: Registry) -> None:
    seen: dict[str, Any] = {}

    @assertly.assertion("spy", registry=registry)
    def spy(output: str, context: dict[str, Any]) -> bool:
        seen.update(context)
        return True

    judge(registry, {"type": "spy"}, "just words")
    assert seen["json"] is None


def test_custom_assertion_sees_the_transformed_output(registry: Registry) -> None:
    @assertly.assertion("is-upper", registry=registry)
    def is_upper(output: str, context: dict[str, Any]) -> bool:
        return output.isupper()

    spec = {"type": "is-upper", "transform": "json_path:$.code"}
    assert judge(registry, spec, '{"code": "ABC", "note": "lower"}').passed
    assert not judge(registry, spec, '{"code": "abc"}').passed


# --- return shapes -------------------------------------------------------------------------


@pytest.fixture
def returning(registry: Registry) -> Iterator[Any]:
    """Register ``returns`` whose return value the test sets."""
    box: dict[str, Any] = {}

    @assertly.assertion("returns", registry=registry)
    def returns(output: str, context: dict[str, Any]) -> Any:
        return box["value"]

    def run(value: Any, **spec: Any) -> AssertionResult:
        box["value"] = value
        return judge(registry, {"type": "returns", **spec}, "output")

    yield run


def test_return_bool(returning: Any) -> None:
    ok = returning(True)
    assert (ok.outcome, ok.score) == (Outcome.PASSED, 1.0)
    bad = returning(False)
    assert (bad.outcome, bad.score) == (Outcome.FAILED, 0.0)
    assert bad.message == "returns returned False"


def test_return_float_without_threshold_passes_above_zero(returning: Any) -> None:
    low = returning(0.2)
    assert (low.outcome, low.score) == (Outcome.PASSED, 0.2)
    zero = returning(0.0)
    assert (zero.outcome, zero.score) == (Outcome.FAILED, 0.0)
    assert zero.message == "returns scored 0"
    assert returning(1).score == 1.0


def test_return_float_with_threshold(returning: Any) -> None:
    below = returning(0.4, threshold=0.5)
    assert (below.outcome, below.score) == (Outcome.FAILED, 0.4)
    assert below.message == "returns scored 0.4"
    at = returning(0.5, threshold=0.5)
    assert (at.outcome, at.score) == (Outcome.PASSED, 0.5)


def test_return_float_is_clamped_to_unit_interval(returning: Any) -> None:
    assert returning(1.7).score == 1.0
    negative = returning(-0.5)
    assert (negative.outcome, negative.score) == (Outcome.FAILED, 0.0)


@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_return_non_finite_score_is_an_error(returning: Any, value: float) -> None:
    result = returning(value)
    assert result.outcome is Outcome.ERROR
    assert "non-finite score" in result.message


def test_return_dict_pass_score_reason(returning: Any) -> None:
    result = returning({"pass": False, "score": 0.25, "reason": "cites no source"})
    assert (result.outcome, result.score) == (Outcome.FAILED, 0.25)
    assert result.message == "cites no source"
    ok = returning({"pass": True, "score": 0.9, "reason": "cites two sources"})
    assert (ok.outcome, ok.score) == (Outcome.PASSED, 0.9)
    assert ok.message == "cites two sources"


def test_return_dict_pass_overrides_threshold(returning: Any) -> None:
    result = returning({"pass": True, "score": 0.1}, threshold=0.5)
    assert (result.outcome, result.score) == (Outcome.PASSED, 0.1)


def test_return_dict_pass_only_scores_one_or_zero(returning: Any) -> None:
    assert returning({"pass": True}).score == 1.0
    failed = returning({"pass": False})
    assert (failed.outcome, failed.score) == (Outcome.FAILED, 0.0)
    assert failed.message == "returns scored 0"


def test_return_dict_score_only_uses_threshold(returning: Any) -> None:
    assert returning({"score": 0.7}, threshold=0.6).passed
    assert not returning({"score": 0.5}, threshold=0.6).passed


def test_return_dict_without_pass_or_score_is_an_error(returning: Any) -> None:
    result = returning({"reason": "hmm"})
    assert result.outcome is Outcome.ERROR
    assert result.message == "custom assertion returned a dict without pass or score"


def test_return_dict_with_a_non_numeric_score_is_an_error(returning: Any) -> None:
    result = returning({"pass": True, "score": "high"})
    assert result.outcome is Outcome.ERROR
    assert result.message == "custom assertion returned a non-numeric score 'high'"


def test_return_assertion_result_is_used_as_is(returning: Any) -> None:
    own = AssertionResult("returns", Outcome.FAILED, 0.3, "too vague", path="summary")
    result = returning(own)
    assert result.outcome is Outcome.FAILED
    assert result.score == 0.3
    assert result.message == "too vague"
    assert result.path == "summary"


@pytest.mark.parametrize("value", [None, "yes", [True]])
def test_return_of_an_unsupported_type_is_an_error(returning: Any, value: Any) -> None:
    result = returning(value)
    assert result.outcome is Outcome.ERROR
    assert result.message.startswith(f"custom assertion returned {type(value).__name__}; ")


def test_custom_results_are_negated_weighted_and_named(registry: Registry) -> None:
    @assertly.assertion("half", registry=registry)
    def half(output: str, context: dict[str, Any]) -> float:
        return 0.5

    specs = [
        {"type": "half", "metric": "quality", "weight": 2},
        {"type": "not-half", "metric": "quality", "threshold": 0.8},
    ]
    result = assertly.compile(specs, registry=registry).check("x")
    assert [r.outcome for r in result.results] == [Outcome.PASSED, Outcome.PASSED]
    assert [r.score for r in result.results] == [0.5, 0.5]
    assert result.named_scores == {"quality": 0.5}
    assert result.score == pytest.approx(0.5)


# --- errors inside a custom assertion ------------------------------------------------------


def test_exception_is_an_error_and_the_other_assertions_still_run(registry: Registry) -> None:
    calls: list[str] = []

    @assertly.assertion("explodes", registry=registry)
    def explodes(output: str, context: dict[str, Any]) -> bool:
        calls.append(output)
        raise ZeroDivisionError("division by zero")

    @assertly.assertion("counts", registry=registry)
    def counts(output: str, context: dict[str, Any]) -> bool:
        calls.append("counts")
        return True

    specs = [
        {"type": "contains", "value": "x"},
        {"type": "explodes"},
        {"type": "counts"},
        {"type": "contains", "value": "nope"},
    ]
    result = assertly.compile(specs, registry=registry).check("x")
    assert [r.outcome for r in result.results] == [
        Outcome.PASSED,
        Outcome.ERROR,
        Outcome.PASSED,
        Outcome.FAILED,
    ]
    assert (
        result.results[1].message == "custom assertion raised ZeroDivisionError: division by zero"
    )
    assert result.results[1].score == 0.0
    assert calls == ["x", "counts"]
    assert result.outcome is Outcome.FAILED  # a definite failure outranks the error


def test_exception_alone_makes_the_check_an_error_never_a_pass(registry: Registry) -> None:
    @assertly.assertion("explodes", registry=registry)
    def explodes(output: str, context: dict[str, Any]) -> bool:
        raise RuntimeError("boom")

    expectation = assertly.compile(
        [{"type": "contains", "value": "x"}, {"type": "explodes"}], registry=registry
    )
    result = expectation.check("x")
    assert result.outcome is Outcome.ERROR
    assert not result.passed
    negated = assertly.compile([{"type": "not-explodes"}], registry=registry).check("x")
    assert negated.results[0].outcome is Outcome.ERROR
    assert negated.results[0].message == "custom assertion raised RuntimeError: boom"


# --- load_plugins --------------------------------------------------------------------------


@pytest.fixture
def plugin_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Write a module to ``tmp_path``, put it on sys.path, and forget it afterwards.

    The global registry is swapped for a copy, so names loaded into it do not leak.
    """
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(
        REGISTRY, "_entries", {dialect: dict(table) for dialect, table in REGISTRY._entries.items()}
    )
    monkeypatch.setattr(REGISTRY, "_functions", dict(REGISTRY._functions))
    written: list[str] = []

    def write(name: str, source: str) -> str:
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(source), encoding="utf-8")
        written.append(name)
        return name

    yield write
    for name in written:
        sys.modules.pop(name, None)


def test_load_plugins_registers_get_assert_under_the_module_name(plugin_module: Any) -> None:
    name = plugin_module(
        "assertly_test_has_greeting",
        """
        def get_assert(output, context):
            if "hello" in output.lower():
                return {"pass": True, "score": 1.0, "reason": "greets"}
            return {"pass": False, "score": 0.0, "reason": "no greeting in the output"}
        """,
    )
    assertly.load_plugins([name])
    expectation = assertly.compile([{"type": name}])
    assert expectation.check("Hello there").passed
    result = expectation.check("Goodbye")
    assert result.results[0].outcome is Outcome.FAILED
    assert result.results[0].message == "no greeting in the output"
    assert assertly.compile({name: None}).check("hello").passed


def test_load_plugins_honours_assertion_name(plugin_module: Any) -> None:
    name = plugin_module(
        "assertly_test_named_plugin",
        """
        ASSERTION_NAME = "short-enough"

        def get_assert(output, context):
            return len(output) <= int(context["value"])
        """,
    )
    assertly.load_plugins([name])
    expectation = assertly.compile([{"type": "short-enough", "value": 5}])
    assert expectation.check("abc").passed
    assert not expectation.check("abcdefgh").passed
    assert REGISTRY.get("typed", name) is None


def test_load_plugins_with_decorated_functions(plugin_module: Any) -> None:
    name = plugin_module(
        "assertly_test_decorated_plugin",
        """
        import assertly

        @assertly.assertion("ends-with-period")
        def ends_with_period(output, context):
            return output.rstrip().endswith(".")
        """,
    )
    assertly.load_plugins([name])
    assert assertly.compile([{"type": "ends-with-period"}]).check("Done.").passed
    assert not assertly.compile([{"type": "ends-with-period"}]).check("Done").passed
    # Loading the same module again is harmless.
    assertly.load_plugins([name])


def test_a_private_registry_can_load_a_module_already_loaded_globally(
    plugin_module: Any, registry: Registry
) -> None:
    name = plugin_module(
        "assertly_test_shared_plugin",
        """
        import assertly

        @assertly.assertion("decorated-check")
        def decorated(output, context):
            return output == "yes"

        def get_assert(output, context):
            return output == "ok"
        """,
    )
    assertly.load_plugins([name])
    registry.load_module(name)
    assert judge(registry, {"type": name}, "ok").passed
    assert judge(registry, {"type": "decorated-check"}, "yes").passed
    assert not judge(registry, {"type": "decorated-check"}, "no").passed


def test_load_plugins_with_a_missing_module_raises(plugin_module: Any) -> None:
    with pytest.raises(ModuleNotFoundError):
        assertly.load_plugins(["assertly_test_no_such_module_xyz"])


def test_plugin_exception_is_an_error_result(plugin_module: Any) -> None:
    name = plugin_module(
        "assertly_test_broken_plugin",
        """
        def get_assert(output, context):
            return context["missing-key"]
        """,
    )
    assertly.load_plugins([name])
    result = assertly.compile([{"type": name}, {"type": "contains", "value": "x"}]).check("x")
    assert result.results[0].outcome is Outcome.ERROR
    assert result.results[0].message == "custom assertion raised KeyError: 'missing-key'"
    assert result.results[1].outcome is Outcome.PASSED
