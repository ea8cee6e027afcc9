"""Embedding vectors from an endpoint, validated before a cosine is computed or one is cached.

``similar`` with ``provider: openai`` reads vectors that a server sent. A vector holding NaN
or infinity, a vector of zeros (it has no direction: no cosine), vectors of different lengths
(two models, or a truncated reply) or a reply with another number of vectors than texts
cannot be compared: each is an ``error`` of the check, never a cosine, and the judge client
caches only vectors that pass `vector_problem` (issue 28, reproduction 3).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from typing import Any

__all__ = ["cosine", "vector_problem", "vectors_problem"]

_FLOAT_MAX = int(sys.float_info.max)


def vector_problem(vector: Any) -> str | None:
    """What makes ``vector`` unusable as an embedding, or None.

    It must be a non-empty list of finite numbers (not booleans), not all zero.
    """
    if not isinstance(vector, list | tuple) or not vector:
        return "is not a non-empty list of numbers"
    for index, value in enumerate(vector):
        if isinstance(value, bool) or not isinstance(value, int | float):
            return f"has a non-number at [{index}]: {value!r:.40}"
        # An integer beyond a float's range (a JSON literal of 400 digits) made isfinite
        # raise OverflowError: an internal error (red team probe: huge int).
        if isinstance(value, int) and abs(value) > _FLOAT_MAX:
            return f"has a value beyond a float's range at [{index}]: {value!r:.40}"
        if not math.isfinite(value):
            return f"has a non-finite value at [{index}]: {value!r}"
    if not any(vector):
        return f"is all zeros ({len(vector)} values): it has no direction to compare"
    return None


def vectors_problem(vectors: Sequence[Any], names: Sequence[str]) -> str | None:
    """What makes ``vectors`` (one per name, in order) unusable together, or None."""
    if len(vectors) != len(names):
        return f"{len(vectors)} vector(s) for {len(names)} text(s)"
    for name, vector in zip(names, vectors, strict=True):
        problem = vector_problem(vector)
        if problem is not None:
            return f"the vector of {name} {problem}"
    lengths = {len(vector) for vector in vectors}
    if len(lengths) > 1:
        pairs = zip(names, vectors, strict=True)
        shown = ", ".join(f"{len(vector)} for {name}" for name, vector in pairs)
        return f"the vectors have different lengths ({shown}): not one model's"
    return None


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """The cosine of two valid vectors of one length (`vectors_problem` found nothing).

    Each is first scaled by the power of two of its largest value (exact, for subnormals
    too), then summed with ``math.fsum``: the unit-length scaling by ``math.hypot`` gave 1.0
    for two subnormal vectors whose cosine is 0.71 (``similar`` passed) and 0.0 for two equal
    vectors of 400 values near 1.7e308, whose norm overflows (``not-similar`` passed).
    """
    unit_a, unit_b = _scaled(a), _scaled(b)
    dot = math.fsum(x * y for x, y in zip(unit_a, unit_b, strict=True))
    norms = math.sqrt(math.fsum(x * x for x in unit_a)) * math.sqrt(
        math.fsum(x * x for x in unit_b)
    )
    return min(max(dot / norms, -1.0), 1.0)


def _scaled(vector: Sequence[float]) -> list[float]:
    """``vector`` times the power of two that brings its largest magnitude into [0.5, 1)."""
    values = [float(value) for value in vector]
    exponent = math.frexp(max(abs(value) for value in values))[1]
    return [math.ldexp(value, -exponent) for value in values]
