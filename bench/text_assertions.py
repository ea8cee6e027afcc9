"""Per-assertion cost of the text assertions (issue 35): µs per `Expectation.check`.

Not a test. Each assertion alone is compiled once, then judges the engine benchmark's typed mix
of ~400-character outputs (bench/engine_workload.py: pure JSON, a fenced block in prose, plain
prose), the `Response` built from text in the timed loop as a runner does. The figure is the
whole check of a one-assertion expectation (its fixed cost included).

    PYTHONPATH=src .venv/bin/python bench/text_assertions.py [-n 4000] [-r 7]
"""

from __future__ import annotations

import argparse
import gc
import random
import sys
import time
import unicodedata
from collections.abc import Sequence
from typing import Any

import assertly
from engine_workload import SEED, make_responses
from harness import pin_to_one_core

ASSERTIONS: list[tuple[str, list[dict[str, Any]]]] = [
    ("contains-json", [{"type": "contains-json"}]),
    (
        "contains-json+schema",
        [{"type": "contains-json", "value": {"type": "object", "required": ["status"]}}],
    ),
    ("word-count", [{"type": "word-count", "value": {"min": 5, "max": 150}}]),
    (
        "equals json_path",
        [{"type": "equals", "value": "success", "transform": "json_path:$.status"}],
    ),
    ("is-json", [{"type": "is-json"}]),
    (
        "levenshtein",
        [
            {
                "type": "levenshtein",
                "value": "Found 2 security incidents in January",
                "threshold": 3,
                "transform": "json_path:$.summary",
            }
        ],
    ),
    ("icontains", [{"type": "icontains", "value": "INCIDENT"}]),
    ("contains", [{"type": "contains", "value": "security"}]),
    (
        "contains+icontains",
        [{"type": "contains", "value": "security"}, {"type": "icontains", "value": "INCIDENT"}],
    ),
    (
        "all json three",
        [
            {"type": "is-json"},
            {"type": "contains-json"},
            {"type": "equals", "value": "success", "transform": "json_path:$.status"},
        ],
    ),
]


def best_us(expectation: assertly.Expectation, texts: Sequence[str], repeat: int) -> float:
    """µs per check: the sum over chunks of 100 outputs of each chunk's best of ``repeat``.

    A chunk's best, not a whole pass's: on a machine shared with other work, a short burst
    of interference spoils one chunk's try, not the whole figure.
    """
    check = expectation.check
    for text in texts:
        check(text)
    total = 0.0
    gc.collect()
    gc.disable()
    try:
        for begin in range(0, len(texts), 100):
            chunk = texts[begin : begin + 100]
            best = float("inf")
            for _ in range(repeat):
                start = time.thread_time()
                for text in chunk:
                    check(text)
                best = min(best, time.thread_time() - start)
            total += best
    finally:
        gc.enable()
    return total / len(texts) * 1e6


def main(argv: Sequence[str] | None = None) -> int:
    """Print µs per check for each assertion alone, on the typed mix and per kind of output."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=4000)
    parser.add_argument("-r", "--repeat", type=int, default=15)
    args = parser.parse_args(argv)
    pin_to_one_core()
    items = make_responses(random.Random(SEED), args.n, {"json": 0.5, "fenced": 0.3, "prose": 0.2})
    texts = [text for _, text in items]
    kinds = {kind: [t for k, t in items if k == kind] for kind in ("json", "fenced", "prose")}
    # The same outputs with accents, decomposed (NFD, as macOS and some models write them).
    kinds["accented"] = [unicodedata.normalize("NFD", t.replace("e", "\xe9")) for t in texts]
    print(f"{len(texts)} outputs, mean {sum(map(len, texts)) / len(texts):.0f} chars")
    print(
        f"{'assertion':22} {'mix':>7} {'json':>7} {'fenced':>7} {'prose':>7} {'NFD mix':>8}"
        "  µs/check"
    )
    for name, spec in ASSERTIONS:
        expectation = assertly.compile(spec)
        cells = [best_us(expectation, texts, args.repeat)]
        cells += [best_us(expectation, kinds[kind], args.repeat) for kind in kinds]
        print(
            f"{name:22} " + " ".join(f"{cell:7.2f}" for cell in cells[:-1]) + f" {cells[-1]:8.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
