"""Peer conformance: assertly's verdicts on vectors derived from two peers' semantics.

Each vector in ``vectors.json`` is written in this project's own words and data from the
behaviour runsight-core and promptfoo document and test (see README.md). It records the
peer's verdict, assertly's verdict, and whether they agree; every disagreement is a
deliberate difference with its reason and the docs/decisions.md entry that explains it.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

import assertly
from assertly.engine import REGISTRY

HERE = Path(__file__).parent
VECTORS: list[dict[str, Any]] = json.loads((HERE / "vectors.json").read_text(encoding="utf-8"))
DECISIONS = (HERE.parent.parent / "docs" / "decisions.md").read_text(encoding="utf-8")
OUTCOMES = {"passed", "failed", "error"}


def _context(raw: dict[str, Any]) -> dict[str, Any]:
    # JSON cannot hold NaN: a vector writes it as the string "nan".
    return {key: float(value) if value == "nan" else value for key, value in raw.items()}


def verdict(vector: dict[str, Any]) -> tuple[str, float | None]:
    """assertly's verdict; a configuration error counts as ``error`` (nothing was judged)."""
    try:
        expectation = assertly.compile(vector["assertion"])
    except assertly.ConfigError:
        return "error", None
    result = expectation.check(vector["output"], context=_context(vector.get("context", {})))
    return result.outcome.value, result.score


def _anchors() -> set[str]:
    """GitHub-style anchors of the headings and bold lead-ins of docs/decisions.md."""
    found = set()
    for line in DECISIONS.splitlines():
        text = ""
        if line.startswith("#"):
            text = line.lstrip("#").strip()
        elif line.startswith("- **") and "**" in line[4:]:
            text = line[4 : line.index("**", 4)]
        if text:
            slug = "".join(ch for ch in text.lower() if ch.isalnum() or ch in " -_")
            found.add(slug.replace(" ", "-"))
    return found


ANCHORS = _anchors()


@pytest.mark.parametrize("vector", VECTORS, ids=[f"{v['peer']}:{v['id']}" for v in VECTORS])
def test_vector(vector: dict[str, Any]) -> None:
    assert vector["peer_verdict"] in OUTCOMES and vector["assertly"] in OUTCOMES
    got, score = verdict(vector)
    assert got == vector["assertly"], f"assertly now says {got}"
    if vector.get("assertly_score") is not None:
        # Scores are pinned at 3 decimal places, the precision `similar` compares cosines at
        # (issue 28, reproduction 1: an AVX2 machine got 0.98669 for a pinned 0.9874); one
        # unit either way for a cosine whose float kernels' last bits cross a rounding edge.
        assert score is not None
        if "similar" in json.dumps(vector["assertion"]):
            assert score == round(score, 3)  # compared as rounded
        assert math.isclose(score, vector["assertly_score"], abs_tol=1e-3 + 1e-9)
    agrees = vector["peer_verdict"] == vector["assertly"]
    assert vector["status"] == ("agree" if agrees else "difference")
    if not agrees:
        assert vector.get("reason"), "a difference needs its reason"
        decision = vector.get("decision", "")
        assert decision.startswith("decisions.md#"), decision
        assert decision.split("#", 1)[1] in ANCHORS, f"no such entry: {decision}"


def test_the_suite_covers_both_peers_and_every_built_in_type() -> None:
    peers = {vector["peer"] for vector in VECTORS}
    assert peers == {"runsight-core", "promptfoo"}
    typed = {
        item["type"].removeprefix("not-")
        for vector in VECTORS
        if isinstance(vector["assertion"], list)
        for item in vector["assertion"]
    }
    builtins = {entry.name for entry in REGISTRY.entries("typed") if entry.builtin}
    # llm-rubric needs a judge model: its verdicts are tested against a scripted judge server
    # (tests/judge), not as vectors judged offline. The span assertions judge a call's
    # OpenTelemetry spans, which neither peer reads (tests/engine/test_span_assertions.py).
    spans = {"span-count", "span-duration", "no-error-spans", "span-attribute"}
    assert builtins - {"llm-rubric"} - spans <= typed
    assert len(VECTORS) >= 150
