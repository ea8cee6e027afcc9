"""``not-<type>``: passed is inverted, score becomes 1 - score, an error stays an error."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

import assertly
from assertly import AssertionResult, Outcome

SEED_NEGATION = """
- type: not-contains
  value: "error"
- type: not-is-json
"""


def judge(spec: dict[str, Any], output: Any, context: Any = None) -> AssertionResult:
    """Compile one typed assertion and check one output; return its result."""
    return assertly.compile([spec]).check(output, context=context).results[0]


def test_seed_not_contains_example() -> None:
    spec = yaml.safe_load(SEED_NEGATION)[0]
    ok = judge(spec, "all fine")
    assert ok.outcome is Outcome.PASSED
    assert ok.assertion == "not-contains"
    assert ok.score == 1.0
    bad = judge(spec, "an error occurred")
    assert bad.outcome is Outcome.FAILED
    assert bad.assertion == "not-contains"
    assert bad.score == 0.0
    assert bad.message == "Output contains 'error', which not-contains forbids"


def test_seed_not_is_json_example() -> None:
    spec = yaml.safe_load(SEED_NEGATION)[1]
    assert spec == {"type": "not-is-json"}
    assert judge(spec, "plain prose").passed
    bad = judge(spec, '{"a": 1}')
    assert bad.outcome is Outcome.FAILED
    assert bad.message == "Output is JSON, which not-is-json forbids"


def test_seed_negation_list_as_a_whole() -> None:
    expectation = assertly.compile(yaml.safe_load(SEED_NEGATION))
    assert expectation.check("done without problems").passed
    result = expectation.check('{"error": true}')
    assert not result.passed
    assert [r.outcome for r in result.results] == [Outcome.FAILED, Outcome.FAILED]


@pytest.mark.parametrize(
    ("spec", "output"),
    [
        ({"type": "equals", "value": "x"}, "x"),
        ({"type": "icontains", "value": "ERROR"}, "an error"),
        ({"type": "contains-all", "value": ["a", "b"]}, "a b"),
        ({"type": "contains-any", "value": ["a", "z"]}, "a"),
        ({"type": "starts-with", "value": "Sum"}, "Summary"),
        ({"type": "regex", "value": r"\d+"}, "abc 123"),
        ({"type": "word-count", "value": 2}, "two words"),
        ({"type": "contains-json"}, "see {} here"),
        ({"type": "levenshtein", "value": "abc"}, "abd"),
    ],
)
def test_every_binary_type_inverts(spec: dict[str, Any], output: str) -> None:
    plain = judge(spec, output)
    negated = judge({**spec, "type": "not-" + spec["type"]}, output)
    assert plain.outcome is Outcome.PASSED
    assert negated.outcome is Outcome.FAILED
    assert negated.score == 0.0
    assert negated.message.startswith("Output ")
    assert negated.message.endswith(f", which not-{spec['type']} forbids")
    other = judge({**spec, "type": "not-" + spec["type"]}, "#" * 20)
    assert other.outcome is Outcome.PASSED
    assert other.score == 1.0


def test_graded_score_becomes_one_minus_score() -> None:
    spec = {"type": "not-bleu", "value": "The quick brown cat"}
    result = judge(spec, "The quick brown fox")
    assert result.outcome is Outcome.FAILED  # BLEU 0.658 >= 0.5 held, so not-bleu fails
    assert result.score == pytest.approx(1 - 0.658037, abs=1e-6)
    assert result.message == (
        "BLEU >= 0.5 against 'The quick brown cat', which not-bleu forbids; score 0.658"
    )
    low = judge(
        {"type": "not-bleu", "value": "The quick brown fox leaps over a lazy dog"},
        "The quick brown fox jumps over the lazy dog",
    )
    assert low.outcome is Outcome.PASSED
    assert low.score == pytest.approx(1 - 0.46386, abs=1e-5)


def test_negated_rouge_score_is_inverted() -> None:
    result = judge({"type": "not-rouge-n", "value": "機械翻訳"}, "機械学習")
    assert result.outcome is Outcome.PASSED
    assert result.score == pytest.approx(0.5)


@pytest.mark.parametrize("kind", ["cost", "latency"])
def test_error_stays_an_error(kind: str) -> None:
    check = assertly.compile([{"type": f"not-{kind}"}]).check("x")
    result = check.results[0]
    assert result.outcome is Outcome.ERROR
    assert result.assertion == f"not-{kind}"
    assert result.score == 0.0
    assert result.passed is False
    assert "was not measured" in result.message
    assert check.outcome is Outcome.ERROR


def test_negated_measured_cost() -> None:
    spec = {"type": "not-cost", "threshold": 0.1}
    assert judge(spec, "x", {"cost_usd": 0.5}).passed
    cheap = judge(spec, "x", {"cost_usd": 0.05})
    assert cheap.outcome is Outcome.FAILED
    assert cheap.message == "cost_usd <= 0.1 USD, which not-cost forbids"


def test_negation_keeps_the_inner_details() -> None:
    result = judge({"type": "not-levenshtein", "value": "abc"}, "abd")
    assert result.details == {"distance": 1}
