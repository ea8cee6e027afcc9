"""Local ``similar`` in a run: the texts that many cases wait for, embedded together.

A step with a local ``similar`` asks the judge board for the embeddings of its output (its
references are cached after the first case). The run's `EmbeddingBatcher` collects what the
steps in flight ask for, embeds the distinct texts not cached in batches of up to
``max_batch`` on a worker thread (ONNX Runtime releases the GIL, so the event loop keeps
calling agents meanwhile), files the vectors in the model's cache by text hash and wakes the
steps, whose second check reads them from there.

A batch starts when ``max_batch`` texts wait, when no new text arrived during two turns of
the event loop (nothing else is about to ask), or ``max_wait_s`` after its first text, which
bounds what one waiting case costs. One batch runs at a time: texts asked meanwhile form the
next one.
"""

from __future__ import annotations

import asyncio
from collections import deque

from ..engine.graded._embeddings import BATCH, Embedder, embedder
from ..engine.graded._judging import Judgement, JudgeRequest

__all__ = ["EmbeddingBatcher"]

_DONE = Judgement()


class EmbeddingBatcher:
    """Embeds the texts of concurrent steps' local ``similar`` checks together.

    Attributes:
        batch_sizes: The number of texts of each batch run, in order (for tests and the
            bench).
    """

    def __init__(self, max_batch: int = 4 * BATCH, max_wait_s: float = 0.01) -> None:
        self.max_batch = max_batch
        self.max_wait_s = max_wait_s
        self.batch_sizes: list[int] = []
        self._waiting: deque[tuple[list[str], asyncio.Future[Judgement]]] = deque()
        self._count = 0  # texts waiting (not deduplicated)
        self._flusher: asyncio.Future[None] | None = None

    async def answer(self, request: JudgeRequest) -> Judgement:
        """Once the texts of ``request`` are in the model's cache: an empty judgement.

        A judgement with an error when the model could not embed them.
        """
        try:
            model = embedder()  # loads the model on the first call (~0.5 s)
        except Exception as error:  # a broken install: an error, not a crash
            return Judgement(error=f"the local embedding model did not load: {error}")
        todo = model.missing(request.texts)
        if not todo:
            return _DONE
        future: asyncio.Future[Judgement] = asyncio.get_running_loop().create_future()
        self._waiting.append((todo, future))
        self._count += len(todo)
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.ensure_future(self._flush(model))
        return await future

    async def _flush(self, model: Embedder) -> None:
        loop = asyncio.get_running_loop()
        while self._waiting:
            deadline = loop.time() + self.max_wait_s
            quiet = 0
            while self._count < self.max_batch and quiet < 2 and loop.time() < deadline:
                before = self._count
                await asyncio.sleep(0)
                quiet = quiet + 1 if self._count == before else 0
            taken = self._take()
            texts = model.missing([text for todo, _ in taken for text in todo])
            answer = _DONE
            try:
                if texts:
                    vectors = await asyncio.to_thread(model.compute, texts)
                    model.remember(texts, vectors)
                    self.batch_sizes.append(len(texts))
            except asyncio.CancelledError:
                answer = Judgement(error="the run was stopped before the embeddings were made")
                raise
            except Exception as error:  # every waiting check: an error
                answer = Judgement(error=f"the local embedding model failed: {error}")
            finally:
                for _, future in taken:
                    if not future.done():  # its step may have been cancelled (Ctrl-C)
                        future.set_result(answer)

    def _take(self) -> list[tuple[list[str], asyncio.Future[Judgement]]]:
        """The waiting requests of the next batch: up to ``max_batch`` texts (at least one)."""
        taken: list[tuple[list[str], asyncio.Future[Judgement]]] = []
        count = 0
        while self._waiting and (not taken or count + len(self._waiting[0][0]) <= self.max_batch):
            todo, future = self._waiting.popleft()
            taken.append((todo, future))
            count += len(todo)
        self._count -= count
        return taken

    async def close(self) -> None:
        """Wait for the batch in flight, if any (its thread cannot be interrupted)."""
        flusher = self._flusher
        if flusher is not None and not flusher.done():
            flusher.cancel()
            await asyncio.gather(flusher, return_exceptions=True)
        for _, future in self._waiting:
            future.cancel()
        self._waiting.clear()
        self._count = 0
