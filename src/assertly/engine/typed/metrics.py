"""Similarity metrics against a reference.

``levenshtein`` (edit distance, pass/fail), ``bleu`` (BLEU-4, graded) and ``rouge-n``
(ROUGE-1 F by default, graded).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from .._base import BuildContext, Checker
from .._registry import typed_assertion
from .._result import PASSED, AssertionResult, errored, failed, passed
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
MAX_METRIC_CHARS = 1_000_000
# - ROUGE-L fills a table of output tokens x reference tokens in Python.
_MAX_LCS_CHAR_PAIRS = 500_000_000


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


def bleu_score(candidate: str, reference: str) -> float:
    """BLEU-4 of one candidate against one reference.

    Lower-cased whitespace tokens; clipped n-gram precision; the 1-gram precision unsmoothed,
    2- to 4-gram precisions add-one smoothed ((matches + 1) / (total + 1)); geometric mean times
    the brevity penalty exp(1 - r/c) when the candidate is shorter than the reference.
    """
    hypothesis = candidate.lower().split()
    target = reference.lower().split()
    if not hypothesis or not target:
        return 0.0
    reference_grams = [_ngrams(target, n) for n in range(1, 5)]
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
    length, reference_length = len(hypothesis), len(target)
    penalty = 1.0 if length > reference_length else math.exp(1 - reference_length / length)
    return penalty * math.exp(log_sum / 4)


class Graded(Checker):
    """A score in [0, 1] that passes at or above the threshold."""

    __slots__ = ("label", "pairwise", "reference", "scorer", "threshold")

    def __init__(
        self,
        key: str,
        label: str,
        reference: str,
        threshold: float,
        scorer: Any,
        *,
        pairwise: bool = False,
    ):
        self.key = key
        self.label = label
        self.reference = reference
        self.threshold = threshold
        self.scorer = scorer
        self.pairwise = pairwise  # cost grows with output x reference (ROUGE-L)

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
        if self.pairwise and len(text) * len(self.reference) > _MAX_LCS_CHAR_PAIRS:
            return errored(
                self.key,
                f"{self.label} of a {len(text):,}-character output against a "
                f"{len(self.reference):,}-character reference is too costly to compute; "
                "use a shorter reference or ROUGE-1/2",
                expected=self.reference,
            )
        score = float(self.scorer(text, self.reference))
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
    return Graded("bleu", "BLEU", reference, threshold, bleu_score)


# Scripts written without spaces between words: each character is a token.
_NO_SPACE_SCRIPTS = (
    "\u0e00-\u0e7f"  # Thai
    "\u0e80-\u0eff"  # Lao
    "\u1000-\u109f"  # Myanmar
    "\u1780-\u17ff"  # Khmer
    "\u3040-\u309f"  # Hiragana
    "\u30a0-\u30ff"  # Katakana
    "\u3400-\u4dbf"  # CJK extension A
    "\u4e00-\u9fff"  # CJK unified ideographs
    "\uf900-\ufaff"  # CJK compatibility ideographs
    "\U00020000-\U0002ffff"  # CJK extensions B and later
)
_TOKEN = re.compile(f"[{_NO_SPACE_SCRIPTS}]|[^\\W_{_NO_SPACE_SCRIPTS}]+")


class UnicodeTokenizer:
    """A rouge-score tokenizer that keeps every script.

    Unicode word runs, case-folded, with each character of CJK, Thai, Lao, Khmer and Myanmar
    text a token of its own.
    """

    def tokenize(self, text: str) -> list[str]:
        """Split ``text`` into tokens."""
        return _TOKEN.findall(text.casefold())


_ROUGE_TYPES = {
    1: "rouge1",
    2: "rouge2",
    3: "rouge3",
    4: "rouge4",
    "L": "rougeL",
    "Lsum": "rougeLsum",
}


class RougeScorer:
    """F-measure of one ROUGE variant via the rouge-score library."""

    __slots__ = ("rouge_type", "scorer")

    def __init__(self, rouge_type: str) -> None:
        from rouge_score import rouge_scorer  # heavy (nltk, numpy): only when used

        self.rouge_type = rouge_type
        self.scorer = rouge_scorer.RougeScorer([rouge_type], tokenizer=UnicodeTokenizer())

    def __call__(self, candidate: str, reference: str) -> float:
        return float(self.scorer.score(reference, candidate)[self.rouge_type].fmeasure)


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
    rouge_type = _ROUGE_TYPES[n]
    label = f"ROUGE-{n}"
    scorer = RougeScorer(rouge_type)
    return Graded("rouge-n", label, reference, threshold, scorer, pairwise=n in ("L", "Lsum"))
