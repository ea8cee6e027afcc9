"""Digests that let ``assertly merge`` check what it joins: a shard's plan and its records.

A **plan digest** says which run a shard is a part of: the filters and settings that pick and
judge the tests (``selection``), the digest of the config parts that change verdicts
(``config``), and the whole test set before the split (every test's key with its definition
digest, combined as a sum modulo 2**128 so that each shard and the merge can compute it in any
order). Every shard of one split carries the same plan digest; the merge checks that, and that
the tests of all the parts add up to the plan's test set exactly.

A **records digest** covers everything a JSON shard report says about its tests and evals
(verdicts, scores, trials, failures, outputs, definitions): an edit of any of it is seen.

Neither is a signature: they detect mixed plans, lost or extra parts and edits by hand or by
a script that does not know them. Someone who edits a report and recomputes the digests
(the code is public) is not detected; that needs a key the editor does not hold.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import Any

import orjson

__all__ = [
    "RecordsDigest",
    "canonical",
    "combine_sums",
    "plan_digest",
    "records_digest",
    "tests_sum",
]

_MODULUS = 1 << 128


def canonical(value: Any) -> bytes:
    """``value`` as canonical JSON: sorted keys, no spaces (what a digest is taken over)."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)
    except (TypeError, orjson.JSONEncodeError):  # integers beyond 64 bits: the stdlib writes them
        return json.dumps(value, sort_keys=True, default=repr, separators=(",", ":")).encode()


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def tests_sum(tests: Iterable[tuple[str, str | None]]) -> tuple[int, str]:
    """How many tests, and the order-free digest of their ``(key, definition)`` pairs.

    Each pair is hashed on its own and the hashes added modulo 2**128, so shards that hold
    disjoint parts of the tests add up to the digest of the whole.
    """
    return combine_sums(
        (1, int(_digest(key.encode("utf-8", "surrogatepass") + b"\0" + str(defn).encode()), 16))
        for key, defn in tests
    )


def combine_sums(parts: Iterable[tuple[int, int | str]]) -> tuple[int, str]:
    """Add ``(count, sum)`` pairs (sums as ints or hex) into one ``(count, hex sum)``."""
    count, total = 0, 0
    for number, value in parts:
        count += number
        total = (total + (int(value, 16) if isinstance(value, str) else value)) % _MODULUS
    return count, f"{total:032x}"


def plan_digest(plan: dict[str, Any]) -> str:
    """The digest of a plan from its parts: selection, config, tests, sum and evals."""
    parts = ("selection", "config", "tests", "sum", "evals")
    values = [plan.get(name) for name in parts]
    # red team, probe "shard + merge with edited targets": a matrix plan's labels, in order
    # (the first is the base of comparisons), were outside the digest: shard reports edited
    # to [cand, base] merged into a run whose regressions read as fixes. Covered when present,
    # so the plans of runs of one target keep their digests.
    if "targets" in plan:
        values.append(plan["targets"])
    return _digest(canonical(values))


class RecordsDigest:
    """A running digest over a report's test entries, then its eval entries, in order."""

    def __init__(self) -> None:
        self._hash = hashlib.blake2b(digest_size=16)

    def add(self, kind: str, entry: Any) -> None:
        """Add one ``"test"`` or ``"eval"`` entry (as the report holds it)."""
        data = canonical([kind, entry])
        self._hash.update(len(data).to_bytes(8, "big") + data)

    def hexdigest(self) -> str:
        """The digest of everything added so far."""
        return self._hash.hexdigest()


def records_digest(tests: Iterable[Any], evals: Iterable[Any]) -> str:
    """The records digest of a report's ``tests`` and ``evals`` entries."""
    digest = RecordsDigest()
    for test in tests:
        digest.add("test", test)
    for suite in evals:
        digest.add("eval", suite)
    return digest.hexdigest()
