"""Reading what an OpenAI-compatible endpoint answered: vectors, cached vectors, token counts.

Pure functions (no I/O): the judge client (`_client`) calls the endpoint and keeps what these
accept. An answer they refuse is never cached.
"""

from __future__ import annotations

import json
from typing import Any

from ..engine.graded._judging import start_of
from ..engine.graded._vectors import vector_problem, vectors_problem

__all__ = ["cached_vector", "read_vectors", "token_count"]


def read_vectors(data: Any, text: str, count: int) -> list[tuple[float, ...]] | str:
    """The ``count`` vectors of an ``/embeddings`` response in input order, or what is wrong.

    Wrong: not ``count`` valid vectors of one length, or indices not 0 to ``count - 1`` once
    each (``text`` is the response's text, quoted from in the problem).
    """
    try:
        items = data["data"]
        indices = [item.get("index", position) for position, item in enumerate(items)]
        found = [item["embedding"] for item in items]
    except (KeyError, TypeError, AttributeError):
        return f"the response has no data[].embedding: {start_of(text)!r}"
    if len(found) != count:
        return f"the response has {len(found)} embedding(s) for {count} text(s): {start_of(text)!r}"
    if any(type(index) is not int for index in indices) or sorted(indices) != list(range(count)):
        return (
            f"the response's data[].index are {indices!r:.80}, not 0 to {count - 1} once "
            f"each: {start_of(text)!r}"
        )
    found = [found[indices.index(position)] for position in range(count)]
    problem = vectors_problem(found, [f"text {index + 1}" for index in range(count)])
    if problem is not None:
        return f"the endpoint's embeddings are unusable: {problem}"
    return [tuple(float(value) for value in vector) for vector in found]


def cached_vector(text: str) -> tuple[float, ...] | None:
    """A vector from the judge cache, or None when it is not a valid one."""
    try:
        vector = json.loads(text)
    except (ValueError, RecursionError):  # a poisoned row of nested arrays: not a vector
        return None
    if vector_problem(vector) is not None:
        return None
    return tuple(float(value) for value in vector)


# A judge's token counts are clamped here: JSON integers have no bound, and 10**400 tokens
# made the cost an OverflowError (int * float) and the store's INTEGER column refuse it.
_MAX_TOKENS_REPORTED = 10**12


def token_count(value: Any) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return min(value, _MAX_TOKENS_REPORTED)
    return 0
