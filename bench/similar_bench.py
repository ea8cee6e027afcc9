"""``similar`` throughput on one core and the installed size of the ``assertly[similar]`` extra.

Checks per second on distinct outputs (every output a new text; the reference comes from the
cache after the first check), with the process pinned to one CPU:

* one at a time: `Expectation.check` on each output, which embeds it alone (`assertly check`,
  `compile()` in user code);
* batched as in a run: 32 cases at a time (``-j 32``) check through the judge board, the run's
  `EmbeddingBatcher` embeds what they wait for together, and they check again;
* model only: `Embedder.compute` (batches of `BATCH` texts), the floor of both.

Install size: the files (RECORD) of the extra's distributions and of everything they pull in
that assertly's own dependencies do not, from `importlib.metadata`.

Run alone: ``.venv/bin/python bench/similar_bench.py``.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import os
import re
import time
from pathlib import Path
from typing import Any

EXTRA = "similar"
_NAME = re.compile(r"^[A-Za-z0-9._-]+")


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requires(name: str, extra: str | None = None) -> list[str]:
    """The distributions ``name`` (or its ``extra``) requires on this platform."""
    found: list[str] = []
    for line in importlib.metadata.requires(name) or []:
        requirement, _, marker = line.partition(";")
        marker = marker.strip()
        if marker:
            wanted = extra is not None and re.search(rf"extra\s*==\s*['\"]{extra}['\"]", marker)
            if "extra" in marker and not wanted:
                continue
            if "extra" not in marker and not _marker_holds(marker):
                continue
        elif extra is not None:
            continue
        match = _NAME.match(requirement.strip())
        if match:
            found.append(_normal(match.group(0)))
    return found


def _marker_holds(marker: str) -> bool:
    try:
        from packaging.markers import Marker
    except ImportError:  # pragma: no cover - packaging comes with onnxruntime
        return True
    return Marker(marker).evaluate()


def _closure(names: list[str]) -> set[str]:
    """``names`` and everything installed they require, recursively."""
    seen: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        try:
            importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            continue
        seen.add(name)
        todo.extend(_requires(name))
    return seen


def installed_bytes(name: str) -> int:
    """Bytes of a distribution's installed files (RECORD's sizes; the file's when missing)."""
    total = 0
    for file in importlib.metadata.distribution(name).files or []:
        if file.size is not None:
            total += file.size
            continue
        path = Path(file.locate())
        if path.is_file():
            total += path.stat().st_size
    return total


def extra_size() -> dict[str, Any]:
    """The extra's distributions and what they pull in, in MiB (and what assertly has anyway).

    ``declared``: the extra's own packages (onnxruntime, tokenizers, numpy, the model);
    ``pulled``: their dependencies; ``new_mb``: what installing the extra adds to an install
    of assertly alone (the packages neither assertly nor its dependencies bring).
    """
    declared = _requires("assertly", EXTRA)
    core = _closure(_requires("assertly"))
    every = _closure(declared)
    sizes = {name: installed_bytes(name) / 2**20 for name in sorted(every)}
    return {
        "declared_mb": {name: sizes[name] for name in declared if name in sizes},
        "pulled_mb": {name: size for name, size in sizes.items() if name not in declared},
        "total_mb": sum(sizes.values()),
        "new_mb": sum(size for name, size in sizes.items() if name not in core),
        "already_needed": sorted(every & core),
    }


def outputs(count: int, offset: int = 0) -> list[str]:
    """Distinct support answers of typical length (27 to 29 tokens)."""
    return [
        f"Thanks for asking! Order {1000 + i} ships in {i % 5 + 1} days; a refund for item {i} "
        f"reaches your card within {i % 7 + 3} business days."
        for i in range(offset, offset + count)
    ]


REFERENCE = "Your refund arrives within a few business days."
RUN_CONCURRENCY = 32  # cases in flight "as in a run" (`assertly run -j 32`)


async def _as_in_a_run(expectation: Any, texts: list[str], concurrency: int) -> list[Any]:
    """Check ``texts`` as `assertly run` does: through the board, ``concurrency`` in flight."""
    from assertly.engine import CheckContext
    from assertly.engine.graded._judging import BOARD_KEY, JudgeBoard
    from assertly.runner._embedding_batch import EmbeddingBatcher

    batcher = EmbeddingBatcher()
    pool = asyncio.Semaphore(concurrency)

    async def one(text: str) -> Any:
        async with pool:
            board = JudgeBoard()
            context = CheckContext(extra={BOARD_KEY: board})
            expectation.check(text, context=context)
            for request in list(board.wanted.values()):
                board.answers[request.key] = await batcher.answer(request)
            return expectation.check(text, context=context)

    results = await asyncio.gather(*(one(text) for text in texts))
    await batcher.close()
    return results


