"""Opt-in (``make test-models``): the judge against a real model behind an OpenAI-compatible API.

Skipped unless ``ASSERTLY_TEST_JUDGE_URL`` (e.g. ``http://127.0.0.1:8080/v1``, a llama.cpp or
vLLM server on this machine) and ``ASSERTLY_TEST_JUDGE_MODEL`` are set: `make test` never
needs a model. A small model's verdicts are not always right, so the test proves the plumbing
(request, structured output or its fallback, reading, cache), not the model's judgement: every
verdict must be readable (passed or failed, never error), and a second run must send nothing.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

import assertly
from assertly.engine import CheckContext
from assertly.engine.graded._judging import BOARD_KEY, JudgeBoard
from assertly.judge import JudgeClient
from assertly.loading import JudgeModel
from assertly.store import RunStore

URL = os.environ.get("ASSERTLY_TEST_JUDGE_URL")
MODEL = os.environ.get("ASSERTLY_TEST_JUDGE_MODEL")

pytestmark = pytest.mark.skipif(
    not (URL and MODEL), reason="set ASSERTLY_TEST_JUDGE_URL and ASSERTLY_TEST_JUDGE_MODEL"
)


def judge(client: JudgeClient, output: str) -> str:
    expectation = assertly.compile([{"type": "llm-rubric", "value": "The answer is polite."}])
    board = JudgeBoard()
    context = CheckContext(extra={BOARD_KEY: board})
    expectation.check(output, context=context)

    async def ask() -> None:
        try:
            for key, request in board.wanted.items():
                board.answers[key] = await client.answer(request)
        finally:
            await client.close()

    asyncio.run(ask())
    (result,) = expectation.check(output, context=context).results
    assert result.outcome in ("passed", "failed"), result.message
    return str(result.outcome)


def test_a_real_model_judges_and_the_cache_answers_the_second_time(tmp_path: Path) -> None:
    config = JudgeModel.model_validate({"base_url": URL, "model": MODEL, "timeout_s": 120})
    store = RunStore(tmp_path / "runs.sqlite")
    try:
        first = JudgeClient(config, store)
        outcomes = [
            judge(first, text) for text in ("Thank you so much, happy to help!", "Go away.")
        ]
        assert first.calls == 2
        again = JudgeClient(config, store, cache="replay")
        assert [
            judge(again, text) for text in ("Thank you so much, happy to help!", "Go away.")
        ] == outcomes
        assert again.calls == 0
    finally:
        store.close()
