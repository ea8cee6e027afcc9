"""``similar`` with ``provider: openai``: vectors that cannot be compared are an ``error``.

Issue 28, reproduction 3: a NaN vector, a zero vector or vectors of two lengths gave
``not-similar`` PASSED and ``similar`` PASSED; a shared reference's NaN vector was cached, so
later tests and runs passed too; one vector for two texts was an internal error (``zip()``).
Each is now an error of both assertions, with what is wrong, and nothing invalid is cached.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_openai import FakeOpenAI, embeddings
from test_judge_client import judge_config, judged, only

import assertly
from assertly.engine import CheckContext
from assertly.engine.graded._judging import BOARD_KEY, JudgeBoard, Judgement
from assertly.engine.graded._vectors import cosine
from assertly.judge import JudgeClient
from assertly.store import RunStore

OUTPUT = "The refund arrives in five days."
REFERENCE = "the refund arrives in five days"


def spec(kind: str) -> list[dict[str, Any]]:
    return [{"type": kind, "value": REFERENCE, "config": {"provider": "openai"}}]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[RunStore]:
    opened = RunStore(tmp_path / "runs.sqlite")
    try:
        yield opened
    finally:
        opened.close()


def client(fake: FakeOpenAI, store: RunStore | None = None) -> JudgeClient:
    return JudgeClient(judge_config(fake, embedding_model="embed-1"), store)


def altered(change: Callable[[str, list[Any]], list[Any] | None]) -> Callable[[list[str]], bytes]:
    """An /embeddings body whose vectors ``change`` rewrites (None: drops the text's item)."""

    def embed(texts: list[str]) -> bytes:
        body = json.loads(embeddings(texts))
        items = []
        for text, item in zip(texts, body["data"], strict=True):
            vector = change(text, item["embedding"])
            if vector is not None:
                items.append({**item, "embedding": vector})
        body["data"] = items
        return json.dumps(body).encode()  # NaN is written as NaN, as a sloppy server does

    return embed


def for_output(vector: Callable[[list[Any]], list[Any]]) -> Callable[[str, list[Any]], Any]:
    return lambda text, found: vector(found) if text == OUTPUT else found


BAD = {
    # issue 28, probe 3: a NaN vector
    "nan": (for_output(lambda v: [float("nan"), *v[1:]]), "non-finite value at [0]: nan"),
    "infinity": (for_output(lambda v: [*v[:-1], float("inf")]), "non-finite value at [31]"),
    # issue 28, probe 3: a zero vector
    "zeros": (for_output(lambda v: [0.0] * len(v)), "is all zeros (32 values)"),
    # issue 28, probe 3: vectors of different lengths
    "lengths": (for_output(lambda v: v[:16]), "different lengths (16 for text 1, 32 for text 2)"),
    "text": (for_output(lambda v: ["0.5", *v[1:]]), "non-number at [0]: '0.5'"),
}


@pytest.mark.parametrize("kind", ["similar", "not-similar"])
@pytest.mark.parametrize("bad", sorted(BAD))
def test_an_unusable_vector_is_an_error_of_similar_and_not_similar(
    fake: FakeOpenAI, store: RunStore, kind: str, bad: str
) -> None:
    change, said = BAD[bad]
    fake.embed = altered(change)
    result = only(judged(OUTPUT, client(fake, store), spec(kind)))
    assert result.outcome == "error", (result.outcome, result.message)
    assert "embeddings are unusable" in result.message and said in result.message
    # Nothing of that response was cached: a fixed endpoint is asked again, and compares.
    fake.embed = embeddings
    again = only(judged(OUTPUT, client(fake, store), spec(kind)))
    assert again.outcome == ("passed" if kind == "similar" else "failed")
    assert [request["input"] for request in fake.embedding_requests] == [[OUTPUT, REFERENCE]] * 2


@pytest.mark.parametrize("kind", ["similar", "not-similar"])
def test_one_vector_for_two_texts_is_an_error_not_an_internal_one(
    fake: FakeOpenAI, kind: str
) -> None:
    # issue 28, probe 3: one vector for two texts was "internal error: ValueError: zip()"
    fake.embed = altered(lambda text, vector: vector if text == OUTPUT else None)
    result = only(judged(OUTPUT, client(fake), spec(kind)))
    assert result.outcome == "error"
    assert "1 embedding(s) for 2 text(s)" in result.message
    assert "internal error" not in result.message


def test_indices_that_do_not_name_each_text_once_are_an_error(fake: FakeOpenAI) -> None:
    def same_index(texts: list[str]) -> bytes:
        body = json.loads(embeddings(texts))
        for item in body["data"]:
            item["index"] = 0
        return json.dumps(body).encode()

    fake.embed = same_index
    result = only(judged(OUTPUT, client(fake), spec("similar")))
    assert result.outcome == "error" and "not 0 to 1 once each" in result.message


def test_a_shared_references_nan_vector_is_not_cached_for_later_tests(
    fake: FakeOpenAI, store: RunStore
) -> None:
    # issue 28, probe 3: the reference's NaN vector was cached; every later test passed
    fake.embed = altered(lambda text, v: [float("nan")] * len(v) if text == REFERENCE else v)
    first = only(judged(OUTPUT, client(fake, store), spec("not-similar")))
    assert first.outcome == "error"
    later = only(judged("Elephants are large.", client(fake, store), spec("not-similar")))
    assert later.outcome == "error"
    assert [request["input"] for request in fake.embedding_requests] == [
        [OUTPUT, REFERENCE],
        ["Elephants are large.", REFERENCE],  # asked again: nothing was cached
    ]
    fake.embed = embeddings
    assert only(judged("Elephants are large.", client(fake, store), spec("not-similar"))).passed
    assert not only(judged(OUTPUT, client(fake, store), spec("not-similar"))).passed


def test_an_invalid_vector_already_in_the_cache_is_asked_again(
    fake: FakeOpenAI, store: RunStore
) -> None:
    """A store written before validation may hold a NaN vector: it is not used."""
    only(judged(OUTPUT, client(fake, store), spec("similar")))
    with store._write() as db:  # what an older version may have cached
        db.execute("UPDATE judge_cache SET reply = ?", (json.dumps([float("nan")] * 32),))
    result = only(judged(OUTPUT, client(fake, store), spec("not-similar")))
    assert result.outcome == "failed"  # a real cosine (1.0) from vectors asked again
    assert len(fake.embedding_requests) == 2


def test_a_new_vector_of_another_length_than_the_cached_one_is_an_error(
    fake: FakeOpenAI, store: RunStore
) -> None:
    """The endpoint's model changed under the same name: the reference's cached vector has
    32 values, the new output's 16."""
    only(judged(OUTPUT, client(fake, store), spec("similar")))
    fake.embed = altered(lambda text, vector: vector[:16])
    for kind in ("similar", "not-similar"):
        result = only(judged("Elephants are large.", client(fake, store), spec(kind)))
        assert result.outcome == "error"
        assert "different lengths (16 for text 1, 32 for text 2)" in result.message


@pytest.mark.parametrize("kind", ["similar", "not-similar"])
def test_the_check_itself_refuses_vectors_it_cannot_compare(kind: str) -> None:
    """Where the verdict is made: vectors that reached the board without the client's
    checks (another judge, a Ray worker's answer) are refused there too."""
    compiled = assertly.compile(spec(kind))
    for vectors, said in (
        (((float("nan"), 1.0), (1.0, 0.0)), "non-finite value at [0]"),
        (((0.0, 0.0), (1.0, 0.0)), "all zeros"),
        (((1.0, 0.0, 0.0), (1.0, 0.0)), "different lengths (3 for the output, 2 for reference 1)"),
        (((1.0, 0.0),), "1 vector(s) for 2 text(s)"),
    ):
        board = JudgeBoard()
        context = CheckContext(extra={BOARD_KEY: board})
        compiled.check(OUTPUT, context=context)
        (key,) = board.wanted
        board.answers[key] = Judgement(vectors=vectors)
        (result,) = compiled.check(OUTPUT, context=context).results
        assert result.outcome == "error" and said in result.message, result.message


def test_huge_and_tiny_finite_vectors_give_their_real_cosine() -> None:
    assert cosine((1e200, 1e200), (1e200, 0.0)) == pytest.approx(0.5**0.5)
    assert cosine((1e-200, 0.0), (3e-200, 0.0)) == pytest.approx(1.0)


def test_subnormal_and_overflowing_vectors_give_their_real_cosine() -> None:
    # red team, probe subnormals: hypot's unit scaling rounded [5e-324, 5e-324] to [1, 1]
    assert cosine((5e-324, 5e-324), (5e-324, 0.0)) == pytest.approx(0.5**0.5, abs=1e-3)
    # red team, probe 1e308: 400 values near 1.7e308 overflowed the norm, cosine 0.0
    assert cosine((1.7e308,) * 400, (1.7e308,) * 400) == pytest.approx(1.0)


def test_an_integer_beyond_a_floats_range_is_a_problem_not_a_crash() -> None:
    # red team, probe huge int: vector_problem raised OverflowError (internal error)
    from assertly.engine.graded._vectors import vector_problem

    assert "beyond a float's range" in (vector_problem([10**400, 1]) or "")


def test_a_deeply_nested_cached_row_is_not_a_vector_and_no_crash() -> None:
    # red team, probe poisoned cache row: json.loads raised RecursionError (internal error)
    from assertly.judge._reading import cached_vector

    assert cached_vector("[" * 200_000) is None