def measure(count: int = 600, cpu: int | None = None) -> dict[str, Any]:
    """Checks per second on one CPU: one at a time, batched as in a run, the model alone."""
    import assertly
    from assertly.engine.graded._embeddings import embedder

    pinned = hasattr(os, "sched_setaffinity")
    before = os.sched_getaffinity(0) if pinned else set()
    if pinned:
        os.sched_setaffinity(0, {cpu if cpu is not None else max(before)})
    try:
        expectation = assertly.compile([{"type": "similar", "value": REFERENCE}])
        started = time.perf_counter()
        model = embedder()
        model.embed(["warm up", REFERENCE])
        load_s = time.perf_counter() - started
        # Untimed: the first run imports the runner's modules (~50 ms), which `assertly run`
        # does once at its start, not per check.
        asyncio.run(_as_in_a_run(expectation, outputs(4, 10**6), concurrency=RUN_CONCURRENCY))
        wall: dict[str, float] = dict.fromkeys(("single", "run", "model"), 0.0)
        cpu_s: dict[str, float] = dict(wall)
        done: dict[str, int] = dict.fromkeys(wall, 0)

        def timed(kind: str, texts: list[str], work: Any) -> None:
            started, started_cpu = time.perf_counter(), time.process_time()
            work(texts)
            wall[kind] += time.perf_counter() - started
            cpu_s[kind] += time.process_time() - started_cpu
            done[kind] += len(texts)

        def single(texts: list[str]) -> None:
            for text in texts:
                expectation.check(text)

        def in_a_run(texts: list[str]) -> None:
            results = asyncio.run(_as_in_a_run(expectation, texts, concurrency=RUN_CONCURRENCY))
            assert all(result.outcome in ("passed", "failed") for result in results)

        offset = 0
        # Interleaved rounds: this machine's speed moves for seconds at a time.
        for _ in range(2):
            for kind, work, share in (
                ("single", single, 4),
                ("run", in_a_run, 2),
                ("model", model.compute, 2),
            ):
                texts = outputs(count // share, offset)
                offset += len(texts)
                timed(kind, texts, work)
    finally:
        if pinned:
            os.sched_setaffinity(0, before)
    tokens = [len(e.ids) for e in model._tokenizer.encode_batch(outputs(50))]
    return {
        "load_s": load_s,
        # Per second of the one CPU the process ran on (wall) and per second of CPU it used
        # (the figure that other processes on the machine do not move).
        "checks_per_s_single": done["single"] / wall["single"],
        "checks_per_s_batched": done["run"] / wall["run"],
        "embeddings_per_s_model": done["model"] / wall["model"],
        "checks_per_cpu_s_single": done["single"] / cpu_s["single"],
        "checks_per_cpu_s_batched": done["run"] / cpu_s["run"],
        "embeddings_per_cpu_s_model": done["model"] / cpu_s["model"],
        "tokens_per_output": sum(tokens) / len(tokens),
        "one_cpu": pinned,
        "extra": extra_size(),
    }


if __name__ == "__main__":
    found = measure()
    extra = found["extra"]
    print(
        f"similar on one CPU, outputs of ~{found['tokens_per_output']:.0f} tokens: "
        f"{found['checks_per_s_single']:,.0f} checks/s one at a time, "
        f"{found['checks_per_s_batched']:,.0f} batched as in a run (-j 32), "
        f"model alone {found['embeddings_per_s_model']:,.0f} embeddings/s; "
        f"model load {found['load_s']:.2f} s"
    )
    print(
        f"  per CPU-second: {found['checks_per_cpu_s_single']:,.0f} one at a time, "
        f"{found['checks_per_cpu_s_batched']:,.0f} batched, "
        f"{found['embeddings_per_cpu_s_model']:,.0f} model alone"
    )
    print(
        f"assertly[similar]: {extra['total_mb']:,.1f} MiB installed, {extra['new_mb']:,.1f} MiB "
        f"beyond assertly's own dependencies (already there: "
        f"{', '.join(extra['already_needed']) or 'none'})"
    )
    for kind in ("declared_mb", "pulled_mb"):
        print(" ", kind[:-3], {name: round(size, 1) for name, size in extra[kind].items()})
