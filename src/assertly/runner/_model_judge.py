"""Judging a step with model-graded assertions: ask, await the judge, check again.

The engine does no I/O (`assertly.engine._judging`): the first check of a step collects what
its checks want judged on a `JudgeBoard` (those results are dropped), the run's `JudgeClient`
answers every request at once (a local ``similar``'s embeddings: the run's `EmbeddingBatcher`,
with those of the other steps in flight), and the second check reads the answers,
synchronously.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from .._records import StepRecord
from ..engine import CheckContext, Expectation
from ..engine.graded._embeddings import LOCAL
from ..engine.graded._judging import (
    BOARD_KEY,
    DEFAULT_MAX_INPUT_CHARS,
    JudgeBoard,
    Judgement,
    JudgeRequest,
)
from ..loading import JudgeModel
from ..store import RunStore

if TYPE_CHECKING:
    # Imported when first used: a run without model-graded assertions loads neither.
    from ..judge import CacheMode, JudgeClient
    from ._embedding_batch import EmbeddingBatcher

__all__ = ["ModelJudge", "judge_counts"]

Judge = Callable[[str, Sequence[Expectation], Any, CheckContext], StepRecord]


class ModelJudge:
    """The run's judge of model-graded assertions (its client is made on first use)."""

    def __init__(
        self,
        config: JudgeModel | None,
        store: RunStore,
        *,
        cache: str | None,
        secrets: set[str],
        timeout_s: float,
        wait: Callable[[], Awaitable[None]],
        now: datetime | None,
    ) -> None:
        self._config = config
        self._store = store
        self._cache: CacheMode = cache or "rw"  # type: ignore[assignment]
        self._secrets = secrets
        self._timeout_s = timeout_s
        self._wait = wait
        self._now = now
        self.client: JudgeClient | None = None
        # What judges elsewhere spent for this run (the Ray backend's workers, added trial by
        # trial); the client's own counts join it when the run's spend is stored.
        self.elsewhere: dict[str, Any] = judge_counts(None)
        self.embeddings: EmbeddingBatcher | None = None  # local `similar`: made on first use

    def _client(self) -> JudgeClient:
        if self.client is None:
            from ..judge import JudgeClient

            self.client = JudgeClient(
                self._config,
                self._store,
                cache=self._cache,
                secrets=self._secrets,
                timeout_s=self._timeout_s,
                wait=self._wait,
            )
        return self.client

    async def judge_step(
        self,
        name: str,
        checks: Sequence[Expectation],
        output: Any,
        context: CheckContext,
        judge: Judge,
    ) -> StepRecord:
        """The step's record, judged by ``judge`` with the judge's answers."""
        board = JudgeBoard(
            self._config.max_input_chars if self._config is not None else DEFAULT_MAX_INPUT_CHARS
        )
        ctx = context.replaced(self._now, extra={**context.extra, BOARD_KEY: board})
        for expectation in checks:
            expectation.check(output, context=ctx)  # collects the requests
        wanted = list(board.wanted.values())
        remote = [request for request in wanted if request.options.get("provider") != LOCAL]
        answers = await asyncio.gather(*(self._answer(request) for request in wanted))
        for request, answer in zip(wanted, answers, strict=True):
            board.answers[request.key] = answer
        record = judge(name, checks, output, ctx)
        if remote:  # a local model costs nothing: only a step that asked a judge has a spend
            record.judge_cost_usd = sum(answer.cost_usd for answer in answers)
            record.judge_tokens = sum(answer.tokens for answer in answers)
        return record

    def _answer(self, request: JudgeRequest) -> Awaitable[Judgement]:
        if request.options.get("provider") == LOCAL:
            if self.embeddings is None:
                from ._embedding_batch import EmbeddingBatcher

                self.embeddings = EmbeddingBatcher()
            return self.embeddings.answer(request)
        return self._client().answer(request)

    async def close(self, run_id: str | None = None) -> None:
        """Close the client; store what this invocation spent on the judge for ``run_id``."""
        if self.embeddings is not None:
            await self.embeddings.close()
        client = self.client
        if client is not None:
            await client.close()
            self.add_spend(judge_counts(client))
            client.calls = client.cached = client.tokens = 0
            client.cost_usd = 0.0
        spend = self.elsewhere
        if run_id is not None and (spend["calls"] or spend["cached"]):
            self._store.add_judge_spend(
                run_id, spend["cost_usd"], spend["tokens"], spend["calls"], spend["cached"]
            )
            self.elsewhere = judge_counts(None)

    def add_spend(self, spend: dict[str, Any]) -> None:
        """Count what a judge elsewhere spent for this run (a Ray worker's, per trial)."""
        for name in self.elsewhere:
            self.elsewhere[name] += spend.get(name) or 0


def judge_counts(client: JudgeClient | None) -> dict[str, Any]:
    """What ``client`` has spent so far: ``{cost_usd, tokens, calls, cached}``."""
    if client is None:
        return {"cost_usd": 0.0, "tokens": 0, "calls": 0, "cached": 0}
    return {
        "cost_usd": client.cost_usd,
        "tokens": client.tokens,
        "calls": client.calls,
        "cached": client.cached,
    }
