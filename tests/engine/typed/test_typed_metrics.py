"""Similarity metrics of the typed dialect: levenshtein, bleu and rouge-n (seed 003, spec B)."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

import assertly
from assertly import AssertionResult, ConfigError, Outcome
from assertly.engine.typed.metrics import bleu_score


def judge(spec: dict[str, Any], output: Any) -> AssertionResult:
    """Compile one typed assertion and check one output; return its result."""
    check = assertly.compile([spec]).check(output)
    assert check.score == check.results[0].score
    return check.results[0]


def problems(specs: list[dict[str, Any]]) -> list[str]:
    """The problems compiling ``specs`` reports (it must fail)."""
    with pytest.raises(ConfigError) as info:
        assertly.compile(specs)
    return [str(problem) for problem in info.value.problems]


# --- levenshtein ---------------------------------------------------------------------------


def test_seed_levenshtein_example() -> None:
    spec = yaml.safe_load('- type: levenshtein\n  value: "expected text"\n  threshold: 10\n')[0]
    close = judge(spec, "expectd txt!")
    assert close.outcome is Outcome.PASSED
    assert close.score == 1.0
    assert close.details == {"distance": 3}
    far = judge(spec, "something else entirely")
    assert far.outcome is Outcome.FAILED
    assert far.score == 0.0
    assert far.details is not None
    distance = far.details["distance"]
    assert distance > 10
    assert far.message == f"Edit distance {distance} exceeds 10"
    assert far.expected == "expected text"
    assert far.actual == "something else entirely"


def test_levenshtein_default_threshold_is_5() -> None:
    spec = {"type": "levenshtein", "value": "abcdefghij"}
    at_five = judge(spec, "abcde")
    assert at_five.passed
    assert at_five.details == {"distance": 5}
    six = judge(spec, "abcd")
    assert not six.passed
    assert six.message == "Edit distance 6 exceeds 5"
    assert six.details == {"distance": 6}


def test_levenshtein_counts_code_points() -> None:
    # One substituted non-BMP character is one edit, not two UTF-16 units or four bytes.
    result = judge({"type": "levenshtein", "value": "a😀b", "threshold": 0}, "a😁b")
    assert result.details == {"distance": 1}
    assert not result.passed
    assert judge({"type": "levenshtein", "value": "a😀b", "threshold": 1}, "a😁b").passed


def test_levenshtein_exact_match_has_distance_zero() -> None:
    result = judge({"type": "levenshtein", "value": "same", "threshold": 0}, "same")
    assert result.passed
    assert result.details == {"distance": 0}


@pytest.mark.parametrize("threshold", [-1, float("inf")])
def test_levenshtein_bad_threshold_is_a_config_error(threshold: float) -> None:
    found = problems([{"type": "levenshtein", "value": "x", "threshold": threshold}])
    assert len(found) == 1
    assert found[0].startswith("assertions[0].threshold")


@pytest.mark.parametrize("kind", ["levenshtein", "bleu", "rouge-n"])
def test_metrics_need_a_reference(kind: str) -> None:
    assert problems([{"type": kind}]) == [
        f"assertions[0].value: {kind} needs a reference string in value"
    ]
    found = problems([{"type": kind, "value": 42}])
    assert found == [f"assertions[0].value: {kind} needs a reference string, got 42"]


# --- bleu ----------------------------------------------------------------------------------


def test_bleu_reference_value_short_sentence() -> None:
    assert bleu_score("The quick brown fox", "The quick brown cat") == pytest.approx(
        0.658037, abs=1e-6
    )


def test_bleu_reference_value_long_sentence() -> None:
    candidate = "The quick brown fox jumps over the lazy dog"
    reference = "The quick brown fox leaps over a lazy dog"
    assert bleu_score(candidate, reference) == pytest.approx(0.46386, abs=1e-5)


def test_bleu_score_is_graded_and_passes_at_default_threshold() -> None:
    result = judge({"type": "bleu", "value": "The quick brown cat"}, "The quick brown fox")
    assert result.outcome is Outcome.PASSED
    assert result.score == pytest.approx(0.658037, abs=1e-6)


def test_bleu_below_default_threshold_fails_with_its_score() -> None:
    spec = {"type": "bleu", "value": "The quick brown fox leaps over a lazy dog"}
    result = judge(spec, "The quick brown fox jumps over the lazy dog")
    assert result.outcome is Outcome.FAILED
    assert result.score == pytest.approx(0.46386, abs=1e-5)  # graded, not 0
    assert result.message == "BLEU 0.4639 is below the threshold 0.5"


def test_seed_bleu_example() -> None:
    spec = yaml.safe_load(
        '- type: bleu\n  value: "The expected reference text for comparison."\n  threshold: 0.4\n'
    )[0]
    assert spec["threshold"] == 0.4
    assert judge(spec, "The expected reference text for comparison.").score == pytest.approx(1.0)
    result = judge(spec, "Completely unrelated words here.")
    assert result.outcome is Outcome.FAILED
    assert result.score == 0.0
    assert result.message == "BLEU 0.0000 is below the threshold 0.4"


def test_bleu_is_case_insensitive_and_identical_text_scores_one() -> None:
    assert bleu_score("THE QUICK BROWN FOX", "the quick brown fox") == pytest.approx(1.0)


def test_bleu_applies_a_brevity_penalty() -> None:
    full = bleu_score("a b c d e f", "a b c d e f")
    short = bleu_score("a b c d", "a b c d e f")
    assert full == pytest.approx(1.0)
    assert short < full


def test_bleu_of_empty_output_is_zero() -> None:
    assert bleu_score("", "some reference") == 0.0
    result = judge({"type": "bleu", "value": "some reference"}, "")
    assert result.outcome is Outcome.FAILED
    assert result.score == 0.0


@pytest.mark.parametrize("kind", ["bleu", "rouge-n"])
@pytest.mark.parametrize("threshold", [-0.1, 1.5])
def test_unit_metrics_need_threshold_in_unit_interval(kind: str, threshold: float) -> None:
    assert problems([{"type": kind, "value": "x", "threshold": threshold}]) == [
        f"assertions[0].threshold: threshold must be in [0, 1], got {threshold!r}"
    ]


# --- rouge-n -------------------------------------------------------------------------------


def test_seed_rouge_n_example() -> None:
    spec = yaml.safe_load(
        '- type: rouge-n\n  value: "The reference summary text."\n  threshold: 0.6\n'
    )[0]
    assert judge(spec, "the reference summary text").score == pytest.approx(1.0)
    # 3 of 4 unigrams shared: precision 3/4, recall 3/4, F = 0.75.
    good = judge(spec, "The reference summary here.")
    assert good.outcome is Outcome.PASSED
    assert good.score == pytest.approx(0.75)
    bad = judge(spec, "An unrelated sentence about text.")
    assert bad.outcome is Outcome.FAILED
    assert bad.message == f"ROUGE-1 {bad.score:.4f} is below the threshold 0.6"


def test_rouge_default_threshold_is_0_75() -> None:
    spec = {"type": "rouge-n", "value": "a b c d"}
    assert judge(spec, "a b c x").passed  # F = 0.75 exactly
    result = judge(spec, "a b x y")  # F = 0.5
    assert result.outcome is Outcome.FAILED
    assert result.score == pytest.approx(0.5)
    assert result.message == "ROUGE-1 0.5000 is below the threshold 0.75"


def test_rouge_counts_cjk_characters_as_tokens() -> None:
    result = judge({"type": "rouge-n", "value": "機械翻訳"}, "機械学習")
    assert result.score == pytest.approx(0.5)
    assert result.outcome is Outcome.FAILED


def test_rouge_keeps_non_ascii_words() -> None:
    # A tokenizer that dropped non-ASCII letters would see no tokens at all here.
    assert judge({"type": "rouge-n", "value": "größe über straße"}, "größe über straße").passed
    assert judge({"type": "rouge-n", "value": "привет мир"}, "привет мир").score == 1.0
    assert judge({"type": "rouge-n", "value": "привет мир"}, "пока").score == 0.0


def test_rouge_config_n_2_uses_bigrams() -> None:
    spec = {"type": "rouge-n", "value": "a b c d", "config": {"n": 2}, "threshold": 0.5}
    # Bigrams: ab bc cd vs ab bc ce -> 2/3.
    result = judge(spec, "a b c e")
    assert result.score == pytest.approx(2 / 3)
    assert result.passed
    swapped = judge({**spec, "threshold": 0.9}, "a b c e")
    assert swapped.message == "ROUGE-2 0.6667 is below the threshold 0.9"


def test_rouge_config_n_l_uses_longest_common_subsequence() -> None:
    spec = {"type": "rouge-n", "value": "a b c d", "config": {"n": "L"}}
    # LCS of "a b d c" and "a b c d" has length 3: F = 0.75 (ROUGE-1 would say 1.0).
    assert judge(spec, "a b d c").score == pytest.approx(0.75)
    assert judge({"type": "rouge-n", "value": "a b c d"}, "a b d c").score == pytest.approx(1.0)


@pytest.mark.parametrize("n", [0, 5, "x", True])
def test_rouge_bad_n_is_a_config_error(n: Any) -> None:
    assert problems([{"type": "rouge-n", "value": "x", "config": {"n": n}}]) == [
        f"assertions[0].config.n: n must be 1, 2, 3, 4, 'L' or 'Lsum', got {n!r}"
    ]


def test_rouge_unknown_config_key_is_a_config_error() -> None:
    assert problems([{"type": "rouge-n", "value": "x", "config": {"variant": 2}}]) == [
        "assertions[0].config.variant: unknown parameter (allowed: n)"
    ]
