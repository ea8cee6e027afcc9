"""Semantic similarity: ``similar`` (and ``not-similar``), offline sentence embeddings.

The cosine similarity between the output and ``value`` (a string, or a list of strings of
which the best match counts) is at least ``threshold`` (default 0.8). The model runs locally
(`assertly.engine._embeddings`, the ``assertly[similar]`` extra); without the extra, ``similar``
is a configuration error that says how to install it.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from .._base import BuildContext, Checker
from .._embeddings import embedder, missing_extra
from .._entries import typed_assertion
from .._result import PASSED, AssertionResult, failed
from .._values import fmt
from ._wrapper import TypedSpec

if TYPE_CHECKING:
    from .._context import CheckContext
    from .._response import Response


class Similar(Checker):
    """The output means the same as a reference: cosine similarity >= threshold."""

    __slots__ = ("references", "threshold")

    def __init__(self, key: str, references: list[str], threshold: float) -> None:
        self.key = key
        self.references = references
        self.threshold = threshold

    def describe(self) -> str:
        shown = fmt(self.references[0]) if len(self.references) == 1 else fmt(self.references)
        return f"output is similar to {shown} (cosine >= {self.threshold:g})"

    def check(self, response: Response, ctx: CheckContext) -> AssertionResult:
        vectors = embedder().embed([response.text, *self.references])
        scores = vectors[1:] @ vectors[0]
        best = int(scores.argmax())
        similarity = float(scores[best])
        score = min(max(similarity, 0.0), 1.0)
        details: dict[str, Any] = {"similarity": round(similarity, 4)}
        if len(self.references) > 1:
            details["best_match"] = best
        if similarity + 1e-9 >= self.threshold:
            return AssertionResult(self.key, PASSED, score, details=details)
        return failed(
            self.key,
            f"Similarity {similarity:.3f} is below {self.threshold:g}",
            expected=self.references[best],
            actual=response.text,
            score=score,
            details=details,
        )


@typed_assertion("similar", threshold=True)
def build_similar(spec: TypedSpec, ctx: BuildContext) -> Checker | None:
    """The output means the same as value (or one of a list): cosine similarity >= threshold."""
    value = spec.value
    references = [value] if isinstance(value, str) else value
    if (
        not spec.given("value")
        or not isinstance(references, list)
        or not references
        or not all(isinstance(item, str) and item.strip() for item in references)
    ):
        ctx.at("value").problem(f"similar needs a reference text or a list of them, got {value!r}")
        return None
    threshold = 0.8 if spec.threshold is None else spec.threshold
    if not math.isfinite(threshold) or not -1 <= threshold <= 1:
        ctx.at("threshold").problem(f"threshold must be a cosine in [-1, 1], got {threshold!r}")
        return None
    missing = missing_extra()
    if missing is not None:
        ctx.problem(missing)
        return None
    return Similar(spec.type, list(references), threshold)
