"""Similarity metrics against a reference.

``levenshtein`` (edit distance, pass/fail), ``bleu`` (BLEU-4, graded) and ``rouge-n``
(ROUGE-1 F by default, graded).
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from typing import TYPE_CHECKING, Any, Literal, cast

from pydantic import BaseModel, ConfigDict, Field, field_validator

from .._base import BuildContext, Checker
from .._entries import typed_assertion
from .._result import PASSED, AssertionResult, errored, failed, passed
from .._text import NO_SPACE_SCRIPTS, fold, nfc
from .._values import fmt
from ._wrapper import TypedSpec

if TYPE_CHECKING:
    from .._context import CheckContext
    from .._response import Response


# Bounds that keep a hostile (50 MB) output from costing minutes or gigabytes:
# - the exact edit distance is computed when len(output) * len(reference) is at most this
#   (~2 s with rapidfuzz's bit-parallel algorithm); beyond, the length gap bounds it;
_EXACT_EDIT_CELLS = 20_000_000_000
# - BLEU and ROUGE tokenise the whole output into Python objects: ~1 GB per 50 MB;
MAX_METRIC_CHARS = 5_000_000
# - ROUGE-L's longest common subsequence costs output tokens x reference tokens / 64 machine
#   words (about a second at this bound).
MAX_LCS_TOKEN_PAIRS = 5_000_000_000


def _reference(spec: TypedSpec, ctx: BuildContext) -> str | None:
    if not isinstance(spec.value, str) or (spec.given("value") and not spec.value.strip()):
        ctx.at("value").problem(f"{spec.type} needs a reference string, got {spec.value!r}")
        return None
    if not spec.given("value"):
        ctx.at("value").problem(f"{spec.type} needs a reference string in value")
        return None
    return spec.value


def _threshold(spec: TypedSpec, default: float, ctx: BuildContext, *, unit: bool) -> float | None:
    threshold = default if spec.threshold is None else spec.threshold
    if not math.isfinite(threshold) or threshold < 0 or (unit and threshold > 1):
        bounds = "in [0, 1]" if unit else ">= 0"
        ctx.at("threshold").problem(f"threshold must be {bounds}, got {threshold!r}")
        return None
    return threshold


class Levenshtein(Checker):
    """Edit distance in code points is at most the threshold."""

    __slots__ = ("distance", "reference", "threshold")

    def __init__(self, reference: str, threshold: float) -> None:
        from rapidfuzz.distance import Levenshtein as _Levenshtein

        self.key = "levenshtein"
        self.reference = reference
        self.threshold = threshold
        self.distance = _Levenshtein.distance

    def describe(self) -> str:
        return f"output within edit distance {self.threshold:g} of {fmt(self.reference)}"

    def check(self, response: Response, ctx: CheckContext) -> AssertionResult:
        text = response.text
        if len(text) * len(self.reference) > _EXACT_EDIT_CELLS:
            gap = abs(len(text) - len(self.reference))  # no edit script is shorter
            if gap > self.threshold:
                return failed(
                    self.key,
                    f"Edit distance exceeds {self.threshold:g} (the lengths differ by {gap})",
                    expected=self.reference,
                    actual=text,
                    details={"distance_at_least": gap},
                )
            # Banded: the cost grows with the threshold, not with the reference.
            distance = self.distance(text, self.reference, score_cutoff=int(self.threshold))
        else:
            distance = self.distance(text, self.reference)
        if distance <= self.threshold:
            return AssertionResult(self.key, PASSED, 1.0, details={"distance": distance})
        return failed(
            self.key,
            f"Edit distance {distance} exceeds {self.threshold:g}",
            expected=self.reference,
            actual=response.text,
            details={"distance": distance},
        )


@typed_assertion("levenshtein", threshold=True)
def build_levenshtein(spec: TypedSpec, ctx: BuildContext) -> Checker | None:
    """Edit distance to the reference is at most the threshold (default 5)."""
    reference = _reference(spec, ctx)
    threshold = _threshold(spec, 5.0, ctx, unit=False)
    return Levenshtein(reference, threshold) if reference and threshold is not None else None


def _ngrams(tokens: list[str], n: int) -> Counter[tuple[str, ...]]:
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


@functools.cache
def _patterns() -> tuple[Any, Any]:
    """(word tokens for ROUGE, whitespace tokens for BLEU), compiled on first use.

    The ``regex`` module knows Unicode categories (marks: ``p{M}``), which ``re`` does not; a word
    is a run of letters, combining marks and numbers (L, M, N), so ``दिल`` stays one token
    instead of losing its vowel sign, and Arabic keeps its harakat. In scripts written
    without spaces each character, with the marks that follow it, is a token of its own.
    """
    import regex

    no_space = f"[{NO_SPACE_SCRIPTS}]\\p{{M}}*"
    words = regex.compile(
        f"{no_space}|[[\\p{{L}}\\p{{M}}\\p{{N}}]--[{NO_SPACE_SCRIPTS}]]+", regex.V1
    )
    runs = regex.compile(f"{no_space}|[^\\s{NO_SPACE_SCRIPTS}]+", regex.V1)
    return words, runs


def rouge_tokens(text: str) -> list[str]:
    """ROUGE tokens: case-folded NFC words of letters, marks and numbers (any script).

    Text is normalised first, so NFC and NFD spellings of the same words give the same tokens;
    in scripts written without spaces each character is a token.
    """
    return cast("list[str]", _patterns()[0].findall(fold(text)))


def bleu_tokens(text: str) -> list[str]:
    """BLEU tokens: lower-cased NFC whitespace tokens (the seed's), CJK/Thai split by character."""
    return cast("list[str]", _patterns()[1].findall(nfc(nfc(text).lower())))


def _bleu(hypothesis: list[str], reference_grams: list[Counter[tuple[str, ...]]]) -> float:
    reference_length = sum(reference_grams[0].values())
    if not hypothesis or not reference_length:
        return 0.0
    log_sum = 0.0
    for n in range(1, 5):
        grams = _ngrams(hypothesis, n)
        total = sum(grams.values())
        matches = sum(min(count, reference_grams[n - 1][gram]) for gram, count in grams.items())
        if n == 1:
            if matches == 0:
                return 0.0
            precision = matches / total
        else:
            precision = (matches + 1) / (total + 1)
        log_sum += math.log(precision)
    length = len(hypothesis)
    penalty = 1.0 if length > reference_length else math.exp(1 - reference_length / length)
    return penalty * math.exp(log_sum / 4)


def bleu_score(candidate: str, reference: str) -> float:
    """BLEU-4 of one candidate against one reference.

    Lower-cased whitespace tokens (`bleu_tokens`); clipped n-gram precision; the 1-gram
    precision unsmoothed, 2- to 4-gram precisions add-one smoothed ((matches + 1) / (total + 1));
    geometric mean times the brevity penalty exp(1 - r/c) when the candidate is shorter than
    the reference (Papineni et al. 2002, with the seed's add-one smoothing of 2..4-grams).
    """
    target = bleu_tokens(reference)
    return _bleu(bleu_tokens(candidate), [_ngrams(target, n) for n in range(1, 5)])


def _fmeasure(overlap: int, predicted: int, target: int) -> float:
    """F1 of precision overlap/predicted and recall overlap/target, as rouge-score computes it."""
    precision = overlap / max(predicted, 1)
    recall = overlap / max(target, 1)
    return 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0


class Scorer:
    """A metric against one reference, tokenised once at compile time.

    ``size`` is the reference's token count; ``pairwise`` scorers cost output tokens times
    that (a longest common subsequence).
    """

    __slots__ = ("size",)

    pairwise = False
    size: int

    def tokenize(self, text: str) -> Any:
        """The output's tokens, in the form `score` takes."""
        raise NotImplementedError

    def count(self, tokens: Any) -> int:
        """How many tokens `tokenize` gave."""
        return len(tokens)

    def score(self, tokens: Any) -> float:
        """The metric of the tokenised output against the reference."""
        raise NotImplementedError


class BleuScorer(Scorer):
    """BLEU-4 (`bleu_score`)."""

    __slots__ = ("grams",)

    def __init__(self, reference: str) -> None:
        target = bleu_tokens(reference)
        self.grams = [_ngrams(target, n) for n in range(1, 5)]
        self.size = len(target)

    def tokenize(self, text: str) -> list[str]:
        """BLEU tokens."""
        return bleu_tokens(text)

    def score(self, tokens: list[str]) -> float:
        """BLEU-4 of ``tokens``."""
        return _bleu(tokens, self.grams)


class RougeN(Scorer):
    """ROUGE-N F-measure: clipped n-gram overlap (Lin 2004), as rouge-score computes it."""

    __slots__ = ("grams", "n", "total")

    def __init__(self, reference: str, n: int) -> None:
        target = rouge_tokens(reference)
        self.n = n
        self.grams = _ngrams(target, n)
        self.total = sum(self.grams.values())
        self.size = len(target)

    def tokenize(self, text: str) -> list[str]:
        """ROUGE tokens."""
        return rouge_tokens(text)

    def score(self, tokens: list[str]) -> float:
        """ROUGE-N F1 of ``tokens``."""
        grams = _ngrams(tokens, self.n)
        target = self.grams
        overlap = sum(min(count, target[gram]) for gram, count in grams.items() if gram in target)
        return _fmeasure(overlap, sum(grams.values()), self.total)


class RougeL(Scorer):
    """ROUGE-L F-measure: longest common subsequence of the token sequences (Lin 2004).

    rapidfuzz computes the LCS bit-parallel, so its cost is tokens x tokens / 64 machine words
    (a 100,000-token output against a 50,000-token reference took about a second here) rather
    than rouge-score's Python table of tokens x tokens cells.
    """

    __slots__ = ("reference", "similarity")

    pairwise = True

    def __init__(self, reference: str) -> None:
        from rapidfuzz.distance import LCSseq

        self.reference = rouge_tokens(reference)
        self.size = len(self.reference)
        self.similarity = LCSseq.similarity

    def tokenize(self, text: str) -> list[str]:
        """ROUGE tokens."""
        return rouge_tokens(text)

    def score(self, tokens: list[str]) -> float:
        """ROUGE-L F1 of ``tokens``."""
        if not tokens or not self.reference:
            return 0.0
        overlap = int(self.similarity(tokens, self.reference))
        return _fmeasure(overlap, len(tokens), self.size)


class RougeLsum(Scorer):
    """ROUGE-Lsum: summary-level LCS over newline-separated sentences (rouge-score's)."""

    __slots__ = ("reference", "scorer")

    pairwise = True

    def __init__(self, reference: str) -> None:
        from rouge_score import rouge_scorer  # heavy (nltk, numpy): only for Lsum

        self.reference = self._sentences(reference)
        self.size = sum(map(len, self.reference))
        self.scorer = rouge_scorer

    @staticmethod
    def _sentences(text: str) -> list[list[str]]:
        return [rouge_tokens(line) for line in text.split("\n") if line]

    def tokenize(self, text: str) -> list[list[str]]:
        """ROUGE tokens of each line."""
        return self._sentences(text)

    def count(self, tokens: list[list[str]]) -> int:
        """Tokens over every line."""
        return sum(map(len, tokens))

    def score(self, tokens: list[list[str]]) -> float:
        """ROUGE-Lsum F1 of the lines' tokens."""
        lcs = self.scorer._summary_level_lcs(self.reference, tokens)
        return float(lcs.fmeasure)


class Graded(Checker):
    """A score in [0, 1] that passes at or above the threshold."""

    __slots__ = ("label", "reference", "scorer", "threshold")

    def __init__(
        self, key: str, label: str, reference: str, threshold: float, scorer: Scorer
    ) -> None:
        self.key = key
        self.label = label
        self.reference = reference
        self.threshold = threshold
        self.scorer = scorer

    def describe(self) -> str:
        return f"{self.label} >= {self.threshold:g} against {fmt(self.reference)}"

    def check(self, response: Response, ctx: CheckContext) -> AssertionResult:
        text = response.text
        if len(text) > MAX_METRIC_CHARS:
            return errored(
                self.key,
                f"the output is {len(text):,} characters; {self.label} scores outputs of up to "
                f"{MAX_METRIC_CHARS:,}",
                expected=self.reference,
            )
        scorer = self.scorer
        tokens = scorer.tokenize(text)
        if scorer.pairwise and scorer.count(tokens) * scorer.size > MAX_LCS_TOKEN_PAIRS:
            return errored(
                self.key,
                f"{self.label} of a {scorer.count(tokens):,}-token output against a "
                f"{scorer.size:,}-token reference is too costly to compute (the limit is "
                f"{MAX_LCS_TOKEN_PAIRS:,} token pairs); use a shorter reference or ROUGE-1/2",
                expected=self.reference,
            )
        score = float(scorer.score(tokens))
        if score >= self.threshold:
            return passed(self.key, score)
        return failed(
            self.key,
            f"{self.label} {score:.4f} is below the threshold {self.threshold:g}",
            expected=self.reference,
            actual=response.text,
            score=score,
        )


@typed_assertion("bleu", threshold=True)
def build_bleu(spec: TypedSpec, ctx: BuildContext) -> Checker | None:
    """BLEU-4 against the reference is at least the threshold (default 0.5); graded score."""
    reference = _reference(spec, ctx)
    threshold = _threshold(spec, 0.5, ctx, unit=True)
    if reference is None or threshold is None:
        return None
    return Graded("bleu", "BLEU", reference, threshold, BleuScorer(reference))


_ROUGE_TYPES = (1, 2, 3, 4, "L", "Lsum")


class RougeOptions(BaseModel):
    """``config`` of ``rouge-n``."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    n: Literal[1, 2, 3, 4, "L", "Lsum"] = Field(
        default=1,
        description="The ROUGE variant: 1-4 (n-grams), L or Lsum (longest common subsequence).",
    )

    @field_validator("n", mode="before")
    @classmethod
    def _known_variant(cls, value: Any) -> Any:
        # Checked by hand: `true == 1` in Python, so a Literal alone takes `n: true` for 1.
        if isinstance(value, bool) or value not in _ROUGE_TYPES:
            raise ValueError("n must be 1, 2, 3, 4, 'L' or 'Lsum'")
        return value


@typed_assertion("rouge-n", threshold=True, options=RougeOptions)
def build_rouge_n(spec: TypedSpec, ctx: BuildContext) -> Checker | None:
    """ROUGE-1 F-measure (or ``config: {n: 2}`` / ``{n: "L"}``) is at least the threshold."""
    reference = _reference(spec, ctx)
    threshold = _threshold(spec, 0.75, ctx, unit=True)
    n = spec.config.get("n", 1)  # validated against RougeOptions before this runs
    if reference is None or threshold is None:
        return None
    scorer: Scorer
    if n == "L":
        scorer = RougeL(reference)
    elif n == "Lsum":
        scorer = RougeLsum(reference)
    else:
        scorer = RougeN(reference, n)
    return Graded("rouge-n", f"ROUGE-{n}", reference, threshold, scorer)
