"""Scoring of a typed list: weighted mean, weight 0, metrics and the pass threshold (spec B, C)."""

from __future__ import annotations

import pytest
import yaml

import assertly
from assertly import ConfigError, Outcome

SEED_EVAL_CASE = """
eval:
  threshold: 0.8
  cases:
    - id: test_summary
      fixtures:
        summarize: "Machine learning is a subset of AI that enables systems to learn."
      expected:
        summarize:
          - type: contains
            value: "machine learning"
          - type: word-count
            value:
              min: 5
              max: 50
          - type: not-contains
            value: "error"
"""

SEED_BLOCK_ASSERTIONS = """
blocks:
  research:
    type: linear
    soul_ref: researcher
    assertions:
      - type: is-json
      - type: word-count
        value:
          min: 100
"""

HAS_X = {"type": "contains", "value": "x"}
HAS_Y = {"type": "contains", "value": "y"}
HAS_Z = {"type": "contains", "value": "z"}


def test_seed_eval_case_scores_two_of_three_and_misses_threshold_0_8() -> None:
    document = yaml.safe_load(SEED_EVAL_CASE)["eval"]
    case = document["cases"][0]
    expectation = assertly.compile(case["expected"]["summarize"], threshold=document["threshold"])
    result = expectation.check(case["fixtures"]["summarize"])
    # "machine learning" is case-sensitive and the output says "Machine learning".
    assert [r.outcome for r in result.results] == [Outcome.FAILED, Outcome.PASSED, Outcome.PASSED]
    assert result.results[0].message == "Output does not contain 'machine learning'"
    assert result.score == pytest.approx(2 / 3)
    assert result.outcome is Outcome.FAILED
    assert result.threshold == 0.8


def test_seed_eval_case_passes_at_a_lower_threshold_despite_a_failed_assertion() -> None:
    document = yaml.safe_load(SEED_EVAL_CASE)["eval"]
    case = document["cases"][0]
    expectation = assertly.compile(case["expected"]["summarize"], threshold=0.6)
    result = expectation.check(case["fixtures"]["summarize"])
    assert result.passed
    assert result.outcome is Outcome.PASSED
    assert [r.passed for r in result.results] == [False, True, True]
    assert [r.passed for r in result.failures] == [False]


def test_seed_block_assertions() -> None:
    specs = yaml.safe_load(SEED_BLOCK_ASSERTIONS)["blocks"]["research"]["assertions"]
    expectation = assertly.compile(specs)
    long_json = '{"text": "' + " ".join(["word"] * 120) + '"}'
    assert expectation.check(long_json).passed
    short = expectation.check('{"text": "too short"}')
    assert short.outcome is Outcome.FAILED
    # Words are whitespace-separated runs: '{"text":', '"too', 'short"}'.
    assert short.results[1].message == "Expected at least 100 words, got 3"
    prose = expectation.check(" ".join(["word"] * 150))
    assert [r.outcome for r in prose.results] == [Outcome.FAILED, Outcome.PASSED]
    assert prose.results[0].message == "Output is not valid JSON"


def test_default_weights_give_the_plain_mean() -> None:
    result = assertly.compile([HAS_X, HAS_Y, HAS_Z]).check("x y")
    assert result.score == pytest.approx(2 / 3)
    assert result.outcome is Outcome.FAILED


def test_weighted_mean() -> None:
    specs = [{**HAS_X, "weight": 3}, {**HAS_Y, "weight": 1}]
    assert assertly.compile(specs).check("x").score == pytest.approx(0.75)
    assert assertly.compile(specs).check("y").score == pytest.approx(0.25)


def test_weighted_mean_with_graded_scores() -> None:
    specs = [
        {"type": "bleu", "value": "The quick brown cat", "weight": 2},
        {"type": "contains", "value": "zebra", "weight": 0.5},
    ]
    result = assertly.compile(specs).check("The quick brown fox")
    assert result.score == pytest.approx(2 * 0.658037 / 2.5, abs=1e-6)


def test_weight_zero_is_reported_but_not_in_the_mean() -> None:
    expectation = assertly.compile([{**HAS_X, "weight": 0}, HAS_Y])
    result = expectation.check("y only")
    assert result.score == 1.0
    assert len(result.results) == 2
    assert result.results[0].outcome is Outcome.FAILED
    assert result.weights == (0.0, 1.0)
    data = result.to_dict()
    assert data["results"][0]["details"] == {"weight": 0.0}
    assert "details" not in data["results"][1]


def test_weight_zero_still_must_pass_without_threshold() -> None:
    result = assertly.compile([{**HAS_X, "weight": 0}, HAS_Y]).check("y only")
    assert result.outcome is Outcome.FAILED
    assert result.passed is False


def test_weight_zero_failure_does_not_block_a_threshold() -> None:
    result = assertly.compile([{**HAS_X, "weight": 0}, HAS_Y], threshold=1.0).check("y only")
    assert result.score == 1.0
    assert result.passed


