"""BLEU and ROUGE tokens keep every script: combining marks stay in their words, NFC and NFD
spellings are the same words, and ROUGE's cost is bounded by tokens, not characters."""

from __future__ import annotations

import os
import unicodedata
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rouge_score import rouge_scorer

import assertly
from assertly import Outcome
from assertly.engine.typed.metrics import bleu_score, bleu_tokens, rouge_tokens

EXAMPLES = int(os.environ.get("ASSERTLY_PROPERTY_EXAMPLES", "150"))
PROPERTY = settings(
    max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def score(kind: str, reference: str, output: str, **config: Any) -> float:
    spec: dict[str, Any] = {"type": kind, "value": reference, "threshold": 0.0}
    if config:
        spec["config"] = config
    return assertly.compile([spec]).check(output).score


def nfd(text: str) -> str:
    return unicodedata.normalize("NFD", text)


def test_devanagari_vowel_signs_stay_in_their_words() -> None:
    # दिल (heart) and दाल (lentils) differ only in a vowel sign (a combining mark).
    assert rouge_tokens("दिल दाल") == ["दिल", "दाल"]
    assert score("rouge-n", "दाल", "दिल") == 0.0
    assert score("rouge-n", "दिल", "दिल") == 1.0
    assert score("bleu", "दाल", "दिल") == 0.0


def test_arabic_harakat_are_part_of_the_word() -> None:
    voweled = "كَتَبَ الوَلَدُ"
    assert score("rouge-n", voweled, voweled) == 1.0
    assert score("rouge-n", voweled, voweled, n="L") == 1.0
    # Marks are letters' parts: the voweled and bare spellings are different tokens.
    assert score("rouge-n", voweled, "كتب الولد") == 0.0


@pytest.mark.parametrize(
    "text",
    ["café crème brûlée", "Tiếng Việt có dấu", "한국어 문장입니다", "Ångström über naïve"],
)
@pytest.mark.parametrize(("kind", "config"), [("rouge-n", {}), ("rouge-n", {"n": "L"})])
def test_nfc_and_nfd_spellings_score_one(kind: str, config: dict[str, Any], text: str) -> None:
    composed = unicodedata.normalize("NFC", text)
    assert composed != nfd(text)
    assert score(kind, composed, nfd(text), **config) == pytest.approx(1.0)
    assert score(kind, nfd(text), composed, **config) == pytest.approx(1.0)


@pytest.mark.parametrize("text", ["café crème brûlée", "Tiếng Việt có dấu", "한국어 문장입니다"])
def test_bleu_of_nfc_against_nfd_is_one(text: str) -> None:
    assert bleu_score(nfd(text), unicodedata.normalize("NFC", text)) == pytest.approx(1.0)


def test_thai_tone_marks_stay_with_their_consonants() -> None:
    assert rouge_tokens("สวัสดี") == ["ส", "วั", "ส", "ดี"]
    assert score("rouge-n", "สวัสดี", "สวัสดี") == 1.0


def test_reference_values_are_unchanged() -> None:
    assert score("rouge-n", "機械翻訳", "機械学習") == pytest.approx(0.5)
    assert bleu_score("The quick brown fox", "The quick brown cat") == pytest.approx(
        0.658037, abs=1e-6
    )
    assert bleu_score(
        "The quick brown fox leaps over a lazy dog",
        "The quick brown fox jumps over the lazy dog",
    ) == pytest.approx(0.46386, abs=1e-5)


def test_bleu_splits_chinese_and_japanese_by_character() -> None:
    assert bleu_tokens("我喜欢机器学习") == ["我", "喜", "欢", "机", "器", "学", "习"]
    # One character differs in seven: a meaningful score, not 0 for an unsplit sentence.
    assert 0.5 < bleu_score("我喜欢机器学习", "我喜欢机械学习") < 1.0


def test_rouge_l_of_a_long_output_is_bounded_by_tokens_not_characters() -> None:
    # 300,000 characters in 100 tokens: 3,000-character words.
    output = " ".join(chr(ord("a") + i % 26) * 3000 + str(i) for i in range(100))
    assert len(output) > 300_000
    result = assertly.compile([{"type": "rouge-n", "value": output, "config": {"n": "L"}}])
    checked = result.check(output)
    assert checked.outcome is Outcome.PASSED
    assert checked.score == 1.0


def test_rouge_l_beyond_the_token_budget_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from assertly.engine.typed import metrics

    # The real budget (5e9 token pairs) takes megabytes of text on both sides to reach.
    monkeypatch.setattr(metrics, "MAX_LCS_TOKEN_PAIRS", 100 * 50)
    reference = " ".join(f"w{i}" for i in range(100))
    output = " ".join(f"w{i}" for i in range(51))
    expectation = assertly.compile(
        [{"type": "not-rouge-n", "value": reference, "config": {"n": "L"}}]
    )
    result = expectation.check(output).results[0]
    assert result.outcome is Outcome.ERROR
    assert result.message == (
        "ROUGE-L of a 51-token output against a 100-token reference is too costly to compute "
        "(the limit is 5,000 token pairs); use a shorter reference or ROUGE-1/2"
    )
    # Within the budget it is judged (ROUGE-L 0.667 < 0.75, so not-rouge-n passes).
    within = expectation.check(" ".join(f"w{i}" for i in range(50))).results[0]
    assert within.outcome is Outcome.PASSED


_words = st.text(
    alphabet=st.sampled_from(
        [
            *"abcXYZ09 ,.-",
            "é",
            "\u0301",
            "\u0308",
            "द",
            "ि",
            "ल",
            "ा",
            "機",
            "械",
            "ส",
            "\u0e31",
            "\n",
        ]
    ),
    max_size=40,
)


def _is_word_char(char: str) -> bool:
    return unicodedata.category(char)[0] in "LMN"


@PROPERTY
@given(text=_words)
def test_nfc_and_nfd_give_the_same_tokens(text: str) -> None:
    assert rouge_tokens(nfd(text)) == rouge_tokens(unicodedata.normalize("NFC", text))
    assert bleu_tokens(nfd(text)) == bleu_tokens(unicodedata.normalize("NFC", text))


@PROPERTY
@given(text=_words)
def test_tokens_hold_exactly_the_letters_marks_and_numbers(text: str) -> None:
    tokens = rouge_tokens(text)
    assert all(token and all(_is_word_char(char) for char in token) for token in tokens)
    folded = unicodedata.normalize("NFC", unicodedata.normalize("NFC", text).casefold())
    kept = "".join(char for char in folded if _is_word_char(char))
    assert "".join(tokens) == kept.replace("i\u0307", "i")


@PROPERTY
@given(text=_words)
def test_any_text_scores_one_against_itself(text: str) -> None:
    if not rouge_tokens(text):
        return
    for config in ({"n": 1}, {"n": 2}, {"n": "L"}, {"n": "Lsum"}):
        if config["n"] == 2 and len(rouge_tokens(text)) < 2:
            continue
        assert score("rouge-n", text, text, **config) == pytest.approx(1.0), config


class _Tokens:
    """Hands rouge-score the tokens assertly would make, to compare only the scoring."""

    def tokenize(self, text: str) -> list[str]:
        return rouge_tokens(text)


@PROPERTY
@given(reference=_words, output=_words)
def test_rouge_scores_equal_rouge_score_on_the_same_tokens(reference: str, output: str) -> None:
    if not rouge_tokens(reference):
        return
    types = {1: "rouge1", 2: "rouge2", 4: "rouge4", "L": "rougeL", "Lsum": "rougeLsum"}
    library = rouge_scorer.RougeScorer(list(types.values()), tokenizer=_Tokens())
    expected = library.score(reference, output)
    for n, name in types.items():
        assert score("rouge-n", reference, output, n=n) == pytest.approx(
            expected[name].fmeasure, abs=1e-12
        ), n