def test_negative_weight_is_a_config_error() -> None:
    with pytest.raises(ConfigError) as info:
        assertly.compile([{**HAS_X, "weight": -1}])
    assert [p.location for p in info.value.problems] == ["assertions[0].weight"]
    assert "greater than or equal to 0" in info.value.problems[0].message


@pytest.mark.parametrize("weight", [float("inf"), float("nan"), "1", True])
def test_non_finite_or_non_numeric_weight_is_a_config_error(weight: object) -> None:
    with pytest.raises(ConfigError) as info:
        assertly.compile([{**HAS_X, "weight": weight}])
    assert [p.location for p in info.value.problems] == ["assertions[0].weight"]


def test_all_zero_weights_is_a_config_error() -> None:
    with pytest.raises(ConfigError) as info:
        assertly.compile([{**HAS_X, "weight": 0}, {**HAS_Y, "weight": 0.0}])
    assert [str(p) for p in info.value.problems] == [
        "assertions: every assertion has weight 0; at least one must count in the score"
    ]


def test_metric_stores_the_score_under_its_name() -> None:
    specs = [
        {"type": "contains", "value": "zebra", "metric": "accuracy"},
        {"type": "bleu", "value": "The quick brown cat", "metric": "fluency"},
    ]
    result = assertly.compile(specs).check("The quick brown fox")
    assert result.named_scores == {
        "accuracy": 0.0,
        "fluency": pytest.approx(0.658037, abs=1e-6),
    }
    assert result.to_dict()["named_scores"] == result.named_scores


def test_two_assertions_with_one_metric_name_are_averaged() -> None:
    specs = [{**HAS_X, "metric": "m"}, {**HAS_Y, "metric": "m"}, {**HAS_Z, "metric": "other"}]
    result = assertly.compile(specs).check("x z")
    assert result.named_scores == {"m": 0.5, "other": 1.0}


def test_metric_average_ignores_weights() -> None:
    specs = [{**HAS_X, "metric": "m", "weight": 3}, {**HAS_Y, "metric": "m"}]
    assert assertly.compile(specs).check("x").named_scores == {"m": 0.5}


def test_no_metric_means_no_named_scores() -> None:
    result = assertly.compile([HAS_X]).check("x")
    assert result.named_scores == {}
    assert "named_scores" not in result.to_dict()


def test_threshold_passes_when_aggregate_reaches_it_even_with_a_failure() -> None:
    expectation = assertly.compile(
        [HAS_X, HAS_Y, HAS_Z, {"type": "contains", "value": "w"}], threshold=0.75
    )
    result = expectation.check("x y z")
    assert result.score == 0.75
    assert result.passed
    assert [r.passed for r in result.results] == [True, True, True, False]
    below = expectation.check("x y")
    assert below.score == 0.5
    assert below.outcome is Outcome.FAILED


def test_without_threshold_every_assertion_must_pass() -> None:
    expectation = assertly.compile([HAS_X, HAS_Y, HAS_Z, {"type": "contains", "value": "w"}])
    result = expectation.check("x y z")
    assert result.score == 0.75
    assert result.outcome is Outcome.FAILED
    assert expectation.check("w x y z").passed


def test_threshold_zero_passes_anything_judged() -> None:
    assert assertly.compile([HAS_X], threshold=0).check("nothing").passed


def test_an_error_is_never_a_pass_even_above_the_threshold() -> None:
    expectation = assertly.compile([HAS_X, HAS_Y, {"type": "cost", "threshold": 1}], threshold=0.5)
    result = expectation.check("x y")
    assert result.score == pytest.approx(2 / 3)
    assert result.outcome is Outcome.ERROR
    assert result.passed is False
    measured = expectation.check("x y", context={"cost_usd": 0.5})
    assert measured.passed


def test_failure_outranks_error_without_threshold() -> None:
    expectation = assertly.compile([HAS_X, {"type": "latency", "threshold": 10}])
    assert expectation.check("no").outcome is Outcome.FAILED
    assert expectation.check("x").outcome is Outcome.ERROR


@pytest.mark.parametrize("threshold", [-0.1, 1.5, True, "0.8"])
def test_bad_case_threshold_is_a_config_error(threshold: object) -> None:
    with pytest.raises(ConfigError) as info:
        assertly.compile([HAS_X], threshold=threshold)  # type: ignore[arg-type]
    assert [p.location for p in info.value.problems] == ["threshold"]


def test_check_result_to_dict_shape() -> None:
    result = assertly.compile([HAS_X, HAS_Y], threshold=0.5).check("x")
    data = result.to_dict()
    assert data["passed"] is True
    assert data["score"] == 0.5
    assert data["outcome"] == "passed"
    assert data["threshold"] == 0.5
    assert data["results"][1] == {
        "assertion": "contains",
        "outcome": "failed",
        "passed": False,
        "score": 0.0,
        "message": "Output does not contain 'y'",
        "path": None,
        "expected": "y",
        "actual": "x",
    }


def test_assertly_check_shortcut_with_threshold() -> None:
    assert assertly.check([HAS_X, HAS_Y], "x", threshold=0.5).passed
    assert not assertly.check([HAS_X, HAS_Y], "x").passed
